package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// runResult is the part of `tidemark run --json` the harness checks.
type runResult struct {
	Status     string           `json:"status"`
	RunID      string           `json:"run_id"`
	Sources    map[string]count `json:"sources"`
	Sinks      map[string]count `json:"sinks"`
	DurationMS int64            `json:"duration_ms"`
	Error      string           `json:"error"`
}

type count struct {
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
	Rows  int64 `json:"rows"`
}

// jobFile is the job a scenario runs: one CSV source, one Parquet sink, no
// transform, mode append.
type jobFile struct {
	Name         string
	Source       string // folder
	Sink         string // folder
	MemoryLimit  string
	BoundedFiles int
	Listing      string // full | ordered (S3); empty: the default
	BatchFiles   int    // batch_files; 0: the default
	// Format is the source's: csv (with a header) when empty, or json.
	Format          string
	SchemaEvolution string // the source's schema_evolution; empty: the default
	// Iceberg is the sink's Iceberg table (DB.TABLE) at Sink; empty: a
	// Parquet folder.
	Iceberg string
}

func (j jobFile) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "job: %s\n", j.Name)
	if j.BatchFiles > 0 {
		fmt.Fprintf(&b, "batch_files: %d\n", j.BatchFiles)
	}
	if j.MemoryLimit != "" {
		fmt.Fprintf(&b, "engine: {duckdb: {memory_limit: %s}}\n", j.MemoryLimit)
	}
	b.WriteString("sources:\n")
	b.WriteString("  - ctx: orders\n")
	fmt.Fprintf(&b, "    path: %s\n", strconv.Quote(j.Source))
	if j.Format == "json" {
		b.WriteString("    format: json\n")
	} else {
		b.WriteString("    format: csv\n")
		b.WriteString("    options: {header: true}\n")
	}
	if j.SchemaEvolution != "" {
		fmt.Fprintf(&b, "    schema_evolution: %s\n", j.SchemaEvolution)
	}
	if j.Listing != "" {
		fmt.Fprintf(&b, "    listing: %s\n", j.Listing)
	}
	if j.BoundedFiles > 0 {
		fmt.Fprintf(&b, "    bounded_files: %d\n", j.BoundedFiles)
	}
	b.WriteString("sinks:\n")
	b.WriteString("  - ctx: out\n")
	fmt.Fprintf(&b, "    path: %s\n", strconv.Quote(j.Sink))
	if j.Iceberg != "" {
		fmt.Fprintf(&b, "    iceberg: {table: %s}\n", j.Iceberg)
	} else {
		b.WriteString("    format: parquet\n")
	}
	b.WriteString("    mode: append\n")
	return b.String()
}

// writeJob writes job.yaml into dir; the state then lives in
// dir/.tidemark/state.db, the default.
func writeJob(dir string, j jobFile) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "job.yaml")
	return p, os.WriteFile(p, []byte(j.yaml()), 0o644)
}

// tidemarkRun times `tidemark run JOB --json` in the job's folder. The error
// is non-nil when the process failed or its summary is not a success.
func tidemarkRun(ctx context.Context, c *config, jobPath, logName string) (measured, runResult, error) {
	return tidemarkRunWith(ctx, c, jobPath, logName, nil, nil)
}

// tidemarkRunWith is tidemarkRun with variables added to the environment
// and the CPU time of the servers the run talks to (nil: none).
func tidemarkRunWith(ctx context.Context, c *config, jobPath, logName string, env []string, servers func() time.Duration) (measured, runResult, error) {
	if c.bin.tidemark == "" {
		return measured{}, runResult{}, fmt.Errorf("tidemark was not built: %v", c.bin.tidemarkErr)
	}
	return tidemarkRunAs(ctx, c, c.bin.tidemark, jobPath, logName, env, servers)
}

