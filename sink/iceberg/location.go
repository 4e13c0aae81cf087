package iceberg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceberg "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// commitAttempts bounds the rounds of reload and commit when other
// writers keep committing first.
const commitAttempts = 10

// location is an Iceberg table opened from its output records: Root is
// its folder, Table its catalog (Connection: the state store's location)
// and name.
type location struct {
	dir    string
	target manifest.Table
}

var (
	_ sink.Location     = (*location)(nil)
	_ sink.PurgeChecker = (*location)(nil)
)

func locate(_ context.Context, o store.Output) (sink.Location, error) {
	if o.Table == nil {
		return nil, fmt.Errorf("output %s of run %s: an Iceberg output without its table", o.Final, o.RunID)
	}
	return &location{dir: o.Root, target: *o.Table}, nil
}

// fileURI is the file:// URI of key under the table's folder, as the
// table's metadata names its files.
func (l *location) fileURI(key string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(l.dir, filepath.FromSlash(key)))}).String()
}

func (l *location) ident() table.Identifier {
	ns, name, _ := strings.Cut(l.target.Table, ".")
	return table.Identifier{ns, name}
}

func (l *location) catalog(ctx context.Context) (*tableCatalog, error) {
	return openCatalog(ctx, l.target)
}

// Publish moves the run's staged files to their final names and commits
// them to the table in one snapshot (mode overwrite: replacing every data
// file the table holds). Idempotent: a snapshot of the run among the
// current snapshot's ancestors means it was committed, and nothing is
// added. A staged file that is neither staged nor at its final name is
// sink.ErrOutputLost, and nothing is changed.
func (l *location) Publish(ctx context.Context, p sink.Publication) error {
	if len(p.Outputs) == 0 {
		return nil
	}
	name := l.target.Table
	fail := func(err error) error {
		return fmt.Errorf("publishing run %s into Iceberg table %s: %w", p.RunID, name, err)
	}
	if err := l.recordPublished(ctx, p); err != nil {
		return err
	}
	cat, err := l.catalog(ctx)
	if err != nil {
		return fail(err)
	}
	defer cat.Close()
	for range commitAttempts {
		tbl, exists, err := cat.load(ctx, l.ident())
		if err != nil {
			return fail(err)
		}
		if exists && committedBy(tbl, p.Job, l.target.Ctx, p.RunID) != nil {
			return nil
		}
		paths, err := l.place(p.Outputs)
		if err != nil {
			return fail(err)
		}
		fault.At(fault.MidPublish) // the files are in place, not committed to the table
		if !exists {
			sc, err := parquetSchema(filepath.Join(l.dir, filepath.FromSlash(p.Outputs[0].Final)))
			if err != nil {
				return fail(err)
			}
			parts, err := parsePartitions(l.target.PartitionBy)
			if err != nil {
				return fail(err)
			}
			spec, err := buildSpec(parts, sc)
			if err != nil {
				return fail(err)
			}
			if tbl, err = cat.create(ctx, l.ident(), l.fileURI(""), sc, spec); err != nil {
				return fail(err)
			}
		}
		if exists {
			local := make([]string, len(p.Outputs))
			for i, o := range p.Outputs {
				local[i] = filepath.Join(l.dir, filepath.FromSlash(o.Final))
			}
			if tbl, err = l.evolve(ctx, tbl, local); errors.Is(err, table.ErrCommitFailed) {
				p.Log.Info("Iceberg commit conflict: reloading the table", "sink", l.target.Ctx, "table", name, "run", p.RunID)
				continue
			} else if err != nil {
				return fail(err)
			}
		}
		err = l.commit(ctx, tbl, paths, iceberg.Properties{PropJob: p.Job, PropSink: l.target.Ctx, PropRun: p.RunID})
		if errors.Is(err, table.ErrCommitFailed) {
			p.Log.Info("Iceberg commit conflict: reloading the table", "sink", l.target.Ctx, "table", name, "run", p.RunID)
			continue
		}
		if err != nil {
			// The outcome may be unknown (the catalog may have taken
			// it): nothing is deleted, and the next publish looks for
			// the run's snapshot first.
			return fail(err)
		}
		return nil
	}
	return fail(fmt.Errorf("other writers committed first %d times in a row", commitAttempts))
}

