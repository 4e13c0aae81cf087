package metrics_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/metrics"
	_ "github.com/tidemark-etl/tidemark/objstore/local"
	"github.com/tidemark-etl/tidemark/store"
)

// history runs a job three times with DuckDB into a SQLite store: a
// success, a success, then a failure (a transform that does not compile),
// and returns the job file's folder and the runs as `runs --json` shows
// them, newest first.
func history(t *testing.T) (string, []tidemark.Result, []store.Run) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	put := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(in, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jobFile := func(transform string) *job.Spec {
		t.Helper()
		y := "job: mjob\nstate: state.db\nsources:\n  - {ctx: landing, path: in, format: csv}\n"
		if transform != "" {
			y += "transforms:\n  t: " + transform + "\n"
		}
		y += "sinks:\n  - {ctx: out, path: out}\n"
		p := filepath.Join(dir, "job.yaml")
		if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		spec, err := job.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return spec
	}
	put("a.csv", "id,v\n1,x\n2,y\n3,z\n")
	put("b.csv", "id,v\n4,x\n5,y\n")
	if _, err := tidemark.Run(ctx, jobFile(""), tidemark.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	put("c.csv", "id,v\n6,x\n")
	if _, err := tidemark.Run(ctx, jobFile(""), tidemark.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	put("d.csv", "id,v\n7,x\n")
	if _, err := tidemark.Run(ctx, jobFile(`"SELECT no_such_column FROM landing"`), tidemark.RunOptions{}); err == nil {
		t.Fatal("the third run succeeded; want it to fail")
	}
	st := openStore(t, dir)
	runs, err := store.AllRuns(ctx, st, "mjob")
	if err != nil {
		t.Fatal(err)
	}
	var out []tidemark.Result
	for _, r := range runs {
		out = append(out, tidemark.ResultOf(r))
	}
	if len(out) != 3 || out[0].Status != store.StatusFailed || out[1].Status != store.StatusSucceeded {
		t.Fatalf("got runs %+v, want failed, succeeded, succeeded", out)
	}
	return dir, out, runs
}

func openStore(t *testing.T, dir string) store.Store {
	t.Helper()
	st, err := tidemark.OpenState(context.Background(), filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// scrape gets /metrics from h and parses it with Prometheus's text parser.
func scrape(t *testing.T, srv *httptest.Server) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("got status %d, want 200", resp.StatusCode)
	}
	return parse(t, resp.Body)
}

func parse(t *testing.T, r interface{ Read([]byte) (int, error) }) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("parsing the metrics: %v", err)
	}
	return fams
}

