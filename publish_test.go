package tidemark

import "testing"

// TestDeadUpload checks which incomplete uploads recovery may abort: the
// names tidemark gives a run's outputs, nothing else in the sink.
func TestDeadUpload(t *testing.T) {
	for key, want := range map[string]bool{
		"part-20261129T121227Z-906023-00000.parquet":           true,
		"dt=2026-01-01/part-20261129T121227Z-906023-00012.csv": true,
		"_tidemark/staging/20261129T121227Z-906023/data/x":     true,
		"_tidemark/rejects/20261129T121227Z-906023/orders/a":   true,
		"part-0.parquet":                     false,
		"other/part-2026-01-01.parquet":      false,
		"report.csv":                         false,
		"x_tidemark/staging/a":               false,
		"part-20261129T121227Z-906023-00000": false,
	} {
		if got := deadUpload.MatchString(key); got != want {
			t.Errorf("deadUpload(%q) = %t, want %t", key, got, want)
		}
	}
}