// place moves each staged file to its final name and returns the final
// files' URIs. It checks first that every file is staged or in place, so
// that a lost one changes nothing (sink.ErrOutputLost).
func (l *location) place(outs []store.Output) ([]string, error) {
	exists := func(key string) (bool, error) {
		_, err := os.Stat(filepath.Join(l.dir, filepath.FromSlash(key)))
		if os.IsNotExist(err) {
			return false, nil
		}
		return err == nil, err
	}
	var moves [][2]string
	for _, o := range outs {
		final, err := exists(o.Final)
		if err != nil {
			return nil, err
		}
		if final {
			continue
		}
		staged, err := exists(o.Staged)
		if err != nil {
			return nil, err
		}
		if !staged {
			return nil, fmt.Errorf("%s: %w", o.Staged, sink.ErrOutputLost)
		}
		moves = append(moves, [2]string{o.Staged, o.Final})
	}
	for _, m := range moves {
		from, to := filepath.Join(l.dir, filepath.FromSlash(m[0])), filepath.Join(l.dir, filepath.FromSlash(m[1]))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return nil, err
		}
		if err := os.Rename(from, to); err != nil {
			return nil, fmt.Errorf("moving %s to %s: %w", m[0], m[1], err)
		}
	}
	paths := make([]string, len(outs))
	for i, o := range outs {
		paths[i] = l.fileURI(o.Final)
	}
	return paths, nil
}

// commit adds the files at paths to tbl in one snapshot with props in its
// summary; in mode overwrite the snapshot deletes every data file the
// table held.
func (l *location) commit(ctx context.Context, tbl *table.Table, paths []string, props iceberg.Properties) error {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	part, err := l.tablePartitioner(tbl)
	if err != nil {
		return err
	}
	var add []iceberg.DataFile
	for _, p := range paths {
		df, err := l.dataFile(ctx, fs, tbl, part, p)
		if err != nil {
			return fmt.Errorf("reading data file %s: %w", p, err)
		}
		add = append(add, df)
	}
	tx := tbl.NewTransaction()
	switch {
	case l.target.Mode == "overwrite_partitions":
		del, err := dataFiles(ctx, tbl)
		if err != nil {
			return err
		}
		touched := map[string]bool{}
		for _, df := range add {
			touched[partitionKey(part.spec, df.Partition())] = true
		}
		var replaced []iceberg.DataFile
		for _, df := range del {
			if int(df.SpecID()) == part.spec.ID() && touched[partitionKey(part.spec, df.Partition())] {
				replaced = append(replaced, df)
			}
		}
		if err := tx.ReplaceDataFilesWithDataFiles(ctx, replaced, add, props); err != nil {
			return err
		}
	case l.target.Mode == "overwrite":
		del, err := dataFiles(ctx, tbl)
		if err != nil {
			return err
		}
		if err := tx.ReplaceDataFilesWithDataFiles(ctx, del, add, props); err != nil {
			return err
		}
	case l.target.Mode == "merge" && tbl.CurrentSnapshot() != nil:
		var keys []keyTuple
		for _, p := range paths {
			u, err := url.Parse(p)
			if err != nil {
				return err
			}
			k, err := readKeys(ctx, filepath.FromSlash(u.Path), l.target.MergeKeys)
			if err != nil {
				return fmt.Errorf("reading the merge keys of %s: %w", p, err)
			}
			keys = append(keys, k...)
		}
		if len(keys) > 0 {
			if err := tx.Delete(ctx, keyFilter(l.target.MergeKeys, keys), props); err != nil {
				return fmt.Errorf("deleting the rows the run replaces: %w", err)
			}
		}
		fallthrough
	default:
		if err := tx.AddDataFiles(ctx, add, props); err != nil {
			return err
		}
	}
	_, err = tx.Commit(ctx)
	return err
}

// tablePartitioner is the partitioner of tbl's spec; a spec other than
// the job's partition_by is refused (partition evolution is not built).
func (l *location) tablePartitioner(tbl *table.Table) (partitioner, error) {
	parts, err := parsePartitions(l.target.PartitionBy)
	if err != nil {
		return partitioner{}, err
	}
	p := partitioner{spec: tbl.Spec(), sc: tbl.Schema()}
	if have, want := specText(p.spec, p.sc), fieldsText(parts); have != want {
		describe := func(s string) string {
			if s == "" {
				return "unpartitioned"
			}
			return "partitioned by [" + s + "]"
		}
		return p, fmt.Errorf("the Iceberg table %s is %s, the job's partition_by wants it %s: changing a table's "+
			"partition spec is not supported yet (write to a new table, or set partition_by to the table's)",
			l.target.Table, describe(have), describe(want))
	}
	return p, nil
}

