// Package duckdb is tidemark's embedded engine: an in-memory DuckDB that
// exposes each planned source as a view, defines the job's transforms as
// views over them and writes each sink with one COPY.
//
// Reading. Files are read where they lie, except when DuckDB would misread
// their path (glob characters, a compression suffix that differs from the
// key's) or when partition columns must come from the key alone (hive
// sources): those are read through symbolic links (inputs.go). Zero-byte
// files are left out. Every read states its schema: CSV and JSON with
// columns={...} and auto_detect=false, Parquet with an explicit projection
// after every file's footer was checked against the schema. On a first run
// (no recorded schema) the schema is first inferred from a sample of files
// (schema.go), so that the first run reads exactly as later runs will. CSV
// files are matched to the schema by header name, read in groups that share
// a header (byname.go); integer, DECIMAL, TIMESTAMP and DATE columns of CSV
// and JSON are read as text and converted only when nothing is lost
// (strict.go). A source of more than chunkFiles files is a UNION ALL of
// reads over chunks.
//
// Counting rows without reading twice. A sink whose FROM is the source
// itself counts it (Parquet RETURN_STATS, or the COPY's row count);
// Parquet sources are counted from their footers; CSV and JSON sources read
// with skip or quarantine are materialized and counted from the table. Only
// a CSV or JSON source that reaches sinks solely through transforms costs a
// separate count(*), which DuckDB runs without converting any column.
//
// Bad records. fail: the first bad row fails the run with an
// *engine.InputError naming file, line and, when DuckDB says, column. skip
// and quarantine: CSV rows go to DuckDB's rejects tables, JSON sources are
// read as lines and checked (jsonlines.go); quarantine writes the rejected
// rows to Rejects/<source>/rejects.csv. A damaged Parquet file always
// fails, naming the file.
package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/duckdb/duckdb-go/v2/mapping"

	"github.com/tidemark-etl/tidemark/engine"
)

// Engine is the embedded DuckDB engine. It is safe to Close while no
// Execute runs; one run uses it at a time.
type Engine struct {
	db    *sql.DB
	opts  Options
	spill string // temp_directory; removed on Close when we created it
	owned bool
	// canon is whether the value checks' fast path is registered
	// (canon.go); without it they take their SQL path.
	canon bool

	mu       sync.Mutex         // guards running (progress.go)
	running  mapping.Connection // the connection of the Execute in progress
	tracking bool               // running is set
}

var (
	_ engine.Engine     = (*Engine)(nil)
	_ engine.Progresser = (*Engine)(nil)
)

// New opens an in-memory DuckDB with opts' memory limit, threads and spill
// folder (a fresh temporary folder when SpillDir is empty, removed by
// Close). It also turns off insertion-order preservation, which lets DuckDB
// write in parallel: output row order carries no meaning in tidemark (a
// sink is a set of rows; Set can turn it back on), and extension
// auto-install, which would reach the network.
func New(opts Options) (*Engine, error) {
	if err := opts.Check(); err != nil {
		return nil, fmt.Errorf("duckdb options: %w", err)
	}
	e := &Engine{opts: opts, spill: opts.SpillDir}
	if e.spill == "" {
		dir, err := os.MkdirTemp("", "tidemark-duckdb-")
		if err != nil {
			return nil, fmt.Errorf("creating spill folder: %w", err)
		}
		e.spill, e.owned = dir, true
	} else if err := os.MkdirAll(e.spill, 0o755); err != nil {
		return nil, fmt.Errorf("creating spill folder %s: %w", e.spill, err)
	}
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		e.removeSpill()
		return nil, fmt.Errorf("opening duckdb: %w", err)
	}
	e.db = sql.OpenDB(connector)
	// Every Execute gets a fresh connection, so that its temporary views
	// and tables vanish with it.
	e.db.SetMaxIdleConns(0)
	settings := [][2]string{
		{"temp_directory", e.spill},
		{"preserve_insertion_order", "false"},
		{"autoinstall_known_extensions", "false"},
		// Times without an offset read into a TIMESTAMP WITH TIME ZONE
		// column (and casts between the two) are taken as UTC, not in
		// the machine's zone: the same input gives the same instants on
		// every host.
		{"timezone", "UTC"},
	}
	if opts.MemoryLimit != "" {
		settings = append(settings, [2]string{"memory_limit", opts.MemoryLimit})
	}
	if opts.Threads > 0 {
		settings = append(settings, [2]string{"threads", fmt.Sprint(opts.Threads)})
	}

	for _, s := range settings {
		if err := e.Set(context.Background(), s[0], s[1]); err != nil {
			_ = e.Close()
			return nil, err
		}
	}
	e.canon = e.registerCanon() == nil
	return e, nil
}

// settingName is what a DuckDB setting name looks like.
var settingName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Set changes a DuckDB setting for the whole database, e.g.
// Set(ctx, "preserve_insertion_order", "true").
func (e *Engine) Set(ctx context.Context, name, value string) error {
	if !settingName.MatchString(name) {
		return fmt.Errorf("setting %q: not a setting name", name)
	}
	if err := checkText("setting "+name, value); err != nil {
		return err
	}
	if _, err := e.db.ExecContext(ctx, fmt.Sprintf("SET GLOBAL %s = %s", name, literal(value))); err != nil {
		return fmt.Errorf("setting %s: %w", name, &dbError{message(err), err})
	}
	return nil
}

// Execute runs p: views for sources and transforms, one COPY per sink into
// its Dir. It never touches bookmark state. On error the caller deletes the
// sinks' Locations; errors about input are *engine.InputError; a canceled ctx
// interrupts the running query and the error wraps ctx.Err().
func (e *Engine) Execute(ctx context.Context, p engine.Plan) (engine.Result, error) {
	if err := validatePlan(&p); err != nil {
		return engine.Result{}, err
	}
	c, err := e.db.Conn(ctx)
	if err != nil {
		return engine.Result{}, fmt.Errorf("connecting to duckdb: %w", err)
	}
	defer c.Close()
	defer e.track(ctx, c)()
	x := &execution{c: c, plan: p, policy: p.OnBadRecord, links: &linker{base: e.spill}, canon: e.canon}
	defer x.links.cleanup()
	res, err := x.run(ctx)
	return res, x.hint(err)
}

// Capabilities reports that the engine reads and writes local files and
// reads named pipes (engine.Source.Stream). DuckDB's httpfs is not built
// in: the runner brings s3:// inputs to local files, and uploads staged
// output, itself.
func (e *Engine) Capabilities() engine.Caps {
	return engine.Caps{Read: []string{"file"}, Write: []string{"file"}, Pipes: true, Growing: singleFile + ".", SchemaEvolution: true}
}

// Close closes the database and removes the spill folder New created.
func (e *Engine) Close() error {
	var err error
	if e.db != nil {
		err = e.db.Close()
	}
	e.removeSpill()
	return err
}

func (e *Engine) removeSpill() {
	if e.owned {
		_ = os.RemoveAll(e.spill)
	}
}
