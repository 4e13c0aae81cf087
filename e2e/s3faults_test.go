package e2e

import (
	"context"
	"net/http"
	"path"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidemark-etl/tidemark/internal/s3test"
)

// newProxiedFixture is a fixture on S3 whose commands reach versitygw
// through a fault-injecting proxy (AWS_ENDPOINT_URL points at it); the
// test's own reads and writes go to versitygw directly.
func newProxiedFixture(t *testing.T, o jobOpts) (*fixture, *s3test.FaultProxy) {
	t.Helper()
	f := newFixtureOn(t, onS3, o)
	p := s3test.StartProxy(t, sharedS3(t).srv.Endpoint)
	f.env = append(f.env, "AWS_ENDPOINT_URL="+p.URL)
	return f, p
}

// wait waits for a command started with start and checks its output.
func (f *fixture) wait(p *proc) result {
	f.t.Helper()
	r := p.wait(f.t)
	f.check(r)
	return r
}

// outS3 is an S3 fixture's output place.
func (f *fixture) outS3() *s3Place { return f.out.(*s3Place) }

// assertNoUploads checks that no incomplete multipart upload of
// tidemark's is left in the S3 output: under its _tidemark/, or of a data
// file (a run uploads its outputs to their final keys and completes the
// uploads when it publishes).
func (f *fixture) assertNoUploads(what string) {
	f.t.Helper()
	if ups := f.preparedUploads(); len(ups) > 0 {
		f.t.Errorf("%s: %d incomplete multipart uploads in %s: %v", what, len(ups), f.outS3().loc(), ups)
	}
}

// tidemarkUpload matches the keys, relative to a sink, that tidemark
// uploads to: its data files and anything under _tidemark/.
var tidemarkUpload = regexp.MustCompile(`^_tidemark/|(^|/)part-\d{8}T\d{6}Z-[0-9a-f]+-\d+\.[a-z]+ `)

// preparedUploads lists tidemark's incomplete multipart uploads in the
// output (none for a local output): a run's outputs between its upload
// and its publish, or a dead run's leftovers.
func (f *fixture) preparedUploads() []string {
	f.t.Helper()
	o, ok := f.out.(*s3Place)
	if !ok {
		return nil
	}
	var out []string
	for _, u := range sharedS3(f.t).multipartUploads(f.t, o.bucket, o.prefix) {
		if tidemarkUpload.MatchString(strings.TrimPrefix(u, path.Join(o.bucket, o.prefix)+"/")) {
			out = append(out, u)
		}
	}
	return out
}

// assertUnchanged checks the bookmark is still before.
func assertUnchanged(t testing.TB, what string, before, after bookmarkView) {
	t.Helper()
	if string(after.Version) != string(before.Version) || after.RunID != before.RunID || !sameSources(before, after) {
		t.Errorf("%s: bookmark moved: version %s run %s -> version %s run %s", what, before.Version, before.RunID, after.Version, after.RunID)
	}
}

