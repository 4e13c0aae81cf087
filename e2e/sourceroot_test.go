package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMissingSourceFolder: a source folder that does not exist (a typo in
// path:, or a symlink to nowhere) fails run and plan with exit 1 naming
// it, and records nothing; with allow_missing: true a run reads nothing,
// exits 0, and reads the folder once it appears.
func TestMissingSourceFolder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	typo := filepath.Join(f.dir, "landng")
	f.writeJob(jobOpts{sourcePath: typo})
	s, r := f.runExpect(1)
	if s.Status != "failed" {
		t.Errorf("run --json: status = %q, want failed", s.Status)
	}
	assertMentions(t, r, typo, "does not exist", "allow_missing")
	p := f.tidemark(nil, "plan", f.jobPath)
	if p.code != 1 {
		t.Errorf("plan: got exit %d, want 1\n%v", p.code, p)
	}
	assertMentions(t, p, typo, "does not exist")

	// A symlink to nowhere says where it points.
	link := filepath.Join(f.dir, "landing-link")
	if err := os.Symlink(filepath.Join(f.dir, "gone"), link); err != nil {
		t.Fatal(err)
	}
	f.writeJob(jobOpts{sourcePath: link})
	_, r = f.runExpect(1)
	assertMentions(t, r, link, "is a symlink to", "gone", "does not exist")

	// allow_missing: a quiet run until the folder appears.
	f.writeJob(jobOpts{sourcePath: typo, sourceExtra: []string{"allow_missing: true"}})
	assertFiles(t, "run with allow_missing before the folder exists", f.mustRun(), 0)
	if got := f.planFiles(); got != 0 {
		t.Errorf("plan with allow_missing: files = %d, want 0", got)
	}
	if _, err := os.Stat(typo); err == nil {
		t.Fatalf("the run created the missing source folder %s", typo)
	}
	recs := f.gen.records(20)
	writeFile(t, filepath.Join(typo, "a.csv"), csvBytes(recs))
	s = f.mustRun()
	assertFiles(t, "run after the folder appeared", s, 1)
	f.assertSink(recs)
	assertFiles(t, "next run", f.mustRun(), 0)
}

// TestS3EmptyPrefix: S3 has no folders, so a prefix that holds nothing
// cannot be told from a mistyped one. It is not an error (a quiet day on
// a landing prefix that is emptied after each delivery looks the same), but
// run and plan say "0 objects under s3://bucket/prefix/"; allow_missing
// says it is expected and silences that. (A missing bucket is an error:
// TestS3MissingBucket.)
func TestS3EmptyPrefix(t *testing.T) {
	t.Parallel()
	f := newFixtureOn(t, onS3, jobOpts{})
	f.addCSV("a.csv", 10) // under landing/, not under the typo
	in := f.in.(*s3Place)
	typo := "s3://" + in.bucket + "/lnading/"
	f.writeJob(jobOpts{sourcePath: typo})
	want := "0 objects under " + typo
	s, r := f.runExpect(0)
	assertFiles(t, "run over an empty prefix", s, 0)
	assertMentions(t, r, want)
	p := f.tidemark(nil, "plan", f.jobPath)
	if p.code != 0 {
		t.Fatalf("plan: got exit %d, want 0\n%v", p.code, p)
	}
	assertMentions(t, p, want)

	f.writeJob(jobOpts{sourcePath: typo, sourceExtra: []string{"allow_missing: true"}})
	_, r = f.runExpect(0)
	if strings.Contains(r.output(), "0 objects under") {
		t.Errorf("allow_missing: true still warns about the empty prefix\n%v", r)
	}
	// A prefix that holds files warns about nothing.
	f.writeJob(jobOpts{})
	s, r = f.runExpect(0)
	assertFiles(t, "run over the real prefix", s, 1)
	if strings.Contains(r.output(), "0 objects under") {
		t.Errorf("a prefix with objects: warned about an empty prefix\n%v", r)
	}
}

