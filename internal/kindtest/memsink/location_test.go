package memsink

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	_ "github.com/tidemark-etl/tidemark/objstore/local" // the run log's ownership record is kept through objstore
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// TestPublishPurge: publishing again after a crash changes nothing, a
// purge is idempotent (what is gone is reported Gone), and a run whose
// staging is lost before it was published is sink.ErrOutputLost.
func TestPublishPurge(t *testing.T) {
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	st := memory.New(memory.Options{})
	g := &staging{ctx: "out", dir: dir, run: "r1"}
	if err := os.MkdirAll(g.where(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.where(), "data_0.json"), []byte("{\"item\":\"a\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	staged, err := g.Stage(ctx, engine.SinkResult{Files: []engine.StagedFile{{Path: "data_0.json", Rows: 1, Bytes: 13}}, Rows: 1}, false)
	if err != nil {
		t.Fatal(err)
	}
	l := &location{dir: dir}
	pub := sink.Publication{Job: "j", RunID: "r1", Run: store.Run{Mode: bookmark.ModeEnable}, Outputs: staged.Outputs, State: st, Log: log}
	for i := 0; i < 2; i++ {
		if err := l.Publish(ctx, pub); err != nil {
			t.Fatalf("publish %d: %v", i+1, err)
		}
	}
	l.Published(ctx, "r1", log)
	b, err := os.ReadFile(filepath.Join(dir, "r1.jsonl"))
	if got, want := string(b), "{\"item\":\"a\"}\n"; err != nil || got != want {
		t.Fatalf("r1.jsonl: got %q (%v), want %q", got, err, want)
	}
	// Published deleted the staging; publishing again is still a no-op.
	if err := l.Publish(ctx, pub); err != nil {
		t.Fatalf("publish after Published: %v", err)
	}
	p, err := l.Purge(ctx, "j", "r1", staged.Outputs, log)
	if err != nil || len(p.Deleted) != 1 || len(p.Gone) != 0 {
		t.Fatalf("purge: %+v, %v; want one file deleted", p, err)
	}
	p, err = l.Purge(ctx, "j", "r1", staged.Outputs, log)
	if err != nil || len(p.Deleted) != 0 || len(p.Gone) != 1 {
		t.Fatalf("purge again: %+v, %v; want the file reported gone", p, err)
	}
	pub.RunID, pub.Outputs[0].RunID, pub.Outputs[0].Final = "r2", "r2", "r2.jsonl"
	if err := l.Publish(ctx, pub); !errors.Is(err, sink.ErrOutputLost) {
		t.Fatalf("publish of lost staging: got %v, want ErrOutputLost", err)
	}
}
