package e2e

import (
	"fmt"
	"testing"
	"time"
)

// TestModifiedFile covers on_modified: a processed file is rewritten with
// new contents (a new size and mtime) before the next run.
func TestModifiedFile(t *testing.T) {
	t.Parallel()
	eachBackend(t, testModifiedFile)
}

func testModifiedFile(t *testing.T, be backend) {
	for _, policy := range []string{"reprocess", "ignore", "fail"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			f := newFixtureOn(t, be, jobOpts{sourceExtra: []string{"on_modified: " + policy}})
			a := f.addCSV("a.csv", 20)
			bOld := f.addCSV("b.csv", 20)
			c := f.addCSV("c.csv", 20)
			f.mustRun()
			before := f.bookmark()

			// A corrected b.csv: different rows, a different size, a later
			// mtime. On S3 it is a new PUT of the key: a new ETag, size and
			// LastModified.
			bNew := f.gen.records(27)
			f.put("b.csv", csvBytes(bNew))
			if be == local {
				f.setMtime("b.csv", time.Now().Add(time.Minute))
			}

			switch policy {
			case "reprocess":
				s := f.mustRun()
				assertFiles(t, "run after the rewrite", s, 1)
				assertRecords(t, "the rerun's output", f.sinkRun(s.RunID), bNew)
				f.assertSink(concat(a, bOld, c, bNew))
				s = f.mustRun()
				assertFiles(t, "the run after that", s, 0)
			case "ignore":
				s := f.mustRun()
				assertFiles(t, "run after the rewrite", s, 0)
				f.assertSink(concat(a, bOld, c))
				s = f.mustRun()
				assertFiles(t, "the run after that", s, 0)
				f.assertSink(concat(a, bOld, c))
			case "fail":
				s, r := f.runExpect(1)
				assertMentions(t, r, "b.csv")
				if s.Status != "failed" {
					t.Errorf("run --json status = %q, want failed", s.Status)
				}
				f.assertSink(concat(a, bOld, c))
				if after := f.bookmark(); string(after.Version) != string(before.Version) {
					t.Errorf("bookmark version after the failed run = %s, want unchanged %s", after.Version, before.Version)
				}
			}
		})
	}
}

// TestLateFileOldMtime: a file that appears after a run with an mtime long
// before it (a mv into the landing folder, a late listing; on S3 an object
// listed long after its LastModified, such as a multipart upload that took
// long, whose LastModified is when it started). Its name also sorts before
// every file already read, so no cursor over names can catch it either.
// exact tracking reads it; timestamp tracking, Glue's model, misses it by
// design: its mtime is older than the high-water mark minus max_band. That
// miss is the documented limit of timestamp tracking, and the reason exact
// is the default.
func TestLateFileOldMtime(t *testing.T) {
	t.Parallel()
	eachBackend(t, testLateFileOldMtime)
}

func testLateFileOldMtime(t *testing.T, be backend) {
	for _, tc := range []struct {
		tracking string
		wantRead bool
	}{
		{"exact", true},
		{"timestamp", false},
	} {
		t.Run(tc.tracking, func(t *testing.T) {
			t.Parallel()
			f := newFixtureOn(t, be, jobOpts{sourceExtra: []string{"tracking: " + tc.tracking}})
			first := f.addCSVs("first", 3, 20)
			s := f.mustRun()
			assertFiles(t, "first run", s, 3)

			late := f.addCSV("0-late.csv", 25)
			f.setMtime("0-late.csv", time.Date(2001, 6, 1, 12, 0, 0, 0, time.UTC))
			s = f.mustRun()
			if tc.wantRead {
				assertFiles(t, "run after the late file", s, 1)
				f.assertSink(concat(first, late))
			} else {
				assertFiles(t, "run after the late file", s, 0)
				f.assertSink(first)
			}
		})
	}
}

// TestTimestampTracking checks that timestamp tracking still reads new files
// and never rereads what it read.
func TestTimestampTracking(t *testing.T) {
	t.Parallel()
	eachBackend(t, testTimestampTracking)
}

func testTimestampTracking(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{sourceExtra: []string{"tracking: timestamp", "max_band: 15m"}})
	first := f.addCSVs("first", 3, 20)
	assertFiles(t, "first run", f.mustRun(), 3)
	second := f.addCSVs("second", 2, 20)
	assertFiles(t, "second run", f.mustRun(), 2)
	assertFiles(t, "third run", f.mustRun(), 0)
	f.assertSink(concat(first, second))
}

// TestBoundedFiles: bounded_files reads the oldest files first, a few per run,
// until all are read.
func TestBoundedFiles(t *testing.T) {
	t.Parallel()
	eachBackend(t, testBoundedFiles)
}

func testBoundedFiles(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{sourceExtra: []string{"bounded_files: 4"}})
	// Ten files whose mtime order is the reverse of their name order, so
	// "oldest first" cannot be mistaken for "first by name".
	base := time.Now().Add(-time.Hour)
	byAge := make([][]record, 10) // byAge[0] is the oldest
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("f-%02d.csv", 9-i)
		byAge[i] = f.addCSV(name, 15)
		f.setMtime(name, base.Add(time.Duration(i)*time.Minute))
	}

	var all []record
	for run, want := range [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}, {}} {
		s := f.mustRun()
		assertFiles(t, fmt.Sprintf("run %d", run+1), s, int64(len(want)))
		var wantRecs []record
		for _, i := range want {
			wantRecs = append(wantRecs, byAge[i]...)
		}
		assertRecords(t, fmt.Sprintf("run %d's output (oldest files first)", run+1), f.sinkRun(s.RunID), wantRecs)
		all = append(all, wantRecs...)
	}
	f.assertSink(all)
}

// TestBoundedSize: a bound smaller than any one file still lets each run read
// one file: a run always makes progress.
func TestBoundedSize(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{sourceExtra: []string{"bounded_size: 1KiB"}})
	base := time.Now().Add(-time.Hour)
	var files [][]record
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("big-%d.csv", i)
		files = append(files, f.addCSV(name, 120)) // ~3 KB each
		f.setMtime(name, base.Add(time.Duration(i)*time.Minute))
		if size := len(f.in.get(t, name)); size <= 1024 {
			t.Fatalf("%s: want a file over 1 KiB, got %d bytes", name, size)
		}
	}
	for i := 0; i < 3; i++ {
		s := f.mustRun()
		assertFiles(t, fmt.Sprintf("run %d", i+1), s, 1)
		assertRecords(t, fmt.Sprintf("run %d's output", i+1), f.sinkRun(s.RunID), files[i])
	}
	assertFiles(t, "run 4", f.mustRun(), 0)
	f.assertSink(concat(files...))
}
