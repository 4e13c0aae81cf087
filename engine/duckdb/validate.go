package duckdb

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
)

// validatePlan checks names, formats and references before anything runs,
// and fills the defaults: OnBadRecord fail; a sink's From the last
// transform, else the only source. It turns every location into a local
// path (in its own copies of the plan's slices): DuckDB reads and writes
// local files only (Capabilities).
func validatePlan(p *engine.Plan) error {
	if err := localize(p); err != nil {
		return err
	}
	switch p.OnBadRecord {
	case "":
		p.OnBadRecord = engine.BadFail
	case engine.BadFail, engine.BadSkip:
	case engine.BadQuarantine:
		if p.Rejects == "" {
			return fmt.Errorf("on_bad_record quarantine needs a rejects folder")
		}
	default:
		return fmt.Errorf("on_bad_record %q is not fail, skip or quarantine", p.OnBadRecord)
	}
	views := map[string]string{} // lower-case name -> what defines it
	define := func(kind, name string) error {
		if err := checkName(kind, name); err != nil {
			return err
		}
		// DuckDB identifiers are case-insensitive.
		if prev, dup := views[strings.ToLower(name)]; dup {
			return fmt.Errorf("%s %s: the name is already used by %s", kind, name, prev)
		}
		views[strings.ToLower(name)] = kind + " " + name
		return nil
	}
	for _, s := range p.Sources {
		if err := define("source", s.Ctx); err != nil {
			return err
		}
		if _, ok := readerOptions[s.Format]; !ok {
			return fmt.Errorf("source %s: format %q is not csv, json or parquet", s.Ctx, s.Format)
		}
	}
	for _, t := range p.Transforms {
		if err := define("transform", t.Name); err != nil {
			return err
		}
		if strings.TrimSpace(t.SQL) == "" {
			return fmt.Errorf("transform %s: SQL is empty", t.Name)
		}
	}
	sinks := map[string]bool{}
	p.Sinks = slices.Clone(p.Sinks) // defaults go into our copy only
	for i := range p.Sinks {
		s := &p.Sinks[i]
		if err := checkName("sink", s.Ctx); err != nil {
			return err
		}
		if sinks[strings.ToLower(s.Ctx)] {
			return fmt.Errorf("sink %s: the name is used twice", s.Ctx)
		}
		sinks[strings.ToLower(s.Ctx)] = true
		if _, ok := writerOptions[s.Format]; !ok {
			return fmt.Errorf("sink %s: format %q is not parquet, csv or json", s.Ctx, s.Format)
		}
		if s.Location == "" {
			return fmt.Errorf("sink %s: no staging folder", s.Ctx)
		}
		if s.From == "" {
			switch {
			case len(p.Transforms) > 0:
				s.From = p.Transforms[len(p.Transforms)-1].Name
			case len(p.Sources) == 1:
				s.From = p.Sources[0].Ctx
			default:
				return fmt.Errorf("sink %s: from is required when there are several sources and no transform", s.Ctx)
			}
		}
		if _, ok := views[strings.ToLower(s.From)]; !ok {
			return fmt.Errorf("sink %s: from %s is neither a source nor a transform", s.Ctx, s.From)
		}
	}
	return nil
}

// localize replaces the plan's locations by local paths.
func localize(p *engine.Plan) error {
	p.Sources = slices.Clone(p.Sources)
	for i := range p.Sources {
		src := &p.Sources[i]
		src.Files = slices.Clone(src.Files)
		for j := range src.Files {
			local, err := engine.LocalPath(src.Files[j].Location)
			if err != nil {
				return fmt.Errorf("source %s: %w (duckdb reads local files and pipes only)", src.Ctx, err)
			}
			src.Files[j].Location = local
		}
	}
	p.Sinks = slices.Clone(p.Sinks)
	for i := range p.Sinks {
		if p.Sinks[i].Location == "" {
			continue
		}
		local, err := engine.LocalPath(p.Sinks[i].Location)
		if err != nil {
			return fmt.Errorf("sink %s: %w (duckdb writes local files only)", p.Sinks[i].Ctx, err)
		}
		p.Sinks[i].Location = local
	}
	if p.Rejects != "" {
		local, err := engine.LocalPath(p.Rejects)
		if err != nil {
			return fmt.Errorf("rejects: %w (duckdb writes local files only)", err)
		}
		p.Rejects = local
	}
	return nil
}
