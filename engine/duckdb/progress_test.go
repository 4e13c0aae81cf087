package duckdb

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/engine"
)

// TestProgress: with Options.Progress, Progress reports the rows a running
// Execute has processed and its share of the work, and nothing once it
// returned; without it, nothing. It fails if the driver stops giving the
// C connection that DuckDB's progress call needs.
func TestProgress(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("order_id,amount\n")
	for i := range 100_000 {
		fmt.Fprintf(&b, "%d,%d\n", i, i%1000)
	}
	var files []engine.Input
	for i := range 10 {
		files = append(files, input(t, dir, fmt.Sprintf("in/f%02d.csv", i), []byte(b.String())))
	}
	plan := func(out string) engine.Plan {
		return engine.Plan{
			Sources: []engine.Source{{Ctx: "src", Format: "csv", Options: map[string]any{"header": true}, Files: files}},
			// Slow enough per row that the scan is seen in progress.
			Transforms: []engine.Transform{{Name: "t", SQL: "SELECT order_id, amount, (SELECT sum(hash(order_id + i)) FROM range(50) r(i)) AS h FROM src"}},
			Sinks:      []engine.Sink{{Ctx: "out", From: "t", Format: "parquet", Location: filepath.Join(dir, out)}},
		}
	}

	e, err := New(Options{Threads: 2, SpillDir: filepath.Join(dir, "spill"), Progress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, ok := e.Progress(); ok {
		t.Errorf("Progress before Execute: ok, want nothing")
	}
	done := make(chan error)
	go func() {
		_, err := e.Execute(context.Background(), plan("out1"))
		done <- err
	}()
	var best engine.Progress
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		case <-time.After(20 * time.Millisecond):
			if p, ok := e.Progress(); ok && p.Rows > best.Rows {
				best = p
			}
		}
	}
	t.Logf("best progress seen: %+v", best)
	if best.Rows == 0 || best.Percent <= 0 || best.Percent > 100 {
		t.Errorf("Progress while Execute ran: best %+v, want rows > 0 and a percentage", best)
	}
	if _, ok := e.Progress(); ok {
		t.Errorf("Progress after Execute returned: ok, want nothing")
	}

	off := newEngine(t)
	go func() {
		_, err := off.Execute(context.Background(), plan("out2"))
		done <- err
	}()
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		case <-time.After(20 * time.Millisecond):
			if p, ok := off.Progress(); ok {
				t.Fatalf("Progress without Options.Progress: %+v", p)
			}
		}
	}
}
