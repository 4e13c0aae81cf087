package files

import "testing"

// TestCounted: a summary line names each non-zero count, in order, and
// leaves zero counts out.
func TestCounted(t *testing.T) {
	got := counted([]countedPart{{2, "empty files"}, {0, "files left for later runs"}, {1, "files dated in the future"}})
	if want := ", 2 empty files, 1 files dated in the future"; got != want {
		t.Errorf("counted = %q, want %q", got, want)
	}
	if got := counted([]countedPart{{0, "x"}}); got != "" {
		t.Errorf("counted of zeros = %q, want nothing", got)
	}
}
