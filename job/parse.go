package job

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Error is a job-file error: it names the file, the line and the key.
type Error struct {
	File string
	Line int    // 0 when unknown
	Key  string // YAML path such as sources[0].format, may be empty
	Msg  string

	// unknown is the key of an unknown-key error, and meant the path of
	// the known key it is nearest to ("" when none is near).
	unknown, meant string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if b.Len() > 0 { // a spec made in code (a Glue session's) has no file
		b.WriteString(": ")
	}
	if e.Key != "" {
		fmt.Fprintf(&b, "%s: ", e.Key)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads, parses and validates a job file.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Errors{{File: path, Msg: fmt.Sprintf("reading job file: %v", err)}}
	}
	return Parse(path, data)
}

// Parse parses and validates job-file bytes; name is used in messages and to
// resolve relative paths.
func Parse(name string, data []byte) (*Spec, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, Errors{{File: name, Msg: "job file is empty"}}
	}
	var s Spec
	file, decodeErrs, err := decodeDocument(name, data, &s)
	if err != nil {
		return nil, err
	}
	s.File = name
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, Errors{{File: name, Msg: err.Error()}}
	}
	s.Dir = filepath.Dir(abs)
	s.lines = func(p string) int { return lineOf(file, p) }
	s.setLines()
	s.ApplyDefaults()
	errs := decodeErrs
	if err := s.Validate(); err != nil {
		// A key that could not be decoded is not reported again as
		// missing or invalid.
		for _, e := range err.(Errors) {
			// Nor is the known key that an unknown one probably
			// stands for.
			if !slices.ContainsFunc(decodeErrs, func(d *Error) bool {
				return d.Key != "" && dependsOn(e.Key, d.Key) || d.meant != "" && dependsOn(e.Key, d.meant)
			}) {
				errs = append(errs, e)
			}
		}
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return &s, nil
}

// decodeDocument decodes a YAML document into v (a pointer to a struct of
// yaml-tagged fields), every unknown key and value of the wrong type an
// error with its line: decodeErrs, where decoding went on key by key. A
// document that cannot be parsed, or whose errors could not be told key
// by key, is err.
func decodeDocument(name string, data []byte, v any) (file *ast.File, decodeErrs Errors, err error) {
	file, err = parser.ParseBytes(data, 0)
	if err != nil {
		return nil, nil, Errors{yamlError(name, err)}
	}
	// A key written twice was refused by the parser above; what the decoder
	// would take for one is a key that overrides a merge (`<<: *base`
	// then `ctx: other`), which YAML allows.
	if err := yaml.UnmarshalWithOptions(data, v, yaml.DisallowUnknownField(), yaml.AllowDuplicateMapKey()); err != nil {
		// Once more key by key, to report every such error at once.
		rv := reflect.ValueOf(v).Elem()
		rv.Set(reflect.Zero(rv.Type()))
		// Aliases and merge keys need the whole document: then only the
		// first error is reported.
		plain := len(ast.FilterFile(ast.AliasType, file)) == 0 && len(ast.FilterFile(ast.MergeKeyType, file)) == 0
		if len(file.Docs) > 0 && plain {
			decodeErrs = decodeAll(name, file.Docs[0].Body, rv, "$")
		}
		if len(decodeErrs) == 0 {
			return nil, nil, Errors{yamlError(name, err)}
		}
	} else if e := mergeAfterKeys(name, file); e != nil {
		return nil, nil, Errors{e}
	}
	return file, decodeErrs, nil
}

// mergeAfterKeys refuses a merge key (`<<: *base`) that follows other keys
// of its mapping: YAML lets those keys override the merged ones, but the
// decoder would let the merged values replace them without a word.
func mergeAfterKeys(name string, file *ast.File) *Error {
	for _, n := range ast.FilterFile(ast.MappingType, file) {
		m, ok := n.(*ast.MappingNode)
		if !ok {
			continue
		}
		for i, v := range m.Values {
			if i > 0 && v.Key != nil && v.Key.Type() == ast.MergeKeyType {
				e := &Error{File: name, Msg: "a merge key (<<) must come first in its mapping: the keys above it " +
					"would be replaced by the merged ones instead of overriding them"}
				if tk := v.Key.GetToken(); tk != nil && tk.Position != nil {
					e.Line = tk.Position.Line
				}
				return e
			}
		}
	}
	return nil
}

// dependsOn reports whether a validation error at key may come from the
// undecoded value at bad: key is bad or below it, or a sink's from:, which
// refers to the sources and transforms.
func dependsOn(key, bad string) bool {
	if key == bad || strings.HasPrefix(key, bad+".") || strings.HasPrefix(key, bad+"[") {
		return true
	}
	top, _, _ := strings.Cut(bad, "[")
	top, _, _ = strings.Cut(top, ".")
	return strings.HasSuffix(key, ".from") && (top == "sources" || top == "transforms")
}

// Errors are all the errors of one job file, in the order of their lines.
// errors.As finds the first *Error in it.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns each error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sortErrors orders errors by line; errors without a line (a missing key)
// come last, in the order they were found.
func sortErrors(es Errors) {
	slices.SortStableFunc(es, func(a, b *Error) int {
		switch {
		case a.Line == b.Line:
			return 0
		case a.Line == 0:
			return 1
		case b.Line == 0:
			return -1
		}
		return a.Line - b.Line
	})
}

