package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/job"
	sinkfiles "github.com/tidemark-etl/tidemark/sink/files"
	"github.com/tidemark-etl/tidemark/source/files"
)

// TestInitAsks: on a terminal, init asks for what the flags leave out,
// offering the format the folder's files tell and out/ for the sink.
func TestInitAsks(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("landing", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("landing", "a.parquet"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// The source typed, the offered format and sink taken.
	if err := runInit(&initOptions{}, "sales.yaml", strings.NewReader("landing/\n\n\n"), true, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "[parquet]") || !strings.Contains(out.String(), "[out/]") {
		t.Errorf("prompts did not offer the guessed format and out/:\n%s", out.String())
	}
	s, err := job.Load("sales.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src, sink := s.Sources[0].Config.(*files.Config), s.Sinks[0].Config.(*sinkfiles.Config)
	if s.Job != "sales" || src.Path != "landing/" || src.Format != "parquet" || sink.Path != "out/" {
		t.Errorf("wrote job %q reading %q (%s) into %q", s.Job, src.Path, src.Format, sink.Path)
	}
	// No answer (stdin closed) is a usage error, and nothing is written.
	err = runInit(&initOptions{}, "other.yaml", strings.NewReader(""), true, &out)
	if exitCode(err) != exitUsage {
		t.Errorf("no answer: got %v (exit %d), want a usage error", err, exitCode(err))
	}
	if _, err := os.Stat("other.yaml"); !os.IsNotExist(err) {
		t.Errorf("a job file was written without answers: %v", err)
	}
}
