package tidemark

import (
	"context"
	"errors"
	"fmt"
	sinkfiles "github.com/tidemark-etl/tidemark/sink/files"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/objstore"
	sinksql "github.com/tidemark-etl/tidemark/sink/sqltable"
	"github.com/tidemark-etl/tidemark/store"
)

// stagedSink is a sink's staging area for this run.
type stagedSink struct {
	spec   job.Sink
	cfg    *sinkfiles.Config // a file sink's block; for a table sink, only the format the engine writes
	root   string
	objs   objstore.Store
	local  string // folder the engine writes
	remote bool   // local is a temp folder to upload from
	table  *sinksql.Sink
}

// tableStaging prepares a SQL table sink: the engine writes Parquet into a
// temporary folder, which Stage then loads into a staging table.
func (r *runner) tableStaging(ctx context.Context, k job.Sink) (stagedSink, error) {
	ts, err := sinksql.Open(ctx, tableSinkConfig(k))
	if err != nil {
		return stagedSink{}, err
	}
	r.closers = append(r.closers, ts.Close)
	dir, err := os.MkdirTemp(r.spillDir(), r.tempPrefix()+"stage-")
	if err != nil {
		return stagedSink{}, fmt.Errorf("sink %s: making staging folder: %w", k.Ctx, err)
	}
	r.tmpDirs = append(r.tmpDirs, dir)
	return stagedSink{spec: k, cfg: &sinkfiles.Config{Format: "parquet"}, root: tableLocation(k), local: dir, table: ts}, nil
}

// stageTable loads a table sink's output into its staging table and
// records it in the commit.
func (r *runner) stageTable(ctx context.Context, ss stagedSink, sr engine.SinkResult, c *store.Commit) error {
	var files []string
	for _, f := range sr.Files {
		files = append(files, filepath.Join(ss.local, "data", filepath.FromSlash(f.Path)))
	}
	rows, err := ss.table.Stage(ctx, r.rec.RunID, files, nil)
	if err != nil {
		return err
	}
	c.Outputs = append(c.Outputs, store.Output{RunID: r.rec.RunID, Sink: ss.spec.Ctx, Root: ss.root,
		Staged: "stage table", Final: tableSinkConfig(ss.spec).Table, Rows: rows})
	r.rec.Sinks[ss.spec.Ctx] = store.Count{Rows: rows}
	return nil
}

// stagingFor prepares a sink's staging folder: in place under the sink's
// _tidemark/staging/<run>/ on local disks, a temporary folder otherwise.
func (r *runner) stagingFor(ctx context.Context, k job.Sink) (stagedSink, error) {
	if k.IsTable() {
		return r.tableStaging(ctx, k)
	}
	root := sinkLocation(r.spec, k)
	objs, err := r.rs.open(ctx, root)
	if err != nil {
		return stagedSink{}, fmt.Errorf("sink %s: %w", k.Ctx, err)
	}
	ss := stagedSink{spec: k, cfg: fileSinkConfig(k), root: root, objs: objs}
	if p, ok := objs.LocalPath(stagingPrefix(r.rec.RunID)); ok {
		ss.local = p
	} else {
		dir, err := os.MkdirTemp(r.spillDir(), r.tempPrefix()+"stage-")
		if err != nil {
			return ss, fmt.Errorf("sink %s: making staging folder: %w", k.Ctx, err)
		}
		r.tmpDirs = append(r.tmpDirs, dir)
		ss.local, ss.remote = dir, true
	}
	if err := os.MkdirAll(ss.local, 0o755); err != nil {
		return ss, fmt.Errorf("sink %s: making staging folder: %w", k.Ctx, err)
	}
	return ss, nil
}

