package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitThenRun: tidemark init with its flags asks nothing and writes a
// job that runs: its first run reads the folder into the sink, the next
// reads only what is new. A second init refuses to overwrite the file.
func TestInitThenRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "landing", "day1.csv"), []byte("order_id,amount\n1,10\n2,20\n"))
	r := tidemark(t, dir, nil, "init", "--source", "landing/", "--format", "csv", "--sink", "out/", "sales.yaml")
	if r.code != 0 {
		t.Fatalf("init: got exit %d, want 0\n%v", r.code, r)
	}
	written, err := os.ReadFile(filepath.Join(dir, "sales.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.output(), "tidemark run sales.yaml") {
		t.Errorf("init does not say what to do next:\n%v", r)
	}
	s := decodeOne[runSummary](t, tidemark(t, dir, nil, "run", "sales.yaml", "--json"))
	if s.Status != "succeeded" || s.Job != "sales" || totalRows(s.Sinks) != 2 {
		t.Fatalf("first run of the job init wrote: %+v\n%s", s, written)
	}
	writeFile(t, filepath.Join(dir, "landing", "day2.csv"), []byte("order_id,amount\n3,30\n"))
	s = decodeOne[runSummary](t, tidemark(t, dir, nil, "run", "sales.yaml", "--json"))
	if s.Status != "succeeded" || totalRows(s.Sinks) != 1 {
		t.Fatalf("second run: got %+v, want the one new row", s)
	}
	var n int
	if err := duck.QueryRow(fmt.Sprintf("SELECT count(*) FROM read_parquet('%s/*.parquet')", filepath.Join(dir, "out"))).Scan(&n); err != nil || n != 3 {
		t.Errorf("sink holds %d rows (%v), want 3", n, err)
	}

	r = tidemark(t, dir, nil, "init", "--source", "other/", "--format", "json", "--sink", "elsewhere/", "sales.yaml")
	if r.code != 2 || !strings.Contains(r.output(), "sales.yaml") || !strings.Contains(r.output(), "exists") {
		t.Errorf("init over an existing file: got exit %d, want 2 naming the file\n%v", r.code, r)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "sales.yaml")); string(again) != string(written) {
		t.Errorf("init changed an existing job file:\n%s", again)
	}
}

// TestInitJobElsewhere: paths given from the working folder are written
// relative to the job file's folder, as the job file reads them; a JSON
// Lines source by its other name.
func TestInitJobElsewhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data", "events", "a.jsonl"), []byte(`{"id": 1, "kind": "click"}`+"\n"+`{"id": 2, "kind": "view"}`+"\n"))
	r := tidemark(t, dir, nil, "init", "--source", "data/events", "--format", "jsonl", "--sink", "data/out", "jobs/events.yaml")
	if r.code != 0 {
		t.Fatalf("init: got exit %d\n%v", r.code, r)
	}
	s := decodeOne[runSummary](t, tidemark(t, filepath.Join(dir, "jobs"), nil, "run", "events.yaml", "--json"))
	if s.Status != "succeeded" || totalRows(s.Sinks) != 2 {
		b, _ := os.ReadFile(filepath.Join(dir, "jobs", "events.yaml"))
		t.Fatalf("run: %+v\n%s", s, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "out")); err != nil {
		t.Errorf("the sink is not where --sink said: %v", err)
	}
}

// TestInitWithoutTerminal: without its flags and without a terminal to
// ask on, init explains the flags (exit 2) and writes nothing.
func TestInitWithoutTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := tidemark(t, dir, nil, "init", "job.yaml")
	if r.code != 2 || !strings.Contains(r.output(), "--source") || !strings.Contains(r.output(), "--sink") {
		t.Errorf("init without flags off a terminal: got exit %d, want 2 explaining --source and --sink\n%v", r.code, r)
	}
	if _, err := os.Stat(filepath.Join(dir, "job.yaml")); !os.IsNotExist(err) {
		t.Errorf("init wrote a job file anyway (%v)", err)
	}
}

func totalRows(sinks map[string]sinkSummary) int64 {
	var n int64
	for _, s := range sinks {
		n += s.Rows
	}
	return n
}