// TestS3Faults runs a job through the fault proxy while it injects
// throttling (503 SlowDown), 500s, connection resets, answers lost after
// the server acted, slow answers and bodies cut short, into every phase of
// a run: listing, downloads, uploads, publishing moves and deletes. The run
// either succeeds with every record exactly once or fails cleanly (exit 1,
// nothing published, nothing left staged, the bookmark unchanged, a message
// that names the operation and the bucket); with the faults gone the next
// run gives every record exactly once. Faults that retries absorb must not
// fail the run.
//
// Publishing is the exception: it comes after the commit. A run whose
// publish keeps failing exits 1 naming the pending roll-forward, with
// nothing of it published; its bookmark is committed and its output stays
// staged, and the next run publishes it (reading nothing new).
func TestS3Faults(t *testing.T) {
	t.Parallel()
	const (
		succeed = "succeed"
		fail    = "fail"
		pending = "fail after the commit, publish pending"
	)
	for _, tc := range []struct {
		name   string
		s3     string // the s3: options of the source and the sink
		inject func(p *s3test.FaultProxy)
		want   string
		says   []string // what a failure names, besides the bucket
		sink   bool     // the failing requests go to the sink's bucket, not the source's
	}{
		{"throttling", "{max_backoff: 200ms}", func(p *s3test.FaultProxy) {
			for _, op := range []string{"ListObjectsV2", "HeadObject", "GetObject", "PutObject", "CopyObject", "DeleteObject",
				"CreateMultipartUpload", "UploadPart", "ListParts", "CompleteMultipartUpload"} {
				p.SlowDown(3, op)
			}
		}, succeed, nil, false},
		{"server errors", "{max_backoff: 200ms}", func(p *s3test.FaultProxy) {
			for _, op := range []string{"ListObjectsV2", "GetObject", "PutObject", "CopyObject", "DeleteObject",
				"CreateMultipartUpload", "UploadPart", "ListParts", "CompleteMultipartUpload"} {
				p.Fail(2, http.StatusInternalServerError, "InternalError", op)
			}
		}, succeed, nil, false},
		{"connection resets", "{max_backoff: 200ms}", func(p *s3test.FaultProxy) {
			p.Reset(2, "ListObjectsV2")
			p.Reset(2, "GetObject")
			p.Reset(2, "PutObject")
			p.Reset(2, "UploadPart")
			// The server acts, the client never hears: retries must be idempotent.
			p.DropResponse(1, "PutObject")
			p.DropResponse(1, "UploadPart")
			p.DropResponse(1, "CompleteMultipartUpload")
			p.DropResponse(1, "CopyObject")
			p.DropResponse(1, "DeleteObject")
		}, succeed, nil, false},
		{"slow responses", "{max_backoff: 200ms, read_timeout: 500ms}", func(p *s3test.FaultProxy) {
			p.Delay(2, 2*time.Second, "GetObject") // past the read timeout: retried
			p.Delay(1, 2*time.Second, "PutObject")
			p.Delay(1, 2*time.Second, "UploadPart")
			p.Delay(5, 300*time.Millisecond) // slow but in time
		}, succeed, nil, false},
		{"cut bodies", "{max_backoff: 200ms}", func(p *s3test.FaultProxy) {
			p.CutBody(3, 20, "GetObject")
		}, succeed, nil, false},
		{"recovery listing gives up", "{max_attempts: 3, max_backoff: 100ms}", func(p *s3test.FaultProxy) {
			// A run first lists the sink's _tidemark/staging/ for a dead
			// run's leftovers.
			p.SlowDown(1000, "ListObjectsV2")
		}, fail, []string{"ListObjectsV2", "503"}, true},
		{"source listing gives up", "{max_attempts: 3, max_backoff: 100ms}", func(p *s3test.FaultProxy) {
			p.Pass(1, "ListObjectsV2") // the sink's staging listing
			p.SlowDown(1000, "ListObjectsV2")
		}, fail, []string{"ListObjectsV2", "503"}, false},
		{"downloads give up", "{max_attempts: 3, max_backoff: 100ms}", func(p *s3test.FaultProxy) {
			p.Pass(1, "GetObject") // the sink's ownership record
			p.SlowDown(1000, "GetObject")
		}, fail, []string{"GetObject", "503"}, false},
		{"uploads give up", "{max_attempts: 3, max_backoff: 100ms}", func(p *s3test.FaultProxy) {
			p.Fail(1000, http.StatusInternalServerError, "InternalError", "PutObject", "UploadPart")
		}, fail, []string{"UploadPart", "500"}, true},
		{"publish gives up", "{max_attempts: 3, max_backoff: 100ms}", func(p *s3test.FaultProxy) {
			p.Fail(1000, http.StatusInternalServerError, "InternalError", "CopyObject", "CompleteMultipartUpload")
		}, pending, []string{"CompleteMultipartUpload", "500", "next"}, true},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			t.Parallel()
			f, p := newProxiedFixture(t, jobOpts{sourceExtra: []string{"s3: " + tc.s3}, sinkExtra: []string{"s3: " + tc.s3}})
			monday := f.addCSVs("monday", 3, 30)
			f.mustRun()
			before := f.bookmark()
			tuesday := f.addCSVs("tuesday", 4, 30)

			tc.inject(p)
			p.ResetCounts()
			s, r := f.run(nil)
			injected := p.Injected()
			t.Logf("%d faults injected; requests by operation: %v", injected, p.Counts())
			p.Clear()
			if injected == 0 {
				t.Fatalf("no fault was injected: the test tests nothing\n%v", r)
			}
			rerunFiles := int64(0) // what the run after the faults reads
			switch {
			case r.code == 0 && tc.want == succeed:
				if s.Status != "succeeded" {
					t.Errorf("exit 0 with status %q, want succeeded", s.Status)
				}
				assertFiles(t, "the run under faults", s, 4)
				f.assertSink(concat(monday, tuesday))
				if len(f.stagedFiles()) > 0 {
					t.Errorf("a successful run left staged files: %v", f.stagedFiles())
				}
			case r.code == 1 && tc.want == pending:
				if s.Status != "failed" {
					t.Errorf("exit 1 with status %q, want failed", s.Status)
				}
				assertMentions(t, r, append([]string{f.outS3().bucket}, tc.says...)...)
				f.assertSink(monday)
				if after := f.bookmark(); after.RunID != s.RunID {
					t.Errorf("bookmark after a run that committed: run %s, want %s", after.RunID, s.RunID)
				}
				if len(f.stagedFiles()) == 0 && len(f.preparedUploads()) == 0 {
					t.Errorf("a committed run whose publish failed left no staged output or upload to roll forward")
				}
			case r.code == 1 && tc.want == fail:
				rerunFiles = 4
				if s.Status != "failed" {
					t.Errorf("exit 1 with status %q, want failed", s.Status)
				}
				bucket := f.in.(*s3Place).bucket
				if tc.sink {
					bucket = f.outS3().bucket
				}
				assertMentions(t, r, append([]string{bucket}, tc.says...)...)
				f.assertSink(monday)
				if left := f.stagedFiles(); len(left) > 0 {
					t.Errorf("a failed run left %d staged files under _tidemark/: %v", len(left), firstFew(left))
				}
				f.assertNoUploads("after the failed run")
				assertUnchanged(t, "a failed run", before, f.bookmark())
			default:
				t.Fatalf("run under %s: got exit %d, want to %s\n%v", tc.name, r.code, tc.want, r)
			}
			if t.Failed() {
				t.Logf("the run under faults:\n%v", r)
			}

			// Faults gone: every record exactly once.
			assertFiles(t, "the run after the faults", f.mustRun(), rerunFiles)
			f.assertSink(concat(monday, tuesday))
			f.assertNoDuplicates()
			if left := f.stagedFiles(); len(left) > 0 {
				t.Errorf("after the rerun, %d staged files are left: %v", len(left), firstFew(left))
			}
			f.assertNoUploads("after the rerun")
			assertFiles(t, "the run after that", f.mustRun(), 0)
		})
	}
}

