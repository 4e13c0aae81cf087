package job

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
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
		return nil, &Error{File: path, Msg: fmt.Sprintf("reading job file: %v", err)}
	}
	return Parse(path, data)
}

// Parse parses and validates job-file bytes; name is used in messages and to
// resolve relative paths.
func Parse(name string, data []byte) (*Spec, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{File: name, Msg: "job file is empty"}
	}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(name, err)
	}
	var s Spec
	if err := yaml.UnmarshalWithOptions(data, &s, yaml.DisallowUnknownField()); err != nil {
		return nil, yamlError(name, err)
	}
	s.File = name
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	s.Dir = filepath.Dir(abs)
	s.lines = func(p string) int { return lineOf(file, p) }
	s.ApplyDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// yamlError turns a go-yaml error into an *Error with the line.
func yamlError(name string, err error) error {
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

// typeErr matches go-yaml's message for a value of the wrong type.
var typeErr = regexp.MustCompile(`^cannot unmarshal \S+ into Go .* of type (\S+)$`)

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

// UnmarshalYAML accepts "duckdb", "spark", {duckdb: {...}} or {spark: {...}}.
func (e *Engine) UnmarshalYAML(unmarshal func(any) error) error {
	var name string
	if err := unmarshal(&name); err == nil {
		e.Name = name
		return nil
	}
	type opts struct {
		MemoryLimit string `yaml:"memory_limit"`
		Threads     int    `yaml:"threads"`
		SpillDir    string `yaml:"spill_dir"`
		Remote      string `yaml:"remote"`
	}
	var m map[string]opts
	if err := unmarshal(&m); err != nil {
		return err
	}
	if len(m) != 1 {
		return fmt.Errorf("engine: want exactly one of duckdb or spark, got %d keys", len(m))
	}
	for k, o := range m {
		*e = Engine{Name: k, MemoryLimit: o.MemoryLimit, Threads: o.Threads, SpillDir: o.SpillDir, Remote: o.Remote}
	}
	return nil
}

// UnmarshalYAML parses "15m", "90s", "1h30m" or a number of milliseconds.
func (d *Duration) UnmarshalYAML(unmarshal func(any) error) error {
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
