package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidemark-etl/tidemark/internal/s3test"
)

// TestS3SameSecondUploads: S3's LastModified has one-second resolution, so
// objects that land in the same second as a run's listing, some before it
// and some after, share a timestamp with what the run read. While objects
// keep arriving (every ~15 ms, random keys), several runs go by; then the
// uploads stop and a last run reads the rest. Every object is read by
// exactly one run: none missed, none read twice; with exact tracking, and
// with timestamp tracking, whose band is there for this. The test also
// checks that the case happened: two objects with the same LastModified
// second, one read by a run and the other by a later run.
func TestS3SameSecondUploads(t *testing.T) {
	t.Parallel()
	for _, tracking := range []string{"exact", "timestamp"} {
		t.Run(tracking, func(t *testing.T) {
			t.Parallel()
			testS3SameSecondUploads(t, tracking)
		})
	}
}

func testS3SameSecondUploads(t *testing.T, tracking string) {
	f := newFixtureOn(t, onS3, jobOpts{partitionBy: "-", sourceExtra: []string{"tracking: " + tracking}})

	in, client := f.in.(*s3Place), sharedS3(t).client
	var (
		mu       sync.Mutex
		uploaded = map[string][]record{} // key -> its records
		stop     = make(chan struct{})
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
			}
			key := fmt.Sprintf("%08x.csv", rand.Uint32())
			mu.Lock()
			recs := f.gen.records(2)
			mu.Unlock()
			// Not f.put: t.Fatal is for the test's own goroutine.
			if _, err := client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(in.bucket),
				Key: aws.String(in.prefix + key), Body: bytes.NewReader(csvBytes(recs))}); err != nil {
				t.Errorf("uploading %s: %v", key, err)
				return
			}
			mu.Lock()
			uploaded[key] = recs
			mu.Unlock()
		}
	}()
	var runs []runSummary
	for range 8 {
		runs = append(runs, f.mustRun())
	}
	close(stop)
	<-done
	runs = append(runs, f.mustRun())
	if last := f.mustRun(); last.source().Files != 0 {
		t.Errorf("a run after everything was read read %d files, want 0", last.source().Files)
	}

	// Which run read each object, from the run's output.
	runOf := map[int64]int{} // order_id -> run index
	var all []record
	for i, s := range runs {
		for _, r := range f.sinkRun(s.RunID) {
			if j, ok := runOf[r.OrderID]; ok {
				t.Errorf("order %d was published by run %d and by run %d", r.OrderID, j, i)
			}
			runOf[r.OrderID] = i
		}
	}
	var files int64
	for _, s := range runs {
		files += s.source().Files
	}
	for _, recs := range uploaded {
		all = append(all, recs...)
	}
	if files != int64(len(uploaded)) {
		t.Errorf("the runs read %d files in all, want the %d uploaded", files, len(uploaded))
	}
	f.assertSink(all)

	// Did objects of one second straddle a listing?
	out, err := sharedS3(t).client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{
		Bucket: aws.String(in.bucket), Prefix: aws.String(in.prefix)})
	if err != nil || aws.ToBool(out.IsTruncated) {
		t.Fatalf("listing the input: %v (truncated %v)", err, aws.ToBool(out.IsTruncated))
	}
	runsOfSecond := map[int64]map[int]bool{}
	for _, o := range out.Contents {
		recs := uploaded[strings.TrimPrefix(aws.ToString(o.Key), in.prefix)]
		if len(recs) == 0 {
			continue
		}
		sec := o.LastModified.Unix()
		if runsOfSecond[sec] == nil {
			runsOfSecond[sec] = map[int]bool{}
		}
		runsOfSecond[sec][runOf[recs[0].OrderID]] = true
	}
	straddled := 0
	for _, rs := range runsOfSecond {
		if len(rs) > 1 {
			straddled++
		}
	}
	t.Logf("%d objects in %d runs; %d seconds had objects read by different runs", len(uploaded), len(runs), straddled)
	if straddled == 0 {
		t.Errorf("no second had objects read by two runs: the same-second case did not happen")
	}
}

