package e2e

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestRunMetricsFile: run --metrics-file writes the job's metrics in the
// textfile-collector format after a succeeded and after a failed run, the
// figures those of run --json and runs --json; a file that cannot be
// written is a warning, never a failed run.
func TestRunMetricsFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 20)
	prom := filepath.Join(t.TempDir(), "sales.prom")
	s := f.mustRun("--metrics-file", prom)
	fams := readProm(t, prom)
	job := []string{"job", "sales"}
	wantGauge(t, fams, "tidemark_job_last_run_status", 1, job...)
	src, sink := s.Sources["orders_source"], s.Sinks["orders_sink"]
	wantGauge(t, fams, "tidemark_source_rows", float64(src.Rows), "ctx", "orders_source", "job", "sales")
	wantGauge(t, fams, "tidemark_source_files", float64(src.Files), "ctx", "orders_source", "job", "sales")
	wantGauge(t, fams, "tidemark_source_bytes", float64(src.Bytes), "ctx", "orders_source", "job", "sales")
	wantGauge(t, fams, "tidemark_sink_rows", float64(sink.Rows), "ctx", "orders_sink", "job", "sales")
	wantGauge(t, fams, "tidemark_sink_files", float64(sink.Files), "ctx", "orders_sink", "job", "sales")
	wantGauge(t, fams, "tidemark_job_lease_held", 0, "holder", "", "job", "sales")
	finished, err := time.Parse(time.RFC3339Nano, s.FinishedAt)
	if err != nil {
		t.Fatal(err)
	}
	wantGauge(t, fams, "tidemark_job_last_success_timestamp_seconds", float64(finished.UnixNano())/1e9, job...)
	wantGauge(t, fams, "tidemark_job_bookmark_version", 1, job...)

	// A failed run: the file says so, the last success stays the first run.
	f.addCSV("more.csv", 20)
	f.badCSV("bad.csv")
	f.runExpect(1, "--metrics-file", prom)
	fams = readProm(t, prom)
	wantGauge(t, fams, "tidemark_job_last_run_status", 0, job...)
	wantGauge(t, fams, "tidemark_job_last_success_timestamp_seconds", float64(finished.UnixNano())/1e9, job...)
	var runs []runSummary
	r := f.tidemark(nil, "runs", f.jobPath, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 2 {
		t.Fatalf("runs --json: got %d runs (%v), want 2\n%v", len(runs), err, r)
	}
	wantGauge(t, fams, "tidemark_job_run_duration_seconds", durationOf(t, runs[0]), job...)

	// An unwritable metrics file: the run succeeds, with a warning.
	f.remove("bad.csv")
	bad := filepath.Join(t.TempDir(), "missing", "sales.prom")
	_, r = f.runExpect(0, "--metrics-file", bad)
	if !strings.Contains(r.stderr, "metrics file") {
		t.Errorf("no warning about the metrics file\n%v", r)
	}
}

func durationOf(t *testing.T, r runSummary) float64 {
	t.Helper()
	s, err1 := time.Parse(time.RFC3339Nano, r.StartedAt)
	e, err2 := time.Parse(time.RFC3339Nano, r.FinishedAt)
	if err1 != nil || err2 != nil {
		t.Fatalf("run times %q %q: %v %v", r.StartedAt, r.FinishedAt, err1, err2)
	}
	return e.Sub(s).Seconds()
}

// readProm parses a metrics file with Prometheus's text parser.
func readProm(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatalf("reading the metrics file: %v", err)
	}
	defer fh.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(fh)
	if err != nil {
		t.Fatalf("parsing the metrics file: %v", err)
	}
	return fams
}

// wantGauge checks the gauge of the family whose labels are labels (name,
// value pairs, in name order).
func wantGauge(t *testing.T, fams map[string]*dto.MetricFamily, name string, want float64, labels ...string) {
	t.Helper()
	for _, m := range fams[name].GetMetric() {
		var got []string
		for _, l := range m.GetLabel() {
			got = append(got, l.GetName(), l.GetValue())
		}
		if strings.Join(got, "\x00") != strings.Join(labels, "\x00") {
			continue
		}
		if v := m.GetGauge().GetValue(); math.Abs(v-want) > 1e-3 {
			t.Errorf("%s%v: got %v, want %v", name, labels, v, want)
		}
		return
	}
	t.Errorf("%s%v: missing", name, labels)
}
