package files

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/sink"
)

// preparing is a remote store that keeps prepared uploads in memory and
// records when each began.
type preparing struct {
	objstore.Store
	mu      sync.Mutex
	started []string // keys, in the order their uploads began
	bytes   map[string][]byte
}

func (p *preparing) LocalPath(string) (string, bool) { return "", false }

func (p *preparing) PrepareUpload(_ context.Context, key string, r io.Reader) (string, error) {
	p.mu.Lock()
	p.started = append(p.started, key)
	p.mu.Unlock()
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	id := fmt.Sprintf("up%d", len(p.bytes))
	p.bytes[id] = b
	return id, nil
}

func (p *preparing) CompleteUpload(context.Context, string, string) error { return nil }

func (p *preparing) AbortStaleUploads(context.Context, string, time.Duration, func(string) bool) (int, error) {
	return 0, nil
}

func (p *preparing) began() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.started)
}

// TestTailUploadFollowsTheEngine: a remote sink sends the file an engine
// says it writes front to back (Caps.Growing) while the engine runs, and
// the staged output is that upload; with an engine that promises no such
// file, nothing goes up before Stage.
func TestTailUploadFollowsTheEngine(t *testing.T) {
	for _, growing := range []string{"data_0.", ""} {
		t.Run(fmt.Sprintf("growing=%q", growing), func(t *testing.T) {
			objs := &preparing{bytes: map[string][]byte{}}
			s := &Sink{spec: job.Sink{Ctx: "out"}, cfg: &Config{Format: "csv", Mode: "append"}, root: "s3://b/out/", objs: objs}
			run := sink.Run{ID: "20261201T000000Z-abcdef", Engine: engine.Caps{Growing: growing},
				TempDir: func(string) (string, error) { return t.TempDir(), nil }, Concurrency: 1,
				Log: slog.New(slog.DiscardHandler)}
			stg, err := s.Prepare(context.Background(), run)
			if err != nil {
				t.Fatal(err)
			}
			dir := stg.Target().Location
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			stg.EngineStarted(context.Background())
			data := bytes.Repeat([]byte("a,b\n"), 1000)
			if err := os.WriteFile(filepath.Join(dir, "data_0.csv"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for growing != "" && objs.began() == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			before := objs.began()
			stg.EngineReturned(context.Background(), nil)
			staged, err := stg.Stage(context.Background(), engine.SinkResult{Rows: 1000,
				Files: []engine.StagedFile{{Path: "data_0.csv", Rows: 1000, Bytes: int64(len(data))}}}, false)
			if err != nil {
				t.Fatal(err)
			}
			if growing != "" && before != 1 || growing == "" && before != 0 {
				t.Errorf("uploads begun while the engine ran: %d", before)
			}
			if len(staged.Outputs) != 1 {
				t.Fatalf("outputs: %+v, want 1", staged.Outputs)
			}
			o := staged.Outputs[0]
			if o.Kind != manifest.Upload || o.Final != partName(run.ID, 0, "csv") || !bytes.Equal(objs.bytes[o.UploadID], data) {
				t.Errorf("output %+v: want an upload of the whole file at %s", o, partName(run.ID, 0, "csv"))
			}
			if n := objs.began(); n != 1 {
				t.Errorf("%d uploads, want 1 (the tail's, or Stage's)", n)
			}
		})
	}
}
