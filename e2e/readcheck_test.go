package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sameSize returns recs with other customer ids of the same length: a
// file of them has the size of the original and other contents.
func sameSize(recs []record) []record {
	out := make([]record, len(recs))
	for i, r := range recs {
		r.CustomerID = "R" + r.CustomerID[1:]
		out[i] = r
	}
	return out
}

// fileChanges are the three ways a file changes under a run: appended to,
// rewritten shorter in place, replaced (a new file renamed over it, on S3 a
// new object) by one of the same size. Each returns the records the file
// holds afterwards.
type fileChanges struct {
	f                   *fixture
	appended, shorter   []record
	replaced, untouched []record
}

func newFileChanges(f *fixture) *fileChanges {
	c := &fileChanges{f: f}
	c.appended = f.addCSV("appended.csv", 20)
	c.shorter = f.addCSV("shorter.csv", 20)
	c.replaced = f.addCSV("replaced.csv", 20)
	c.untouched = f.addCSV("untouched.csv", 20)
	return c
}

// change makes the three changes and returns what the files hold now.
func (c *fileChanges) change(t *testing.T) (appended, shorter, replaced []record) {
	t.Helper()
	f := c.f
	more := f.gen.records(5)
	appended = concat(c.appended, more)
	shorter = c.shorter[:10]
	replaced = sameSize(c.replaced)
	if lp, ok := f.in.(*localPlace); ok {
		// In place, as a writer that is not done does it.
		a, err := os.OpenFile(lp.path("appended.csv"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Write(bytes.TrimPrefix(csvBytes(more), []byte("order_id,customer_id,product,amount\n"))); err != nil {
			t.Fatal(err)
		}
		a.Close()
		if err := os.WriteFile(lp.path("shorter.csv"), csvBytes(shorter), 0o644); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(lp.dir, ".replacing")
		if err := os.WriteFile(tmp, csvBytes(replaced), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, lp.path("replaced.csv")); err != nil {
			t.Fatal(err)
		}
	} else {
		f.putCSV("appended.csv", appended)
		f.putCSV("shorter.csv", shorter)
		f.putCSV("replaced.csv", replaced)
	}
	if got := f.in.get(t, "replaced.csv"); len(got) != len(csvBytes(c.replaced)) {
		t.Fatalf("replacement is %d bytes, want the original's %d", len(got), len(csvBytes(c.replaced)))
	}
	return appended, shorter, replaced
}

// TestFileChangedAfterPlan: files that change between planning and reading
// (appended to, rewritten shorter, replaced by one of the same size) are
// recorded as they were read, so the next run does not read them again:
// every record in the sink exactly once.
func TestFileChangedAfterPlan(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		c := newFileChanges(f)
		if got := csvBytes(c.appended)[len(csvBytes(c.appended))-1]; got != '\n' {
			t.Fatalf("test input does not end with a newline")
		}

		p := f.start([]string{"TIDEMARK_FAULT=after-plan:sleep=2s"}, "run", f.jobPath, "--json")
		p.waitFor(t, "fault: paused at after-plan", time.Minute)
		appended, shorter, replaced := c.change(t)
		r := p.wait(t)
		if r.code != 0 {
			t.Fatalf("run whose inputs changed after planning: got exit %d, want 0\n%v", r.code, r)
		}
		assertFiles(t, "the run", decodeOne[runSummary](t, r), 4)
		want := concat(appended, shorter, replaced, c.untouched)
		f.assertSink(want)

		s := f.mustRun()
		assertFiles(t, "the next run (the files are as the first run read them)", s, 0)
		f.assertSink(want)
	})
}

