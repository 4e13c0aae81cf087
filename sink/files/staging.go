package files

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/internal/par"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// staging is a file sink's staging area for one execution.
type staging struct {
	sink   *Sink
	run    sink.Run
	local  string // folder the engine writes
	remote bool   // local is a temporary folder to upload from
	tail   *tailUpload
}

var _ sink.Staging = (*staging)(nil)

// Target is the engine's view of the sink.
func (st *staging) Target() engine.Sink {
	k, kc := st.sink.spec, st.sink.cfg
	return engine.Sink{Ctx: k.Ctx, From: k.From, Format: kc.Format, Options: kc.Options, PartitionBy: kc.PartitionBy,
		Location: st.dataDir()}
}

// Rejects is the folder for quarantined rows, published under
// _tidemark/rejects/<run>/.
func (st *staging) Rejects() string { return path.Join(st.local, "rejects") }

// EngineStarted starts the tail upload of a remote sink whose store can
// prepare uploads.
func (st *staging) EngineStarted(ctx context.Context) {
	st.tail = st.startTail(ctx)
}

// EngineReturned tells the tail upload the engine has returned; after a
// failure it waits for the tail to end (its upload aborted).
func (st *staging) EngineReturned(ctx context.Context, err error) {
	if st.tail == nil {
		return
	}
	engineReturned(st.tail, err)
	if err != nil {
		st.tail.drop(ctx)
		st.tail = nil
	}
}

// Stage records every staged file as an output (uploading it first when
// the sink is remote), the rejects with them if asked, and the sink's
// overwrite action.
func (st *staging) Stage(ctx context.Context, res engine.SinkResult, rejects bool) (sink.Staged, error) {
	k, kc := st.sink.spec, st.sink.cfg
	runID := st.run.ID
	var out sink.Staged
	var uploads []func(context.Context) error
	names := finalNames(runID, res.Files, sinkExt(kc.Format))
	var bytes int64
	parts := map[string]bool{}
	for j, f := range res.Files {
		staged := stagingPrefix(runID) + "data/" + f.Path
		out.Outputs = append(out.Outputs, store.Output{RunID: runID, Sink: k.Ctx, Kind: manifest.File, Root: st.sink.root,
			Staged: staged, Final: names[j], Rows: f.Rows, Bytes: f.Bytes})
		id := ""
		if st.tail != nil && st.tail.covers(f.Path) {
			id = st.tail.take(ctx, f.Path, names[j])
		}
		if id != "" {
			o := &out.Outputs[len(out.Outputs)-1] // sent while the engine wrote it
			o.Kind, o.UploadID, o.Staged = manifest.Upload, id, ""
		} else if up := st.upload(filepath.Join(st.dataDir(), filepath.FromSlash(f.Path)), &out, len(out.Outputs)-1); up != nil {
			uploads = append(uploads, up)
		}
		bytes += f.Bytes
		if d := path.Dir(names[j]); d != "." {
			parts[d] = true
		}
	}
	if st.tail != nil {
		st.tail.drop(ctx) // not taken: no file of the sink was the growing one
	}
	out.Count = store.Count{Files: int64(len(res.Files)), Rows: res.Rows, Bytes: bytes}
	switch kc.Mode {
	case "overwrite":
		out.Actions = append(out.Actions, store.SinkAction{Sink: k.Ctx, Root: st.sink.root, Mode: kc.Mode})
	case "overwrite_partitions":
		a := store.SinkAction{Sink: k.Ctx, Root: st.sink.root, Mode: kc.Mode}
		for p := range parts {
			a.Partitions = append(a.Partitions, p)
		}
		if len(a.Partitions) > 0 {
			out.Actions = append(out.Actions, a)
		}
	}
	cat, err := st.catalogChanges(ctx, res, names)
	if err != nil {
		return out, err
	}
	out.Catalog = cat
	if rejects {
		ups, err := st.stageRejects(&out)
		if err != nil {
			return out, err
		}
		uploads = append(uploads, ups...)
	}
	return out, st.runUploads(ctx, uploads)
}

