// Package memsource is a source kind for tests and the template of a new
// one: a list of items written in the job file (`items: [a, b, c]`), of
// which each run reads those after the last it read, as rows of one
// column, item. It is registered by importing it (the CLI does so when
// built with the build tag kindtest), and nothing outside this package
// knows it: its block is registered with job.RegisterSource, its opener
// with source.Register, and its records' details, which show themselves in
// the run summary, `runs`, `plan`, `bookmark show` and the dashboard, with
// bookmark.RegisterDetail (details.go).
package memsource

import (
	"context"
	"encoding/csv"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// Name is the kind's name in the job file's registry and the source
// registry; Kind is its name in the records it writes.
const (
	Name                     = "memlist"
	Kind bookmark.SourceKind = "memlist"
)

// Config is a memory list's block in the job file.
type Config struct {
	// Items are the values the source holds, oldest first; a run reads
	// those after the last one the bookmark read.
	Items []string `yaml:"items" doc:"required: the items, oldest first; add to the end"`
}

// ApplyDefaults sets nothing.
func (c *Config) ApplyDefaults(*job.Spec) {}

// Validate refuses an empty item.
func (c *Config) Validate(ck *job.Check) {
	for i, it := range c.Items {
		if it == "" {
			ck.Fail(fmt.Sprintf("items[%d]", i), "must not be empty")
		}
	}
}

// Source is one opened memory list.
type Source struct {
	ctx string
	cfg *Config
}

var _ source.Source = (*Source)(nil)

// Ctx is the source's ctx.
func (s *Source) Ctx() string { return s.ctx }

// fingerprint names the definition: a list may grow, never change kind.
const fingerprint = "memlist"

// CheckDefinition refuses a state another kind wrote under the ctx.
func (s *Source) CheckDefinition(_ context.Context, prev bookmark.SourceState) error {
	if prev.Kind != "" && prev.Kind != Kind {
		return &source.ChangedError{Ctx: s.ctx, Was: string(prev.Kind), Now: string(Kind)}
	}
	return nil
}

// Plan reads the items after the bookmark's (all of them with no
// bookmark or under disable).
func (s *Source) Plan(_ context.Context, req source.Request) (source.Plan, error) {
	if req.RangeRuns != nil {
		return nil, fmt.Errorf("source %s: a memory list cannot re-read the input of runs (from, to]", s.ctx)
	}
	var after int64
	if req.HasPrev && req.Mode != bookmark.ModeDisable {
		after = DetailOf(req.Prev).Next
	}
	if after > int64(len(s.cfg.Items)) {
		return nil, fmt.Errorf("source %s: the bookmark read %d items but the job file lists %d: items were removed", s.ctx, after, len(s.cfg.Items))
	}
	return &Plan{ctx: s.ctx, prev: req.Prev, after: after, items: s.cfg.Items[after:]}, nil
}

// Close does nothing.
func (s *Source) Close() error { return nil }

// Plan is a run's part of a memory list: items after the first `after`.
type Plan struct {
	ctx   string
	prev  bookmark.SourceState
	after int64
	items []string
}

var _ source.Plan = (*Plan)(nil)

// Pending is the number of items to read.
func (p *Plan) Pending() int64 { return int64(len(p.items)) }

// Downloads is 0: nothing is downloaded.
func (p *Plan) Downloads() int64 { return 0 }

// Size is one file, written when opened.
func (p *Plan) Size() (files, bytes int64) { return 0, 0 }

// BadRecords is fail.
func (p *Plan) BadRecords() string { return engine.BadFail }

// Report logs the plan.
func (p *Plan) Report(log *slog.Logger) {
	log.Info("planned", "source", p.ctx, "items", len(p.items), "after", p.after)
}

// Preview is the plan as `tidemark plan` shows it.
func (p *Plan) Preview() source.Preview {
	return source.Preview{New: append([]string{}, p.items...), Detail: PreviewDetail{Items: int64(len(p.items)), After: p.after}}
}

// Open writes the items as a CSV file into the run's spill folder.
func (p *Plan) Open(_ context.Context, env source.Env) (source.Reading, error) {
	dir, err := env.TempDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, p.ctx+"-items.csv")
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("writing the items of source %s: %w", p.ctx, err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"item"})
	for _, it := range p.items {
		_ = w.Write([]string{it})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the items of source %s: %w", p.ctx, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("writing the items of source %s: %w", p.ctx, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	in := engine.Source{Ctx: p.ctx, Format: "csv", Options: map[string]any{"header": true},
		Files:  []engine.Input{{Location: path, Key: p.ctx + "-items.csv", Size: fi.Size()}},
		Schema: []bookmark.Column{{Name: "item", Type: "VARCHAR"}}, Exact: true}
	return reading{in}, nil
}

// reading is the items' file, read once.
type reading struct{ in engine.Source }

func (r reading) Input() engine.Source { return r.in }

func (r reading) Done(context.Context, error, engine.SourceResult, bool) (bool, error) {
	return false, nil
}

// Count is the source's line of the run summary.
func (p *Plan) Count(res *engine.SourceResult) store.Count {
	c := store.Count{Detail: CountDetail{After: p.after}}
	if res != nil {
		c.Rows = res.Rows
		c.Detail = CountDetail{Items: int64(len(p.items)), After: p.after}
	}
	return c
}

// Advance moves the bookmark past the items read.
func (p *Plan) Advance(string, engine.SourceResult) (source.Advance, bool) {
	s := p.prev
	s.Kind, s.Fingerprint, s.Describe = Kind, fingerprint, "a memory list"
	s.Schema = []bookmark.Column{{Name: "item", Type: "VARCHAR"}}
	d := DetailOf(p.prev)
	s.Detail = StateDetail{Next: p.after + int64(len(p.items)), Runs: d.Runs + 1}
	return source.Advance{State: s}, true
}
