package main

import (
	"fmt"
	"io"
	"os"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/tidemark-etl/tidemark"
)

// barProgress shows a progress bar on a terminal: of bytes for downloads
// and uploads, and of the engine's progress (share of the input read, rows
// processed) while it processes.
type barProgress struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	name  string
	bytes int64 // the phase's total, 0 if unknown
	// engine is set once the engine reported progress in this phase: the
	// bar then counts tenths of a percent.
	engine bool
}

var _ tidemark.EngineProgress = (*barProgress)(nil)

// newProgress returns a progress display on w when w is a terminal, else nil
// (plain log lines only).
func newProgress(w *os.File) tidemark.Progress {
	if !isTerminal(w) {
		return nil
	}
	return &barProgress{w: w}
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func (p *barProgress) Phase(name string, files, bytes int64) {
	p.name, p.bytes, p.engine = name, bytes, false
	max := bytes
	if max <= 0 {
		max = -1
	}
	p.bar = progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(name),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100_000_000),
	)
	_ = p.bar.RenderBlank()
}

func (p *barProgress) Add(_, bytes int64) {
	if p.bar != nil {
		_ = p.bar.Add64(bytes)
	}
}

// Engine shows the engine's progress in the current phase, the bar
// replaced by one of percent.
func (p *barProgress) Engine(percent float64, rows int64) {
	if !p.engine {
		if p.bar != nil {
			_ = p.bar.Finish() // stops a spinner; the bar is cleared
		}
		p.engine = true
		p.bar = progressbar.NewOptions64(1000,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.name),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionClearOnFinish(),
			// No throttle: updates come a few times a second.
		)
	}
	_ = p.bar.Set64(int64(percent * 10))
	p.bar.Describe(engineLine(p.name, p.bytes, percent, rows))
}

// engineLine describes the engine's progress: the phase, the input read
// (estimated from the share of the work done) and the rows processed.
func engineLine(name string, bytes int64, percent float64, rows int64) string {
	s := name
	if bytes > 0 {
		s += fmt.Sprintf(": ~%s read", humanize.IBytes(uint64(float64(bytes)*percent/100)))
	}
	return s + fmt.Sprintf(", %s rows", humanize.Comma(rows))
}

func (p *barProgress) Done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}