// stageRejects records quarantined rows as outputs published under
// _tidemark/rejects/<run>/.
func (st *staging) stageRejects(out *sink.Staged) ([]func(context.Context) error, error) {
	runID := st.run.ID
	dir := filepath.Join(st.local, "rejects")
	var uploads []func(context.Context) error
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		staged := stagingPrefix(runID) + "rejects/" + rel
		info, _ := d.Info()
		out.Outputs = append(out.Outputs, store.Output{RunID: runID, Rejects: strings.SplitN(rel, "/", 2)[0], Kind: manifest.File,
			Root: st.sink.root, Staged: staged, Final: rejectsDir + "/" + runID + "/" + rel, Bytes: info.Size()})
		if up := st.upload(p, out, len(out.Outputs)-1); up != nil {
			uploads = append(uploads, up)
		}
		return nil
	})
	return uploads, err
}

// upload returns the upload of output i of out, a staged local file, when
// the sink is remote (nil when it is not). Where the store can prepare an
// upload (S3), the bytes go to the final key as an upload left
// incomplete, which publishing completes without moving them again; the
// output then names the upload (Kind Upload, UploadID). Elsewhere
// they go to the staged key, which publishing moves.
func (st *staging) upload(local string, out *sink.Staged, i int) func(context.Context) error {
	if !st.remote {
		return nil
	}
	o := out.Outputs[i]
	objs, k := st.sink.objs, st.sink.spec
	return func(ctx context.Context) error {
		f, err := os.Open(local)
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		if p, ok := objs.(objstore.Preparer); ok {
			id, err := p.PrepareUpload(ctx, o.Final, f)
			if err != nil {
				return fmt.Errorf("sink %s: uploading %s: %w", k.Ctx, joinLoc(st.sink.root, o.Final), err)
			}
			o := &out.Outputs[i] // each upload writes its own element
			o.Kind, o.UploadID, o.Staged = manifest.Upload, id, ""
		} else if err := objs.Put(ctx, o.Staged, f); err != nil {
			return fmt.Errorf("sink %s: uploading %s: %w", k.Ctx, joinLoc(st.sink.root, o.Staged), err)
		}
		if st.run.Progress != nil {
			st.run.Progress.Add(1, info.Size())
		}
		return nil
	}
}

// runUploads uploads the queued files, io.concurrency at a time.
func (st *staging) runUploads(ctx context.Context, jobs []func(context.Context) error) error {
	if len(jobs) == 0 {
		return nil
	}
	if st.run.Progress != nil {
		st.run.Progress.Phase("uploading", int64(len(jobs)), 0)
		defer st.run.Progress.Done()
	}
	return par.Do(ctx, st.run.Concurrency, jobs)
}

// Discard deletes this run's staged output and aborts its uploads (a failed
// run publishes nothing).
func (st *staging) Discard(ctx context.Context) {
	s, runID, log := st.sink, st.run.ID, st.run.Log
	// The tail upload may still be on its way (its upload created after
	// the abort below listed the run's uploads): end it and abort it first.
	if t := st.tail; t != nil {
		select {
		case <-t.file.ended:
		default:
			engineReturned(t, errDiscarded)
		}
		t.drop(ctx)
		st.tail = nil
	}
	if err := s.objs.DeletePrefix(ctx, stagingPrefix(runID)); err != nil {
		log.Warn("cleaning staged output", "sink", s.spec.Ctx, "err", err)
	}
	if a, ok := s.objs.(objstore.UploadAborter); ok && st.remote {
		mine := "part-" + runID + "-"
		_, err := a.AbortStaleUploads(ctx, "", 0, func(k string) bool {
			return strings.Contains(k, mine) || strings.HasPrefix(k, stagingPrefix(runID))
		})
		if err != nil {
			log.Warn("aborting this run's uploads", "sink", s.spec.Ctx, "err", err)
		}
	}
	if !st.remote {
		_ = os.RemoveAll(st.local)
	}
}

// errDiscarded ends a tail upload whose run is discarded.
var errDiscarded = errors.New("the run's staging was discarded")

func joinLoc(root, key string) string { return layout.Join(root, key) }