// tidemarkRunAs is tidemarkRunWith with the tidemark binary bin.
func tidemarkRunAs(ctx context.Context, c *config, bin, jobPath, logName string, env []string, servers func() time.Duration) (measured, runResult, error) {
	var res runResult
	dir := filepath.Dir(jobPath)
	m := timeProcess(ctx, runSpec{
		Name:       bin,
		Args:       []string{"run", jobPath, "--json"},
		Dir:        dir,
		Timeout:    c.Timeout,
		Settle:     c.Settle,
		StderrFile: filepath.Join(dir, logName+".stderr"),
		Env:        env,
		Servers:    servers,
	})
	if len(m.Stdout) > 0 {
		if err := json.Unmarshal(m.Stdout, &res); err != nil && m.ok() {
			return m, res, fmt.Errorf("reading run --json: %w: %q", err, truncate(string(m.Stdout), 300))
		}
	}
	if !m.ok() {
		return m, res, m.Err
	}
	if res.Status != "succeeded" {
		return m, res, fmt.Errorf("run status %q: %s", res.Status, res.Error)
	}
	return m, res, nil
}

// duckdbCopy times the baseline converting files into out.
func duckdbCopy(ctx context.Context, c *config, v baselineVariant, listFile, out, memoryLimit string) (measured, int64, string, error) {
	args := []string{"-files", listFile, "-out", out}
	if memoryLimit != "" {
		args = append(args, "-memory-limit", memoryLimit)
	}
	for _, s := range v.sets {
		args = append(args, "-set", s)
	}
	if v.schema {
		args = append(args, "-columns", ordersColumns)
	}
	if v.format != "" {
		args = append(args, "-format", v.format)
	}
	dir := filepath.Dir(out)
	m := timeProcess(ctx, runSpec{Name: c.bin.duckdb, Args: args, Dir: dir, Timeout: c.Timeout, Settle: c.Settle,
		StderrFile: filepath.Join(dir, "duckdbcopy.stderr")})
	if !m.ok() {
		return m, 0, "", m.Err
	}
	var r struct {
		Rows int64  `json:"rows"`
		SQL  string `json:"sql"`
	}
	if err := json.Unmarshal(m.Stdout, &r); err != nil {
		return m, 0, "", fmt.Errorf("reading duckdbcopy output: %w", err)
	}
	return m, r.Rows, r.SQL, nil
}

// outputRows reads back what a sink folder holds with DuckDB: the Parquet
// files outside `_`- and `.`-prefixed folders (where readers look), their
// rows and bytes. It is not timed.
func outputRows(ctx context.Context, c *config, dir string) (files int, rows, size int64, err error) {
	var paths []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != dir && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(name, ".parquet") {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			paths = append(paths, p)
			size += fi.Size()
		}
		return nil
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("listing output %s: %w", dir, err)
	}
	list := filepath.Join(c.work, "count-list.txt")
	if err := os.WriteFile(list, []byte(strings.Join(paths, "\n")), 0o644); err != nil {
		return 0, 0, 0, err
	}
	m := timeProcess(ctx, runSpec{Name: c.bin.duckdb, Args: []string{"-count", list}, Timeout: c.Timeout})
	if !m.ok() {
		return len(paths), 0, size, fmt.Errorf("reading back %s: %w", dir, m.Err)
	}
	rows, err = strconv.ParseInt(strings.TrimSpace(string(m.Stdout)), 10, 64)
	return len(paths), rows, size, err
}

// stateFiles is the size of a SQLite state store and its side files.
type stateFiles struct{ DB, WAL, SHM int64 }

func (s stateFiles) total() int64 { return s.DB + s.WAL }

func stateSize(jobDir string) stateFiles {
	p := filepath.Join(jobDir, ".tidemark", "state.db")
	size := func(name string) int64 {
		fi, err := os.Stat(name)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	return stateFiles{DB: size(p), WAL: size(p + "-wal"), SHM: size(p + "-shm")}
}

// writeList writes paths, one per line, for duckdbcopy -files.
func writeList(name string, paths []string) error {
	return os.WriteFile(name, []byte(strings.Join(paths, "\n")+"\n"), 0o644)
}

// warm reads files once so that the first measured repetition does not pay
// for the page cache alone.
func warm(files []string) error {
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// median of the durations; 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianInt(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