// TestFileChangedWhileRead: a local file that changes while the engine
// reads it (TIDEMARK_FAULT=mid-read pauses the engine after it opened and
// sniffed its inputs, before it reads their rows) is left out of the run,
// unrecorded and counted as changed_during_read; the next run reads it
// once, as it is then.
func TestFileChangedWhileRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	c := newFileChanges(f)

	p := f.start([]string{"TIDEMARK_FAULT=mid-read:sleep=2s"}, "run", f.jobPath, "--json")
	p.waitFor(t, "fault: paused at mid-read", time.Minute)
	appended, shorter, replaced := c.change(t)
	r := p.wait(t)
	if r.code != 0 {
		t.Fatalf("run whose inputs changed while read: got exit %d, want 0\n%v", r.code, r)
	}
	s := decodeOne[readSummary](t, r)
	src := s.Sources["orders_source"]
	if src.Files != 1 || src.ChangedDuringRead != 3 {
		t.Errorf("run --json: sources.orders_source files = %d, changed_during_read = %d; want 1 and 3\n%s",
			src.Files, src.ChangedDuringRead, r.stdout)
	}
	assertMentions(t, r, "changed while it was read", "appended.csv", "shorter.csv", "replaced.csv",
		"3 files changed while read")
	f.assertSink(c.untouched)
	runs := f.tidemark(nil, "runs", f.jobPath)
	assertMentions(t, runs, "3 files changed while read")

	next := f.mustRun()
	assertFiles(t, "the next run", next, 3)
	want := concat(appended, shorter, replaced, c.untouched)
	f.assertSink(want)
	assertFiles(t, "the run after", f.mustRun(), 0)
	f.assertSink(want)
}

// readSummary is the part of `run --json` about files that changed.
type readSummary struct {
	RunID   string `json:"run_id"`
	Sources map[string]struct {
		Files             int64 `json:"files"`
		ChangedDuringRead int64 `json:"changed_during_read"`
	} `json:"sources"`
}

// TestTruncatedCompressedInput: a .gz or .zst input that does not end
// cleanly (cut inside the data, or only its trailer or checksum missing)
// fails the run naming the file, whatever on_bad_record says: nothing is
// published and the bookmark stays. Once the file is whole, the next run
// delivers every record exactly once.
func TestTruncatedCompressedInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file string
		cut        func(n int) int // bytes kept of n
		top        []string
	}{
		{"gz trailer missing", "cut.csv.gz", func(n int) int { return n - 4 }, nil},
		{"gz cut in the data, skip", "cut.csv.gz", func(n int) int { return n * 2 / 3 }, []string{"on_bad_record: skip"}},
		{"zst checksum cut, quarantine", "cut.csv.zst", func(n int) int { return n - 2 }, []string{"on_bad_record: quarantine"}},
		{"zst cut in the data", "cut.csv.zst", func(n int) int { return n * 2 / 3 }, nil},
	}
	eachBackend(t, func(t *testing.T, be backend) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				f := newFixtureOn(t, be, jobOpts{top: c.top})
				ok := f.addCSV("ok.csv", 20)
				recs := f.gen.records(2000)
				whole := compressFor(t, c.file, csvBytes(recs))
				f.put(c.file, whole[:c.cut(len(whole))])

				_, r := f.runExpect(1)
				assertMentions(t, r, c.file, "truncated")
				f.assertSink(nil)
				if got := f.planFiles(); got != 2 {
					t.Errorf("plan after the failed run: files = %d, want 2 (the bookmark stays)", got)
				}

				f.put(c.file, whole)
				s := f.mustRun()
				assertFiles(t, "the run after the file was made whole", s, 2)
				f.assertSink(concat(ok, recs))
				assertFiles(t, "the next run", f.mustRun(), 0)
			})
		}
	})
}

// TestMultiMemberGzip: a .gz of several members (gzip files concatenated,
// as `cat a.gz b.gz` or a log rotator makes them) is read whole.
func TestMultiMemberGzip(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		first, second := f.gen.records(300), f.gen.records(200)
		body := csvBytes(second)
		body = body[bytes.IndexByte(body, '\n')+1:] // the header once, in the first member
		data := append(compressFor(t, "a.gz", csvBytes(first)), compressFor(t, "b.gz", body)...)
		f.put("multi.csv.gz", data)
		s := f.mustRun()
		if got := s.source().Rows; got != 500 {
			t.Errorf("rows read from a two-member .gz: %d, want 500", got)
		}
		f.assertSink(concat(first, second))
	})
}