// TestS3OrderedListing: `listing: ordered` over a prefix of 100,000 dated
// objects whose keys sort in arrival order. A run with nothing new costs at
// most 2 ListObjectsV2 requests (one of them the sink's staging check),
// counted by the proxy in front of versitygw, where a full listing of the
// prefix costs 100; objects with later keys are read by the next run at
// the same cost.
//
// The state is seeded fairly rather than by a first run over all 100,000
// objects (about 2 minutes here, all of it downloads): the first run reads
// the last day's 1,000 objects, which puts the cursor at the greatest key;
// then the 99,000 earlier objects are added behind it, where an ordered
// listing never looks. That is the state a first run over all of them
// leaves, as far as the listing is concerned: the same cursor over the
// same 100,000 keys.
func TestS3OrderedListing(t *testing.T) {
	t.Parallel()
	const n, perDay = 100_000, 1_000
	f, p := newProxiedFixture(t, jobOpts{
		sourceExtra: []string{"listing: ordered"},
		transform:   "-",
		partitionBy: "-",
	})
	f.sink.hive = false
	in := f.in.(*s3Place)
	srv := sharedS3(t).srv

	// sales/2026/MM/DD/<seconds of day>-<n>.csv, perDay objects a day.
	key := func(i int) string {
		day := i / perDay
		return fmt.Sprintf("sales/2026/%02d/%02d/%05d-%06d.csv", 1+day/28, 1+day%28, i%perDay*86, i)
	}
	body := func(i int) []byte { return fmt.Appendf(nil, "order_id,amount\n%d,%d\n", i, i%97) }
	// The objects are written straight into versitygw's folder, with their
	// ETags (far faster than PUTs); versitygw lists and serves them like
	// uploaded ones.
	write := func(from, to int) (sum int64) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := srv.WriteObjectFile(in.bucket, in.prefix+key(i), body(i)); err != nil {
				t.Fatal(err)
			}
			sum += int64(i)
		}
		return sum
	}
	// The objects behind the cursor are listed, never read: each day's are
	// hard links to its first one, which is quicker still.
	link := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if i%perDay == 0 {
				write(i, i+1)
				continue
			}
			if err := srv.LinkObjectFile(in.bucket, in.prefix+key(i-i%perDay), in.prefix+key(i)); err != nil {
				t.Fatal(err)
			}
		}
	}

	start := time.Now()
	lastDay := write(n-perDay, n)
	// versitygw serves the files as objects, with the ETag a PUT gives.
	page, err := sharedS3(t).client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{
		Bucket: aws.String(in.bucket), Prefix: aws.String(in.prefix), MaxKeys: aws.Int32(3)})
	if err != nil || len(page.Contents) != 3 {
		t.Fatalf("listing the objects written into versitygw's folder: %v (%d keys)", err, len(page.Contents))
	}
	for i, o := range page.Contents {
		sum := md5.Sum(body(n - perDay + i))
		if got, want := aws.ToString(o.ETag), `"`+hex.EncodeToString(sum[:])+`"`; aws.ToString(o.Key) != in.prefix+key(n-perDay+i) || got != want {
			t.Fatalf("listing shows %s with ETag %s; want %s with ETag %s", aws.ToString(o.Key), got, in.prefix+key(n-perDay+i), want)
		}
	}
	first := f.mustRun()
	t.Logf("first run over the last day's %d objects: %v", perDay, time.Since(start).Round(time.Millisecond))
	assertFiles(t, "first run", first, perDay)
	assertOrderSum(t, f, perDay, lastDay)

	start = time.Now()
	link(0, n-perDay)
	t.Logf("wrote the other %d objects into versitygw's folder in %v", n-perDay, time.Since(start).Round(time.Millisecond))

	// Nothing new after the cursor.
	p.ResetCounts()
	start = time.Now()
	noop := f.mustRun()
	took := time.Since(start)
	assertFiles(t, "run with nothing new", noop, 0)
	lists, srcLists := p.Count("ListObjectsV2"), p.CountIn(in.bucket, "ListObjectsV2")
	t.Logf("no-op run with listing: ordered over %d objects: %d ListObjectsV2 requests (%d on the source), %v; all requests: %v",
		n, lists, srcLists, took.Round(time.Millisecond), p.Counts())
	if lists > 2 || srcLists > 1 {
		t.Errorf("no-op run with listing: ordered made %d ListObjectsV2 requests, %d of them on the source; want at most 2, 1",
			lists, srcLists)
	}

	// The same prefix listed in full: plan of the job with listing: full
	// under another name (a fresh bookmark: it would read everything).
	full := filepath.Join(f.dir, "full.yaml")
	data, err := os.ReadFile(f.jobPath)
	if err != nil {
		t.Fatal(err)
	}
	job := strings.Replace(strings.Replace(string(data), "listing: ordered", "listing: full", 1), "job: sales", "job: sales-full", 1)
	writeFile(t, full, []byte(job))
	p.ResetCounts()
	start = time.Now()
	r := f.tidemark(nil, "plan", full, "--json")
	took = time.Since(start)
	if r.code != 0 {
		t.Fatalf("plan of the full-listing job: got exit %d\n%v", r.code, r)
	}
	fullLists := p.CountIn(in.bucket, "ListObjectsV2")
	t.Logf("plan with listing: full over %d objects: %d ListObjectsV2 requests, %v", n, fullLists, took.Round(time.Millisecond))
	if got := *decodeOne[planView](t, r).Sources["orders_source"].Files; got != n {
		t.Errorf("plan with listing: full: files = %d, want all %d", got, n)
	}
	if fullLists < n/1000 {
		t.Errorf("a full listing of %d objects made %d ListObjectsV2 requests, want at least %d: is the proxy counting?", n, fullLists, n/1000)
	}

	// New objects after the last key: read by the next run, cheaply.
	var moreSum int64
	for i := n; i < n+5; i++ {
		f.put(key(i), body(i))
		moreSum += int64(i)
	}
	p.ResetCounts()
	s := f.mustRun()
	assertFiles(t, "run after 5 new objects", s, 5)
	if got := p.CountIn(in.bucket, "ListObjectsV2"); got > 1 {
		t.Errorf("run after 5 new objects made %d ListObjectsV2 requests on the source, want 1", got)
	}
	assertOrderSum(t, f, perDay+5, lastDay+moreSum)
}

