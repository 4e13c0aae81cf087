// Command duckdbcopy is the benchmark's baseline: DuckDB alone, through the
// same Go driver tidemark embeds, converting CSV files to Parquet with one
// COPY statement. The bench harness builds it and runs it as its own process,
// so it pays the same process start and driver load that `tidemark run` pays.
//
//	duckdbcopy -files LIST -out FILE [-memory-limit 512MB] [-threads N] [-set NAME=VALUE]... [-columns SCHEMA] [-format csv|json]
//	duckdbcopy -count LIST     # prints the total rows of the Parquet files in LIST
//	duckdbcopy -version        # prints DuckDB's version
//
// LIST is a text file of input paths, one per line (a list of thousands of
// paths would not fit on a command line). The COPY result is printed on stdout
// as one JSON object: {"rows":N,"sql":"..."}.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2"
)

func main() {
	var (
		files       = flag.String("files", "", "text file listing the input CSV paths, one per line")
		out         = flag.String("out", "", "Parquet file (or folder with -per-thread) to write")
		perThread   = flag.Bool("per-thread", false, "write one file per thread into the -out folder (PER_THREAD_OUTPUT)")
		memoryLimit = flag.String("memory-limit", "", "DuckDB memory_limit, e.g. 512MB (default: DuckDB's)")
		threads     = flag.Int("threads", 0, "DuckDB threads (default: DuckDB's, the number of cores)")
		tempDir     = flag.String("temp-dir", "", "DuckDB temp_directory for spilling (default: DuckDB's)")
		count       = flag.String("count", "", "print the total rows of the Parquet files listed in this file and exit")
		version     = flag.Bool("version", false, "print DuckDB's version and exit")
		columns     = flag.String("columns", "", "read with this schema instead of sniffing, e.g. 'id BIGINT, name VARCHAR' (columns=..., auto_detect=false)")
		format      = flag.String("format", "csv", "input format: csv (with a header) or json (JSON Lines)")
		sets        []string
	)
	flag.Func("set", "a DuckDB setting NAME=VALUE, e.g. preserve_insertion_order=false (repeatable)", func(s string) error {
		if _, _, ok := strings.Cut(s, "="); !ok {
			return fmt.Errorf("want NAME=VALUE")
		}
		sets = append(sets, s)
		return nil
	})
	flag.Parse()
	if err := run(context.Background(), *files, *out, *perThread, *memoryLimit, *threads, *tempDir, sets, *columns, *format, *count, *version); err != nil {
		fmt.Fprintf(os.Stderr, "duckdbcopy: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, files, out string, perThread bool, memoryLimit string, threads int, tempDir string, sets []string, columns, format, count string, version bool) error {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return fmt.Errorf("opening duckdb: %w", err)
	}
	defer db.Close()
	// One connection: settings made with SET must apply to the COPY.
	db.SetMaxOpenConns(1)

	switch {
	case version:
		var v string
		if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&v); err != nil {
			return fmt.Errorf("reading version: %w", err)
		}
		fmt.Println(v)
		return nil
	case count != "":
		paths, err := readList(count)
		if err != nil {
			return err
		}
		var n int64
		if len(paths) > 0 {
			q := fmt.Sprintf("SELECT count(*) FROM read_parquet([%s])", strings.Join(quoteAll(paths), ", "))
			if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
				return fmt.Errorf("counting rows: %w", err)
			}
		}
		fmt.Println(n)
		return nil
	}

	if files == "" || out == "" {
		return fmt.Errorf("-files and -out are required")
	}
	paths, err := readList(files)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("%s lists no files", files)
	}
	var settings []string
	if memoryLimit != "" {
		settings = append(settings, "SET memory_limit = "+quote(memoryLimit))
	}
	if threads > 0 {
		settings = append(settings, fmt.Sprintf("SET threads = %d", threads))
	}
	if tempDir != "" {
		settings = append(settings, "SET temp_directory = "+quote(tempDir))
	}
	for _, s := range sets {
		name, value, _ := strings.Cut(s, "=")
		settings = append(settings, fmt.Sprintf("SET %s = %s", name, quote(value)))
	}
	for _, s := range settings {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}

	quoted := quoteAll(paths)
	opts := "FORMAT parquet"
	if perThread {
		opts += ", PER_THREAD_OUTPUT true"
	}
	reader, readOpts := "read_csv", "header=true"
	switch format {
	case "csv":
	case "json":
		reader, readOpts = "read_json", "format='newline_delimited'"
	default:
		return fmt.Errorf("-format: want csv or json, got %q", format)
	}
	if columns != "" {
		s, err := columnsArg(columns)
		if err != nil {
			return err
		}
		readOpts += ", columns=" + s + ", auto_detect=false"
	}
	copySQL := fmt.Sprintf("COPY (SELECT * FROM %s([%s], %s)) TO %s (%s)",
		reader, strings.Join(quoted, ", "), readOpts, quote(out), opts)
	res, err := db.ExecContext(ctx, copySQL)
	if err != nil {
		return fmt.Errorf("copying: %w", err)
	}
	rows, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("reading the copied row count: %w", err)
	}
	// The statement as a reader would write it: settings, then the COPY with
	// the file list abbreviated.
	shown := fmt.Sprintf("COPY (SELECT * FROM %s([%s], %s)) TO %s (%s)",
		reader, abbreviate(quoted), readOpts, quote(out), opts)
	if len(settings) > 0 {
		shown = strings.Join(settings, "; ") + "; " + shown
	}
	return json.NewEncoder(os.Stdout).Encode(struct {
		Rows int64  `json:"rows"`
		SQL  string `json:"sql"`
	}{rows, shown})
}

// readList reads one path per line, skipping blank lines.
func readList(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("reading file list: %w", err)
	}
	defer f.Close()
	var paths []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			paths = append(paths, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading file list %s: %w", name, err)
	}
	return paths, nil
}

// columnsArg turns "id BIGINT, name VARCHAR" into read_csv's
// {'id': 'BIGINT', 'name': 'VARCHAR'}.
func columnsArg(schema string) (string, error) {
	var cols []string
	for _, c := range strings.Split(schema, ",") {
		name, typ, ok := strings.Cut(strings.TrimSpace(c), " ")
		if !ok {
			return "", fmt.Errorf("-columns: want NAME TYPE, got %q", c)
		}
		cols = append(cols, quote(name)+": "+quote(strings.TrimSpace(typ)))
	}
	return "{" + strings.Join(cols, ", ") + "}", nil
}

// quote makes a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quote(s)
	}
	return out
}

// abbreviate shows the first two of a long list of quoted paths.
func abbreviate(quoted []string) string {
	if len(quoted) <= 3 {
		return strings.Join(quoted, ", ")
	}
	return fmt.Sprintf("%s, %s, … %d files in all", quoted[0], quoted[1], len(quoted))
}
