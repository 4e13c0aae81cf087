package tidemark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

// tableStream carries a SQL table source's rows to the engine through a
// named pipe: the extraction writes while the engine reads, so reading
// the database and converting overlap, and the rows never touch the disk.
type tableStream struct {
	p      *SourcePlan
	path   string
	cancel context.CancelFunc
	done   chan struct{}
	ex     *sqltable.Extract
	err    error
	// failedFirst is set when the extraction failed on its own, before
	// the pipe was closed: then a failing engine failed because of it.
	failedFirst atomic.Bool
	cause       bool // err caused the run's failure (finish)
}

// canStream reports whether this run hands table sources to the engine
// through pipes: the engine must read pipes, the platform must have them,
// and bad records must fail the run (the other policies read sources
// again to collect rejected rows).
func (r *runner) canStream(eng engine.Engine, policy string) bool {
	return eng.Capabilities().Pipes && pipesWork && policy == engine.BadFail
}

// startStream makes the pipe in dir and starts extracting p into it. The
// extraction waits for the engine to open the pipe.
func startStream(ctx context.Context, p *SourcePlan, dir string) (*tableStream, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "rows.csv")
	if err := makePipe(path); err != nil {
		return nil, fmt.Errorf("source %s: making a pipe for its rows: %w", p.Ctx, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	st := &tableStream{p: p, path: path, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(st.done)
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			st.err = err
			return
		}
		growPipe(f)
		st.ex, st.err = p.table.plan.ExtractTo(ctx, f)
		st.failedFirst.Store(st.err != nil) // before the engine can see the end of the pipe
		if err := f.Close(); st.err == nil && err != nil {
			st.err = fmt.Errorf("source %s: %w", p.Ctx, err)
		}
	}()
	return st, nil
}

// input is the engine's view of the stream.
func (st *tableStream) input() engine.Source {
	s := st.p.table.src
	return engine.Source{Ctx: st.p.Ctx, Format: "csv", Options: sqltable.CSVOptions(), Schema: s.Schema(), Stream: true, Exact: true,
		Files: []engine.Input{{Location: st.path, Key: filepath.Base(st.path)}}}
}

// finish waits for the extraction once the engine has returned. An
// extraction still waiting for a reader (the engine failed, or never
// opened the pipe) is released: opening and closing the read end lets its
// open return and its writes fail. When the engine failed the extraction is
// also cancelled.
func (st *tableStream) finish(engineErr error) {
	st.cause = engineErr == nil || st.failedFirst.Load()
	if engineErr != nil {
		st.cancel()
	}
	select {
	case <-st.done:
	default:
		if f, err := openPipeReader(st.path); err == nil {
			f.Close()
		}
		<-st.done
	}
	st.cancel()
}

// finishStreams ends every stream after the engine returned engineErr and
// settles the run's error: an extraction's own failure first (a read cut
// short also makes the engine fail, on a truncated line, which would hide
// the cause), then the engine's, then a difference between the rows
// extracted and the rows the engine read.
func finishStreams(streams []*tableStream, res engine.Result, engineErr error) error {
	for _, st := range streams {
		st.finish(engineErr)
	}
	var errs []error
	for _, st := range streams {
		if st.err != nil && st.cause {
			errs = append(errs, st.err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...) // the engine's failure, if any, follows from it
	}
	if engineErr != nil {
		return engineErr
	}
	for _, st := range streams {
		if res.Sources[st.p.Ctx].Rows != st.ex.Rows {
			errs = append(errs, fmt.Errorf("source %s: the engine read %d rows of the %d extracted",
				st.p.Ctx, res.Sources[st.p.Ctx].Rows, st.ex.Rows))
			continue
		}
		st.p.table.ex = st.ex
	}
	return errors.Join(errs...)
}
