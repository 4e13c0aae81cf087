package main

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/tidemark-etl/tidemark"
)

// barProgress shows a progress bar of bytes on a terminal.
type barProgress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

// newProgress returns a progress display on w when w is a terminal, else nil
// (plain log lines only).
func newProgress(w *os.File) tidemark.Progress {
	if !term.IsTerminal(int(w.Fd())) {
		return nil
	}
	return &barProgress{w: w}
}

func (p *barProgress) Phase(name string, files, bytes int64) {
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
}

func (p *barProgress) Add(_, bytes int64) {
	if p.bar != nil {
		_ = p.bar.Add64(bytes)
	}
}

func (p *barProgress) Done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}
