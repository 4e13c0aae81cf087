// Package glob reads the globs of include: and exclude: (file sources,
// crawler targets): patterns over keys relative to a folder.
package glob

import (
	"fmt"
	"regexp"
	"strings"
)

// Compile compiles a glob over '/'-separated keys ("**" spans folders,
// "*" and "?" stay within one, [...] classes, {a,b} alternatives) to an
// anchored regular expression.
func Compile(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(glob[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("glob %q: unclosed [", glob)
			}
			class := glob[i+1 : i+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += j
		case c == '{':
			j := strings.IndexByte(glob[i:], '}')
			if j < 0 {
				return nil, fmt.Errorf("glob %q: unclosed {", glob)
			}
			alts := strings.Split(glob[i+1:i+j], ",")
			for k := range alts {
				alts[k] = regexp.QuoteMeta(alts[k])
			}
			b.WriteString("(?:" + strings.Join(alts, "|") + ")")
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", glob, err)
	}
	return re, nil
}

// isFullPath tells a glob that names a location outright (s3://b/k/**,
// /data/in/*.csv) from one relative to the source's path.
func isFullPath(g string) bool {
	return strings.HasPrefix(g, "/") || strings.Contains(g, "://")
}

// CheckRelative refuses a glob written as a full path: globs match
// keys relative to path ("" for a catalog table's location, known only
// when it is read), so it would match nothing, and the files it meant to
// keep out would be read.
func CheckRelative(path, g string) error {
	if !isFullPath(g) {
		return nil
	}
	switch rel := Relative(path, g); {
	case rel != g:
		return fmt.Errorf("globs match keys relative to path: write %q, not %q", rel, g)
	case path == "":
		return fmt.Errorf("%q is a full path, and globs match keys relative to the table's location: it would match nothing", g)
	}
	return fmt.Errorf("%q is a full path, and globs match keys relative to path %q: it would match nothing", g, path)
}

// Relative returns g relative to path when g is a full path under it
// ("s3://land/in/tmp/**" under "s3://land/in/" is "tmp/**"); any other g
// as it is.
func Relative(path, g string) string {
	if path == "" || !isFullPath(g) {
		return g
	}
	if rel, ok := strings.CutPrefix(g, strings.TrimSuffix(path, "/")+"/"); ok && rel != "" {
		return rel
	}
	return g
}
