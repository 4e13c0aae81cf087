// Package memsink is a sink kind for tests and the template of a new one:
// a run log (`log: DIR`), a folder of its own into which each run's rows
// are published as one JSON-lines file, RUN.jsonl, its output records of
// a manifest kind of their own (Output). It is registered by importing it
// (the CLI does so when built with the build tag kindtest), and nothing
// outside this package knows it: sink.Register makes its block, its
// opener and its outputs' locations known (register.go); its block says
// where it is (Place); its location publishes, purges and keeps an
// ownership record (location.go).
package memsink

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// Name is the kind's name in the job file's registry and the sink
// registry; Output is the kind of the output records it stages.
const (
	Name                 = "runlog"
	Output manifest.Kind = "run_log"
)

// Config is a run log's block in the job file.
type Config struct {
	// Log is the run log's folder: a local path, relative to the job file.
	Log string `yaml:"log" doc:"required: the run log's folder (local); each run publishes RUN.jsonl there"`
}

// ApplyDefaults sets nothing.
func (c *Config) ApplyDefaults(*job.Spec) {}

// Validate refuses an empty or remote log folder.
func (c *Config) Validate(ck *job.Check) {
	switch {
	case strings.TrimSpace(c.Log) == "":
		ck.Fail("log", "is required")
	case strings.Contains(c.Log, "://") && !strings.HasPrefix(c.Log, "file://"):
		ck.Fail("log", "%q: a run log is a local folder", c.Log)
	}
}

// Place is the log's folder, which no other sink, source or state may
// overlap, shown as written, and its lineage dataset (namespace runlog,
// name the folder's absolute path).
func (c *Config) Place(spec *job.Spec) job.Place {
	dir := spec.Resolve(c.Log)
	return job.Place{Folder: dir, Shown: c.Log,
		Dataset: job.Dataset{Namespace: Name, Name: dir, SourceName: Name, URI: Name + "://" + filepath.ToSlash(dir)}}
}

// Sink is one opened run log.
type Sink struct {
	ctx string
	dir string
}

var _ sink.Sink = (*Sink)(nil)

// Ctx is the sink's ctx.
func (s *Sink) Ctx() string { return s.ctx }

// Claim checks (and, unless c.CheckOnly, writes) the log's ownership
// record.
func (s *Sink) Claim(ctx context.Context, c sink.Claim) error {
	return (&location{dir: s.dir}).claim(ctx, s.ctx, c)
}

// Cleanup deletes the staging of dead runs.
func (s *Sink) Cleanup(_ context.Context, dead func(string) (bool, error), log *slog.Logger) error {
	ents, err := os.ReadDir(stagingDir(s.dir))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing the staging of run log %s: %w", s.dir, err)
	}
	for _, e := range ents {
		d, err := dead(e.Name())
		if err != nil {
			return err
		}
		if d {
			log.Info("deleting a dead run's staging", "sink", s.ctx, "run", e.Name())
			if err := os.RemoveAll(filepath.Join(stagingDir(s.dir), e.Name())); err != nil {
				return fmt.Errorf("deleting the staging of run %s in run log %s: %w", e.Name(), s.dir, err)
			}
		}
	}
	return nil
}

// Prepare gives the engine the run's staging folder.
func (s *Sink) Prepare(_ context.Context, run sink.Run) (sink.Staging, error) {
	return &staging{ctx: s.ctx, dir: s.dir, run: run.ID}, nil
}

// Close does nothing.
func (s *Sink) Close() error { return nil }

// Appends is true: each run adds a file of its own.
func (s *Sink) Appends() bool { return true }

func stagingDir(dir string) string { return filepath.Join(dir, "_tidemark", "staging") }

// staging is one run's staging folder, where the engine writes JSON lines.
type staging struct {
	ctx, dir, run string
}

func (g *staging) where() string { return filepath.Join(stagingDir(g.dir), g.run) }

func (g *staging) Target() engine.Sink {
	return engine.Sink{Ctx: g.ctx, Format: "json", Location: g.where()}
}

func (g *staging) Rejects() string { return "" }

func (g *staging) EngineStarted(context.Context) {}

func (g *staging) EngineReturned(context.Context, error) {}

// Stage records each file the engine wrote as a run_log output; the files
// stay in the staging folder until Publish joins them into RUN.jsonl.
func (g *staging) Stage(_ context.Context, res engine.SinkResult, _ bool) (sink.Staged, error) {
	var st sink.Staged
	for _, f := range res.Files {
		st.Outputs = append(st.Outputs, store.Output{RunID: g.run, Sink: g.ctx, Kind: Output, Root: g.dir,
			Staged: "_tidemark/staging/" + g.run + "/" + f.Path, Final: g.run + ".jsonl", Rows: f.Rows, Bytes: f.Bytes})
	}
	st.Count = store.Count{Files: 1, Rows: res.Rows}
	if len(res.Files) == 0 {
		st.Count.Files = 0
	}
	return st, nil
}

func (g *staging) Discard(context.Context) { _ = os.RemoveAll(g.where()) }
