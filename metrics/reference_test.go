package metrics

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/docgen"
)

var updateMetricsReference = flag.Bool("update", false, "rewrite docs/reference/metrics.md's generated metrics table")

// metricsPage is the docs site's metrics reference.
const metricsPage = "../docs/reference/metrics.md"

// descFields reads a description's name, help and labels from its String
// (prometheus.Desc has no accessors).
var descFields = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"), .*variableLabels: \{([^}]*)\}\}$`)

// TestMetricsReference: the docs site's metrics table is the one generated
// from the metrics' descriptions (every metric, its labels and its help);
// -update rewrites it.
func TestMetricsReference(t *testing.T) {
	var ms []docgen.Metric
	for _, d := range allDescs {
		m := descFields.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the description %s", d)
		}
		name, err1 := strconv.Unquote(m[1])
		help, err2 := strconv.Unquote(m[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("cannot read the description %s", d)
		}
		var labels []string
		if m[3] != "" {
			labels = strings.Split(m[3], ",")
		}
		ms = append(ms, docgen.Metric{Name: name, Labels: labels, Help: help})
	}
	text, err := os.ReadFile(metricsPage)
	if err != nil {
		t.Fatal(err)
	}
	want, err := docgen.Splice(text, docgen.MetricsBegin, docgen.MetricsEnd, docgen.MetricsReference(ms))
	if err != nil {
		t.Fatal(err)
	}
	if *updateMetricsReference {
		if err := os.WriteFile(metricsPage, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(text, want) {
		t.Errorf("docs/reference/metrics.md's metrics table is stale: run go test ./metrics -run TestMetricsReference -update")
	}
	for _, m := range ms {
		if !strings.Contains(string(want), "| `"+m.Name+"` |") {
			t.Errorf("the metrics reference has no row for %s", m.Name)
		}
	}
}
