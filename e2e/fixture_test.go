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
	b.WriteString("    mode: append\n")
	for _, l := range o.sinkExtra {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	return b.String()
}

// fixture is one test's job: a landing folder, an output folder, a job file
// and its default state (.tidemark/state.db next to the job file).
type fixture struct {
	t       *testing.T
	dir     string
	landing string
	output  string
	jobPath string
	cwd     string // where commands run: deliberately not the job's folder
	sink    sinkFormat
	gen     *gen
}

func newFixture(t *testing.T, o jobOpts) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{
		t:       t,
		dir:     dir,
		landing: filepath.Join(dir, "landing"),
		output:  filepath.Join(dir, "output"),
		jobPath: filepath.Join(dir, "job.yaml"),
		cwd:     filepath.Join(dir, "elsewhere"),
		sink:    parquetByProduct,
		gen:     newGen(),
	}
	for _, d := range []string{f.landing, f.cwd} {
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
	writeFile(f.t, f.jobPath, []byte(o.yaml(f.landing, f.output)))
	if o.partitionBy == "-" {
		f.sink.hive = false
	}
	if o.sinkFormat != "" {
		f.sink.format = o.sinkFormat
	}
}

// addCSV writes n new records as landing/name and returns them.
func (f *fixture) addCSV(name string, n int) []record {
	f.t.Helper()
	recs := f.gen.records(n)
	writeCSV(f.t, filepath.Join(f.landing, name), recs)
	return recs
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

// tidemark runs a command from the fixture's working folder.
func (f *fixture) tidemark(env []string, args ...string) result {
	f.t.Helper()
	return tidemark(f.t, f.cwd, env, args...)
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

// reset runs `bookmark reset` with extra flags and requires exit 0.
func (f *fixture) reset(flags ...string) result {
	f.t.Helper()
	r := f.tidemark(nil, append([]string{"bookmark", "reset", f.jobPath}, flags...)...)
	if r.code != 0 {
		f.t.Fatalf("bookmark reset: got exit %d, want 0\n%v", r.code, r)
	}
	return r
}

// planFiles returns how many files `plan --json` says the next run would
// read from the source.
func (f *fixture) planFiles() int64 {
	f.t.Helper()
	r := f.tidemark(nil, "plan", f.jobPath, "--json")
	if r.code != 0 {
		f.t.Fatalf("plan: got exit %d, want 0\n%v", r.code, r)
	}
	p := decodeOne[map[string]any](f.t, r)
	sources, _ := p["sources"].(map[string]any)
	src, _ := sources["orders_source"].(map[string]any)
	n, ok := src["files"].(float64)
	if !ok {
		f.t.Fatalf("plan --json: no numeric sources.orders_source.files in\n%s", r.stdout)
	}
	return int64(n)
}

// assertSink checks the fixture's sink holds exactly want.
func (f *fixture) assertSink(want []record) {
	f.t.Helper()
	assertSink(f.t, f.output, f.sink, want)
}

// sinkRun reads what one run published.
func (f *fixture) sinkRun(runID string) []record {
	f.t.Helper()
	return readSinkRun(f.t, f.output, f.sink, runID)
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