// assertOrderSum checks the sink holds n rows whose order_ids are distinct
// and sum to sum (the sink of TestS3OrderedListing is too big to compare
// row by row).
func assertOrderSum(t testing.TB, f *fixture, n int, sum int64) {
	t.Helper()
	files := f.sinkFiles()
	var rows, distinct, got int64
	q := "SELECT count(*), count(DISTINCT order_id), coalesce(sum(order_id), 0) FROM " + readerSQL(files, f.sink)
	if err := duck.QueryRow(q).Scan(&rows, &distinct, &got); err != nil {
		t.Fatalf("reading back the sink: %v", err)
	}
	if rows != int64(n) || distinct != int64(n) || got != sum {
		t.Errorf("sink: %d rows, %d distinct order_ids, sum %d; want %d, %d, %d", rows, distinct, got, n, n, sum)
	}
}

// TestS3TwoEndpoints: a job reads from one S3 service and writes to another,
// each with its own endpoint and credentials (per-source and per-sink s3:
// endpoint and profile; no AWS_ENDPOINT_URL, no keys in the environment).
// Each service sees only its side's requests: the source's is never
// written to. A run killed after its commit is rolled forward on the
// sink's service (the manifest keeps the sink's settings), and
// `bookmark reset --purge-output` deletes there.
func TestS3TwoEndpoints(t *testing.T) {
	t.Parallel()
	a := sharedS3(t)     // the source's service
	b := s3test.Start(t) // the sink's service, with other credentials
	pa := s3test.StartProxy(t, a.srv.Endpoint)
	pb := s3test.StartProxy(t, b.Endpoint)
	bClient := s3Client(b.Endpoint, b.AccessKey, b.SecretKey, b.Region)
	outBucket := b.NewBucket(t)

	dir := t.TempDir()
	creds := filepath.Join(dir, "aws-credentials")
	writeFile(t, creds, []byte(fmt.Sprintf("[src]\naws_access_key_id = %s\naws_secret_access_key = %s\n\n[dst]\naws_access_key_id = %s\naws_secret_access_key = %s\n",
		a.srv.AccessKey, a.srv.SecretKey, b.AccessKey, b.SecretKey)))

	f := newFixtureOn(t, onS3, jobOpts{})
	f.out = &s3Place{srv: &s3Env{srv: b, client: bClient}, bucket: outBucket, prefix: "sales/"}
	f.env = []string{
		"AWS_REGION=us-east-1",
		"AWS_SHARED_CREDENTIALS_FILE=" + creds,
		"AWS_CONFIG_FILE=" + filepath.Join(dir, "no-config"),
		"AWS_EC2_METADATA_DISABLED=true",
		"TMPDIR=" + f.tmp(),
	}
	f.secrets = append(f.secrets, b.SecretKey)
	f.writeJob(jobOpts{
		sourceExtra: []string{fmt.Sprintf("s3: {endpoint: %q, profile: src}", pa.URL)},
		sinkExtra:   []string{fmt.Sprintf("s3: {endpoint: %q, profile: dst}", pb.URL)},
	})

	monday := f.addCSVs("monday", 3, 20)
	f.mustRun()
	f.assertSink(monday)
	readOnly := func(what string) {
		t.Helper()
		for _, op := range []string{"PutObject", "CopyObject", "DeleteObject", "DeleteObjects", "CreateMultipartUpload"} {
			if n := pa.Count(op); n > 0 {
				t.Errorf("%s: the source's service got %d %s requests; want it only read", what, n, op)
			}
		}
		// The sink's ownership record is read there; nothing else.
		if n := pb.Count("GetObject") - pb.CountKeys("GetObject", "/_tidemark/owner.json"); n > 0 {
			t.Errorf("%s: the sink's service got %d GetObject requests; the inputs are on the other one", what, n)
		}
		if pa.Count("GetObject") == 0 || pb.Count("PutObject")+pb.Count("UploadPart") == 0 {
			t.Errorf("%s: requests by service: source %v, sink %v; want reads on the first, writes on the second", what, pa.Counts(), pb.Counts())
		}
	}
	readOnly("first run")
	if keys, err := a.listKeys(context.Background(), f.in.(*s3Place).bucket, ""); err != nil || slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "_tidemark") }) {
		t.Errorf("the source's bucket holds %v (err %v); want no _tidemark/ there", keys, err)
	}

	// Killed after the commit: the next run publishes on the sink's service.
	tuesday := f.addCSVs("tuesday", 2, 20)
	if _, r := f.run([]string{"TIDEMARK_FAULT=after-commit"}); r.signal != syscall.SIGKILL {
		t.Fatalf("run with TIDEMARK_FAULT=after-commit: want it killed\n%v", r)
	}
	f.assertSink(monday)
	assertFiles(t, "rerun after the kill", f.mustRun(), 0)
	f.assertSink(concat(monday, tuesday))
	readOnly("after the roll-forward")

	f.reset("--purge-output")
	f.assertSink(nil)
	s := f.mustRun()
	assertFiles(t, "run after reset --purge-output", s, 5)
	f.assertSink(concat(monday, tuesday))
	readOnly("after the purge and rerun")
}

