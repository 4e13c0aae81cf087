// Package spark is tidemark's distributed engine: it runs a plan on an
// Apache Spark cluster through Spark Connect (the Go client
// github.com/apache/spark-connect-go, pinned; its protocol is Spark
// 4.0's). One session per engine (so per run), opened at the first Execute
// and released by Close.
//
// Reading. Each source is one DataSource read of its files with the
// source's schema given (recorded, or on a first run inferred by Spark and
// normalized as the DuckDB engine infers, see infer.go), hive columns from
// the files' key=value folders (basePath), as a temporary view; transforms
// are temporary views of Spark SQL.
//
// Writing. Each sink is one DataFrame write (its partition columns, its
// format and options) into the sink's staging Location, with save mode
// ErrorIfExists, after a guard (guard.go) checked that the location is one
// this plan gave for the sink and holds nothing: Spark can overwrite
// nothing. Spark's own files (_SUCCESS, .crc) are removed and never
// listed. Rows per file are counted by Spark from the written files
// (_metadata.file_path): nothing but counts comes back to the driver.
//
// Bad records. fail: FAILFAST; on a malformed record the file and line are
// found by a second, PERMISSIVE read (badrecords.go). skip and quarantine:
// PERMISSIVE with a corrupt-record column; the source's view has the good
// rows, the bad ones are counted and (quarantine) written under
// Rejects/<source> with their file.
package spark

import (
	"context"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/engine"
)

// connectTimeout bounds the first statement on a server that accepted the
// connection (a cold server takes a while for its first session). A
// server that refuses or cannot be reached fails at once (gRPC's
// Unavailable), whatever this says.
const connectTimeout = 3 * time.Minute

// Engine is the Spark engine. One run uses it at a time.
type Engine struct {
	opts    Options
	remote  string
	timeout time.Duration
	s       *session
	s3Set   bool // the session has the s3a conf
}

var _ engine.Engine = (*Engine)(nil)

// New makes the engine; it connects at the first Execute.
func New(opts Options) (*Engine, error) {
	if err := opts.Check(); err != nil {
		return nil, fmt.Errorf("spark options: %w", err)
	}
	remote, err := opts.remote()
	if err != nil {
		return nil, err
	}
	d, _ := opts.timeout()
	return &Engine{opts: opts, remote: remote, timeout: d}, nil
}

// Capabilities: Spark reads local files (a server on this machine, or a
// cluster that mounts the same paths) and s3:// objects (through s3a,
// s3a.go); it writes local staging folders, which the sink uploads when
// it is remote. See docs/how-to/spark.md.
func (e *Engine) Capabilities() engine.Caps {
	return engine.Caps{Read: []string{"file", "s3"}, Write: []string{"file"}}
}

// session opens the run's session and sets its conf, once.
func (e *Engine) session(ctx context.Context) (*session, error) {
	if e.s != nil {
		return e.s, nil
	}
	s, err := connect(ctx, e.remote, connectTimeout)
	if err != nil {
		return nil, err
	}
	for _, kv := range sessionConf(e.opts.Conf) {
		if err := s.setConf(ctx, kv[0], kv[1]); err != nil {
			_ = s.close()
			return nil, fmt.Errorf("spark at %s: setting %s: %w", s.remote, kv[0], cleanError(err))
		}
	}
	e.s = s
	return s, nil
}

// sessionConf is the conf every run sets, then the job's: UTC for times
// without an offset (as the DuckDB engine), Parquet written as DuckDB
// writes it (microsecond timestamps, standard decimals), no _SUCCESS
// markers, CSV column pruning off (Spark then parses every field of a
// line; it still converts only the columns a query reads, so the
// bad-record queries name every column: usesColumn).
func sessionConf(job map[string]string) [][2]string {
	conf := [][2]string{
		{sessionTimeZone, "UTC"}, // a job's conf may only repeat it (Validate)
		{"spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS"},
		{"spark.sql.parquet.writeLegacyFormat", "false"},
		{"spark.sql.csv.parser.columnPruning.enabled", "false"},
		{"mapreduce.fileoutputcommitter.marksuccessfuljobs", "false"},
		{"spark.sql.sources.partitionOverwriteMode", "static"},
	}
	for _, k := range sortedKeys(job) {
		conf = append(conf, [2]string{k, job[k]})
	}
	return conf
}

// Execute runs p on the run's session.
func (e *Engine) Execute(ctx context.Context, p engine.Plan) (engine.Result, error) {
	s, err := e.session(ctx)
	if err != nil {
		return engine.Result{}, err
	}
	x := &execution{e: e, s: s, plan: p}
	return x.run(ctx)
}

// Close releases the session on the server.
func (e *Engine) Close() error {
	if e.s == nil {
		return nil
	}
	err := e.s.close()
	e.s, e.s3Set = nil, false
	return err
}
