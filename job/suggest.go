package job

import (
	"fmt"
	"reflect"
	"strings"
)

// An unknown key is most often a known one misspelt. Its error names the
// nearest known key of the same mapping, and Parse then reports nothing
// that follows from the known key being absent (a required key missing,
// a sink's from: that names no source): one typo, one message.

// unknownKey is the error for key, unknown in a mapping whose keys are
// known; path is the key's YAML path ("$.sources[0].formt").
func unknownKey(file string, line int, path, key string, known []string) *Error {
	e := &Error{File: file, Line: line, Key: strings.TrimPrefix(path, "$."), Msg: fmt.Sprintf("unknown key %q", key), unknown: key}
	if near := nearest(key, known); near != "" {
		e.Msg += fmt.Sprintf(" (did you mean %s?)", near)
		e.meant = strings.TrimPrefix(path[:len(path)-len(key)]+near, "$.")
	}
	return e
}

// nearest is the key of known closest to key, when it is close enough to
// be what was meant: a different case, or a few letters added, dropped,
// changed or swapped (about one in three of the shorter name's letters);
// "" when none is.
func nearest(key string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return k
		}
		d := editDistance(strings.ToLower(key), k)
		limit := max(1, min(len(key), len(k))/3)
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance counts the letters to add, drop or change, or pairs of
// neighbours to swap, to turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// keysOf lists the keys of a struct type's yaml tags, inline fields'
// too.
func keysOf(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" && f.Type.Kind() == reflect.Struct {
			out = append(out, keysOf(f.Type)...)
			continue
		}
		if name != "" && name != "-" && f.IsExported() {
			out = append(out, name)
		}
	}
	return out
}
