package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoProgressOffTerminal: a pipe or a file gets no progress display.
func TestNoProgressOffTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if p := newProgress(w); p != nil {
		t.Errorf("newProgress(pipe) = %T, want nil", p)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := newProgress(f); p != nil {
		t.Errorf("newProgress(file) = %T, want nil", p)
	}
}

// TestEngineProgressBar: the processing phase shows the engine's percent
// and rows, and Done clears the bar.
func TestEngineProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := &barProgress{w: &b}
	p.Phase("processing 600 files (35 MiB)", 600, 0)
	p.Engine(45, 1234567)
	got := b.String()
	for _, want := range []string{"processing 600 files (35 MiB)", "1,234,567 rows", "45%"} {
		if !strings.Contains(got, want) {
			t.Errorf("bar %q does not show %q", got, want)
		}
	}
	p.Engine(90, 2000000)
	if got := b.String(); !strings.Contains(got, "90%") || !strings.Contains(got, "2,000,000 rows") {
		t.Errorf("bar after a second update %q does not show 90%% and 2,000,000 rows", got)
	}
	p.Done()
	if p.bar != nil {
		t.Errorf("Done left a bar")
	}
	if got := engineLine("processing", 1<<20, 50, 10); got != "processing: ~512 KiB read, 10 rows" {
		t.Errorf("engineLine = %q", got)
	}
}
