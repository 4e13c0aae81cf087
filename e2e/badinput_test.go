package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// badCSV writes a CSV whose line 7 (the header is line 1) has five fields
// instead of four, between good rows; it returns the good rows and the
// order_id of the bad one.
func (f *fixture) badCSV(name string) (good []record, badID int64) {
	f.t.Helper()
	good = f.gen.records(10)
	bad := f.gen.records(1)[0]
	var b strings.Builder
	b.WriteString("order_id,customer_id,product,amount\n")
	for i, r := range good {
		if i == 5 { // lines 2-6 hold good[0:5]; line 7 is the bad row
			fmt.Fprintf(&b, "%d,%s,%s,%d,EXTRA\n", bad.OrderID, bad.CustomerID, bad.Product, bad.Amount)
		}
		fmt.Fprintf(&b, "%d,%s,%s,%d\n", r.OrderID, r.CustomerID, r.Product, r.Amount)
	}
	writeFile(f.t, filepath.Join(f.landing, name), []byte(b.String()))
	return good, bad.OrderID
}

// mentionsLine matches "line 7" or "bad.csv:7" style locations.
var mentionsLine7 = regexp.MustCompile(`(?i)(line:?\s*7\b|\.csv:7\b)`)

// TestMalformedCSVRow: with the default on_bad_record (fail) the run exits 1,
// names the file and the line, publishes nothing and leaves the bookmark;
// once the file is fixed the next run reads it.
func TestMalformedCSVRow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	first := f.addCSVs("good", 2, 20)
	f.mustRun()
	before := f.bookmark()
	filesBefore := sinkFiles(t, f.output)

	more := f.addCSV("more.csv", 20)
	good, _ := f.badCSV("bad.csv")
	s, r := f.runExpect(1)
	assertMentions(t, r, "bad.csv")
	if !mentionsLine7.MatchString(r.output()) {
		t.Errorf("the error does not name line 7 of bad.csv\n%v", r)
	}
	if s.Status != "failed" {
		t.Errorf("run --json: status = %q, want failed\n%v", s.Status, r)
	}
	if after := f.bookmark(); string(after.Version) != string(before.Version) || !sameSources(before, after) {
		t.Errorf("bookmark moved by a failed run: version %s -> %s", before.Version, after.Version)
	}
	if got := sinkFiles(t, f.output); strings.Join(got, "\n") != strings.Join(filesBefore, "\n") {
		t.Errorf("a failed run published files: before %d, after %d", len(filesBefore), len(got))
	}
	f.assertSink(first)

	// Fixed: the bad row removed. The next run reads both new files.
	writeCSV(t, filepath.Join(f.landing, "bad.csv"), good)
	s = f.mustRun()
	assertFiles(t, "run after the fix", s, 2)
	f.assertSink(concat(first, more, good))
	if left := stagedFiles(t, f.output); len(left) > 0 {
		t.Errorf("staged files left under _tidemark after a good run: %v", firstFew(left))
	}
}

// TestBadRecordPolicies: on_bad_record skip drops and counts the bad row;
// quarantine also writes it under the sink's _tidemark/rejects/. Both runs
// succeed and publish every good row once. The policy is set at the job
// level for one and per source for the other.
func TestBadRecordPolicies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy string
		opts   jobOpts
	}{
		{"skip", jobOpts{top: []string{"on_bad_record: skip"}}},
		{"quarantine", jobOpts{sourceExtra: []string{"on_bad_record: quarantine"}}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.opts)
			first := f.addCSVs("good", 2, 20)
			good, badID := f.badCSV("bad.csv")
			s := f.mustRun()
			assertFiles(t, "run", s, 3)
			if got := rejected(s); got != 1 {
				t.Errorf("run summary: rejected = %d, want 1", got)
			}
			f.assertSink(concat(first, good))
			for _, r := range readSink(t, f.output, f.sink) {
				if r.OrderID == badID {
					t.Errorf("the bad row %d was published", badID)
				}
			}
			rejects := rejectFiles(t, f.output)
			if tc.policy == "quarantine" && len(rejects) == 0 {
				t.Errorf("quarantine: no rejects file under %s/_tidemark/rejects/", f.output)
			}
			if tc.policy == "skip" && len(rejects) > 0 {
				t.Errorf("skip: rejects written, want none: %v", rejects)
			}
			assertFiles(t, "next run", f.mustRun(), 0)
		})
	}
}

// rejected is the run summary's rejected count: per source, or at the top.
func rejected(s runSummary) int64 {
	if r := s.source().Rejected; r != nil {
		return *r
	}
	if s.Rejected != nil {
		return *s.Rejected
	}
	return -1
}

// TestTruncatedParquet: a Parquet input cut short fails the run naming the
// file; the bookmark stays and nothing is published.
func TestTruncatedParquet(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{format: "parquet"})
	a := f.gen.records(30)
	writeParquet(t, filepath.Join(f.landing, "a.parquet"), a)
	b := f.gen.records(30)
	writeParquet(t, filepath.Join(f.landing, "b.parquet"), b)
	s := f.mustRun()
	assertFiles(t, "first run", s, 2)
	f.assertSink(concat(a, b))
	before := f.bookmark()

	c := f.gen.records(500)
	path := filepath.Join(f.landing, "c-truncated.parquet")
	writeParquet(t, path, c)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, info.Size()/2); err != nil {
		t.Fatal(err)
	}
	d := f.gen.records(30)
	writeParquet(t, filepath.Join(f.landing, "d.parquet"), d)

	_, r := f.runExpect(1)
	assertMentions(t, r, "c-truncated.parquet")
	if after := f.bookmark(); string(after.Version) != string(before.Version) {
		t.Errorf("bookmark moved by a failed run: version %s -> %s", before.Version, after.Version)
	}
	f.assertSink(concat(a, b))

	// The broken file removed: the next run reads d only.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	s = f.mustRun()
	assertFiles(t, "run without the broken file", s, 1)
	f.assertSink(concat(a, b, d))
}

// TestZeroByteFile: an empty file is not an error; it is counted and
// recorded like any file, also when it is the only new file.
func TestZeroByteFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	good := f.addCSVs("good", 2, 20)
	writeFile(t, filepath.Join(f.landing, "empty.csv"), nil)
	s := f.mustRun()
	assertFiles(t, "run with an empty file", s, 3)
	if got, want := s.source().Rows, int64(len(good)); got != want {
		t.Errorf("rows = %d, want %d", got, want)
	}
	f.assertSink(good)

	writeFile(t, filepath.Join(f.landing, "empty-2.csv"), nil)
	s = f.mustRun()
	assertFiles(t, "run with only an empty file", s, 1)
	if s.source().Rows != 0 {
		t.Errorf("rows = %d, want 0", s.source().Rows)
	}
	assertFiles(t, "next run", f.mustRun(), 0)
	f.assertSink(good)
}
