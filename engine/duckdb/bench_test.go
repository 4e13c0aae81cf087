package duckdb

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/engine"
)

// The comparisons below take a minute or more and write ~100 MB; they run
// only with TIDEMARK_BENCH=1:
//
//	TIDEMARK_BENCH=1 go test ./engine/duckdb -run Bench -v
//
// Each prints times side by side from one process, and ratios.

func benchEnabled(t *testing.T) {
	if os.Getenv("TIDEMARK_BENCH") == "" {
		t.Skip("set TIDEMARK_BENCH=1 to run")
	}
}

// writeOrders writes n CSV files of rows rows each.
func writeOrders(t *testing.T, dir string, n, rows int) []engine.Input {
	t.Helper()
	products := []string{"apple", "banana", "cherry", "date", "elder"}
	rng := rand.New(rand.NewPCG(1, 2))
	var files []engine.Input
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("orders-%03d.csv", i))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		w.WriteString("order_id,customer_id,product,amount,ts\n")
		for j := range rows {
			fmt.Fprintf(w, "%d,%d,%s,%.2f,2024-01-%02d 12:%02d:00\n", i*rows+j, rng.IntN(50000),
				products[rng.IntN(len(products))], float64(rng.IntN(1000000))/100, 1+j%28, j%60)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		f.Close()
		files = append(files, engine.Input{Location: p, Key: filepath.Base(p), Size: st.Size()})
	}
	return files
}

// timeIt runs fn reps times and returns the median duration.
func timeIt(t *testing.T, reps int, fn func(i int)) time.Duration {
	t.Helper()
	var ds []time.Duration
	for i := range reps {
		start := time.Now()
		fn(i)
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// TestBenchCSVToParquet compares Execute with DuckDB alone on 20 CSV files
// of 100,000 rows each, written to Parquet.
func TestBenchCSVToParquet(t *testing.T) {
	benchEnabled(t)
	files := writeOrders(t, t.TempDir(), 20, 100000)
	threads := 2
	e, err := New(Options{Threads: threads, MemoryLimit: "4GB"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	raw, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(fmt.Sprintf("SET threads = %d", threads)); err != nil {
		t.Fatal(err)
	}
	var list []string
	for _, f := range files {
		list = append(list, literal(f.Location))
	}
	outRoot := t.TempDir()
	ctx := context.Background()
	src := engine.Source{Ctx: "orders", Format: "csv", Files: files}
	first := execute(t, e, engine.Plan{Sources: []engine.Source{src},
		Sinks: []engine.Sink{{Ctx: "s", Format: "parquet", Location: filepath.Join(outRoot, "warm")}}})
	recorded := src
	recorded.Schema = first.Sources["orders"].Schema

	const reps = 5
	n := 0
	run := func(q string) func(int) {
		return func(int) {
			n++
			if _, err := raw.ExecContext(ctx, fmt.Sprintf(q, "["+strings.Join(list, ", ")+"]", filepath.Join(outRoot, fmt.Sprint(n)+".parquet"))); err != nil {
				t.Fatal(err)
			}
		}
	}
	exec := func(s engine.Source, transforms ...engine.Transform) func(int) {
		return func(int) {
			n++
			res := execute(t, e, engine.Plan{Sources: []engine.Source{s}, Transforms: transforms,
				Sinks: []engine.Sink{{Ctx: "s", Format: "parquet", Location: filepath.Join(outRoot, fmt.Sprint(n))}}})
			if res.Sources["orders"].Rows != 2000000 {
				t.Fatalf("rows = %d", res.Sources["orders"].Rows)
			}
		}
	}
	// Round-robin, so that a load spike on the machine hits every variant.
	variants := []func(int){
		run("COPY (SELECT * FROM read_csv(%s)) TO '%s' (FORMAT parquet)"),
		run("COPY (SELECT * FROM read_csv(%s, auto_detect=false, header=true, " +
			"columns={'order_id':'BIGINT','customer_id':'BIGINT','product':'VARCHAR','amount':'DOUBLE','ts':'TIMESTAMP'})) TO '%s' (FORMAT parquet)"),
		exec(src),
		exec(recorded),
		// The source reaches the sink through a transform: counted apart.
		exec(recorded, engine.Transform{Name: "t", SQL: "SELECT * FROM orders WHERE amount >= 0"}),
	}
	times := make([][]time.Duration, len(variants))
	for rep := range reps {
		for i, v := range variants {
			times[i] = append(times[i], timeIt(t, 1, func(int) { v(rep) }))
		}
	}
	median := func(ds []time.Duration) time.Duration {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	rawAuto, rawCols, infer, applied, viaTransform := median(times[0]), median(times[1]), median(times[2]), median(times[3]), median(times[4])
	t.Logf("20 files x 100,000 rows CSV -> Parquet, %d threads, median of %d:", threads, reps)
	t.Logf("  DuckDB alone, read_csv auto-detect:    %v", rawAuto)
	t.Logf("  DuckDB alone, read_csv explicit types: %v", rawCols)
	t.Logf("  Execute, first run (infers schema):    %v  (DuckDB alone / Execute = %.2fx)", infer, float64(rawAuto)/float64(infer))
	t.Logf("  Execute, recorded schema:              %v  (DuckDB alone / Execute = %.2fx; vs explicit types %.2fx)",
		applied, float64(rawAuto)/float64(applied), float64(rawCols)/float64(applied))
	t.Logf("  Execute, recorded schema, via a transform (separate count): %v  (%.2fx of direct)",
		viaTransform, float64(applied)/float64(viaTransform))
}

// TestBenchChunkSize measures one read over N small files as a single list
// and as UNION ALL of chunks, the way the engine builds a source's view
// (explicit columns, auto_detect=false), and with DuckDB's sniffing.
func TestBenchChunkSize(t *testing.T) {
	benchEnabled(t)
	dir := t.TempDir()
	const n = 16000
	var list []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("f%05d.csv", i))
		var b strings.Builder
		b.WriteString("id,name,amount\n")
		for j := range 10 {
			fmt.Fprintf(&b, "%d,n%d,%g\n", i*10+j, j, float64(j)*1.5)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		list = append(list, literal(p))
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const explicit = ", auto_detect=false, header=true, columns={'id':'BIGINT','name':'VARCHAR','amount':'DOUBLE'}"
	count := func(files []string, chunk int, args string) time.Duration {
		var parts []string
		for i := 0; i < len(files); i += chunk {
			parts = append(parts, fmt.Sprintf("SELECT * FROM read_csv([%s]%s)", strings.Join(files[i:min(i+chunk, len(files))], ", "), args))
		}
		q := "SELECT count(*) FROM (" + strings.Join(parts, " UNION ALL ") + ")"
		return timeIt(t, 3, func(int) {
			var got int64
			if err := db.QueryRow(q).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != int64(len(files))*10 {
				t.Fatalf("count = %d", got)
			}
		})
	}
	for _, files := range []int{500, 1000, 4000, 16000} {
		t.Logf("%5d files, one list, sniffing:        %v", files, count(list[:files], files, ""))
		t.Logf("%5d files, one list, explicit schema: %v", files, count(list[:files], files, explicit))
	}
	for _, chunk := range []int{250, 500, 1000, 2000, 16000} {
		t.Logf("16000 files, chunks of %5d, explicit schema: %v", chunk, count(list, chunk, explicit))
	}
}
