package iceberg

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	iceberg "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// dataFile is one Parquet data file a run reads.
type dataFile struct {
	// URI is the file as the table's metadata names it; Path is where it
	// is on this machine.
	URI, Path string
	Size      int64
	Rows      int64
	// Snapshot is the snapshot that added it, or the snapshot whose whole
	// table a run reads (a first run, reprocess, disable); Seq its sequence
	// number and TimeMs its commit time.
	Snapshot, Seq, TimeMs int64
}

// step is one snapshot after the bookmark, oldest first: the files it
// added that a run reads, or why it is skipped.
type step struct {
	ID, Seq, TimeMs int64
	Op              string
	Files           []dataFile
	// Skip says why a snapshot is not read ("": it is read).
	Skip string
}

// RewriteError refuses a snapshot after the bookmark that removed or
// rewrote rows, under on_rewrite: fail.
type RewriteError struct {
	Job, Ctx, Table string
	Snapshot        int64
	Op              string
	// What it changed, from its summary ("deleted 3 data files").
	What string
}

func (e *RewriteError) Error() string {
	return fmt.Sprintf("source %s: Iceberg table %s: snapshot %d after the bookmark removed or rewrote rows (%s: %s): "+
		"reading only what it added could lose or duplicate rows; set on_rewrite: reprocess (read the whole table "+
		"again) or ignore (skip it), or run `tidemark bookmark reset %s` to read the table from its current snapshot",
		e.Ctx, e.Table, e.Snapshot, e.Op, e.What, e.Job)
}

// HistoryError refuses a bookmark whose snapshot the table's history no
// longer leads to: expired with snapshots not yet read, rolled back, or
// another table under the same name.
type HistoryError struct {
	Job, Ctx, Table string
	Snapshot        int64
	Why             string
}

func (e *HistoryError) Error() string {
	return fmt.Sprintf("source %s: Iceberg table %s: the bookmark read up to snapshot %d, but %s: the snapshots "+
		"since cannot be told apart from older ones, so nothing is read; run `tidemark bookmark reset %s` to read "+
		"the table from its current snapshot (rows read before are read again)", e.Ctx, e.Table, e.Snapshot, e.Why, e.Job)
}

// since is the snapshots of tbl's current branch after snapshot from (0:
// from the first), oldest first, up to the current one. A bookmark the
// current snapshot's ancestors do not reach is a *HistoryError: from
// itself may have expired as long as its child is there (the child names
// it as its parent), but an expired snapshot not yet read is never
// silently skipped.
func since(tbl *table.Table, job, srcCtx, name string, from int64) ([]table.Snapshot, error) {
	var chain []table.Snapshot
	for s := tbl.CurrentSnapshot(); s != nil && s.SnapshotID != from; {
		chain = append(chain, *s)
		if s.ParentSnapshotID == nil {
			if from == 0 {
				break
			}
			why := "it is not an ancestor of the current snapshot (the table was rolled back, or dropped and made again)"
			if tbl.SnapshotByID(from) == nil {
				why = "it is no longer in the table's history (expired by expire_snapshots) and neither are the snapshots after it"
			}
			return nil, &HistoryError{Job: job, Ctx: srcCtx, Table: name, Snapshot: from, Why: why}
		}
		parent := *s.ParentSnapshotID
		if parent == from {
			break
		}
		p := tbl.SnapshotByID(parent)
		if p == nil {
			return nil, &HistoryError{Job: job, Ctx: srcCtx, Table: name, Snapshot: from, Why: fmt.Sprintf(
				"snapshot %d after it is no longer in the table's history (expired by expire_snapshots before a run read it)", parent)}
		}
		s = p
	}
	slices.Reverse(chain)
	return chain, nil
}