// TestS3WrongSecret: a permanent 403 (a wrong secret key) fails the run at
// once with exit 1 and a message that names the bucket and the operation
// and never shows the secret; nothing is published and the bookmark stays.
func TestS3WrongSecret(t *testing.T) {
	t.Parallel()
	f := newFixtureOn(t, onS3, jobOpts{})
	monday := f.addCSVs("monday", 2, 20)
	f.mustRun()
	before := f.bookmark()
	f.addCSVs("tuesday", 2, 20)

	wrong := "wrongSecret" + strings.Repeat("x", 29)
	f.secrets = append(f.secrets, wrong)
	s, r := f.run([]string{"AWS_SECRET_ACCESS_KEY=" + wrong})
	if r.code != 1 {
		t.Fatalf("run with a wrong secret key: got exit %d, want 1\n%v", r.code, r)
	}
	if s.Status != "failed" {
		t.Errorf("run --json: status = %q, want failed", s.Status)
	}
	// It fails at the first request, whichever that is; the message names it.
	names := regexp.MustCompile(`\b(ListObjectsV2|ListMultipartUploads|HeadObject|GetObject|HeadBucket) s3://(` +
		regexp.QuoteMeta(f.in.(*s3Place).bucket) + `|` + regexp.QuoteMeta(f.outS3().bucket) + `)/`)
	if !names.MatchString(r.output()) {
		t.Errorf("the error does not name the S3 operation and the bucket (s3 OPERATION s3://BUCKET/...)\n%v", r)
	}
	assertMentions(t, r, "403")
	if r.took > 15*time.Second {
		t.Errorf("a permanent 403 took %v to fail; want it not retried", r.took)
	}
	assertUnchanged(t, "a run with a wrong secret", before, f.bookmark())
	f.assertSink(monday)
}

