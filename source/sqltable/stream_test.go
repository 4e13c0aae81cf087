//go:build unix

package sqltable

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStreamReleasedWhenEngineFailsFirst: an engine that fails before it
// opens the pipe (another source's bad file) must not leave the run
// waiting on the extraction, also when the extraction's goroutine reaches
// its open of the pipe only after the engine returned, and when it has
// more rows to write than the pipe holds.
func TestStreamReleasedWhenEngineFailsFirst(t *testing.T) {
	for _, delay := range []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rows.csv")
			if err := makePipe(path); err != nil {
				t.Fatal(err)
			}
			defer func(o func(string) (*os.File, error)) { openWriter = o }(openWriter)
			openWriter = func(p string) (*os.File, error) {
				time.Sleep(delay) // the goroutine is slow to reach its open
				return os.OpenFile(p, os.O_WRONLY, 0)
			}
			st := &tableStream{p: &jobPlan{ctx: "orders"}, path: path}
			row := []byte(strings.Repeat("x", 1023) + "\n")
			st.start(context.Background(), func(ctx context.Context, f *os.File) (*Extract, error) {
				for i := 0; i < 8<<10; i++ { // 8 MiB: more than the pipe's buffer
					if _, err := f.Write(row); err != nil {
						return nil, err
					}
				}
				return &Extract{Rows: 8 << 10}, nil
			})
			done := make(chan struct{})
			go func() {
				defer close(done)
				st.finish(errors.New("engine: a.parquet is truncated"))
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("finish did not return: the extraction was left waiting on the pipe")
			}
			if st.cause {
				t.Errorf("the extraction's own result is taken as the cause of an engine failure that came first")
			}
		})
	}
}