// TestSymlinkedSource: a source folder that is a symlink, a symlinked
// folder inside it and a symlinked file are read, each file exactly once;
// a symlinked file's identity is its target's, so rewriting the target is a
// modification.
func TestSymlinkedSource(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	real := filepath.Join(f.dir, "real")
	elsewhere := filepath.Join(f.dir, "elsewhere")
	link := filepath.Join(f.dir, "landing-link")
	day1 := f.gen.records(20)
	writeFile(t, filepath.Join(real, "day1.csv"), csvBytes(day1))
	day2 := f.gen.records(15)
	writeFile(t, filepath.Join(elsewhere, "day2", "orders.csv"), csvBytes(day2))
	extra := f.gen.records(10)
	writeFile(t, filepath.Join(elsewhere, "extra.csv"), csvBytes(extra))
	for _, l := range [][2]string{{real, link}, {filepath.Join(elsewhere, "day2"), filepath.Join(real, "day2")},
		{filepath.Join(elsewhere, "extra.csv"), filepath.Join(real, "extra.csv")}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	f.writeJob(jobOpts{sourcePath: link})

	s := f.mustRun()
	assertFiles(t, "first run", s, 3)
	f.assertSink(concat(day1, day2, extra))
	assertFiles(t, "second run", f.mustRun(), 0)

	// Rewrite the symlinked file's target: the link itself is untouched.
	extra2 := f.gen.records(12)
	writeFile(t, filepath.Join(elsewhere, "extra.csv"), csvBytes(extra2))
	setMtime(t, filepath.Join(elsewhere, "extra.csv"), time.Now().Add(time.Minute))
	s = f.mustRun()
	assertFiles(t, "run after the target changed", s, 1)
	assertRecords(t, "the run after the target changed", f.sinkRun(s.RunID), extra2)
	assertFiles(t, "last run", f.mustRun(), 0)
}

// TestSymlinkLoops: links to a folder that contains them (loops), a link
// to a file the listing reaches by its own path, and a dangling link: the
// run ends, reads every real file once, and names each link it did not
// follow; the dangling link is read once it resolves.
func TestSymlinkLoops(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	a := f.addCSV("a.csv", 20)
	b := f.addCSV("sub/b.csv", 15)
	dir := f.in.loc()
	for _, l := range [][2]string{
		{"..", "sub/up"},         // to an ancestor
		{".", "self"},            // to the folder itself
		{"a.csv", "latest.csv"},  // to a file listed by its own path
		{"../gone.csv", "d.csv"}, // dangling
	} {
		if err := os.Symlink(l[0], filepath.Join(dir, filepath.FromSlash(l[1]))); err != nil {
			t.Fatal(err)
		}
	}
	s, r := f.runExpect(0)
	assertFiles(t, "run over the links", s, 2)
	f.assertSink(concat(a, b))
	assertMentions(t, r, "sub/up", "self", "a loop", "latest.csv", "listed as a.csv", "d.csv", "does not exist")
	p := f.tidemark(nil, "plan", f.jobPath)
	assertMentions(t, p, "sub/up", "latest.csv", "d.csv")
	assertFiles(t, "second run", f.mustRun(), 0)

	gone := f.gen.records(5)
	writeFile(t, filepath.Join(f.dir, "gone.csv"), csvBytes(gone))
	s = f.mustRun()
	assertFiles(t, "run after the dangling link resolved", s, 1)
	assertRecords(t, "the run after the link resolved", f.sinkRun(s.RunID), gone)
	f.assertSink(concat(a, b, gone))
}

// TestFutureMtime: under timestamp tracking, a file whose mtime is a day
// ahead is read once and named in a warning, and it does not carry the
// high-water mark a day ahead: files that land after it are read.
func TestFutureMtime(t *testing.T) {
	t.Parallel()
	eachBackend(t, testFutureMtime)
}

func testFutureMtime(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{sourceExtra: []string{"tracking: timestamp", "max_band: 15m"}})
	first := f.addCSVs("first", 2, 20)
	ahead := f.addCSV("ahead.csv", 10)
	f.setMtime("ahead.csv", time.Now().Add(24*time.Hour))
	s, r := f.runExpect(0)
	assertFiles(t, "first run", s, 3)
	if got := s.source().Future; got != 1 {
		t.Errorf("run --json: sources.orders_source.future = %d, want 1", got)
	}
	assertMentions(t, r, "ahead.csv", "in the future")

	later := f.addCSV("later.csv", 15)
	s = f.mustRun()
	assertFiles(t, "run after a file landed", s, 1)
	assertRecords(t, "the run after a file landed", f.sinkRun(s.RunID), later)
	assertFiles(t, "third run", f.mustRun(), 0)
	f.assertSink(concat(first, ahead, later))
}
