package sqltable_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

// ddl rewrites portable placeholders into each database's types:
// {int} bigint, {pk} an integer primary key, {ts} a microsecond timestamp,
// {text} a short indexable text.
func ddl(k sqldb.Kind, s string) string {
	r := map[sqldb.Kind]*strings.Replacer{
		sqldb.Postgres: strings.NewReplacer("{int}", "bigint", "{pk}", "bigint PRIMARY KEY", "{ts}", "timestamp(6)", "{text}", "varchar(200)"),
		sqldb.MySQL:    strings.NewReplacer("{int}", "bigint", "{pk}", "bigint PRIMARY KEY", "{ts}", "datetime(6)", "{text}", "varchar(200)"),
		sqldb.SQLite:   strings.NewReplacer("{int}", "INTEGER", "{pk}", "INTEGER PRIMARY KEY", "{ts}", "TIMESTAMP", "{text}", "TEXT"),
	}[k]
	return r.Replace(s)
}

// open opens a source on db with cfg's table, keys etc.
func open(t *testing.T, db *sqltest.DB, cfg sqltable.Config) *sqltable.Source {
	t.Helper()
	cfg.Connection, cfg.PasswordEnv = db.Connection, db.PasswordEnv
	if cfg.Ctx == "" {
		cfg.Ctx = "src"
	}
	s, err := sqltable.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// run is one planned and extracted read.
type run struct {
	plan *sqltable.Plan
	ex   *sqltable.Extract
	rows [][]string // every column as DuckDB text, sorted
}

// step plans and extracts once from cursor prev and reads the files back
// through DuckDB. It plans both ways, counting (Plan, returned) and as a
// run does (PlanRun, extracted), and checks that they agree.
func step(t *testing.T, s *sqltable.Source, prev []byte) run {
	t.Helper()
	ctx := context.Background()
	p, err := s.Plan(ctx, prev)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	pr, err := s.PlanRun(ctx, prev)
	if err != nil {
		t.Fatalf("PlanRun: %v", err)
	}
	if pr.Pending() != p.Pending() || !slices.Equal(pr.To, p.To) || pr.Bounded != p.Bounded ||
		pr.Regressions != p.Regressions || pr.Late != p.Late || pr.NewRows != -1 {
		t.Fatalf("PlanRun disagrees with Plan: pending %t/%t, to %v/%v, bounded %t/%t, regressions %d/%d, late %d/%d, new rows %d (want -1)",
			pr.Pending(), p.Pending(), pr.To, p.To, pr.Bounded, p.Bounded, pr.Regressions, p.Regressions, pr.Late, p.Late, pr.NewRows)
	}
	if p.Pending() != (p.NewRows+p.Late > 0) {
		t.Fatalf("Plan: pending %t with %d new and %d late rows", p.Pending(), p.NewRows, p.Late)
	}
	ex, err := pr.Extract(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	rows := readBack(t, ex)
	if int64(len(rows)) != ex.Rows {
		t.Fatalf("Extract reports %d rows, files hold %d", ex.Rows, len(rows))
	}
	// As one stream (what a run hands the engine through a pipe): the
	// same bytes as the files, in order, and the same cursor.
	var stream, files bytes.Buffer
	exs, err := pr.ExtractTo(ctx, &stream)
	if err != nil {
		t.Fatalf("ExtractTo: %v", err)
	}
	for _, f := range ex.Files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		files.Write(b)
	}
	if !bytes.Equal(stream.Bytes(), files.Bytes()) || exs.Rows != ex.Rows || exs.Late != ex.Late ||
		!bytes.Equal(exs.Cursor, ex.Cursor) || !bytes.Equal(exs.Range, ex.Range) || len(exs.Files) != 0 {
		t.Fatalf("ExtractTo differs from Extract: %d/%d bytes, %d/%d rows, cursor %s / %s",
			stream.Len(), files.Len(), exs.Rows, ex.Rows, exs.Cursor, ex.Cursor)
	}
	return run{plan: p, ex: ex, rows: rows}
}

var duck *sql.DB

func duckDB(t *testing.T) *sql.DB {
	t.Helper()
	if duck == nil {
		d, err := sql.Open("duckdb", "")
		if err != nil {
			t.Fatal(err)
		}
		duck = d
	}
	return duck
}

func lit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// duckSpelling returns DuckDB's spelling of a recorded type: the
// canonical scalar names are DuckDB's, lists are T[] (the only nested type
// a table source reads).
func duckSpelling(t *testing.T, text string) string {
	t.Helper()
	typ, err := bookmark.ParseType(text)
	if err != nil {
		t.Fatal(err)
	}
	if typ.Kind == bookmark.List {
		return typ.Elem.String() + "[]"
	}
	return typ.String()
}

// readCall renders the read_csv call the engine would make for ex.
func readCall(t *testing.T, ex *sqltable.Extract) string {
	paths := make([]string, len(ex.Files))
	for i, f := range ex.Files {
		paths[i] = lit(f)
	}
	cols := make([]string, len(ex.Schema))
	for i, c := range ex.Schema {
		cols[i] = lit(c.Name) + ": " + lit(duckSpelling(t, c.Type))
	}
	var opts []string
	for k, v := range ex.Options {
		switch x := v.(type) {
		case string:
			opts = append(opts, k+"="+lit(x))
		default:
			opts = append(opts, fmt.Sprintf("%s=%v", k, x))
		}
	}
	slices.Sort(opts)
	return fmt.Sprintf("read_csv([%s], columns={%s}, auto_detect=false, %s)",
		strings.Join(paths, ", "), strings.Join(cols, ", "), strings.Join(opts, ", "))
}

// readBack reads ex's files through DuckDB, every value cast to text,
// rows sorted.
func readBack(t *testing.T, ex *sqltable.Extract) [][]string {
	t.Helper()
	if len(ex.Files) == 0 {
		return nil
	}
	casts := make([]string, len(ex.Schema))
	for i, c := range ex.Schema {
		casts[i] = fmt.Sprintf("coalesce(CAST(%q AS VARCHAR), 'NULL')", c.Name)
	}
	q := "SELECT " + strings.Join(casts, ", ") + " FROM " + readCall(t, ex)
	rows, err := duckDB(t).Query(q)
	if err != nil {
		t.Fatalf("reading the extract through DuckDB: %v\n%s", err, q)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals := make([]string, len(ex.Schema))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading the extract through DuckDB: %v", err)
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(strings.Join(a, "\x00"), strings.Join(b, "\x00")) })
	return out
}

// column returns column i of rows.
func column(rows [][]string, i int) []string {
	out := make([]string, len(rows))
	for j, r := range rows {
		out[j] = r[i]
	}
	return out
}

// ints returns column i of rows sorted numerically, as text.
func ints(rows [][]string, i int) []string { return sortInts(column(rows, i)) }

// sortInts sorts non-negative integers given as text.
func sortInts(v []string) []string {
	out := slices.Clone(v)
	slices.SortFunc(out, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	return out
}

func seq(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// insertIDs inserts rows (id, 'v<id>') into table t.
func insertIDs(t *testing.T, db *sqltest.DB, table string, ids ...int) {
	t.Helper()
	for _, id := range ids {
		db.Exec(t, fmt.Sprintf("INSERT INTO %s (id, v) VALUES (%d, 'v%d')", db.Q(table), id, id))
	}
}

func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
