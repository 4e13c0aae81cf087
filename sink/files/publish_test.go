package files

import "testing"

// TestRunOfKey checks which incomplete uploads and staged files recovery
// may take for a run's: the names tidemark gives a run's outputs, nothing
// else in the sink, each with the run that wrote it.
func TestRunOfKey(t *testing.T) {
	const run = "20261129T121227Z-906023"
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
		wantRun := ""
		if want {
			wantRun = run
		}
		if got := runOfKey(key); got != wantRun {
			t.Errorf("runOfKey(%q) = %q, want %q", key, got, wantRun)
		}
	}
}
