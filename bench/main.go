// Command bench measures tidemark against its baselines, side by side in one
// run, and writes the report docs/benchmarks.md. From the repository root:
//
//	go run ./bench            # the full run: regenerates docs/benchmarks.md
//	go run ./bench -quick     # small sizes, a smoke run; writes bench/.data/benchmarks-quick.md
//
// Every size and target is a flag; each flag can also be set by an
// environment variable TMBENCH_<FLAG> with dashes as underscores (e.g.
// TMBENCH_CONVERT_FILES=4). Generated input is cached under -data (default
// bench/.data, which git ignores) and reused by later runs; outputs and
// state of a run go to a scratch folder under it that is removed at the end.
//
// The scenarios (see docs/benchmarks.md for what each compares):
//
//	convert  CSV -> Parquet: tidemark run vs DuckDB alone (bench/duckdbcopy)
//	convert-gz       CSV.gz -> Parquet: tidemark (which checks compressed input to its
//	                 end) vs -tidemark-before (a binary without the check) and DuckDB alone
//	noop     a no-op run over 100k processed files vs find | sort; 10 new files;
//	         the state store's size
//	memory   peak RSS of a 2 GB conversion under memory_limit: 512MB
//	s3-convert       CSV -> Parquet on versitygw vs the same job on local disk
//	s3-noop          a no-op run over 100k S3 objects: listing full vs ordered
//	sql-extract      1M rows PostgreSQL/MariaDB -> Parquet vs psql COPY / mariadb --quick
//	sql-incremental  1,000 new rows in a 10M-row PostgreSQL table: time and rows read,
//	                 regression_check on and off
//	s3-state no-op runs over 100k and 1M processed files with state in S3
//	         (versitygw) vs find | sort; state requests, commit latency, size
//	serve    tidemark serve over 100 jobs × 1,000 runs in SQLite: p50/p99 of the
//	         jobs list and a job's runs page, the server's RSS
//	pg-state a no-op run over 100k processed files with state in PostgreSQL
//	         and SQLite vs find | sort; commit latency of the PostgreSQL state
//	         store vs SQLite, and the state's size per 100k files
//	crawl    tidemark crawl over 100k files in 1,000 partition folders: the first
//	         crawl, then new_folders_only vs everything after one new folder
//	         (time, files opened)
//	backlog  first runs over 100k, 300k and 1M tiny files (local) and 100k, 300k
//	         S3 objects: time per file, peak RSS; DuckDB alone over one list
//	glue     the article's Glue script through tidemark glue run vs the same body as
//	         plain PySpark; its no-op run vs Spark's start (needs -glue-python)
//	convert-json the convert files as JSON Lines → Parquet: tidemark under
//	         schema_evolution fail (keys checked) and none vs DuckDB alone
//	iceberg  the convert files into an Iceberg table vs into a Parquet folder,
//	         both through tidemark
//
// The S3 scenarios start versitygw (from PATH, GOBIN or GOPATH/bin), the SQL
// ones a throwaway PostgreSQL and MariaDB from the installed packages, as
// scripts/test.sh does; the harness stops what it starts.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// config is everything a run can vary.
type config struct {
	Quick    bool
	Out      string
	DataDir  string
	Tidemark string // a prebuilt binary; empty: build ./cmd/tidemark
	Only     string
	// scenarios are Only's names, checked.
	scenarios []string
	Timeout   time.Duration
	Reps      int
	Keep      bool
	Settle    time.Duration
	// MaxOtherLoad and Retakes: a sample during which other processes used
	// more than MaxOtherLoad cores is taken again, up to Retakes times.
	MaxOtherLoad float64
	Retakes      int

	ConvertFiles  int
	ConvertRows   int64
	ConvertTarget float64

	ConvertGzTarget float64
	// TidemarkBefore is a binary to compare with where a scenario measures
	// the cost of a change (convert-gz); empty: not compared.
	TidemarkBefore string

	NoopDirs      int
	NoopPerDir    int
	NoopNew       int
	NoopTarget    float64
	NewTarget     float64
	BackfillBatch int

	MemFiles     int
	MemFileBytes int64
	MemLimit     string
	MemTarget    int64
	MemReps      int

	S3ConvertTarget float64
	S3Objects       int
	S3PerDay        int
	S3ListTarget    int

	SQLRows          int
	SQLExtractTarget float64
	SQLTableRows     int
	SQLNewRows       int
	SQLScanFactor    float64

	S3StateTarget    float64
	S3StateBigDirs   int
	S3StateBigPerDir int
	S3StateRSSTarget int64

	ServeJobs     int
	ServeRuns     int
	ServeRequests int

	PGStateCommits       int
	PGStateFiles         int
	PGStateTarget        float64
	CrawlDirs            int
	CrawlPerDir          int
	CrawlSample          int
	BacklogSizes         string
	BacklogS3Sizes       string
	BacklogPerDir        int
	BacklogBatch         int
	BacklogRSSTarget     int64
	BacklogLinearTarget  float64
	BacklogDuckDBTimeout time.Duration
	glue                 glueConfig

	root string // module root
	work string // scratch folder of this run
	bin  binaries
	srv  servers // databases, started on demand
}

