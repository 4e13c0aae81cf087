package job

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
)

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// NameRule says what a job name may hold, for messages.
const NameRule = "use letters, digits, '_', '-' and '.', starting with a letter or digit"

// ValidName reports whether name may name a job (job:, --JOB_NAME): state
// stores keep it in keys and temporary folders in file names, so it holds
// no path separator, no glob character and is not "." or "..".
func ValidName(name string) bool { return nameRE.MatchString(name) }

// Validate checks the spec after defaults were applied. It returns every
// error it finds, as Errors.
func (s *Spec) Validate() error {
	v := validator{s: s}
	if s.Job == "" {
		v.fail("$.job", "is required")
	} else if !ValidName(s.Job) {
		v.fail("$.job", "%q: %s", s.Job, NameRule)
	}
	// Checked whatever its form: a key=value connection string or a DSN
	// given as state: would otherwise be taken as a SQLite file's path,
	// and the password would become a file name.
	if !v.noSecret("$.state", s.State, stateHint(s.State)) && isLocal(s.State) {
		v.noTilde("$.state", s.State)
	}
	if _, err := bookmark.ParseMode(s.Bookmark); err != nil {
		v.fail("$.bookmark", "%v", err)
	}
	v.engine(false)
	v.crawler()
	v.oneOf("$.on_bad_record", s.OnBadRecord, OnBadRecords)
	if s.IO.Concurrency < 0 {
		v.fail("$.io.concurrency", "must be positive")
	}
	if s.BatchFiles != nil && *s.BatchFiles < 0 {
		v.fail("$.batch_files", "must be 0 (one batch) or a positive number of files")
	}
	if s.IO.DiskBudget.err != nil {
		v.fail("$.io.disk_budget", "%v", s.IO.DiskBudget.err)
	}
	if u := s.Lineage.URL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		v.fail("$.lineage.url", "must be an http:// or https:// URL")
	}
	v.noSecret("$.lineage.url", s.Lineage.URL, "put the API key in the variable api_key_env names")
	if len(s.Sources) == 0 {
		v.fail("$.sources", "at least one source is required")
	}
	names := map[string]string{}
	name := func(p, n, what string) {
		if !identRE.MatchString(n) {
			v.fail(p, "%s %q must be an identifier (letters, digits, '_'), it names a SQL view", what, n)
			return
		}
		if prev, ok := names[strings.ToLower(n)]; ok {
			v.fail(p, "%q is already used by %s", n, prev)
			return
		}
		names[strings.ToLower(n)] = what + " " + n
	}
	for i, src := range s.Sources {
		p := fmt.Sprintf("$.sources[%d]", i)
		if src.Ctx == "" {
			v.fail(p+".ctx", "is required")
		} else {
			name(p+".ctx", src.Ctx, "source")
		}
		v.block(sourceKinds, p, src.Config, false)
	}
	for i, t := range s.Transforms {
		p := "$.transforms"
		n, ok := t.Key.(string)
		if !ok {
			v.fail(p, "transform names must be strings")
			continue
		}
		name(p+"."+n, n, "transform")
		if sql, ok := t.Value.(string); !ok || strings.TrimSpace(sql) == "" {
			v.fail(p+"."+n, "transform %d (%s) must be a SQL query string", i+1, n)
		}
	}
	if len(s.Sinks) == 0 {
		v.fail("$.sinks", "at least one sink is required")
	}
	sinkNames := map[string]bool{}
	for i, k := range s.Sinks {
		p := fmt.Sprintf("$.sinks[%d]", i)
		if k.Ctx == "" {
			v.fail(p+".ctx", "is required")
		} else if !identRE.MatchString(k.Ctx) {
			v.fail(p+".ctx", "%q must be an identifier (letters, digits, '_')", k.Ctx)
		} else if sinkNames[k.Ctx] {
			v.fail(p+".ctx", "sink %q is defined twice", k.Ctx)
		}
		sinkNames[k.Ctx] = true
		v.block(sinkKinds, p, k.Config, false)
		if k.From == "" {
			v.fail(p+".from", "is required when there are several sources and no transforms")
		} else if _, ok := names[strings.ToLower(k.From)]; !ok {
			v.fail(p+".from", "%q is neither a source ctx nor a transform", k.From)
		}
	}
	if len(v.errs) > 0 {
		sortErrors(v.errs)
		return v.errs
	}
	return nil
}

type validator struct {
	s    *Spec
	errs Errors
}

func (v *validator) fail(path, format string, args ...any) {
	line := 0
	if v.s.lines != nil {
		line = v.s.lines(path)
	}
	v.errs = append(v.errs, &Error{File: v.s.File, Line: line, Key: strings.TrimPrefix(path, "$."), Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) oneOf(path, got string, allowed []string) {
	if !slices.Contains(allowed, got) {
		v.fail(path, "%q is not one of %s", got, strings.Join(allowed, ", "))
	}
}

// block has a source's or sink's kind validate its block at p; with
// options, only the components' checks (reader and writer options, s3:
// settings).
func (v *validator) block(r *registry, p string, cfg Config, options bool) {
	if cfg == nil {
		if !options {
			v.fail(p, "%v", noKind(r))
		}
		return
	}
	cfg.Validate(&Check{v: v, path: p, options: options})
}

// blocks runs the components' checks of every block.
func (v *validator) blocks() {
	v.engine(true)
	for i, src := range v.s.Sources {
		v.block(sourceKinds, fmt.Sprintf("$.sources[%d]", i), src.Config, true)
	}
	for i, k := range v.s.Sinks {
		v.block(sinkKinds, fmt.Sprintf("$.sinks[%d]", i), k.Config, true)
	}
}

// ErrorAt returns a job-file error for the key at a YAML path such as
// "$.sources[0].options", with its line.
func (s *Spec) ErrorAt(path, format string, args ...any) *Error {
	v := validator{s: s}
	v.fail(path, format, args...)
	return v.errs[0]
}
