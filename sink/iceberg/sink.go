// Package iceberg is the Iceberg table sink: a sink with iceberg: {table:
// DB.TABLE} commits each run's rows to an Iceberg table as one snapshot.
//
// The engine writes Parquet into the table folder's staging area
// (_tidemark/staging/RUN/), as for a file sink; Stage records each file
// as an output of kind iceberg_file. Publish, after the state commit,
// moves the files to their final names (data/part-RUN-N.parquet) and
// commits them to the table in one snapshot whose summary carries the
// job, the sink and the run (tidemark.job, tidemark.sink,
// tidemark.run-id). Before it commits, it walks the current snapshot's
// ancestors for the run: a publish retried after a crash between the
// Iceberg commit and the marking of the run adds nothing twice. A commit
// conflict (another writer committed first) reloads the table and tries
// again; any other failure leaves the commit's outcome unknown and deletes
// nothing, so the next publish finds out from the ancestors.
//
// The data files carry no Parquet field ids: the table's
// schema.name-mapping.default property maps their columns by name, as
// Iceberg readers (pyiceberg, Spark) require of files added from outside.
//
// Without catalog:, the table lives in tidemark's own catalog, a SQL
// catalog in the state store's database (ownCatalog).
package iceberg

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	iceberg "github.com/apache/iceberg-go"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/icecatalog"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// Name is the kind's name; Output is the kind of its output records: a
// Parquet data file staged under Staged, published to Final and
// committed to the table.
const (
	Name                 = "iceberg"
	Output manifest.Kind = "iceberg_file"
)

// Snapshot summary properties naming what made a snapshot.
const (
	PropJob      = "tidemark.job"
	PropSink     = "tidemark.sink"
	PropRun      = "tidemark.run-id"
	PropPurgeRun = "tidemark.purged-run-id"
)

// Sink is one opened Iceberg sink.
type Sink struct {
	ctx   string
	dir   string
	table string
	mode  string
	keys  []string
	// parts is partition_by, parsed.
	parts  []partField
	partBy []string
	// rest is the REST catalog the table is kept in; empty: the own
	// catalog, in the state store.
	rest CatalogConfig
	// state is the state store's location, where the own catalog is; set
	// by Claim.
	state   string
	claimed bool
}

var (
	_ sink.Sink     = (*Sink)(nil)
	_ sink.Appender = (*Sink)(nil)
)

func open(_ context.Context, spec *job.Spec, k job.Sink) (sink.Sink, error) {
	c := k.Config.(*Config)
	parts, err := parsePartitions(c.PartitionBy)
	if err != nil {
		return nil, fmt.Errorf("sink %s: partition_by: %w", k.Ctx, err)
	}
	return &Sink{ctx: k.Ctx, dir: c.Place(spec).Folder, table: c.Iceberg.Table, mode: c.Mode, keys: c.MergeKeys,
		parts: parts, partBy: c.PartitionBy, rest: c.Iceberg.Catalog}, nil
}

// target is the table as its output records keep it: where its catalog
// is, without a credential.
func (s *Sink) target() manifest.Table {
	t := manifest.Table{Ctx: s.ctx, Connection: s.state, Table: s.table, Mode: s.mode, MergeKeys: s.keys,
		PartitionBy: s.partBy}
	if s.rest.URI != "" {
		t.Catalog, t.Connection, t.Warehouse, t.PasswordEnv = manifest.CatalogREST, s.rest.URI, s.rest.Warehouse,
			s.rest.CredentialEnv
	}
	return t
}

// Ctx is the sink's ctx.
func (s *Sink) Ctx() string { return s.ctx }