// binaries are the programs under test.
type binaries struct {
	tidemark    string
	tidemarkErr error // why tidemark could not be built
	duckdb      string
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.BoolVar(&c.Quick, "quick", false, "small sizes for a smoke run (sizes given explicitly still win)")
	fs.StringVar(&c.Out, "out", "", "report to write (default docs/benchmarks.md; with -quick bench/.data/benchmarks-quick.md)")
	fs.StringVar(&c.DataDir, "data", "", "cache and scratch folder (default bench/.data)")
	fs.StringVar(&c.Tidemark, "tidemark", "", "use this tidemark binary instead of building ./cmd/tidemark")
	fs.StringVar(&c.Only, "only", strings.Join(scenarioNames, ","), "scenarios to run, comma-separated")
	fs.DurationVar(&c.Timeout, "timeout", 15*time.Minute, "cap on any one measured process; past it the process is killed and reported as did not finish")
	fs.IntVar(&c.Reps, "reps", 3, "repetitions per measurement (the report shows the median)")
	fs.BoolVar(&c.Keep, "keep", false, "keep the scratch folder (outputs, state, logs) after the run")
	fs.DurationVar(&c.Settle, "settle", 30*time.Second, "before each measurement, wait up to this long for a second in which other processes use < 0.25 cores (0: don't wait)")
	fs.Float64Var(&c.MaxOtherLoad, "max-other-load", 0.5, "a sample during which other processes used more CPU than this, in cores, is taken again")
	fs.IntVar(&c.Retakes, "retakes", 3, "how many times a disturbed sample is taken again at most (the last one is kept and marked)")

	fs.IntVar(&c.ConvertFiles, "convert-files", 20, "convert: CSV files")
	fs.Int64Var(&c.ConvertRows, "convert-rows", 250_000, "convert: rows per file")
	fs.Float64Var(&c.ConvertTarget, "convert-target", 0.9, "convert: minimum throughput ratio tidemark/duckdb")
	fs.StringVar(&c.TidemarkBefore, "tidemark-before", "", "convert-gz: a tidemark binary without the compressed-input check, to compare with")
	fs.Float64Var(&c.ConvertGzTarget, "convert-gz-target", 0.8, "convert-gz: minimum throughput ratio with the check / without (-tidemark-before)")

	fs.IntVar(&c.NoopDirs, "noop-dirs", 100, "noop: folders")
	fs.IntVar(&c.NoopPerDir, "noop-files-per-dir", 1000, "noop: tiny files per folder")
	fs.IntVar(&c.NoopNew, "noop-new", 10, "noop: new files added before the incremental run")
	fs.Float64Var(&c.NoopTarget, "noop-target", 5, "noop: maximum ratio no-op run / find|sort")
	fs.Float64Var(&c.NewTarget, "new-target", 1.5, "noop: maximum ratio run-with-new-files / no-op run (\"about the same\")")
	fs.IntVar(&c.BackfillBatch, "backfill-batch", 10_000, "noop: if the first run over all files fails, fill the state in runs of bounded_files this many (0: don't)")

	fs.IntVar(&c.MemFiles, "memory-files", 4, "memory: CSV files")
	fs.Int64Var(&c.MemFileBytes, "memory-file-bytes", 500_000_000, "memory: bytes per CSV file")
	fs.StringVar(&c.MemLimit, "memory-limit", "512MB", "memory: the engine's memory_limit")
	fs.Int64Var(&c.MemTarget, "memory-target", 1_000_000_000, "memory: maximum peak RSS of tidemark, bytes")
	fs.IntVar(&c.MemReps, "memory-reps", 1, "memory: repetitions (each converts the whole input)")

	fs.Float64Var(&c.S3ConvertTarget, "s3-convert-target", 0.6, "s3-convert: minimum throughput ratio S3/local disk (input as convert)")
	fs.IntVar(&c.S3Objects, "s3-objects", 100_000, "s3-noop: objects")
	fs.IntVar(&c.S3PerDay, "s3-objects-per-day", 1000, "s3-noop: objects per dated folder (sales/2026/MM/DD/)")
	fs.IntVar(&c.S3ListTarget, "s3-list-target", 2, "s3-noop: most ListObjectsV2 requests of a no-op run with listing: ordered")

	fs.IntVar(&c.SQLRows, "sql-rows", 1_000_000, "sql-extract: rows of the table read by a first run")
	fs.Float64Var(&c.SQLExtractTarget, "sql-extract-target", 0.5, "sql-extract: minimum throughput ratio tidemark/export tool")
	fs.IntVar(&c.SQLTableRows, "sql-table-rows", 10_000_000, "sql-incremental: rows in the table")
	fs.IntVar(&c.SQLNewRows, "sql-new-rows", 1000, "sql-incremental: new rows each incremental run finds")
	fs.Float64Var(&c.SQLScanFactor, "sql-scan-factor", 10, "sql-incremental: most table rows PostgreSQL may read per new row (the index is used)")

	fs.Float64Var(&c.S3StateTarget, "s3-state-target", 3, "s3-state: maximum ratio no-op run with S3 state / find|sort (noop's input)")
	fs.IntVar(&c.S3StateBigDirs, "s3-state-big-dirs", 1000, "s3-state: folders of the big no-op")
	fs.IntVar(&c.S3StateBigPerDir, "s3-state-big-files-per-dir", 1000, "s3-state: files per folder of the big no-op")
	fs.Int64Var(&c.S3StateRSSTarget, "s3-state-rss-target", 512_000_000, "s3-state: maximum peak RSS of the big no-op, bytes")
	fs.IntVar(&c.ServeJobs, "serve-jobs", 100, "serve: jobs in the state store")
	fs.IntVar(&c.ServeRuns, "serve-runs", 1000, "serve: runs per job")
	fs.IntVar(&c.ServeRequests, "serve-requests", 200, "serve: timed requests per route")
	fs.IntVar(&c.PGStateCommits, "pg-state-commits", 300, "pg-state: timed commits per store")
	fs.IntVar(&c.PGStateFiles, "pg-state-files", 100_000, "pg-state: files of the commit whose state size is measured")
	fs.Float64Var(&c.PGStateTarget, "pg-state-target", 3, "pg-state: maximum ratio no-op run with PostgreSQL (and SQLite) state / find|sort (noop's input)")

	fs.IntVar(&c.CrawlDirs, "crawl-dirs", 1000, "crawl: partition folders")
	fs.IntVar(&c.CrawlPerDir, "crawl-files-per-dir", 100, "crawl: tiny files per folder")
	fs.IntVar(&c.CrawlSample, "crawl-sample", 10, "crawl: sample_files of the crawler")

	fs.StringVar(&c.BacklogSizes, "backlog-sizes", "100000,300000,1000000", "backlog: first runs over this many local files, comma-separated, smallest first")
	fs.StringVar(&c.BacklogS3Sizes, "backlog-s3-sizes", "100000,300000", "backlog: first runs over this many S3 objects (empty: none)")
	fs.IntVar(&c.BacklogPerDir, "backlog-files-per-dir", 1000, "backlog: tiny files per folder")
	fs.IntVar(&c.BacklogBatch, "backlog-batch", 10_000, "backlog: the job's batch_files (the default), also the size DuckDB alone is measured at")
	fs.Int64Var(&c.BacklogRSSTarget, "backlog-rss-target", 1_000_000_000, "backlog: maximum peak RSS of a first run, bytes")
	fs.Float64Var(&c.BacklogLinearTarget, "backlog-linear-target", 1.5, "backlog: maximum growth of the time per file from the smallest size to the largest")
	fs.DurationVar(&c.BacklogDuckDBTimeout, "backlog-duckdb-timeout", 3*time.Minute, "backlog: cap on DuckDB alone over one list of files")

	glueFlagsInto(fs, &c.glue)

	// TMBENCH_<FLAG> sets a flag's default; the command line wins.
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := "TMBENCH_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok && envErr == nil {
			if err := f.Value.Set(v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	})
	if envErr != nil {
		return nil, envErr
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.Quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		quick := map[string]string{
			"convert-files": "4", "convert-rows": "25000",
			"noop-dirs": "10", "noop-files-per-dir": "100",
			"memory-files": "2", "memory-file-bytes": "20000000",
			"s3-objects": "2000", "s3-objects-per-day": "100",
			"sql-rows": "50000", "sql-table-rows": "200000",
			"serve-jobs": "10", "serve-runs": "100", "serve-requests": "50",
			"pg-state-commits": "50", "pg-state-files": "10000",
			"crawl-dirs": "50", "crawl-files-per-dir": "20",
			"backlog-sizes": "2000,6000", "backlog-s3-sizes": "2000", "backlog-files-per-dir": "100", "backlog-batch": "1000",
			"s3-state-big-dirs": "20",
			"timeout":           "3m",
		}
		for name, v := range quick {
			if !set[name] && os.Getenv("TMBENCH_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))) == "" {
				fs.Set(name, v)
			}
		}
	}
	if c.Reps < 1 || c.MemReps < 1 {
		return nil, fmt.Errorf("-reps and -memory-reps must be at least 1")
	}
	for _, name := range strings.Split(c.Only, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if scenarios[name] == nil {
			return nil, fmt.Errorf("-only: unknown scenario %q (want some of %s)", name, strings.Join(scenarioNames, ", "))
		}
		c.scenarios = append(c.scenarios, name)
	}
	if c.S3Objects < 1 || c.S3PerDay < 1 || c.SQLRows < 1 || c.SQLTableRows < 1 || c.SQLNewRows < 1 {
		return nil, fmt.Errorf("-s3-objects, -s3-objects-per-day, -sql-rows, -sql-table-rows and -sql-new-rows must be at least 1")
	}
	if c.ServeJobs < 1 || c.ServeRuns < 1 || c.ServeRequests < 1 {
		return nil, fmt.Errorf("-serve-jobs, -serve-runs and -serve-requests must be at least 1")
	}
	return c, nil
}

