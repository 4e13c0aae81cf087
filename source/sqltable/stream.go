package sqltable

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/tidemark-etl/tidemark/engine"
)

// tableStream carries a SQL table source's rows to the engine through a
// named pipe: the extraction writes while the engine reads, so reading
// the database and converting overlap, and the rows never touch the disk.
type tableStream struct {
	p      *jobPlan
	path   string
	cancel context.CancelFunc
	done   chan struct{}
	ex     *Extract
	err    error
	// failedFirst is set when the extraction failed on its own, before
	// the pipe was closed: then a failing engine failed because of it.
	failedFirst atomic.Bool
	cause       bool // err caused the run's failure (finish)
}

// startStream makes the pipe in dir and starts extracting p into it. The
// extraction waits for the engine to open the pipe.
func startStream(ctx context.Context, p *jobPlan, dir string) (*tableStream, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "rows.csv")
	if err := makePipe(path); err != nil {
		return nil, fmt.Errorf("source %s: making a pipe for its rows: %w", p.ctx, err)
	}
	st := &tableStream{p: p, path: path}
	st.start(ctx, func(ctx context.Context, f *os.File) (*Extract, error) { return p.plan.ExtractTo(ctx, f) })
	return st, nil
}

// openWriter opens the pipe's write end, waiting for a reader (a variable
// so that a test can delay it).
var openWriter = func(path string) (*os.File, error) { return os.OpenFile(path, os.O_WRONLY, 0) }

// start runs extract into the pipe in the background.
func (st *tableStream) start(ctx context.Context, extract func(context.Context, *os.File) (*Extract, error)) {
	ctx, st.cancel = context.WithCancel(ctx)
	st.done = make(chan struct{})
	go func() {
		defer close(st.done)
		f, err := openWriter(st.path)
		if err != nil {
			st.err = err
			return
		}
		growPipe(f)
		st.ex, st.err = extract(ctx, f)
		st.failedFirst.Store(st.err != nil) // before the engine can see the end of the pipe
		if err := f.Close(); st.err == nil && err != nil {
			st.err = fmt.Errorf("source %s: %w", st.p.ctx, err)
		}
	}()
}

// Input is the engine's view of the stream.
func (st *tableStream) Input() engine.Source {
	return engine.Source{Ctx: st.p.ctx, Format: "csv", Options: CSVOptions(), Schema: st.p.src.Schema(), Stream: true, Exact: true,
		Files: []engine.Input{{Location: st.path, Key: filepath.Base(st.path)}}}
}

// finish waits for the extraction once the engine has returned. An
// extraction the engine left behind (it failed, or never opened the pipe)
// is released: the read end is opened and drained until the extraction
// ends, again and again, since its goroutine may not have reached its own
// open yet (a reader that came and went before it would leave it waiting
// for ever). When the engine failed the extraction is also cancelled.
func (st *tableStream) finish(engineErr error) {
	st.cause = engineErr == nil || st.failedFirst.Load()
	if engineErr != nil {
		st.cancel()
	}
	for {
		select {
		case <-st.done:
			st.cancel()
			return
		default:
		}
		if f, err := openPipeReader(st.path); err == nil {
			_, _ = io.Copy(io.Discard, f) // to the end: no writer holds the pipe
			f.Close()
		}
		select {
		case <-st.done:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Done ends the stream after the engine returned engineErr and settles
// the source's part of the run's error: the extraction's own failure (a
// read cut short also makes the engine fail, on a truncated line, which
// would hide the cause), then a difference between the rows extracted and
// the rows the engine read.
func (st *tableStream) Done(_ context.Context, engineErr error, res engine.SourceResult, _ bool) (bool, error) {
	st.finish(engineErr)
	if st.err != nil && st.cause {
		return false, st.err
	}
	if engineErr != nil {
		return false, st.p.src.engineFailed(engineErr)
	}
	if res.Rows != st.ex.Rows {
		return false, fmt.Errorf("source %s: the engine read %d rows of the %d extracted", st.p.ctx, res.Rows, st.ex.Rows)
	}
	st.p.ex = st.ex
	return false, nil
}