// TestS3ObjectReplacedWhileDownloaded: an S3 input replaced while it is
// downloaded (its GET breaks off; the resume, pinned with If-Match to the
// version first read, gets 412) is left out of the run and counted as
// changed_during_read, not failing the run nor mixing two versions; the
// next run reads the replacement once.
func TestS3ObjectReplacedWhileDownloaded(t *testing.T) {
	t.Parallel()
	f, p := newProxiedFixture(t, jobOpts{top: []string{"io: {concurrency: 1}"}})
	first := f.addCSV("first.csv", 2000) // more than the proxy's buffer: the cut comes after the headers
	second := f.addCSV("second.csv", 20)
	f.setMtime("first.csv", time.Now().Add(-2*time.Hour)) // read first
	f.setMtime("second.csv", time.Now().Add(-time.Hour))

	in := f.in.(*s3Place).bucket
	p.CutBody(1, 20_000, "GetObject")
	p.InBucket(in)
	p.Delay(1, 3*time.Second, "GetObject")
	p.InBucket(in)
	run := f.start(nil, "run", f.jobPath, "--json")
	for deadline := time.Now().Add(time.Minute); p.CountIn(in, "GetObject") < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) || run.exited() {
			t.Fatalf("the run never resumed its first download\n%v", f.wait(run))
		}
	}
	replaced := sameSize(first)
	f.putCSV("first.csv", replaced)
	r := f.wait(run)
	if r.code != 0 {
		t.Fatalf("run whose input was replaced while downloaded: got exit %d, want 0\n%v", r.code, r)
	}
	src := decodeOne[readSummary](t, r).Sources["orders_source"]
	if src.Files != 1 || src.ChangedDuringRead != 1 {
		t.Errorf("run --json: sources.orders_source files = %d, changed_during_read = %d; want 1 and 1\n%s",
			src.Files, src.ChangedDuringRead, r.stdout)
	}
	assertMentions(t, r, "first.csv")
	f.assertSink(second)

	assertFiles(t, "the next run", f.mustRun(), 1)
	f.assertSink(concat(replaced, second))
	assertFiles(t, "the run after", f.mustRun(), 0)
}

// TestTruncatedPlainInput: a plain CSV or JSON Lines file cut so that its
// last line does not parse is a bad record, named by file and line (what
// README says can be told apart from a complete file; a cut that leaves a
// line that parses cannot be).
func TestTruncatedPlainInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, file, line string
		o                jobOpts
		data             func(recs []record) []byte
	}{
		{"csv cut to fewer fields", "cut.csv", "line 21", jobOpts{}, func(recs []record) []byte {
			b := csvBytes(recs)
			return b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+6] // "1019,C" of the last line
		}},
		{"json cut inside an object", "cut.json", "line 20", jobOpts{format: "json"}, func(recs []record) []byte {
			b := jsonlBytes(recs)
			return b[:len(b)-10]
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, c.o)
			recs := f.gen.records(20)
			f.put(c.file, c.data(recs))
			_, r := f.runExpect(1)
			assertMentions(t, r, c.file+" "+c.line)
			f.assertSink(nil)
		})
	}
}

// TestSmallPlainFileNamedGz: a plain CSV named .gz that is shorter than a
// gzip header is reported as not gzip data, not as a truncated download.
func TestSmallPlainFileNamedGz(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.put("tiny.csv.gz", []byte("order_id\n"))
	_, r := f.runExpect(1)
	assertMentions(t, r, "tiny.csv.gz", "not gzip data")
	if strings.Contains(r.output(), "truncated") {
		t.Errorf("a plain file named .gz reported as truncated:\n%v", r)
	}
}
