package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// cleanOrders is the DESIGN example's transform.
const cleanOrders = `SELECT order_id, customer_id, product, CAST(amount AS BIGINT) AS amount FROM orders_source`

// jobOpts describes a one-source, one-sink sales job. Zero values take the
// defaults of salesJob.
type jobOpts struct {
	name        string   // job:, default "sales"
	top         []string // extra top-level lines, e.g. "on_bad_record: skip"
	sourcePath  string   // default: the fixture's landing folder
	format      string   // default csv
	options     string   // default {header: true} for csv, none otherwise
	sourceExtra []string // extra lines under the source, e.g. "tracking: timestamp"
	transform   string   // default cleanOrders; "-" for none
	sinkFormat  string   // default parquet
	partitionBy string   // default [product]; "-" for none
	mode        string   // the sink's mode, default append
	sinkExtra   []string // extra lines under the sink
}

// yaml renders the job file.
func (o jobOpts) yaml(landing, output string) string {
	def := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	var b strings.Builder
	fmt.Fprintf(&b, "job: %s\n", def(o.name, "sales"))
	for _, l := range o.top {
		fmt.Fprintf(&b, "%s\n", l)
	}
	format := def(o.format, "csv")
	b.WriteString("sources:\n")
	b.WriteString("  - ctx: orders_source\n")
	fmt.Fprintf(&b, "    path: %q\n", def(o.sourcePath, landing))
	fmt.Fprintf(&b, "    format: %s\n", format)
	options := o.options
	if options == "" && format == "csv" {
		options = "{header: true}"
	}
	if options != "" && options != "-" {
		fmt.Fprintf(&b, "    options: %s\n", options)
	}
	for _, l := range o.sourceExtra {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	if tr := def(o.transform, cleanOrders); tr != "-" {
		b.WriteString("transforms:\n")
		fmt.Fprintf(&b, "  clean_orders: |\n    %s\n", tr)
	}
	b.WriteString("sinks:\n")
	b.WriteString("  - ctx: orders_sink\n")
	fmt.Fprintf(&b, "    path: %q\n", output)
	fmt.Fprintf(&b, "    format: %s\n", def(o.sinkFormat, "parquet"))
	if p := def(o.partitionBy, "[product]"); p != "-" {
		fmt.Fprintf(&b, "    partition_by: %s\n", p)
	}
	fmt.Fprintf(&b, "    mode: %s\n", def(o.mode, "append"))
	for _, l := range o.sinkExtra {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	return b.String()
}

// fixture is one test's job: a landing place, an output place (local
// folders or S3 prefixes, by backend), a job file and its default state
// (.tidemark/state.db next to the job file).
type fixture struct {
	t       *testing.T
	be      backend
	dir     string
	in      place // the landing place the source reads
	out     place // the output place the sink writes
	jobPath string
	cwd     string   // where commands run: deliberately not the job's folder
	env     []string // the backend's environment, for every command
	sink    sinkFormat
	gen     *gen
	killed  bool     // a command was killed by a signal
	secrets []string // never to appear in any command's output
}

// newFixture makes a fixture on local folders.
func newFixture(t *testing.T, o jobOpts) *fixture {
	t.Helper()
	return newFixtureOn(t, local, o)
}

// newFixtureOn makes a fixture whose input and output live on be.
func newFixtureOn(t *testing.T, be backend, o jobOpts) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{
		t:       t,
		be:      be,
		dir:     dir,
		in:      newPlace(t, be, dir, "landing"),
		out:     newPlace(t, be, dir, "output"),
		jobPath: filepath.Join(dir, "job.yaml"),
		cwd:     filepath.Join(dir, "elsewhere"),
		sink:    parquetByProduct,
		gen:     newGen(),
	}
	switch be {
	case onSpark, onSparkS3:
		o.top = append(o.top, sparkEngine(t))
	case onSparkCluster, onSparkClusterS3:
		o.top = append(o.top, sparkClusterEngine(t))
	}
	if be == onS3 || be == onSparkS3 || be == onSparkClusterS3 {
		f.env = sharedS3(t).env()
		f.secrets = append(f.secrets, sharedS3(t).srv.SecretKey)
	}
	t.Cleanup(func() {
		// Spill and staging folders go whatever the run's outcome; only a
		// killed process may leave its own behind.
		switch left := f.tempLeft(); {
		case len(left) == 0:
		case f.killed || t.Failed():
			t.Logf("left in TMPDIR %s: %v", f.tmp(), left)
		default:
			t.Errorf("the commands left %v in their TMPDIR %s; want every run's temporary folders removed", left, f.tmp())
		}
	})
	// A temporary folder of the fixture's own, to see what runs leave there.
	f.env = append(f.env, "TMPDIR="+f.tmp())
	for _, d := range []string{f.cwd, f.tmp()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.writeJob(o)
	return f
}

// writeJob (re)writes the job file.
func (f *fixture) writeJob(o jobOpts) {
	f.t.Helper()
	writeFile(f.t, f.jobPath, []byte(o.yaml(f.in.loc(), f.out.loc())))
	f.sink.hive = o.partitionBy != "-"
	if o.sinkFormat != "" {
		f.sink.format = o.sinkFormat
	}
}

// tmp is TMPDIR for the fixture's commands.
func (f *fixture) tmp() string { return filepath.Join(f.dir, "tmp") }

// tempLeft lists what the fixture's commands left in their TMPDIR.
func (f *fixture) tempLeft() []string {
	f.t.Helper()
	entries, err := os.ReadDir(f.tmp())
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// place makes another place on the fixture's backend (a second landing
// folder, say).
func (f *fixture) place(name string) place {
	f.t.Helper()
	return newPlace(f.t, f.be, f.dir, name)
}

// put writes an input file into the landing place.
func (f *fixture) put(name string, data []byte) {
	f.t.Helper()
	f.in.put(f.t, name, data)
}

// addCSV writes n new records as landing/name (compressed by its
// extension) and returns them.
func (f *fixture) addCSV(name string, n int) []record {
	f.t.Helper()
	recs := f.gen.records(n)
	f.put(name, compressFor(f.t, name, csvBytes(recs)))
	return recs
}

// putCSV writes given records as landing/name.
func (f *fixture) putCSV(name string, recs []record) {
	f.t.Helper()
	f.put(name, compressFor(f.t, name, csvBytes(recs)))
}

// addCSVs writes count files of n records each, named prefix-NN.csv.
func (f *fixture) addCSVs(prefix string, count, n int) []record {
	f.t.Helper()
	var all []record
	for i := 1; i <= count; i++ {
		all = append(all, f.addCSV(fmt.Sprintf("%s-%02d.csv", prefix, i), n)...)
	}
	return all
}

// addParquet writes n new records as the Parquet file landing/name.
func (f *fixture) addParquet(name string, n int) []record {
	f.t.Helper()
	recs := f.gen.records(n)
	f.put(name, parquetBytes(f.t, recs))
	return recs
}

// remove deletes an input file.
func (f *fixture) remove(name string) {
	f.t.Helper()
	f.in.remove(f.t, name)
}

// setMtime sets an input file's modification time (LastModified on S3).
func (f *fixture) setMtime(name string, mtime time.Time) {
	f.t.Helper()
	f.in.setMtime(f.t, name, mtime)
}

// tidemark runs a command from the fixture's working folder.
func (f *fixture) tidemark(env []string, args ...string) result {
	f.t.Helper()
	r := tidemark(f.t, f.cwd, f.environ(env), args...)
	f.check(r)
	return r
}

// check notes a killed command and fails the test if its output shows a
// secret.
func (f *fixture) check(r result) {
	f.t.Helper()
	if r.signal != 0 {
		f.killed = true
	}
	for _, s := range f.secrets {
		if s != "" && strings.Contains(r.output(), s) {
			f.t.Errorf("tidemark %s printed a secret key", strings.Join(r.args, " "))
		}
	}
}

// start starts a command from the fixture's working folder.
func (f *fixture) start(env []string, args ...string) *proc {
	f.t.Helper()
	return startTidemark(f.t, f.cwd, f.environ(env), args...)
}

// environ is the backend's environment plus env (which wins).
func (f *fixture) environ(env []string) []string {
	return append(append([]string{}, f.env...), env...)
}

// run runs the job with --json and extra flags, returning the exit and the
// summary (the zero summary when stdout holds none).
func (f *fixture) run(env []string, flags ...string) (runSummary, result) {
	f.t.Helper()
	args := append([]string{"run", f.jobPath, "--json"}, flags...)
	r := f.tidemark(env, args...)
	var s runSummary
	if strings.TrimSpace(r.stdout) != "" {
		s = decodeOne[runSummary](f.t, r)
	}
	return s, r
}

// mustRun runs the job and requires exit 0 and status succeeded.
func (f *fixture) mustRun(flags ...string) runSummary {
	f.t.Helper()
	s, r := f.run(nil, flags...)
	if r.code != 0 {
		f.t.Fatalf("run: got exit %d, want 0\n%v", r.code, r)
	}
	if s.Status != "succeeded" {
		f.t.Fatalf("run: got status %q, want succeeded\n%v", s.Status, r)
	}
	return s
}

// runExpect runs the job and requires the given exit code.
func (f *fixture) runExpect(code int, flags ...string) (runSummary, result) {
	f.t.Helper()
	s, r := f.run(nil, flags...)
	if r.code != code {
		f.t.Fatalf("run: got exit %d, want %d\n%v", r.code, code, r)
	}
	return s, r
}

// bookmark returns `bookmark show --json`.
func (f *fixture) bookmark() bookmarkView {
	f.t.Helper()
	r := f.tidemark(nil, "bookmark", "show", f.jobPath, "--json")
	if r.code != 0 {
		f.t.Fatalf("bookmark show: got exit %d, want 0\n%v", r.code, r)
	}
	return decodeOne[bookmarkView](f.t, r)
}

// bookmarkOrEmpty is bookmark, or for a job that has no state yet (bookmark
// show exits 2 saying so, and creates none) the empty bookmark that
// bookmark show prints for a job whose runs never committed.
func (f *fixture) bookmarkOrEmpty(job string) bookmarkView {
	f.t.Helper()
	r := f.tidemark(nil, "bookmark", "show", f.jobPath, "--json")
	if r.code == 2 && (strings.Contains(r.stderr, "does not exist") || strings.Contains(r.stderr, "has no state")) {
		return bookmarkView{Job: job, Version: json.RawMessage("0"), Sources: map[string]json.RawMessage{}}
	}
	if r.code != 0 {
		f.t.Fatalf("bookmark show: got exit %d, want 0 (or 2 for no state)\n%v", r.code, r)
	}
	return decodeOne[bookmarkView](f.t, r)
}

// reset runs `bookmark reset` with extra flags and requires exit 0.
func (f *fixture) reset(flags ...string) result {
	f.t.Helper()
	r := f.tidemark(nil, append([]string{"bookmark", "reset", f.jobPath}, flags...)...)
	if r.code != 0 {
		f.t.Fatalf("bookmark reset: got exit %d, want 0\n%v", r.code, r)
	}
	return r
}

// plan returns what `plan --json` says the next run would read from the
// sales source.
func (f *fixture) plan() planSource {
	f.t.Helper()
	r := f.tidemark(nil, "plan", f.jobPath, "--json")
	if r.code != 0 {
		f.t.Fatalf("plan: got exit %d, want 0\n%v", r.code, r)
	}
	p := decodeOne[planView](f.t, r)
	src, ok := p.Sources["orders_source"]
	if !ok || src.Files == nil {
		f.t.Fatalf("plan --json: no numeric sources.orders_source.files in\n%s", r.stdout)
	}
	return src
}

// planFiles returns how many files `plan --json` says the next run would
// read from the source.
func (f *fixture) planFiles() int64 {
	f.t.Helper()
	return *f.plan().Files
}

// outDir is a local folder holding what a reader of the output sees now.
func (f *fixture) outDir() string {
	f.t.Helper()
	return f.out.mirror(f.t)
}

// sinkFiles lists the published files (in a mirror of the output).
func (f *fixture) sinkFiles() []string {
	f.t.Helper()
	return sinkFiles(f.t, f.outDir())
}

// readSink reads every published record.
func (f *fixture) readSink() []record {
	f.t.Helper()
	return readSink(f.t, f.outDir(), f.sink)
}

// assertSink checks the fixture's sink holds exactly want.
func (f *fixture) assertSink(want []record) {
	f.t.Helper()
	assertRecords(f.t, "sink "+f.out.loc(), f.readSink(), want)
}

// assertNoDuplicates checks that no order_id is published twice.
func (f *fixture) assertNoDuplicates() {
	f.t.Helper()
	assertNoDuplicates(f.t, f.outDir(), f.sink)
}

// sinkRun reads what one run published.
func (f *fixture) sinkRun(runID string) []record {
	f.t.Helper()
	return readSinkRun(f.t, f.outDir(), f.sink, runID)
}

// stagedFiles lists staged files left under the output's _tidemark/.
func (f *fixture) stagedFiles() []string {
	f.t.Helper()
	return stagedFiles(f.t, f.outDir())
}

// rejectFiles lists the quarantined rows' files under the output.
func (f *fixture) rejectFiles() []string {
	f.t.Helper()
	return rejectFiles(f.t, f.outDir())
}

// planView is `plan --json`.
type planView struct {
	Job     string                `json:"job"`
	Sources map[string]planSource `json:"sources"`
}

type planSource struct {
	Files *int64   `json:"files"`
	New   []string `json:"new"`
}

// runSummary is `run --json` (and one element of `runs --json`).
type runSummary struct {
	Job        string                   `json:"job"`
	RunID      string                   `json:"run_id"`
	Attempt    int                      `json:"attempt"`
	Status     string                   `json:"status"`
	Mode       string                   `json:"mode"`
	Sources    map[string]sourceSummary `json:"sources"`
	Sinks      map[string]sinkSummary   `json:"sinks"`
	DurationMS int64                    `json:"duration_ms"`
	Rejected   *int64                   `json:"rejected"`
	StartedAt  string                   `json:"started_at"`
	FinishedAt string                   `json:"finished_at"`
}

type sourceSummary struct {
	Files    int64  `json:"files"`
	Bytes    int64  `json:"bytes"`
	Rows     int64  `json:"rows"`
	Rejected *int64 `json:"rejected"`
	Empty    int64  `json:"empty"`
	Missing  int64  `json:"missing"`
	Future   int64  `json:"future"`
}

type sinkSummary struct {
	Files int64 `json:"files"`
	Rows  int64 `json:"rows"`
}

// source returns the summary of the sales source.
func (s runSummary) source() sourceSummary { return s.Sources["orders_source"] }

// sinkRows returns the rows the sales sink got.
func (s runSummary) sinkRows() int64 { return s.Sinks["orders_sink"].Rows }

// bookmarkView is `bookmark show --json`.
type bookmarkView struct {
	Job     string                     `json:"job"`
	Version json.RawMessage            `json:"version"`
	RunID   string                     `json:"run_id"`
	Sources map[string]json.RawMessage `json:"sources"`
}

// sameSources reports whether two bookmarks hold equal per-ctx state.
func sameSources(a, b bookmarkView) bool {
	norm := func(m map[string]json.RawMessage) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			var x any
			_ = json.Unmarshal(v, &x)
			out[k] = x
		}
		return out
	}
	return reflect.DeepEqual(norm(a.Sources), norm(b.Sources))
}

// decodeOne decodes stdout as exactly one JSON value and nothing else.
func decodeOne[T any](t testing.TB, r result) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader([]byte(r.stdout)))
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding stdout as one JSON value: %v\n%v", err, r)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err == nil {
		t.Fatalf("stdout holds more than one JSON value; second: %s\n%v", extra, r)
	}
	return v
}

// assertFiles checks how many files the run read from the sales source.
func assertFiles(t testing.TB, what string, s runSummary, want int64) {
	t.Helper()
	if got := s.source().Files; got != want {
		t.Errorf("%s: sources.orders_source.files = %d, want %d", what, got, want)
	}
}

// assertMentions checks that a failed command's output names each of want.
func assertMentions(t testing.TB, r result, want ...string) {
	t.Helper()
	out := r.output()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output does not mention %q\n%v", w, r)
		}
	}
}
