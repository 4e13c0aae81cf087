package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRefusedRunClaimsNoSink: a run refused before it is recorded — here
// because its source changed under the same ctx (exit 2) — writes nothing
// into a sink location it has not used before, not even an ownership
// record; so when the user follows the advice and starts the new source as
// a job of its own, that job may write there.
func TestRefusedRunClaimsNoSink(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("monday", 1, 5)
	f.mustRun()
	landing2 := filepath.Join(f.dir, "landing2")
	if err := os.MkdirAll(landing2, 0o755); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(f.dir, "out2")
	writeFile(t, f.jobPath, []byte(jobOpts{sourcePath: landing2}.yaml(f.in.loc(), out2)))
	_, r := f.runExpect(2)
	assertMentions(t, r, "changed since its bookmark was written")
	if _, err := os.Stat(out2); err == nil {
		t.Errorf("the refused run wrote into the new sink location %s", out2)
	}
	writeFile(t, f.jobPath, []byte(jobOpts{name: "sales2", sourcePath: landing2}.yaml(f.in.loc(), out2)))
	f.mustRun()
}
