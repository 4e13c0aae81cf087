package job

import (
	"bytes"
	"path/filepath"
	"slices"
)

// ParseDocument parses a file whose whole document is one block, such as a
// crawler file, with the job file's rules: every unknown key and every
// value of the wrong type is an error naming the key and its line, then
// cfg's ApplyDefaults and Validate run (keys relative to the document,
// "targets[0].path"). The Spec returned holds only the file's name and
// folder (Spec.Resolve makes its relative paths absolute against it); it
// is the spec cfg's ApplyDefaults and Validate were given.
func ParseDocument(name string, data []byte, cfg Config) (*Spec, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, Errors{{File: name, Msg: "file is empty"}}
	}
	file, decodeErrs, err := decodeDocument(name, data, cfg)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, Errors{{File: name, Msg: err.Error()}}
	}
	s := &Spec{File: name, Dir: filepath.Dir(abs)}
	s.lines = func(p string) int { return lineOf(file, p) }
	cfg.ApplyDefaults(s)
	v := validator{s: s}
	cfg.Validate(&Check{v: &v, path: "$"})
	errs := decodeErrs
	for _, e := range v.errs {
		if !slices.ContainsFunc(decodeErrs, func(d *Error) bool { return d.Key != "" && dependsOn(e.Key, d.Key) }) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return s, nil
}