// yamlError turns a go-yaml error into an *Error with the line.
func yamlError(name string, err error) *Error {
	var te interface {
		GetMessage() string
		GetToken() *token.Token
	}
	if errors.As(err, &te) {
		msg := te.GetMessage()
		msg = strings.Replace(msg, "unknown field", "unknown key", 1)
		line := 0
		tk := te.GetToken()
		if tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		if l, m := syntaxLine(tk, msg); l > 0 {
			line, msg = l, m
		}
		if m := typeErr.FindStringSubmatch(msg); m != nil && tk != nil {
			msg = fmt.Sprintf("%q is not %s", tk.Value, wantType(m[1]))
			if k := keyOf(tk); k != "" {
				msg = k + ": " + msg
			}
		}
		return &Error{File: name, Line: line, Msg: msg}
	}
	return &Error{File: name, Msg: err.Error()}
}

// syntaxLine is, for a YAML syntax error that the parser notices past
// its cause, the line to fix and what to fix there (0 for the others).
func syntaxLine(tk *token.Token, msg string) (int, string) {
	if tk == nil {
		return 0, ""
	}
	switch {
	case strings.HasPrefix(msg, "mapping value is not allowed"):
		// "key: value" where a plain value was still going on: the key
		// is indented deeper than the one above it. The colon is on
		// the line to fix.
		for t := tk; t != nil; t = t.Next {
			if t.Type == token.MappingValueType && t.Position != nil {
				return t.Position.Line, "a key indented deeper than the key above it " +
					"(or a value that goes on to the next line): indent it as its neighbours, or quote the value"
			}
		}
	case strings.Contains(msg, "or ']' must be specified"), strings.Contains(msg, "or '}' must be specified"):
		// A flow list or mapping runs until the parser gives up: the
		// line to fix is where it opened.
		open, close := token.SequenceStartType, token.SequenceEndType
		if strings.Contains(msg, "'}'") {
			open, close = token.MappingStartType, token.MappingEndType
		}
		depth := 0
		for t := tk.Prev; t != nil; t = t.Prev {
			switch t.Type {
			case close:
				depth++
			case open:
				if depth == 0 && t.Position != nil {
					return t.Position.Line, fmt.Sprintf("the %s opened on this line is not closed: %s", t.Value, msg)
				}
				depth--
			}
		}
	case strings.Contains(msg, "found character '\t'"):
		if tk.Position != nil {
			return tk.Position.Line, "a tab: YAML is indented with spaces, not tabs"
		}
	}
	return 0, ""
}

// typeErr matches go-yaml's message for a value of the wrong type.
var typeErr = regexp.MustCompile(`^cannot unmarshal .+ into Go .* of type (\S+)$`)

// wantType says in job-file words what a Go type accepts.
func wantType(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map"):
		return "a mapping"
	case goType == "string":
		return "text"
	}
	return "a " + goType
}

// keyOf names the mapping key whose value starts at tk ("" if none).
func keyOf(tk *token.Token) string {
	p := tk.Prev
	for p != nil && p.Type != token.MappingValueType {
		if p.Position == nil || p.Position.Line != tk.Position.Line {
			return ""
		}
		p = p.Prev
	}
	if p == nil || p.Prev == nil {
		return ""
	}
	return p.Prev.Value
}

// lineOf returns the line of a YAML path ("$.sources[0].format"), walking up
// to the nearest existing parent when the key itself is absent.
func lineOf(f *ast.File, p string) int {
	for p != "" && p != "$" {
		if yp, err := yaml.PathString(p); err == nil {
			if n, err := yp.FilterFile(f); err == nil && n != nil {
				if tk := n.GetToken(); tk != nil && tk.Position != nil {
					return tk.Position.Line
				}
			}
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			break
		}
		p = p[:i]
	}
	return 0
}

// UnmarshalYAML parses "15m", "90s", "1h30m" or a number of milliseconds.
func (d *Duration) UnmarshalYAML(unmarshal func(any) error) error {
	d.set = true
	var ms int64
	if err := unmarshal(&ms); err == nil {
		d.Duration = time.Duration(ms) * time.Millisecond
		return nil
	}
	var s string
	if err := unmarshal(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.err = fmt.Errorf("invalid duration %q (want e.g. 15m, 90s)", s)
		return nil
	}
	d.Duration = v
	return nil
}

// UnmarshalYAML parses "10GiB", "500MB" or a number of bytes.
func (z *Size) UnmarshalYAML(unmarshal func(any) error) error {
	var n int64
	if err := unmarshal(&n); err == nil {
		z.Bytes = n
		return nil
	}
	var s string
	if err := unmarshal(&s); err != nil {
		return err
	}
	v, err := humanize.ParseBytes(s)
	if err != nil {
		z.err = fmt.Errorf("invalid size %q (want e.g. 10GiB, 500MB)", s)
		return nil
	}
	z.Bytes = int64(v)
	return nil
}
