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
	f.put(name, []byte(b.String()))
	return good, bad.OrderID
}

// mentionsLine matches "line 7" or "bad.csv:7" style locations.
var mentionsLine7 = regexp.MustCompile(`(?i)(line:?\s*7\b|\.csv:7\b)`)

// TestMalformedCSVRow: with the default on_bad_record (fail) the run exits 1,
// names the file and the line, publishes nothing and leaves the bookmark;
// once the file is fixed the next run reads it.
func TestMalformedCSVRow(t *testing.T) {
	t.Parallel()
	eachBackend(t, testMalformedCSVRow)
}

func testMalformedCSVRow(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	first := f.addCSVs("good", 2, 20)
	f.mustRun()
	before := f.bookmark()
	filesBefore := relFiles(t, f.outDir())

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
	if got := relFiles(t, f.outDir()); strings.Join(got, "\n") != strings.Join(filesBefore, "\n") {
		t.Errorf("a failed run published files: before %d, after %d", len(filesBefore), len(got))
	}
	f.assertSink(first)

	// Fixed: the bad row removed. The next run reads both new files.
	f.put("bad.csv", csvBytes(good))
	s = f.mustRun()
	assertFiles(t, "run after the fix", s, 2)
	f.assertSink(concat(first, more, good))
	if left := f.stagedFiles(); len(left) > 0 {
		t.Errorf("staged files left under _tidemark after a good run: %v", firstFew(left))
	}
}

// TestBadRecordPolicies: on_bad_record skip drops and counts the bad row;
// quarantine also writes it under the sink's _tidemark/rejects/. Both runs
// succeed and publish every good row once. The policy is set at the job
// level for one and per source for the other.
func TestBadRecordPolicies(t *testing.T) {
	t.Parallel()
	eachBackend(t, testBadRecordPolicies)
}

func testBadRecordPolicies(t *testing.T, be backend) {
	for _, tc := range []struct {
		policy string
		opts   jobOpts
	}{
		{"skip", jobOpts{top: []string{"on_bad_record: skip"}}},
		{"quarantine", jobOpts{sourceExtra: []string{"on_bad_record: quarantine"}}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			t.Parallel()
			f := newFixtureOn(t, be, tc.opts)
			first := f.addCSVs("good", 2, 20)
			good, badID := f.badCSV("bad.csv")
			s := f.mustRun()
			assertFiles(t, "run", s, 3)
			if got := rejected(s); got != 1 {
				t.Errorf("run summary: rejected = %d, want 1", got)
			}
			f.assertSink(concat(first, good))
			for _, r := range f.readSink() {
				if r.OrderID == badID {
					t.Errorf("the bad row %d was published", badID)
				}
			}
			rejects := f.rejectFiles()
			if tc.policy == "quarantine" && len(rejects) == 0 {
				t.Errorf("quarantine: no rejects file under %s_tidemark/rejects/", f.out.loc())
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
	eachBackend(t, testTruncatedParquet)
}

func testTruncatedParquet(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{format: "parquet"})
	a := f.addParquet("a.parquet", 30)
	b := f.addParquet("b.parquet", 30)
	s := f.mustRun()
	assertFiles(t, "first run", s, 2)
	f.assertSink(concat(a, b))
	before := f.bookmark()

	whole := parquetBytes(t, f.gen.records(500))
	f.put("c-truncated.parquet", whole[:len(whole)/2])
	d := f.addParquet("d.parquet", 30)

	_, r := f.runExpect(1)
	assertMentions(t, r, "c-truncated.parquet")
	if after := f.bookmark(); string(after.Version) != string(before.Version) {
		t.Errorf("bookmark moved by a failed run: version %s -> %s", before.Version, after.Version)
	}
	f.assertSink(concat(a, b))

	// The broken file removed: the next run reads d only.
	f.remove("c-truncated.parquet")
	s = f.mustRun()
	assertFiles(t, "run without the broken file", s, 1)
	f.assertSink(concat(a, b, d))
}

// TestZeroByteFile: an empty file is not an error; it is counted and
// recorded like any file, also when it is the only new file.
func TestZeroByteFile(t *testing.T) {
	t.Parallel()
	eachBackend(t, testZeroByteFile)
}

func testZeroByteFile(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	good := f.addCSVs("good", 2, 20)
	f.put("empty.csv", nil)
	s := f.mustRun()
	assertFiles(t, "run with an empty file", s, 3)
	if got := s.source().Empty; got != 1 {
		t.Errorf("run with an empty file: sources.orders_source.empty = %d, want 1", got)
	}
	if got, want := s.source().Rows, int64(len(good)); got != want {
		t.Errorf("rows = %d, want %d", got, want)
	}
	f.assertSink(good)

	f.put("empty-2.csv", nil)
	s = f.mustRun()
	assertFiles(t, "run with only an empty file", s, 1)
	if s.source().Rows != 0 {
		t.Errorf("rows = %d, want 0", s.source().Rows)
	}
	assertFiles(t, "next run", f.mustRun(), 0)
	f.assertSink(good)
}

// relFiles lists every file under dir (hidden ones too), relative to it:
// what a failed run must leave as it was.
func relFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			r, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(r))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing %s: %v", dir, err)
	}
	return out
}
