package duckdb

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/engine"
)

// TestManyFiles reads 2,000 small files (four chunks, one of them
// partial, plus zero-byte files in between) and counts every row once.
func TestManyFiles(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	var files []engine.Input
	var want, wantSum int64
	for i := range 2000 {
		if i%250 == 7 {
			files = append(files, input(t, root, fmt.Sprintf("d%d/empty%04d.csv", i%10, i), nil))
			continue
		}
		var b strings.Builder
		b.WriteString("id,v\n")
		for j := range i % 5 {
			id := int64(i*10 + j)
			fmt.Fprintf(&b, "%d,%d\n", id, j)
			want++
			wantSum += id
		}
		files = append(files, input(t, root, fmt.Sprintf("d%d/f%04d.csv", i%10, i), []byte(b.String())))
	}
	out := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{
		Sources: []engine.Source{{Ctx: "src", Format: "csv", Options: map[string]any{"header": true}, Files: files}},
		Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: out}},
	})
	equal(t, "source rows", res.Sources["src"].Rows, want)
	equal(t, "sink rows", res.Sinks["snk"].Rows, want)
	got := query(t, fmt.Sprintf("SELECT count(*), sum(id), count(DISTINCT id) FROM read_parquet('%s/*.parquet')", out))
	equal(t, "output", got, []string{fmt.Sprintf("%d|%d|%d", want, wantSum, want)})
}

func TestChunks(t *testing.T) {
	for _, n := range []int{0, 1, chunkFiles, chunkFiles + 1, 4*chunkFiles - 3} {
		in := &inputs{paths: make([]string, n)}
		chunks := in.chunks()
		total := 0
		for _, c := range chunks {
			if len(c) == 0 || len(c) > chunkFiles {
				t.Errorf("n=%d: chunk of %d files", n, len(c))
			}
			total += len(c)
		}
		equal(t, fmt.Sprint("files in chunks of ", n), total, n)
		equal(t, fmt.Sprint("chunks of ", n), len(chunks), (n+chunkFiles-1)/chunkFiles)
	}
	list := []string{"a", "b", "c", "d", "e", "f", "g"}
	equal(t, "spread", spread(list, 3), []string{"a", "d", "g"})
	equal(t, "spread all", spread(list, 10), list)
}

func TestCancel(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := e.Execute(ctx, engine.Plan{
		Sources: []engine.Source{{Ctx: "src", Format: "csv", Files: []engine.Input{input(t, root, "x.csv", []byte("a\n1\n"))}}},
		// Effectively endless.
		Transforms: []engine.Transform{{Name: "big", SQL: "SELECT a, r.range FROM src, range(1000000000000) r"}},
		Sinks:      []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Execute returned %v after cancel", d)
	}
	// The engine is still usable.
	execute(t, e, engine.Plan{
		Sources: []engine.Source{{Ctx: "src", Format: "csv", Files: []engine.Input{input(t, root, "y.csv", []byte("a\n1\n"))}}},
		Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out2")}},
	})
}