// dataFile is the data file at path as tbl's: for a partitioned table,
// with the one partition tuple of its rows.
func (l *location) dataFile(ctx context.Context, fs iceio.IO, tbl *table.Table, part partitioner, path string) (iceberg.DataFile, error) {
	return l.dataFileOf(ctx, fs, tbl, tbl.Schema(), part, path)
}

// dataFileOf is dataFile read against schema sc (tbl's schema once evolved).
func (l *location) dataFileOf(ctx context.Context, fs iceio.IO, tbl *table.Table, sc *iceberg.Schema, part partitioner,
	path string) (iceberg.DataFile, error) {
	if part.spec.NumFields() == 0 {
		return table.FileToDataFile(ctx, fs, path, sc, part.spec, 0, tbl.Properties())
	}
	df, err := table.FileToDataFile(ctx, fs, path, sc, *iceberg.UnpartitionedSpec, 0, tbl.Properties())
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(path)
	if err != nil {
		return nil, err
	}
	t, ok, err := part.fileTuple(ctx, filepath.FromSlash(u.Path))
	if err != nil {
		return nil, err
	}
	if !ok {
		t.values = map[int]any{}
	}
	return withPartition(df, part.spec, part.sc, t)
}

// dataFiles are the data files of the table's current snapshot.
func dataFiles(ctx context.Context, tbl *table.Table) ([]iceberg.DataFile, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	scan := tbl.Scan()
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the table's data files: %w", err)
	}
	var out []iceberg.DataFile
	seen := map[string]bool{}
	for _, t := range tasks {
		if !seen[t.File.FilePath()] {
			seen[t.File.FilePath()] = true
			out = append(out, t.File)
		}
	}
	return out, nil
}

// committedBy is the snapshot of the table's current branch that run
// runID of job committed for sink sinkCtx (nil: none).
func committedBy(tbl *table.Table, job, sinkCtx, runID string) *table.Snapshot {
	for s := tbl.CurrentSnapshot(); s != nil; {
		if s.Summary != nil {
			p := s.Summary.Properties
			if p[PropRun] == runID && p[PropJob] == job && p[PropSink] == sinkCtx {
				return s
			}
		}
		if s.ParentSnapshotID == nil {
			return nil
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return nil
}

// Schema evolution. A run whose files have a column the table lacks adds
// it (optional, so the table's earlier rows read as null), and a column
// whose files hold a wider type than the table's (Iceberg's promotions:
// int to long, float to double, a decimal's precision) is widened: the
// source's schema_evolution decides what columns reach the output, and
// the table follows, never narrowed. Both are Iceberg's union by name, in
// a catalog commit of its own before the run's snapshot (a retry finds the
// columns in place and changes nothing); the table's name mapping gains
// the new columns. Any other type change fails, naming the column.

// evolvedSchema is tbl's schema united by name with the schemas of the
// Parquet files at paths (local paths), and whether that changes it.
func evolvedSchema(tbl *table.Table, paths []string) (*iceberg.Schema, bool, error) {
	upd, err := unionWith(tbl, tbl.NewTransaction(), paths)
	if err != nil {
		return nil, false, err
	}
	sc, err := upd.Apply()
	if err != nil {
		return nil, false, fmt.Errorf("the run's columns do not fit Iceberg table %s: %w",
			strings.Join(tbl.Identifier(), "."), err)
	}
	return sc, !sc.Equals(tbl.Schema()), nil
}

// unionWith is tx's schema update of tbl uniting the schemas of the files
// at paths, the table's name mapping following.
func unionWith(tbl *table.Table, tx *table.Transaction, paths []string) (*table.UpdateSchema, error) {
	var opts []table.UpdateSchemaOption
	if m := tbl.Metadata().NameMapping(); m != nil {
		opts = append(opts, table.WithNameMapping(m))
	}
	upd := tx.UpdateSchema(true, false, opts...)
	for _, p := range paths {
		sc, err := parquetSchema(p)
		if err != nil {
			return nil, err
		}
		upd = upd.UnionByNameWith(sc)
	}
	return upd, nil
}

// evolve commits tbl's schema evolved for the files at paths (local
// paths) and returns the table as committed; a table the files fit is
// returned as it is.
func (l *location) evolve(ctx context.Context, tbl *table.Table, paths []string) (*table.Table, error) {
	if _, changed, err := evolvedSchema(tbl, paths); err != nil || !changed {
		return tbl, err
	}
	tx := tbl.NewTransaction()
	upd, err := unionWith(tbl, tx, paths)
	if err != nil {
		return nil, err
	}
	if err := upd.Commit(); err != nil {
		return nil, fmt.Errorf("adding the run's new columns to Iceberg table %s: %w", l.target.Table, err)
	}
	return tx.Commit(ctx)
}

// parquetSchema is the Iceberg schema of a Parquet file's columns, with
// fresh field ids: a new table's schema.
func parquetSchema(path string) (*iceberg.Schema, error) {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("reading the schema of %s: %w", path, err)
	}
	defer r.Close()
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{}, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the schema of %s: %w", path, err)
	}
	as, err := fr.Schema()
	if err != nil {
		return nil, fmt.Errorf("reading the schema of %s: %w", path, err)
	}
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(as, true)
	if err != nil {
		return nil, fmt.Errorf("the schema of %s as an Iceberg schema: %w", path, err)
	}
	return sc, nil
}

