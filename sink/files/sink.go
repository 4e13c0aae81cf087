package files

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// Sink is one opened file sink of a job.
type Sink struct {
	spec job.Sink
	cfg  *Config // spec's block
	root string
	objs objstore.Store
}

var _ sink.Sink = (*Sink)(nil)

func init() {
	sink.Register(sink.Kind{Name: sink.KindFiles, Anchor: "path", Noun: "file sinks (path:)",
		Config: func() job.Config { return new(Config) },
		Open: func(ctx context.Context, spec *job.Spec, k job.Sink) (sink.Sink, error) {
			return Open(ctx, spec, k)
		},
		Locate: func(ctx context.Context, o store.Output) (sink.Location, error) {
			return OpenLocation(ctx, o.Root)
		},
		Outputs: []manifest.Kind{manifest.File, manifest.Upload}})
}

// Location is where a sink writes, with its S3 settings (never
// credentials) as a query string, so the output manifests name a location
// that a roll-forward or purge can open without the job file.
func Location(spec *job.Spec, k job.Sink) string {
	kc := k.Config.(*Config)
	return objstore.WithOptions(spec.Resolve(kc.Path), kc.S3)
}

// Open opens a job's file sink; it touches nothing.
func Open(ctx context.Context, spec *job.Spec, k job.Sink) (*Sink, error) {
	kc, ok := k.Config.(*Config)
	if !ok {
		return nil, fmt.Errorf("sink %s: not a file sink", k.Ctx)
	}
	root := Location(spec, k)
	objs, err := objstore.Open(ctx, root, nil)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", k.Ctx, err)
	}
	return &Sink{spec: k, cfg: kc, root: root, objs: objs}, nil
}

// Ctx is the sink's ctx.
func (s *Sink) Ctx() string { return s.spec.Ctx }

// Root is the sink's location as manifests record it.
func (s *Sink) Root() string { return s.root }

// Close releases nothing.
func (s *Sink) Close() error { return nil }

// Claim makes sure the location is the job's under this state store: a
// location without a record is claimed (created only if still absent, so
// of two jobs racing one wins); one recorded for another job or state
// store, or for a later version than the state's, is refused with a
// *sink.OwnedError. With Adopt the record is rewritten for this job and
// state instead. A disable run (which reads all input whatever the state
// knows) is refused only by another job's record.
func (s *Sink) Claim(ctx context.Context, c sink.Claim) error {
	p := (&location{root: s.root, objs: s.objs}).place(s.spec.Ctx)
	p.Inside = func(ctx context.Context) error { return checkParents(ctx, s.root, s.spec.Ctx, c.Job) }
	return sink.ClaimAt(ctx, p, c)
}

// Cleanup aborts the incomplete uploads and deletes the staged files of
// the job's dead runs; other runs' are left alone and reported.
func (s *Sink) Cleanup(ctx context.Context, dead func(runID string) (bool, error), log *slog.Logger) error {
	root := s.root
	isDead := func(id string) bool {
		d, err := dead(id)
		return err == nil && d
	}
	// A dead run's incomplete multipart uploads are invisible to List.
	if a, ok := s.objs.(objstore.UploadAborter); ok {
		others := 0
		n, err := a.AbortStaleUploads(ctx, "", 0, func(k string) bool {
			id := runOfKey(k)
			if id != "" && !isDead(id) {
				others++
				return false
			}
			return id != ""
		})
		if err != nil {
			return fmt.Errorf("aborting stale uploads under %s: %w", root, err)
		}
		if n > 0 {
			log.Info("aborted incomplete uploads of runs that did not commit", "root", root, "uploads", n)
		}
		if others > 0 {
			log.Warn("incomplete uploads of runs this job's state does not know are left alone", "root", root, "uploads", others)
		}
	}
	// The run folders under staging: one listing of folders where the
	// store has it (an empty folder a killed engine left, or on S3 the
	// folder markers a Hadoop writer makes, is seen too, and a no-op run
	// sends one request as before), else of the staged files.
	deadRuns := map[string]int{}
	foreign, unit := 0, "files"
	if fl, ok := s.objs.(objstore.FolderLister); ok {
		for id, err := range fl.Folders(ctx, stagingDir+"/") {
			if err != nil {
				return fmt.Errorf("cleaning %s: %w", root, err)
			}
			if isDead(id) {
				deadRuns[id] = -1
			} else {
				foreign, unit = foreign+1, "runs"
			}
		}
	} else {
		for o, err := range s.objs.List(ctx, stagingDir+"/") {
			if err != nil {
				return err
			}
			id, _, _ := strings.Cut(strings.TrimPrefix(o.Key, stagingDir+"/"), "/")
			if isDead(id) {
				deadRuns[id]++
			} else {
				foreign++
			}
		}
	}
	for id, n := range deadRuns {
		if n >= 0 {
			log.Info("deleting staged output of a run that did not commit", "root", root, "run", id, "files", n)
		} else {
			log.Info("deleting staged output of a run that did not commit", "root", root, "run", id)
		}
		if err := s.objs.DeletePrefix(ctx, stagingPrefix(id)); err != nil {
			return fmt.Errorf("cleaning %s: %w", root, err)
		}
	}
	if foreign > 0 {
		log.Warn("staged files of runs this job's state does not know are left alone", "root", root, unit, foreign,
			"folder", layout.Join(root, stagingDir+"/"))
	}
	return nil
}

// Prepare makes the run's staging folder: in place under the sink's
// _tidemark/staging/<run>/ on local disks, a temporary folder otherwise
// (uploaded by Stage).
func (s *Sink) Prepare(ctx context.Context, run sink.Run) (sink.Staging, error) {
	st := &staging{sink: s, run: run}
	if p, ok := s.objs.LocalPath(stagingPrefix(run.ID)); ok {
		st.local = p
	} else {
		dir, err := run.TempDir("stage-")
		if err != nil {
			return nil, fmt.Errorf("sink %s: making staging folder: %w", s.spec.Ctx, err)
		}
		st.local, st.remote = dir, true
	}
	if err := os.MkdirAll(st.local, 0o755); err != nil {
		return nil, fmt.Errorf("sink %s: making staging folder: %w", s.spec.Ctx, err)
	}
	return st, nil
}

// dataDir is the folder the engine writes a staging area's rows into.
func (st *staging) dataDir() string { return path.Join(st.local, "data") }

var _ sink.Appender = (*Sink)(nil)

// Appends reports whether the sink is in append mode: a run may then
// publish in batches (sink.Appender).
func (s *Sink) Appends() bool { return s.cfg.Mode == "append" }