// Claim refuses a state store that cannot hold the table's own catalog
// (a table kept in a REST catalog needs none), then checks (and, unless
// c.CheckOnly, writes) the folder's ownership record.
func (s *Sink) Claim(ctx context.Context, c sink.Claim) error {
	if s.rest.URI == "" {
		if _, err := stateDialect(c.Identity.Location); err != nil {
			return fmt.Errorf("sink %s: %w", s.ctx, err)
		}
	} else if err := (icecatalog.REST{CredentialEnv: s.rest.CredentialEnv}).MissingCredential(); err != nil {
		return fmt.Errorf("sink %s: %w", s.ctx, err)
	}
	if err := (&location{dir: s.dir}).claim(ctx, s.ctx, c); err != nil {
		return err
	}
	if !c.CheckOnly {
		s.state, s.claimed = c.Identity.Location, true
	}
	return nil
}

// Cleanup deletes the staging of dead runs.
func (s *Sink) Cleanup(_ context.Context, dead func(string) (bool, error), log *slog.Logger) error {
	ents, err := os.ReadDir(stagingDir(s.dir))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing the staging of Iceberg sink %s: %w", s.dir, err)
	}
	for _, e := range ents {
		d, err := dead(e.Name())
		if err != nil {
			return err
		}
		if d {
			log.Info("deleting a dead run's staging", "sink", s.ctx, "run", e.Name())
			if err := os.RemoveAll(filepath.Join(stagingDir(s.dir), e.Name())); err != nil {
				return fmt.Errorf("deleting the staging of run %s in %s: %w", e.Name(), s.dir, err)
			}
		}
	}
	return nil
}

// Prepare gives the engine the run's staging folder.
func (s *Sink) Prepare(_ context.Context, run sink.Run) (sink.Staging, error) {
	if !s.claimed {
		return nil, fmt.Errorf("sink %s: preparing run %s before the sink was claimed", s.ctx, run.ID)
	}
	return &staging{s: s, run: run.ID}, nil
}

// Close does nothing.
func (s *Sink) Close() error { return nil }

// Appends is true in mode append: each run adds files of its own.
func (s *Sink) Appends() bool { return s.mode == "append" }

func stagingDir(dir string) string { return filepath.Join(dir, "_tidemark", "staging") }

// staging is one run's staging folder, where the engine writes Parquet.
type staging struct {
	s   *Sink
	run string
}

func (g *staging) where() string { return filepath.Join(stagingDir(g.s.dir), g.run) }

func (g *staging) Target() engine.Sink {
	return engine.Sink{Ctx: g.s.ctx, Format: "parquet", Location: g.where()}
}

func (g *staging) Rejects() string { return "" }

func (g *staging) EngineStarted(context.Context) {}

func (g *staging) EngineReturned(context.Context, error) {}

// Stage records each Parquet file the engine wrote as an iceberg_file
// output, its final name data/part-RUN-N.parquet; the files stay in the
// staging folder until Publish moves and commits them.
func (g *staging) Stage(ctx context.Context, res engine.SinkResult, _ bool) (sink.Staged, error) {
	files := slices.Clone(res.Files)
	slices.SortFunc(files, func(a, b engine.StagedFile) int { return strings.Compare(a.Path, b.Path) })
	t := g.s.target()
	target := &t
	files, err := g.split(ctx, files)
	if err != nil {
		return sink.Staged{}, fmt.Errorf("sink %s: staging run %s: %w", g.s.ctx, g.run, err)
	}
	if g.s.mode == "merge" {
		var all []keyTuple
		for _, f := range files {
			keys, err := readKeys(ctx, filepath.Join(g.where(), filepath.FromSlash(f.Path)), g.s.keys)
			if err != nil {
				return sink.Staged{}, fmt.Errorf("sink %s: staging run %s: %w", g.s.ctx, g.run, err)
			}
			all = append(all, keys...)
		}
		if err := checkKeys(g.s.keys, all); err != nil {
			return sink.Staged{}, fmt.Errorf("sink %s: staging run %s: %w", g.s.ctx, g.run, err)
		}
	}
	if err := g.check(ctx, files); err != nil {
		return sink.Staged{}, fmt.Errorf("sink %s: staging run %s: %w", g.s.ctx, g.run, err)
	}
	var st sink.Staged
	for i, f := range files {
		if !strings.HasSuffix(f.Path, ".parquet") {
			return st, fmt.Errorf("sink %s: staging run %s: the engine wrote %s, not a Parquet file", g.s.ctx, g.run, f.Path)
		}
		st.Outputs = append(st.Outputs, store.Output{RunID: g.run, Sink: g.s.ctx, Kind: Output, Root: g.s.dir,
			Table: target, Staged: "_tidemark/staging/" + g.run + "/" + f.Path,
			Final: fmt.Sprintf("data/part-%s-%05d.parquet", g.run, i), Rows: f.Rows, Bytes: f.Bytes})
	}
	st.Count = store.Count{Files: int64(len(files)), Rows: res.Rows}
	return st, nil
}