// Published deletes the run's staging.
func (l *location) Published(_ context.Context, runID string, log *slog.Logger) {
	if err := os.RemoveAll(filepath.Join(stagingDir(l.dir), runID)); err != nil {
		log.Warn("deleting a published run's staging", "table", l.target.Table, "run", runID, "err", err)
	}
}

// PurgeName is what output o published, as Purge reports it removed.
func (l *location) PurgeName(o store.Output) string {
	return fmt.Sprintf("Iceberg table %s: %s", l.target.Table, o.Final)
}

// Purge removes the run's data files from the table in a new snapshot
// (tidemark.purged-run-id in its summary); the files stay on disk for
// the snapshots that still name them (time travel). Idempotent: files the
// table no longer holds are reported Gone.
func (l *location) Purge(ctx context.Context, job, runID string, outs []store.Output, log *slog.Logger) (sink.Purged, error) {
	var p sink.Purged
	fail := func(err error) (sink.Purged, error) {
		return sink.Purged{}, fmt.Errorf("purging run %s from Iceberg table %s: %w", runID, l.target.Table, err)
	}
	cat, err := l.catalog(ctx)
	if err != nil {
		return fail(err)
	}
	defer cat.Close()
	for range commitAttempts {
		p = sink.Purged{}
		tbl, exists, err := cat.load(ctx, l.ident())
		if err != nil {
			return fail(err)
		}
		var held []iceberg.DataFile
		if exists {
			if held, err = dataFiles(ctx, tbl); err != nil {
				return fail(err)
			}
		}
		byPath := map[string]iceberg.DataFile{}
		for _, df := range held {
			byPath[df.FilePath()] = df
		}
		var del []iceberg.DataFile
		for _, o := range outs {
			if df, ok := byPath[l.fileURI(o.Final)]; ok {
				del = append(del, df)
				p.Deleted = append(p.Deleted, l.PurgeName(o))
			} else {
				p.Gone = append(p.Gone, l.PurgeName(o))
			}
		}
		if len(del) == 0 {
			return p, nil
		}
		tx := tbl.NewTransaction()
		if err := tx.ReplaceDataFilesWithDataFiles(ctx, del, nil,
			iceberg.Properties{PropJob: job, PropSink: l.target.Ctx, PropPurgeRun: runID}); err != nil {
			return fail(err)
		}
		_, err = tx.Commit(ctx)
		if errors.Is(err, table.ErrCommitFailed) {
			continue
		}
		if err != nil {
			return fail(err)
		}
		log.Info("removed from the Iceberg table", "run", runID, "table", l.target.Table, "files", len(del))
		return p, nil
	}
	return fail(fmt.Errorf("other writers committed first %d times in a row", commitAttempts))
}

// Close does nothing.
func (l *location) Close() error { return nil }
