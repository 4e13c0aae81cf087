package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGlueRunJSONAndRefusal: issue #24 item 4 and issue #19 item 3.
// glue run --json prints run --json's object for the run on stdout, rows
// read counted, with the script's own output moved to stderr; a run whose
// source definition changed under its ctx is refused as a job file's is —
// exit 2, tidemark's message and no traceback — and is no run: runs and
// the bookmark are as before, and --json says exit 2.
func TestGlueRunJSONAndRefusal(t *testing.T) {
	w := newGlueWorld(t, local)
	next := w.land(t, "mon", 3, 1)
	r := w.glueJSON(t, w.args("job-bookmark-enable", "none")...)
	if r.code != 0 {
		t.Fatalf("Monday: %v", r)
	}
	wantIDs(t, w.ids(t), next, "after Monday")
	outs := jsonLines(t, r.stdout)
	if len(outs) != 1 {
		t.Fatalf("glue run --json printed %d JSON lines, want 1:\n%s", len(outs), r.stdout)
	}
	src, _ := outs[0]["sources"].(map[string]any)["orders_source"].(map[string]any)
	if outs[0]["status"] != "succeeded" || outs[0]["exit_code"] != float64(0) || outs[0]["job"] != "sales" ||
		src["files"] != float64(3) || src["rows"] != float64(15) {
		t.Errorf("glue run --json: got %v, want run sales succeeded, exit 0, 3 files and 15 rows read by orders_source", outs[0])
	}
	if !strings.Contains(r.stderr, "COMMITTED") || !strings.Contains(r.stderr, "  source orders_source: 3 files, ") {
		t.Errorf("glue run --json's stderr lacks the script's own output or the run summary:\n%s", r.stderr)
	}

	// The same ctx over another folder: its definition changed.
	before := w.bookmark(t)["version"]
	other := newPlace(t, local, filepath.Join(w.dir, "other"), "other")
	other.put(t, "x.csv", []byte("order_id,product,amount\n99,p0,1.25\n"))
	a := w.args("job-bookmark-enable", "none")
	a[3] = other.loc()
	r = w.glueJSON(t, a...)
	if r.code != 2 || !strings.Contains(r.stderr, "source orders_source changed since its bookmark was written") || strings.Contains(r.stderr, "Traceback") {
		t.Errorf("a changed definition: got %v, want exit 2 with tidemark's message and no traceback", r)
	}
	if outs := jsonLines(t, r.stdout); len(outs) != 1 || outs[0]["exit_code"] != float64(2) || outs[0]["status"] != "failed" {
		t.Errorf("a changed definition: --json printed %v, want one object with status failed and exit_code 2", outs)
	}
	if runs := w.runs(t); len(runs) != 1 {
		t.Errorf("after the refused run the job has %d runs, want 1 (a refused run is no run)", len(runs))
	}
	if v := w.bookmark(t)["version"]; v != before {
		t.Errorf("after the refused run the bookmark is at version %v, want %v", v, before)
	}
}

// glueJSON is glue run --json with the script's args.
func (w *glueWorld) glueJSON(t *testing.T, scriptArgs ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), glueTimeout)
	defer cancel()
	args := append([]string{"glue", "run", "--json", "--python", w.python, "script.py"}, scriptArgs...)
	cmd, stdout, stderr := command(ctx, w.dir, w.env, args...)
	return finish(t, ctx, args, time.Now(), cmd.Run(), stdout, stderr)
}

// jsonLines decodes stdout's lines, each one JSON object.
func jsonLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line %q is not JSON: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}