func (g *staging) Discard(context.Context) { _ = os.RemoveAll(g.where()) }

// split checks the job's partition spec against the table's and, for a
// partitioned table, splits each staged file into one file per partition
// tuple of its rows.
func (g *staging) split(ctx context.Context, files []engine.StagedFile) ([]engine.StagedFile, error) {
	if len(files) == 0 {
		return files, nil
	}
	loc := &location{dir: g.s.dir, target: g.s.target()}
	cat, err := loc.catalog(ctx)
	if err != nil {
		return nil, err
	}
	defer cat.Close()
	tbl, exists, err := cat.load(ctx, loc.ident())
	if err != nil {
		return nil, err
	}
	var p partitioner
	if exists {
		if p, err = loc.tablePartitioner(tbl); err != nil {
			return nil, err
		}
	} else {
		sc, err := parquetSchema(filepath.Join(g.where(), filepath.FromSlash(files[0].Path)))
		if err != nil {
			return nil, err
		}
		spec, err := buildSpec(g.s.parts, sc)
		if err != nil {
			return nil, fmt.Errorf("creating Iceberg table %s: %w", g.s.table, err)
		}
		p = partitioner{spec: spec, sc: sc}
	}
	if p.spec.NumFields() == 0 {
		return files, nil
	}
	var out []engine.StagedFile
	for _, f := range files {
		paths, rows, err := p.split(ctx, filepath.Join(g.where(), filepath.FromSlash(f.Path)))
		if err != nil {
			return nil, err
		}
		for i, path := range paths {
			st, err := os.Stat(path)
			if err != nil {
				return nil, err
			}
			rel, err := filepath.Rel(g.where(), path)
			if err != nil {
				return nil, err
			}
			out = append(out, engine.StagedFile{Path: filepath.ToSlash(rel), Rows: rows[i], Bytes: st.Size()})
		}
	}
	return out, nil
}

// check reads each staged file as publishing will, before the run
// commits: against the table's schema when the table exists (a column
// the table lacks, or of another type, fails here, not in a publish that
// could then never succeed), and as a new table's schema when it does
// not.
func (g *staging) check(ctx context.Context, files []engine.StagedFile) error {
	if len(files) == 0 {
		return nil
	}
	loc := &location{dir: g.s.dir, target: g.s.target()}
	cat, err := loc.catalog(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	tbl, exists, err := cat.load(ctx, loc.ident())
	if err != nil {
		return err
	}
	var part partitioner
	var sc *iceberg.Schema
	if exists {
		if part, err = loc.tablePartitioner(tbl); err != nil {
			return err
		}
		var local []string
		for _, f := range files {
			local = append(local, filepath.Join(g.where(), filepath.FromSlash(f.Path)))
		}
		if sc, _, err = evolvedSchema(tbl, local); err != nil {
			return err
		}
	}
	for _, f := range files {
		path := filepath.Join(g.where(), filepath.FromSlash(f.Path))
		if !exists {
			if _, err := parquetSchema(path); err != nil {
				return err
			}
			continue
		}
		fs, err := tbl.FS(ctx)
		if err != nil {
			return err
		}
		uri := (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
		if _, err := loc.dataFileOf(ctx, fs, tbl, sc, part, uri); err != nil {
			return fmt.Errorf("the output does not fit Iceberg table %s: %w", g.s.table, err)
		}
	}
	return nil
}