// stageOutputs records every staged file in the commit (uploading it first
// when the sink is remote) and the sink's overwrite action.
func (r *runner) stageOutputs(ctx context.Context, res engine.Result, c *store.Commit) error {
	rejectsDone := false
	for _, ss := range r.staged {
		k := ss.spec
		sr := res.Sinks[k.Ctx]
		if ss.table != nil {
			if err := r.stageTable(ctx, ss, sr, c); err != nil {
				return err
			}
			continue
		}
		names := finalNames(r.rec.RunID, sr.Files, sinkExt(ss.cfg.Format))
		var bytes int64
		parts := map[string]bool{}
		tail := r.tailOf(k.Ctx)
		for j, f := range sr.Files {
			staged := stagingPrefix(r.rec.RunID) + "data/" + f.Path
			c.Outputs = append(c.Outputs, store.Output{RunID: r.rec.RunID, Sink: k.Ctx, Root: ss.root,
				Staged: staged, Final: names[j], Rows: f.Rows, Bytes: f.Bytes})
			id := ""
			if tail != nil && tail.covers(f.Path) {
				id = tail.take(ctx, f.Path, names[j])
			}
			if id != "" {
				c.Outputs[len(c.Outputs)-1].Staged = uploadPrefix + id // sent while the engine wrote it
			} else {
				r.queueUpload(ss, filepath.Join(ss.local, "data", filepath.FromSlash(f.Path)), c, len(c.Outputs)-1)
			}
			bytes += f.Bytes
			if d := path.Dir(names[j]); d != "." {
				parts[d] = true
			}
		}
		if tail != nil {
			tail.drop(ctx) // not taken: no file of the sink was data_0
		}
		r.rec.Sinks[k.Ctx] = store.Count{Files: int64(len(sr.Files)), Rows: sr.Rows, Bytes: bytes}
		switch ss.cfg.Mode {
		case "overwrite":
			c.Actions = append(c.Actions, store.SinkAction{Sink: k.Ctx, Root: ss.root, Mode: ss.cfg.Mode})
		case "overwrite_partitions":
			a := store.SinkAction{Sink: k.Ctx, Root: ss.root, Mode: ss.cfg.Mode}
			for p := range parts {
				a.Partitions = append(a.Partitions, p)
			}
			if len(a.Partitions) > 0 {
				c.Actions = append(c.Actions, a)
			}
		}
		if !rejectsDone {
			rejectsDone = true
			if err := r.stageRejects(ss, c); err != nil {
				return err
			}
		}
	}
	return r.runUploads(ctx)
}

// stageRejects records quarantined rows as outputs published under
// _tidemark/rejects/<run>/.
func (r *runner) stageRejects(ss stagedSink, c *store.Commit) error {
	dir := filepath.Join(ss.local, "rejects")
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		staged := stagingPrefix(r.rec.RunID) + "rejects/" + rel
		info, _ := d.Info()
		c.Outputs = append(c.Outputs, store.Output{RunID: r.rec.RunID, Sink: "rejects:" + strings.SplitN(rel, "/", 2)[0],
			Root: ss.root, Staged: staged, Final: rejectsDir + "/" + r.rec.RunID + "/" + rel, Bytes: info.Size()})
		r.queueUpload(ss, p, c, len(c.Outputs)-1)
		return nil
	})
}

// queueUpload schedules the upload of output i of c, a staged local file,
// when the sink is remote. Where the store can prepare an upload (S3), the
// bytes go to the final key as an upload left incomplete, which publishing
// completes without moving them again; the output's Staged then names the
// upload (uploadPrefix + id). Elsewhere they go to the staged key, which
// publishing moves.
func (r *runner) queueUpload(ss stagedSink, local string, c *store.Commit, i int) {
	if !ss.remote {
		return
	}
	o := c.Outputs[i]
	r.uploads = append(r.uploads, func(ctx context.Context) error {
		f, err := os.Open(local)
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		if p, ok := ss.objs.(objstore.Preparer); ok {
			id, err := p.PrepareUpload(ctx, o.Final, f)
			if err != nil {
				return fmt.Errorf("sink %s: uploading %s: %w", ss.spec.Ctx, joinLoc(ss.root, o.Final), err)
			}
			c.Outputs[i].Staged = uploadPrefix + id // each upload writes its own element
		} else if err := ss.objs.Put(ctx, o.Staged, f); err != nil {
			return fmt.Errorf("sink %s: uploading %s: %w", ss.spec.Ctx, joinLoc(ss.root, o.Staged), err)
		}
		if r.opts.Progress != nil {
			r.opts.Progress.Add(1, info.Size())
		}
		return nil
	})
}

// runUploads uploads the queued files, io.concurrency at a time.
func (r *runner) runUploads(ctx context.Context) error {
	jobs := r.uploads
	r.uploads = nil
	if len(jobs) == 0 {
		return nil
	}
	if r.opts.Progress != nil {
		r.opts.Progress.Phase("uploading", int64(len(jobs)), 0)
		defer r.opts.Progress.Done()
	}
	return parallel(ctx, r.spec.IO.Concurrency, jobs)
}
