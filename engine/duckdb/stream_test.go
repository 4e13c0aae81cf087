//go:build unix

package duckdb

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// TestStreamSource reads a source from a named pipe that a goroutine fills
// while the engine runs: one sink reads it directly; two sinks, or a
// transform, make the engine read it into a table first. Every case gets
// every row exactly once per sink.
func TestStreamSource(t *testing.T) {
	const n = 50_000
	var csv strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&csv, "%d,\"name, %d\"\n", i, i)
	}
	for _, tc := range []struct {
		name       string
		sinks      int
		transforms []engine.Transform
	}{
		{"one sink", 1, nil},
		{"two sinks", 2, nil},
		{"transform", 1, []engine.Transform{{Name: "t", SQL: "SELECT * FROM src UNION ALL SELECT * FROM src WHERE false"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			fifo := filepath.Join(t.TempDir(), "src.csv")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					done <- err
					return
				}
				_, err = f.WriteString(csv.String())
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				done <- err
			}()
			src := engine.Source{Ctx: "src", Format: "csv", Stream: true,
				Options: map[string]any{"header": false, "delim": ",", "quote": `"`, "escape": `"`, "skip": 0},
				Schema:  []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "VARCHAR"}},
				Files:   []engine.Input{{Location: fifo, Key: "src.csv"}}}
			from := "src"
			if tc.transforms != nil {
				from = "t"
			}
			var sinks []engine.Sink
			for i := range tc.sinks {
				sinks = append(sinks, engine.Sink{Ctx: fmt.Sprint("s", i), From: from, Format: "parquet", Location: filepath.Join(t.TempDir(), "out")})
			}
			res := execute(t, e, engine.Plan{Sources: []engine.Source{src}, Transforms: tc.transforms, Sinks: sinks})
			if err := <-done; err != nil {
				t.Fatalf("writing the pipe: %v", err)
			}
			equal(t, "source rows", res.Sources["src"].Rows, n)
			for _, s := range sinks {
				got := query(t, fmt.Sprintf("SELECT count(*), count(DISTINCT id), min(name), max(id) FROM read_parquet('%s/*.parquet')", s.Location))
				equal(t, s.Ctx+" output", got, []string{fmt.Sprintf("%d|%d|name, 1|%d", n, n, n)})
			}
		})
	}
}