// value is the gauge of the family whose labels are exactly labels
// (name, value pairs); ok false if there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel())*2 != len(labels) {
			continue
		}
		match := true
		for i, l := range m.GetLabel() {
			if l.GetName() != labels[2*i] || l.GetValue() != labels[2*i+1] {
				match = false
			}
		}
		if match {
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func want(t *testing.T, fams map[string]*dto.MetricFamily, name string, w float64, labels ...string) {
	t.Helper()
	got, ok := value(fams, name, labels...)
	if !ok {
		t.Errorf("%s%v: missing", name, labels)
		return
	}
	if diff := got - w; diff > 1e-3 || diff < -1e-3 {
		t.Errorf("%s%v: got %v, want %v", name, labels, got, w)
	}
}

func TestScrapeMatchesRuns(t *testing.T) {
	dir, runs, _ := history(t)
	st := openStore(t, dir)
	oldest := time.Now().Add(-90 * time.Second)
	h := metrics.Handler(st, metrics.Options{Backlog: func(_ context.Context, j string) (metrics.Backlog, error) {
		return metrics.Backlog{"landing": {Files: 4, Bytes: 400, Oldest: oldest}}, nil
	}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	fams := scrape(t, srv)

	failed, success := runs[0], runs[1]
	j := []string{"job", "mjob"}
	want(t, fams, "tidemark_store_up", 1)
	want(t, fams, "tidemark_job_last_run_status", 0, j...)
	want(t, fams, "tidemark_job_last_success_timestamp_seconds",
		float64(success.FinishedAt.UnixNano())/1e9, j...)
	want(t, fams, "tidemark_job_run_duration_seconds", float64(failed.FinishedAt.Sub(*failed.StartedAt))/1e9, j...)
	want(t, fams, "tidemark_job_bookmark_version", float64(success.Version), j...)
	want(t, fams, "tidemark_job_lease_held", 0, "holder", "", "job", "mjob")
	for k, c := range failed.Sources {
		l := []string{"ctx", k, "job", "mjob"}
		want(t, fams, "tidemark_source_rows", float64(c.Rows), l...)
		want(t, fams, "tidemark_source_bytes", float64(c.Bytes), l...)
		want(t, fams, "tidemark_source_files", float64(c.Files), l...)
		want(t, fams, "tidemark_source_rejected", float64(c.Rejected), l...)
		want(t, fams, "tidemark_source_regressions", float64(c.Number("regressions")), l...)
	}
	want(t, fams, "tidemark_source_backlog_files", 4, "ctx", "landing", "job", "mjob")
	want(t, fams, "tidemark_source_backlog_bytes", 400, "ctx", "landing", "job", "mjob")
	if got, _ := value(fams, "tidemark_source_backlog_oldest_seconds", "ctx", "landing", "job", "mjob"); got < 90 || got > 200 {
		t.Errorf("tidemark_source_backlog_oldest_seconds: got %v, want about 90", got)
	}

	// The last success's counts, once a run succeeds again.
	if success.Sources["landing"].Rows != 1 || success.Sinks["out"].Rows != 1 {
		t.Fatalf("got the second run's counts %+v %+v, want 1 row in and out", success.Sources, success.Sinks)
	}
}

func TestScrapeCountsOfLastSucceededRun(t *testing.T) {
	dir, runs, raw := history(t)
	st := openStore(t, dir)
	// Drop the failed run from view: a collector over a store that shows
	// only the first two runs exports the second's counts.
	srv := httptest.NewServer(metrics.Handler(&beforeFailure{Store: st, seq: raw[0].Seq}))
	defer srv.Close()
	fams := scrape(t, srv)
	r := runs[1]
	if len(r.Sources) != 1 || len(r.Sinks) != 1 {
		t.Fatalf("got counts %+v %+v, want one source and one sink", r.Sources, r.Sinks)
	}
	want(t, fams, "tidemark_job_last_run_status", 1, "job", "mjob")
	want(t, fams, "tidemark_job_run_duration_seconds", float64(r.FinishedAt.Sub(*r.StartedAt))/1e9, "job", "mjob")
	for k, c := range r.Sources {
		want(t, fams, "tidemark_source_rows", float64(c.Rows), "ctx", k, "job", "mjob")
		want(t, fams, "tidemark_source_bytes", float64(c.Bytes), "ctx", k, "job", "mjob")
		want(t, fams, "tidemark_source_files", float64(c.Files), "ctx", k, "job", "mjob")
	}
	for k, c := range r.Sinks {
		want(t, fams, "tidemark_sink_rows", float64(c.Rows), "ctx", k, "job", "mjob")
		want(t, fams, "tidemark_sink_bytes", float64(c.Bytes), "ctx", k, "job", "mjob")
		want(t, fams, "tidemark_sink_files", float64(c.Files), "ctx", k, "job", "mjob")
	}
	if _, ok := value(fams, "tidemark_source_backlog_files", "ctx", "landing", "job", "mjob"); ok {
		t.Errorf("a backlog gauge without a backlog func")
	}
}

func TestLeaseHolder(t *testing.T) {
	dir, _, _ := history(t)
	st := openStore(t, dir)
	if _, err := st.AcquireLease(context.Background(), "mjob", store.Holder{ID: "run-x", Host: "h", PID: 1}, time.Minute); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(metrics.Handler(st))
	defer srv.Close()
	want(t, scrape(t, srv), "tidemark_job_lease_held", 1, "holder", "run-x", "job", "mjob")
}

func TestWriteFile(t *testing.T) {
	dir, runs, _ := history(t)
	st := openStore(t, dir)
	path := filepath.Join(t.TempDir(), "mjob.prom")
	if err := metrics.WriteFile(st, "mjob", path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fams := parse(t, f)
	want(t, fams, "tidemark_job_last_run_status", 0, "job", "mjob")
	want(t, fams, "tidemark_job_bookmark_version", float64(runs[1].Version), "job", "mjob")
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("got %d files beside the metrics file, want only it (no temporary left)", len(entries))
	}
	if err := metrics.WriteFile(st, "mjob", filepath.Join(dir, "no-such-folder", "m.prom")); err == nil {
		t.Errorf("writing into a missing folder: got no error")
	}
}

func TestStoreDownIsNoFailedScrape(t *testing.T) {
	dir, _, _ := history(t)
	st := openStore(t, dir)
	srv := httptest.NewServer(metrics.Handler(&broken{Store: st}))
	defer srv.Close()
	want(t, scrape(t, srv), "tidemark_store_up", 0)
}
