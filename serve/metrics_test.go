package serve_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestMetricsWithBacklog: /metrics of `serve` has the job's gauges and its
// backlog from the plan: the files a run would read now and the age of the
// oldest of them.
func TestMetricsWithBacklog(t *testing.T) {
	w := newWorld(t)
	w.threeRuns()
	w.write("d.csv", 2)
	w.write("e.csv", 3)
	w.serve(nil)
	code, body := w.get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	gauge := func(name string) (float64, bool) {
		f := fams[name]
		if f == nil {
			return 0, false
		}
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == "job" && l.GetValue() == jobName {
					return m.GetGauge().GetValue(), true
				}
			}
		}
		return 0, false
	}
	if v, ok := gauge("tidemark_job_bookmark_version"); !ok || v != 3 {
		t.Errorf("tidemark_job_bookmark_version: %v %v, want 3", v, ok)
	}
	if v, ok := gauge("tidemark_source_backlog_files"); !ok || v != 2 {
		t.Errorf("tidemark_source_backlog_files: %v %v, want 2 (d.csv and e.csv)", v, ok)
	}
	if v, ok := gauge("tidemark_source_backlog_oldest_seconds"); !ok || v < 50 {
		t.Errorf("tidemark_source_backlog_oldest_seconds: %v %v, want about 60 (the files are a minute old)", v, ok)
	}
}