// TestS3StaleMultipartUploads: incomplete multipart uploads under a sink's
// _tidemark/staging/ and of data files of a dead run of the job (one its
// state records) are aborted by the next run, and so are its staged
// objects deleted; an upload elsewhere in the bucket is none of tidemark's
// business and stays. Then a run is killed while it
// uploads a large output in parts: the next run aborts that upload too and
// publishes every record once.
func TestS3StaleMultipartUploads(t *testing.T) {
	t.Parallel()
	f, p := newProxiedFixture(t, jobOpts{
		top:         []string{"engine: {duckdb: {threads: 1}}"},
		sinkFormat:  "csv",
		partitionBy: "-",
		sinkExtra:   []string{"s3: {part_size: 5MiB}"},
	})
	ctx := context.Background()
	cl := sharedS3(t).client
	o := f.outS3()
	// A run of the job that died after planning: its id is in the state.
	small := f.addCSVs("small", 2, 20)
	if _, r := f.run([]string{"TIDEMARK_FAULT=after-plan"}); r.signal != syscall.SIGKILL {
		t.Fatalf("run with TIDEMARK_FAULT=after-plan: want it killed\n%v", r)
	}
	r := f.tidemark(nil, "runs", f.jobPath, "--json")
	deadRun := decodeOne[[]runSummary](t, r)[0].RunID
	dead := o.prefix + "_tidemark/staging/" + deadRun + "/"
	start := func(key string) {
		t.Helper()
		up, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(o.bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("creating a multipart upload: %v", err)
		}
		_, err = cl.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(o.bucket), Key: aws.String(key),
			UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader(strings.Repeat("x", 1024))})
		if err != nil {
			t.Fatalf("uploading a part: %v", err)
		}
	}
	start(dead + "data/part-0.csv")
	start(dead + "data/part-1.csv")
	start(o.prefix + "dt=2020-01-01/part-" + deadRun + "-00000.csv") // a dead run's data file
	const elsewhere = "somebody-else/upload.bin"
	start(elsewhere)
	foreign := o.prefix + "manual/upload.bin" // in the sink, not a name tidemark gives
	start(foreign)
	f.out.put(t, strings.TrimPrefix(dead, o.prefix)+"data/part-2.csv", csvBytes(f.gen.records(5)))
	if got := len(f.preparedUploads()); got != 3 {
		t.Fatalf("set-up: %d uploads of tidemark's, want 3", got)
	}

	f.mustRun()
	f.assertSink(small)
	f.assertNoUploads("after the run that followed the dead one")
	if left := f.stagedFiles(); len(left) > 0 {
		t.Errorf("the dead run's staged objects are still there: %v", left)
	}
	for _, k := range []string{elsewhere, foreign} {
		if got := sharedS3(t).multipartUploads(t, o.bucket, k); len(got) != 1 {
			t.Errorf("the upload at s3://%s/%s, not one of tidemark's: got %v, want it left alone", o.bucket, k, got)
		}
	}

	// A run killed in the middle of a multipart upload of its output.
	big := f.addCSV("big.csv", 300_000) // ~7 MB of CSV output: two 5 MiB parts
	p.Delay(1000, 3*time.Second, "UploadPart")
	p.ResetCounts() // the runs before uploaded parts too
	run := f.start(nil, "run", f.jobPath, "--json")
	deadline := time.Now().Add(time.Minute)
	for p.Count("UploadPart") == 0 && !run.exited() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if run.exited() || p.Count("UploadPart") == 0 {
		t.Fatalf("the run did not start a multipart upload (requests: %v)\n%v", p.Counts(), f.wait(run))
	}
	if err := run.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if r := f.wait(run); r.signal != syscall.SIGKILL {
		t.Fatalf("want the run killed\n%v", r)
	}
	p.Clear()
	if got := f.preparedUploads(); len(got) == 0 {
		t.Fatalf("the killed run left no incomplete upload in the sink: the test tests nothing (all: %v)", sharedS3(t).multipartUploads(t, o.bucket, ""))
	}
	f.assertSink(small)

	s := f.mustRun()
	assertFiles(t, "the run after the kill", s, 1)
	f.assertSink(concat(small, big))
	f.assertNoDuplicates()
	f.assertNoUploads("after the run that followed the killed one")
	if left := f.stagedFiles(); len(left) > 0 {
		t.Errorf("staged objects left: %v", left)
	}
}

// TestS3UploadsAbortedBeforePublish: a run commits and is killed before it
// publishes; then its incomplete uploads are aborted (as a bucket lifecycle
// rule for incomplete uploads would). The next run cannot publish it: it
// exits 1 saying the output is lost and how to read the input again. A
// rewind to the run before it (with --purge-output) goes through, and the
// next run delivers every record exactly once.
func TestS3UploadsAbortedBeforePublish(t *testing.T) {
	t.Parallel()
	f := newFixtureOn(t, onS3, jobOpts{})
	monday := f.addCSVs("monday", 3, 20)
	first := f.mustRun()
	tuesday := f.addCSVs("tuesday", 2, 20)
	if _, r := f.run([]string{"TIDEMARK_FAULT=after-commit"}); r.signal != syscall.SIGKILL {
		t.Fatalf("run with TIDEMARK_FAULT=after-commit: want it killed\n%v", r)
	}
	lost := f.bookmark().RunID
	ups := f.preparedUploads()
	if len(ups) == 0 {
		t.Fatal("the committed run left no upload to complete: the test tests nothing")
	}
	o := f.outS3()
	cl := sharedS3(t).client
	ctx := context.Background()
	out, err := cl.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(o.bucket), Prefix: aws.String(o.prefix)})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range out.Uploads {
		if _, err := cl.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(o.bucket), Key: u.Key, UploadId: u.UploadId}); err != nil {
			t.Fatal(err)
		}
	}

	_, r := f.runExpect(1)
	assertMentions(t, r, lost, "lost", "bookmark reset", "--to-run")
	f.assertSink(monday)

	f.check(f.reset("--to-run", first.RunID, "--purge-output"))
	s := f.mustRun()
	assertFiles(t, "the run after the rewind", s, 2)
	f.assertSink(concat(monday, tuesday))
	f.assertNoDuplicates()
	f.assertNoUploads("at the end")
	assertFiles(t, "the run after that", f.mustRun(), 0)
}