// operation is what a snapshot did, as a run treats it: "append" (it only
// added data files), "replace" (it rewrote rows, adding none), or
// "rewrite" (it removed or rewrote rows: an overwrite or a delete that
// removed something), with what it changed.
func operation(s table.Snapshot) (kind, what string) {
	op := table.OpAppend
	var props iceberg.Properties
	if s.Summary != nil {
		op, props = s.Summary.Operation, s.Summary.Properties
	}
	num := func(k string) int64 {
		n, _ := strconv.ParseInt(props[k], 10, 64)
		return n
	}
	removed := func() (bool, string) {
		var parts []string
		for _, k := range []string{"deleted-data-files", "deleted-records", "added-delete-files", "removed-delete-files"} {
			if n := num(k); n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, n))
			}
		}
		// A summary that does not count is taken to remove something.
		known := props["deleted-data-files"] != "" || props["deleted-records"] != ""
		return len(parts) > 0 || !known, strings.Join(parts, ", ")
	}
	switch op {
	case table.OpAppend:
		return "append", ""
	case table.OpReplace:
		return "replace", ""
	case table.OpOverwrite, table.OpDelete:
		if r, what := removed(); r {
			if what == "" {
				what = "its summary does not say what it removed"
			}
			return "rewrite", what
		}
		if op == table.OpOverwrite {
			return "append", "" // an overwrite that removed nothing
		}
		return "replace", ""
	}
	return "rewrite", "operation " + string(op)
}

// added are the data files snapshot s added, in the order of its
// manifests.
func added(ctx context.Context, fs iceio.IO, s table.Snapshot, name string) ([]dataFile, error) {
	mans, err := s.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("reading the manifest list of snapshot %d of Iceberg table %s: %w", s.SnapshotID, name, err)
	}
	var out []dataFile
	for _, m := range mans {
		if m.ManifestContent() != iceberg.ManifestContentData || m.SnapshotID() != s.SnapshotID {
			continue
		}
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				return nil, fmt.Errorf("reading manifest %s of Iceberg table %s: %w", m.FilePath(), name, err)
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if e.Status() != iceberg.EntryStatusADDED || e.SnapshotID() != s.SnapshotID {
				continue
			}
			df, err := fileOf(e.DataFile(), s, name)
			if err != nil {
				return nil, err
			}
			out = append(out, df)
		}
	}
	return out, nil
}

// whole are the data files of the table at snapshot s: what a first run
// (or reprocess, or disable) reads. Delete files (merge-on-read) cannot be
// applied by an engine that reads the Parquet files, so they are refused.
func whole(ctx context.Context, tbl *table.Table, s table.Snapshot, srcCtx, name string) ([]dataFile, error) {
	scan := tbl.Scan(table.WithSnapshotID(s.SnapshotID))
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the data files of Iceberg table %s at snapshot %d: %w", name, s.SnapshotID, err)
	}
	var out []dataFile
	seqs := map[string]int64{}
	for _, t := range tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			return nil, fmt.Errorf("source %s: Iceberg table %s at snapshot %d has delete files for %s (merge-on-read "+
				"deletes), which this source cannot apply; compact the table (rewrite its data files) first",
				srcCtx, name, s.SnapshotID, t.File.FilePath())
		}
		df, err := fileOf(t.File, s, name)
		if err != nil {
			return nil, err
		}
		seqs[df.URI] = 0
		if t.DataSequenceNumber != nil {
			seqs[df.URI] = *t.DataSequenceNumber
		}
		out = append(out, df)
	}
	// Oldest first: by the sequence number of the snapshot that added
	// each file, then by name.
	slices.SortFunc(out, func(a, b dataFile) int {
		if c := cmp.Compare(seqs[a.URI], seqs[b.URI]); c != 0 {
			return c
		}
		return strings.Compare(a.URI, b.URI)
	})
	return slices.CompactFunc(out, func(a, b dataFile) bool { return a.URI == b.URI }), nil
}

// fileOf is a data file of the table as a run reads it: a local Parquet
// file.
func fileOf(f iceberg.DataFile, s table.Snapshot, name string) (dataFile, error) {
	if f.FileFormat() != iceberg.ParquetFile {
		return dataFile{}, fmt.Errorf("reading Iceberg table %s: data file %s is %s; this source reads Parquet data files",
			name, f.FilePath(), f.FileFormat())
	}
	path, err := localPath(f.FilePath())
	if err != nil {
		return dataFile{}, fmt.Errorf("reading Iceberg table %s: data file %s: %w", name, f.FilePath(), err)
	}
	return dataFile{URI: f.FilePath(), Path: path, Size: f.FileSizeBytes(), Rows: f.Count(), Snapshot: s.SnapshotID,
		Seq: s.SequenceNumber, TimeMs: s.TimestampMs}, nil
}

// localPath is the path on this machine of a data file's URI (file:// or
// a plain absolute path).
func localPath(uri string) (string, error) {
	if filepath.IsAbs(uri) {
		return uri, nil
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("only tables whose data files are on a local disk (file://) are read in this build")
	}
	return filepath.FromSlash(u.Path), nil
}
