package crawler

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/objstore/local"
)

func columnsText(s schema) string {
	var parts []string
	for _, c := range s.final() {
		parts = append(parts, c.Name+" "+c.Type.String())
	}
	return strings.Join(parts, ", ")
}

func classifyFile(t *testing.T, dir, name string, limit int64) (shape, error) {
	t.Helper()
	st, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	o, err := st.Stat(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return classify(context.Background(), st, o, limit, &reading{})
}

func TestClassifyByContent(t *testing.T) {
	tests := []struct {
		name, content string
		kind, columns string // kind "" : skipped, columns then holds part of the reason
	}{
		{"comma header", "id,name,amount\n1,a,2.5\n2,b,3\n", `csv delim="," header="true"`, "id BIGINT, name VARCHAR, amount DOUBLE"},
		{"pipe header", "id|name\n1|a\n2|b\n", `csv delim="|" header="true"`, "id BIGINT, name VARCHAR"},
		{"tab header", "id\tday\n1\t2026-01-05\n", `csv delim="\t" header="true"`, "id BIGINT, day DATE"},
		{"semicolon header", "id;at\n1;2026-01-05 10:00:00\n", `csv delim=";" header="true"`, "id BIGINT, at TIMESTAMP"},
		{"no header: numbers first", "1,a,2.5\n2,b,3\n", `csv delim="," header="false"`, "col0 BIGINT, col1 VARCHAR, col2 DOUBLE"},
		{"no header: all text (Glue's rule)", "name,city\nann,paris\nbob,rome\n", `csv delim="," header="false"`, "col0 VARCHAR, col1 VARCHAR"},
		{"commas inside quotes, semicolons outside", "a;b\n\"1,5\";2\n\"2,5\";3\n", `csv delim=";" header="true"`, "a VARCHAR, b BIGINT"},
		{"codes with leading zeros stay text", "zip,n\n007,1\n010,2\n", `csv delim="," header="true"`, "zip VARCHAR, n BIGINT"},
		{"booleans and empty values", "ok,n\ntrue,\nfalse,3\n", `csv delim="," header="true"`, "ok BOOLEAN, n BIGINT"},
		{"json lines", "{\"id\":1,\"tags\":[\"a\"]}\n{\"id\":2.5,\"extra\":{\"x\":true}}\n", "json",
			"id DOUBLE, tags ARRAY<VARCHAR>, extra STRUCT<x: BOOLEAN>"},
		{"json strings of digits stay text", "{\"zip\":\"0123\",\"day\":\"2026-01-02\"}\n", "json", "zip VARCHAR, day DATE"},
		{"gzip csv", "", `csv+gzip delim="," header="true"`, "id BIGINT, name VARCHAR"},
		{"zstd json", "", "json+zstd", "id BIGINT"},
		{"one column is not csv", "a\nb\nc\n", "", "no delimiter"},
		{"ragged lines are not csv", "a,b\n1,2,3\n", "", "no delimiter"},
		{"json array", "[{\"a\":1}]\n", "", "not JSON Lines"},
		{"binary", "\x00\x01\x02abc", "", "binary"},
		{"empty", "", "", "empty"},
	}
	dir := t.TempDir()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			content := tc.content
			switch tc.name {
			case "gzip csv":
				content = gz(t, "id,name\n1,a\n2,b\n")
			case "zstd json":
				content = zst(t, "{\"id\":1}\n{\"id\":2}\n")
			}
			name := "f" + string(rune('a'+i)) + ".data"
			writeTree(t, dir, map[string]string{name: content})
			s, err := classifyFile(t, dir, name, DefaultSampleBytes)
			if tc.kind == "" {
				if err == nil || !strings.Contains(err.Error(), tc.columns) {
					t.Fatalf("got %v, %v; want skipped with %q", s.kind(), err, tc.columns)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.kind(); got != tc.kind {
				t.Errorf("kind: got %s, want %s", got, tc.kind)
			}
			if got := columnsText(s.Schema); got != tc.columns {
				t.Errorf("columns: got %s, want %s", got, tc.columns)
			}
		})
	}
}