func run(ctx context.Context, c *config) error {
	started := time.Now()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	c.root = root
	if c.DataDir == "" {
		c.DataDir = filepath.Join(root, "bench", ".data")
	}
	if c.Out == "" {
		c.Out = filepath.Join(root, "docs", "benchmarks.md")
		if c.Quick {
			c.Out = filepath.Join(c.DataDir, "benchmarks-quick.md")
		}
	}
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return err
	}
	c.work, err = os.MkdirTemp(c.DataDir, "run-")
	if err != nil {
		return err
	}
	if c.Keep {
		logf("scratch folder: %s (kept)", c.work)
	} else {
		defer os.RemoveAll(c.work)
	}
	if err := c.build(ctx); err != nil {
		return err
	}
	defer c.srv.stop()

	rep := &report{cfg: c, machine: machineFacts(ctx, c)}
	if c.bin.tidemarkErr != nil {
		rep.problems = append(rep.problems, "tidemark does not build, so nothing of it was measured: "+
			strings.ReplaceAll(c.bin.tidemarkErr.Error(), "\n", " / "))
	}
	for _, name := range c.scenarios {
		s := scenarios[name](ctx, c)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rep.sections = append(rep.sections, s)
	}
	rep.elapsed = time.Since(started)
	if err := os.MkdirAll(filepath.Dir(c.Out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(c.Out, []byte(c.show(rep.markdown())), 0o644); err != nil {
		return err
	}
	logf("wrote %s in %s", c.Out, rep.elapsed.Round(time.Second))
	return nil
}

// scenarios are the benchmarks by -only name; scenarioNames in the
// report's order.
var (
	scenarios = map[string]func(context.Context, *config) section{
		"convert":         benchConvert,
		"convert-gz":      benchConvertGz,
		"convert-json":    benchConvertJSON,
		"iceberg":         benchIceberg,
		"noop":            benchNoop,
		"memory":          benchMemory,
		"s3-convert":      benchS3Convert,
		"s3-noop":         benchS3Noop,
		"sql-extract":     benchSQLExtract,
		"sql-incremental": benchSQLIncremental,
		"serve":           benchServe,
		"pg-state":        withLoad(benchPGState),
		"crawl":           benchCrawl,
		"backlog":         benchBacklog,
		"glue":            benchGlue,
		"s3-state":        withLoad(benchS3State),
	}
	scenarioNames = []string{"convert", "noop", "memory", "s3-convert", "s3-noop", "sql-extract", "sql-incremental", "convert-gz", "serve", "pg-state", "s3-state", "crawl", "backlog", "glue", "convert-json", "iceberg"}
)

// build compiles tidemark (unless -tidemark names a binary) and the DuckDB
// baseline into the scratch folder. A tidemark that does not build is
// reported in every scenario; the baselines still run.
func (c *config) build(ctx context.Context) error {
	bin := filepath.Join(c.work, "bin")
	c.bin.duckdb = filepath.Join(bin, "duckdbcopy")
	if err := goBuild(ctx, c.root, c.bin.duckdb, "./bench/duckdbcopy"); err != nil {
		return fmt.Errorf("building the DuckDB baseline: %w", err)
	}
	if c.Tidemark != "" {
		p, err := filepath.Abs(c.Tidemark)
		if err != nil {
			return err
		}
		c.bin.tidemark = p
		return nil
	}
	c.bin.tidemark = filepath.Join(bin, "tidemark")
	if err := goBuild(ctx, c.root, c.bin.tidemark, "./cmd/tidemark"); err != nil {
		c.bin.tidemarkErr = err
		c.bin.tidemark = ""
		logf("tidemark does not build; its measurements are skipped: %v", err)
	}
	return nil
}

func goBuild(ctx context.Context, root, out, pkg string) error {
	logf("go build -o %s %s", out, pkg)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	msg, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, strings.TrimSpace(string(msg)))
	}
	return nil
}

// moduleRoot is the folder of the go.mod the harness belongs to.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run from inside the tidemark module (go run ./bench)")
	}
	return filepath.Dir(mod), nil
}

var logStart = time.Now()

// logf prints progress on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%7.1fs] %s\n", time.Since(logStart).Seconds(), fmt.Sprintf(format, args...))
}
