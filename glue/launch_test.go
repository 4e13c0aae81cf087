package glue

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark"
)

// TestLaunchWithoutPython: issue #24 item 4. A Python that is not there
// (--python naming nothing, or no python3 on PATH) is a usage error, exit
// 2, saying which Python it tried and what to install (it was "starting
// python3: exec: ... not found", exit 1).
func TestLaunchWithoutPython(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "etl.py")
	if err := os.WriteFile(script, []byte("print('never')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no-such-python")
	err := Launch(t.Context(), LaunchOptions{Script: script, Python: missing, State: filepath.Join(dir, "state.db")})
	if tidemark.ExitCode(err) != tidemark.ExitUsage || err == nil || !strings.Contains(err.Error(), missing) ||
		!strings.Contains(err.Error(), "pip install 'pyspark==4.0.*'") {
		t.Errorf("a Python that is not there: got %v (exit %d), want exit 2 naming %s and saying to pip install 'pyspark==4.0.*'",
			err, tidemark.ExitCode(err), missing)
	}
}
