package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOverwriteSinkPathRespelled: the sink's path is spelled differently
// from one run to the next but names the same place (on local disks a
// symlink to the sink folder, on S3 the prefix without its trailing
// slash). An overwrite still replaces the job's earlier output there: it
// is not left in place as another tool's, which would leave old and new
// rows side by side.
func TestOverwriteSinkPathRespelled(t *testing.T) {
	t.Parallel()
	eachBackend(t, testOverwriteSinkPathRespelled)
}

func testOverwriteSinkPathRespelled(t *testing.T, be backend) {
	o := jobOpts{mode: "overwrite"}
	f := newFixtureOn(t, be, o)
	f.addCSVs("a", 2, 20)
	f.mustRun()

	respelled := strings.TrimSuffix(f.out.loc(), "/")
	if be == local {
		respelled = filepath.Join(f.dir, "out-link")
		if err := os.Symlink(f.outDir(), respelled); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, f.jobPath, []byte(o.yaml(f.in.loc(), respelled)))
	b := f.addCSVs("b", 1, 30)
	s, r := f.run(nil)
	if r.code != 0 {
		t.Fatalf("overwrite run through %s: got exit %d, want 0\n%v", respelled, r.code, r)
	}
	mirror := f.outDir()
	for _, file := range ownFiles(t, mirror) {
		if run := runOfFile(t, file); run != s.RunID {
			t.Errorf("after the overwrite through %s, file %s of run %s is left; want only files of %s", respelled, file, run, s.RunID)
		}
	}
	assertRecords(t, "the sink after the overwrite through "+respelled, queryRecords(t, ownFiles(t, mirror), f.sink), b)
	if strings.Contains(r.output(), "did not write") {
		t.Errorf("the overwrite took the job's own earlier output for foreign files:\n%v", r)
	}
}

// TestSpecialFilesInSource: a named pipe in the source folder and a symlink
// to a device (/dev/zero would never end) are not read, and the run says
// so, naming each, instead of leaving them out without a word; the run
// ends and reads the regular files.
func TestSpecialFilesInSource(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	a := f.addCSV("a.csv", 20)
	dir := f.in.loc()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.csv"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.csv")); err != nil {
		t.Fatal(err)
	}
	s, r := f.runExpect(0)
	assertFiles(t, "run over a pipe and a device", s, 1)
	f.assertSink(a)
	assertMentions(t, r, "pipe.csv", "a named pipe", "zero.csv", "/dev/zero", "not a regular file")
	p := f.tidemark(nil, "plan", f.jobPath)
	assertMentions(t, p, "pipe.csv", "zero.csv")
}

// TestPurgeAfterSinkMoved: the sink folder was moved (and the job file's
// path changed with it) after a run; a purge cannot find that run's files
// where its manifest says they were published. It says so, naming them,
// instead of listing them as deleted while they are still in the sink.
func TestPurgeAfterSinkMoved(t *testing.T) {
	t.Parallel()
	o := jobOpts{partitionBy: "-"}
	f := newFixture(t, o)
	f.addCSVs("a", 1, 20)
	first := f.mustRun()
	moved := filepath.Join(f.dir, "moved-output")
	if err := os.Rename(f.outDir(), moved); err != nil {
		t.Fatal(err)
	}
	writeFile(t, f.jobPath, []byte(o.yaml(f.in.loc(), moved)))
	f.addCSVs("b", 1, 20)
	second := f.mustRun()

	r := f.reset("--purge-output")
	old := filepath.Join(f.outDir(), partFile(first.RunID))
	assertMentions(t, r, "1 files deleted", "not found "+old, "moved with the sink folder")
	if strings.Contains(r.output(), "deleted "+old) {
		t.Errorf("the purge lists %s as deleted; it was not there\n%v", old, r)
	}
	if _, err := os.Stat(filepath.Join(moved, partFile(second.RunID))); err == nil {
		t.Errorf("the purge left the second run's file")
	}
}

// partFile is the name of a run's first published file of an unpartitioned
// parquet sink.
func partFile(runID string) string { return "part-" + runID + "-00000.parquet" }
