package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/internal/sparktest"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
)

// diffJob is one job of the differential test: its inputs and its job
// file (without engine:), given the input and output folders.
type diffJob struct {
	name   string
	inputs map[string][]byte // key -> content, under the input folder
	// setup, when set, prepares more input under the input folder (a
	// database) and returns what the job function takes as its input.
	setup func(t testing.TB, in string) string
	job   func(in, out string) string
	// format and hive: how the sink's files are read back.
	format string
	hive   bool
}

func gz(t testing.TB, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zst(t testing.TB, s string) []byte {
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return w.EncodeAll([]byte(s), nil)
}

// sqliteTexts makes a SQLite table t (id, s) of awkward texts and NULL
// and returns its connection.
func sqliteTexts(t testing.TB, _ string) string {
	db := sqltest.New(t, sqldb.SQLite)
	db.Exec(t, "CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT)")
	for i, v := range []any{"", nil, `a"b`, "line1\nline2", `back\`, `\"x`, "NULL", "\r\n", nil, "  pad  ", "\ttab\t"} {
		db.Exec(t, "INSERT INTO t VALUES (?, ?)", i+1, v)
	}
	return db.Connection
}

func diffJobs(t testing.TB) []diffJob {
	orders := "id,product,amount,ts,ok\n1,apple,2.50,2024-05-01 10:00:00,true\n2,pear,3.25,2024-05-02 11:30:00,false\n3,apple,10.00,2024-05-03 12:00:00.5,true\n"
	more := "id,product,amount,ts,ok\n4,fig,1.10,2024-06-01 00:00:00,true\n5,pear,7.75,2024-06-02 23:59:59,false\n"
	custs := `{"cust":1,"name":"ann","score":1.5,"tags":[1,2]}` + "\n" + `{"cust":2,"name":"bob","score":2.0,"tags":[]}` + "\n"
	custs2 := `{"cust":3,"name":"cy","score":null,"tags":[3]}` + "\n"
	return []diffJob{
		{
			name: "csv-gz-hive-to-partitioned-parquet",
			inputs: map[string][]byte{
				"region=eu/a.csv.gz": gz(t, orders),
				"region=us/b.csv":    []byte(more),
			},
			job: func(in, out string) string {
				return fmt.Sprintf(`job: diff
sources:
  - ctx: orders
    path: %q
    format: csv
    options: {header: true}
transforms:
  typed: SELECT id, product, CAST(amount AS DECIMAL(10,2)) AS amount, CAST(ts AS DATE) AS day, ok, region FROM orders
sinks:
  - ctx: out
    path: %q
    format: parquet
    partition_by: [product]
    options: {compression: zstd}
`, in, out)
			},
			format: "parquet", hive: true,
		},
		{
			name: "json-zst-aggregate-to-parquet",
			inputs: map[string][]byte{
				"c1.json.zst": zst(t, custs),
				"c2.json":     []byte(custs2),
			},
			job: func(in, out string) string {
				return fmt.Sprintf(`job: diff
sources:
  - ctx: custs
    path: %q
    format: json
transforms:
  per_cust: SELECT cust, name, CAST(sum(coalesce(score, 0)) AS DOUBLE) AS total, count(*) AS n FROM custs GROUP BY cust, name
sinks:
  - ctx: out
    path: %q
    format: parquet
`, in, out)
			},
			format: "parquet",
		},
		{
			name: "json-nested-passthrough",
			inputs: map[string][]byte{
				"n.json": []byte(`{"id":1,"tags":[1,2],"p":{"x":1.5,"y":"a"}}` + "\n" + `{"id":2,"tags":[],"p":{"x":null,"y":"b"}}` + "\n"),
			},
			job: func(in, out string) string {
				return fmt.Sprintf(`job: diff
sources:
  - ctx: n
    path: %q
    format: json
sinks:
  - ctx: out
    path: %q
    format: parquet
`, in, out)
			},
			format: "parquet",
		},
		{
			// TIMESTAMP in a transform is zoneless on both engines (DuckDB's
			// meaning; Spark's own default is its instant type), so the
			// one job file writes the same Parquet type.
			name: "csv-cast-timestamp-to-parquet",
			inputs: map[string][]byte{
				"t.csv": []byte("id,ts\n1,2024-05-01 10:00:00\n2,2024-05-02 11:30:00.25\n"),
			},
			job: func(in, out string) string {
				return fmt.Sprintf(`job: diff
sources:
  - ctx: t
    path: %q
transforms:
  typed: SELECT id, CAST(ts AS TIMESTAMP) AS ts, TIMESTAMP '2024-01-01 00:00:00' AS since FROM t
sinks:
  - ctx: out
    path: %q
    format: parquet
`, in, out)
			},
			format: "parquet",
		},
		{
			// RFC 4180 quotes: a quote inside a quoted field is doubled
			// (Spark's default escape, a backslash, kept the quotes in
			// the text and wrote \" back).
			name: "csv-doubled-quotes-to-csv",
			inputs: map[string][]byte{
				"q.csv": []byte("id,name\n1,\"say \"\"hi\"\"\"\n2,\"a,b\"\n3,back\\slash\n4,\"\"\"\"\n" +
					// Quotes closed on their line: no unclosed quote.
					"5,\"x,\"\n6,\"q\" \n7,\"long \"\"x\"\" ,y\"\n8,\n"),
			},
			job: func(in, out string) string {
				return fmt.Sprintf(`job: diff
sources:
  - ctx: q
    path: %q
    format: csv
sinks:
  - ctx: out
    path: %q
    format: csv
`, in, out)
			},
			format: "csv",
		},
		{
			// A SQL table's texts: an empty text is not NULL, and texts
			// with quotes, backslashes and line breaks arrive unchanged
			// (the extract Spark reads has quoted fields spanning lines).
			name:  "sqlite-texts-to-parquet",
			setup: sqliteTexts,
			job: func(conn, out string) string {
				return fmt.Sprintf(`job: diff
sources:
  - ctx: t
    connection: %q
    table: t
transforms:
  marked: SELECT id, s, s IS NULL AS is_null FROM t
sinks:
  - ctx: out
    path: %q
    format: parquet
`, conn, out)
			},
			format: "parquet",
		},
		{
			// The same texts to CSV, partitioned so that the files hold
			// one column: Spark's CSV writer drops empty lines (a NULL
			// there was a row lost), and its rows were counted by lines
			// (a quoted line break counted twice).
			name:  "sqlite-texts-to-one-column-csv",
			setup: sqliteTexts,
			job: func(conn, out string) string {
				return fmt.Sprintf(`job: diff
sources:
  - ctx: t
    connection: %q
    table: t
transforms:
  split: SELECT s, CAST(id %% 2 AS BIGINT) AS odd FROM t
sinks:
  - ctx: out
    path: %q
    format: csv
    partition_by: [odd]
`, conn, out)
			},
			format: "csv", hive: true,
		},
		{
			name: "csv-json-join-to-csv",
			inputs: map[string][]byte{
				"orders/o.csv": []byte("id,cust,amount\n1,1,10\n2,2,20\n3,1,30\n4,9,40\n"),
				"custs/c.json": []byte(custs),
			},
			job: func(in, out string) string {
				return fmt.Sprintf(`job: diff
sources:
  - ctx: orders
    path: %q
    format: csv
  - ctx: custs
    path: %q
    format: json
transforms:
  joined: SELECT o.id, c.name, o.amount FROM orders o LEFT JOIN custs c ON o.cust = c.cust
  per_name: SELECT coalesce(name, 'none') AS name, sum(amount) AS amount, count(*) AS n FROM joined GROUP BY coalesce(name, 'none')
sinks:
  - ctx: out
    from: per_name
    path: %q
    format: csv
`, filepath.Join(in, "orders"), filepath.Join(in, "custs"), out)
			},
			format: "csv",
		},
	}
}

// TestSparkSameOutputAsDuckDB: a fixed set of jobs (CSV, JSON Lines,
// gzip and zstd, hive columns, transforms with joins and aggregates,
// partitioned sinks, CSV and Parquet out) run through the binary on both
// engines, one line of the job file apart; the outputs hold the same rows
// and, for Parquet, the same schema: the types DuckDB reads back
// (integer widths, timestamp kinds, decimals, nested types) and the
// physical types of the columns.
func TestSparkSameOutputAsDuckDB(t *testing.T) {
	t.Parallel()
	remote := sparktest.Remote(t)
	for _, j := range diffJobs(t) {
		t.Run(j.name, func(t *testing.T) {
			t.Parallel()
			in := t.TempDir()
			for k, v := range j.inputs {
				writeFile(t, filepath.Join(in, filepath.FromSlash(k)), v)
			}
			if j.setup != nil {
				in = j.setup(t, in)
			}
			var rows, schemas, counts [2]string
			for i, engine := range []string{"", fmt.Sprintf("engine: {spark: {remote: %q}}", remote)} {
				dir := t.TempDir()
				out := filepath.Join(dir, "out")
				y := j.job(in, out)
				if engine != "" {
					y = strings.Replace(y, "sources:", engine+"\nsources:", 1)
				}
				jobPath := filepath.Join(dir, "job.yaml")
				writeFile(t, jobPath, []byte(y))
				r := tidemark(t, dir, nil, "run", jobPath, "--json")
				if r.code != 0 {
					t.Fatalf("engine %q: got exit %d, want 0\n%v", engine, r.code, r)
				}
				var sum runSummary
				if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
					t.Fatalf("engine %q: run --json: %v\n%s", engine, err, r.stdout)
				}
				counts[i] = fmt.Sprint(sum.Sinks["out"].Rows)
				files := sinkFiles(t, out)
				if len(files) == 0 {
					t.Fatalf("engine %q: no output", engine)
				}
				reader := readerSQL(files, sinkFormat{format: j.format, hive: j.hive})
				rows[i] = queryText(t, "SELECT * FROM "+reader+" ORDER BY ALL")
				if j.format == "parquet" {
					schemas[i] = queryText(t, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "+reader+")")
					quoted := make([]string, len(files))
					for k, f := range files {
						quoted[k] = sqlString(f)
					}
					// Physical types; the annotations differ in spelling only
					// (DuckDB adds INT_64 to int64 columns, Spark a
					// StringType logical type to UTF8 ones).
					schemas[i] += queryText(t, "SELECT DISTINCT name, type FROM parquet_schema(["+
						strings.Join(quoted, ", ")+"]) WHERE type IS NOT NULL ORDER BY ALL")
				}
			}
			if counts[0] != counts[1] {
				t.Errorf("run --json sinks.out.rows: duckdb %s, spark %s", counts[0], counts[1])
			}
			if rows[0] != rows[1] {
				t.Errorf("rows:\nduckdb %s\nspark  %s", rows[0], rows[1])
			}
			if schemas[0] != schemas[1] {
				t.Errorf("schema:\nduckdb %s\nspark  %s", schemas[0], schemas[1])
			}
		})
	}
}

// queryText runs q on the test's DuckDB and returns its rows as text.
func queryText(t testing.TB, q string) string {
	t.Helper()
	rs, err := duck.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var b strings.Builder
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%v\n", vals)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