// TestS3SummaryBytes: the run summary counts the bytes downloaded from the
// S3 source (the objects' sizes) and the bytes of the sink's published
// files, with partitions and without (where the one file goes up while the
// engine writes it), and, by the README's JSON, the sink's rows.
func TestS3SummaryBytes(t *testing.T) {
	t.Parallel()
	for _, parts := range []string{"", "-"} {
		f := newFixtureOn(t, onS3, jobOpts{partitionBy: parts})
		recs := f.addCSVs("a", 3, 20)
		var want int64
		for i := 1; i <= 3; i++ {
			want += int64(len(f.in.get(t, fmt.Sprintf("a-%02d.csv", i))))
		}
		_, r := f.runExpect(0)
		var raw struct {
			Sources map[string]map[string]json.RawMessage `json:"sources"`
			Sinks   map[string]map[string]json.RawMessage `json:"sinks"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
			t.Fatal(err)
		}
		if got := string(raw.Sources["orders_source"]["bytes"]); got != fmt.Sprint(want) {
			t.Errorf("sources.orders_source.bytes = %s, want %d (the objects' sizes)", got, want)
		}
		if got := string(raw.Sinks["orders_sink"]["rows"]); got != fmt.Sprint(len(recs)) {
			t.Errorf("sinks.orders_sink.rows = %s, want %d", got, len(recs))
		}
		var published int64
		for _, file := range f.sinkFiles() {
			info, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			published += info.Size()
		}
		if got := string(raw.Sinks["orders_sink"]["bytes"]); published == 0 || got != fmt.Sprint(published) {
			t.Errorf("partition_by %q: sinks.orders_sink.bytes = %s, want %d (the published files' sizes): %s", parts, got, published, r.stdout)
		}
	}
}

// TestS3DiskBudget: io.disk_budget caps the bytes of S3 inputs one run
// downloads; what does not fit waits for the next run (a run always reads
// at least one file), and every record lands exactly once.
func TestS3DiskBudget(t *testing.T) {
	t.Parallel()
	const budget = 3 << 10
	f := newFixtureOn(t, onS3, jobOpts{top: []string{"io: {disk_budget: 3KiB, concurrency: 2}"}})
	var all []record
	for i := range 5 {
		all = append(all, f.addCSV(fmt.Sprintf("f-%d.csv", i), 50)...) // ~1.3 KB each
	}
	var files int64
	for run := 1; files < 5; run++ {
		if run > 5 {
			t.Fatalf("5 files not read after 5 runs")
		}
		s := f.mustRun()
		src := s.source()
		if src.Files == 0 || (src.Files > 1 && src.Bytes > budget) {
			t.Errorf("run %d read %d files, %d bytes; want at least one file and, past the first, within the %d-byte budget",
				run, src.Files, src.Bytes, budget)
		}
		if src.Files == 5 {
			t.Errorf("run %d read all 5 files (%d bytes) despite the %d-byte budget", run, src.Bytes, budget)
		}
		files += src.Files
	}
	assertFiles(t, "the run after all were read", f.mustRun(), 0)
	f.assertSink(all)
}

// TestS3MissingBucket: a source whose bucket does not exist fails the run
// with exit 1 and a message that names the bucket and says it does not
// exist.
func TestS3MissingBucket(t *testing.T) {
	t.Parallel()
	f := newFixtureOn(t, onS3, jobOpts{})
	f.writeJob(jobOpts{sourcePath: "s3://tm-no-such-bucket-e2e/landing/"})
	s, r := f.runExpect(1)
	if s.Status != "failed" {
		t.Errorf("run --json: status = %q, want failed", s.Status)
	}
	assertMentions(t, r, "tm-no-such-bucket-e2e", "does not exist")
	if r.took > 15*time.Second {
		t.Errorf("a missing bucket took %v to fail; want it not retried", r.took)
	}
}

// TestS3ModifiedSameSizeAndSecond: an object rewritten with the same size
// within the same second keeps its size and LastModified; only its ETag
// tells. It is still a modified object: on_modified reprocess reads it
// again. (The LastModified is pinned through versitygw's folder so that the
// case does not depend on timing.)
func TestS3ModifiedSameSizeAndSecond(t *testing.T) {
	t.Parallel()
	f := newFixtureOn(t, onS3, jobOpts{sourceExtra: []string{"on_modified: reprocess"}})
	old := f.addCSV("a.csv", 20)
	f.mustRun()
	in := f.in.(*s3Place)
	head := func() *s3.HeadObjectOutput {
		t.Helper()
		h, err := sharedS3(t).client.HeadObject(context.Background(), &s3.HeadObjectInput{
			Bucket: aws.String(in.bucket), Key: aws.String(in.prefix + "a.csv")})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	before := head()

	rewritten := make([]record, len(old))
	for i, r := range old {
		r.CustomerID = "C9999" // as wide as C0001: the same size
		rewritten[i] = r
	}
	f.putCSV("a.csv", rewritten)
	f.setMtime("a.csv", *before.LastModified)
	after := head()
	if aws.ToInt64(after.ContentLength) != aws.ToInt64(before.ContentLength) || !after.LastModified.Equal(*before.LastModified) ||
		aws.ToString(after.ETag) == aws.ToString(before.ETag) {
		t.Fatalf("set-up: size %d -> %d, LastModified %v -> %v, ETag %s -> %s; want only the ETag changed",
			aws.ToInt64(before.ContentLength), aws.ToInt64(after.ContentLength), before.LastModified, after.LastModified,
			aws.ToString(before.ETag), aws.ToString(after.ETag))
	}

	s := f.mustRun()
	assertFiles(t, "run after the same-size rewrite", s, 1)
	assertRecords(t, "the rerun's output", f.sinkRun(s.RunID), rewritten)
	assertFiles(t, "next run", f.mustRun(), 0)
}