// TestSampleBytesBound: a file larger than sample_bytes is read only that
// far, its cut last line left out.
func TestSampleBytesBound(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,v\n")
	for range 20000 {
		b.WriteString("1,2\n")
	}
	b.WriteString("x,y\n") // beyond the sample: would make id text
	writeTree(t, dir, map[string]string{"big.csv": b.String()})
	st, _ := local.New(dir)
	o, _ := st.Stat(context.Background(), "big.csv")
	n := &reading{}
	s, err := classify(context.Background(), st, o, 4096, n)
	if err != nil {
		t.Fatal(err)
	}
	if n.bytes != 4096 {
		t.Errorf("bytes read: got %d, want 4096", n.bytes)
	}
	if got, want := columnsText(s.Schema), "id BIGINT, v BIGINT"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestParquetFooter reads the schema of Parquet files DuckDB writes, from
// their footer only.
func TestParquetFooter(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	path := filepath.Join(dir, "t.parquet")
	q := `COPY (SELECT range::INTEGER AS i, 2::BIGINT AS b, md5(range::VARCHAR) AS s, 1.5::DOUBLE AS d, 2.25::DECIMAL(10,2) AS m,
		DATE '2026-01-02' AS day, TIMESTAMP '2026-01-02 03:04:05' AS ts, true AS ok, [1, 2] AS xs,
		{'a': 1, 'b': 'y'} AS st, MAP {'k': 1} AS mp, 3::UTINYINT AS u, 4::SMALLINT AS sm
		FROM range(200000)) TO '` + path + `' (FORMAT parquet)`
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
	}
	st, _ := local.New(dir)
	o, _ := st.Stat(context.Background(), "t.parquet")
	n := &reading{}
	s, err := classify(context.Background(), st, o, 16<<10, n)
	if err != nil {
		t.Fatal(err)
	}
	want := "i INTEGER, b BIGINT, s VARCHAR, d DOUBLE, m DECIMAL(10,2), day DATE, ts TIMESTAMP, ok BOOLEAN, " +
		"xs ARRAY<INTEGER>, st STRUCT<a: INTEGER, b: VARCHAR>, mp MAP<VARCHAR, INTEGER>, u UTINYINT, sm SMALLINT"
	if s.Format != "parquet" || columnsText(s.Schema) != want {
		t.Errorf("got %s %s, want parquet %s", s.Format, columnsText(s.Schema), want)
	}
	if o.Size < 64<<10 || n.bytes > 2*(16<<10)+8 {
		t.Errorf("read %d bytes of a %d-byte file: want the sample's 16KiB and the footer only", n.bytes, o.Size)
	}
	// A file cut short (still being written) is skipped, not misread.
	data, _ := objstore.ReadRange(context.Background(), st, "t.parquet", 0, o.Size-3)
	writeTree(t, dir, map[string]string{"cut.parquet": string(data)})
	if _, err := classifyFile(t, dir, "cut.parquet", DefaultSampleBytes); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("cut file: got %v, want an error naming the magic", err)
	}
}

func TestWiden(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"INTEGER", "BIGINT", "BIGINT"},
		{"BIGINT", "DOUBLE", "DOUBLE"},
		{"INTEGER", "DOUBLE", "DOUBLE"},
		{"DATE", "TIMESTAMP", "TIMESTAMP"},
		{"BIGINT", "VARCHAR", "VARCHAR"},
		{"BOOLEAN", "BIGINT", "VARCHAR"},
		{"DATE", "BIGINT", "VARCHAR"},
		{"DECIMAL(10,2)", "DECIMAL(12,4)", "DECIMAL(12,4)"},
		{"DECIMAL(10,2)", "INTEGER", "DECIMAL(12,2)"},
		{"UINTEGER", "INTEGER", "BIGINT"},
		{"ARRAY<INTEGER>", "ARRAY<BIGINT>", "ARRAY<BIGINT>"},
		{"STRUCT<a: INTEGER>", "STRUCT<b: VARCHAR>", "STRUCT<a: INTEGER, b: VARCHAR>"},
	}
	for _, tc := range tests {
		a, b := mustType(t, tc.a), mustType(t, tc.b)
		if got := Widen(a, b).String(); got != tc.want {
			t.Errorf("Widen(%s, %s): got %s, want %s", tc.a, tc.b, got, tc.want)
		}
		if got := Widen(b, a).String(); !strings.HasPrefix(tc.want, "STRUCT") && got != tc.want {
			t.Errorf("Widen(%s, %s): got %s, want %s", tc.b, tc.a, got, tc.want)
		}
		if Narrower(Widen(a, b), a) {
			t.Errorf("Widen(%s, %s) is narrower than %s", tc.a, tc.b, tc.a)
		}
	}
}
