package docgen

import (
	"fmt"
	"strings"
)

// MetricsBegin and MetricsEnd mark the generated section of
// docs/reference/metrics.md.
const (
	MetricsBegin = "<!-- BEGIN metrics reference: generated from the metrics' descriptions " +
		"(go test ./metrics -run TestMetricsReference -update); do not edit -->"
	MetricsEnd = "<!-- END metrics reference -->"
)

// Metric is one metric as its description gives it.
type Metric struct {
	Name   string
	Labels []string
	Help   string
}

// MetricsReference is a table of metrics, one row each, in the order
// given.
func MetricsReference(ms []Metric) string {
	var b strings.Builder
	b.WriteString("| Metric | Labels | Meaning |\n|---|---|---|\n")
	for _, m := range ms {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", m.Name, strings.Join(m.Labels, ", "), cell(m.Help))
	}
	return b.String()
}
