package duckdb

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

func newEngine(tb testing.TB) *Engine {
	tb.Helper()
	e, err := New(Options{MemoryLimit: "1GB", Threads: 2, SpillDir: filepath.Join(tb.TempDir(), "spill")})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() {
		if err := e.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return e
}

// input writes content at root/key and returns it as a planned input.
func input(tb testing.TB, root, key string, content []byte) engine.Input {
	tb.Helper()
	p := filepath.Join(root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o644); err != nil {
		tb.Fatal(err)
	}
	return engine.Input{Location: p, Key: key, Size: int64(len(content))}
}

func gz(tb testing.TB, s string) []byte {
	tb.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func zst(tb testing.TB, s string) []byte {
	tb.Helper()
	w, err := zstd.NewWriter(nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll([]byte(s), nil)
}

func execute(tb testing.TB, e *Engine, p engine.Plan) engine.Result {
	tb.Helper()
	res, err := e.Execute(context.Background(), p)
	if err != nil {
		tb.Fatalf("Execute: %v", err)
	}
	return res
}

// query runs q on a separate DuckDB and returns the rows as strings, one
// "a|b|c" per row; tests read outputs with it.
func query(tb testing.TB, q string) []string {
	tb.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(q)
	if err != nil {
		tb.Fatalf("query %s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		s := make([]string, len(vals))
		for i, v := range vals {
			s[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(s, "|"))
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// files returns the staged files' paths.
func paths(fs []engine.StagedFile) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

func schemaString(cols []bookmark.Column) string {
	var parts []string
	for _, c := range cols {
		parts = append(parts, c.Name+" "+c.Type)
	}
	return strings.Join(parts, ", ")
}

func equal(tb testing.TB, what string, got, want any) {
	tb.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		tb.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// inputError asserts err is an *engine.InputError and returns it.
func inputError(tb testing.TB, err error) *engine.InputError {
	tb.Helper()
	var ie *engine.InputError
	if !errors.As(err, &ie) {
		tb.Fatalf("got error %v (%T), want *engine.InputError", err, err)
	}
	return ie
}
