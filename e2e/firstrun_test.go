package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateDeletedAfterFailedFirstRun: a first run that fails (a typo in
// the transform) has claimed the sink location but published nothing; the
// user deletes the state to start over. The next run is refused as for a
// lost state (the record names a state store this one is not), but the
// message says the location holds no output, so nothing would be read
// twice, instead of warning that the input already in the sink would be
// read again; --adopt-sink then runs the job once.
func TestStateDeletedAfterFailedFirstRun(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{transform: strings.Replace(cleanOrders, "order_id,", "order_idd,", 1)})
		a := f.addCSVs("a", 2, 20)
		f.runExpect(1)
		if err := os.RemoveAll(filepath.Dir(f.stateFile())); err != nil {
			t.Fatal(err)
		}
		f.writeJob(jobOpts{})
		_, r := f.runExpect(2)
		assertMentions(t, r, "holds no output", "--adopt-sink")
		for _, wrong := range []string{"already holds it", "expect it twice"} {
			if strings.Contains(r.output(), wrong) {
				t.Errorf("the refusal says %q of a sink that holds nothing\n%v", wrong, r)
			}
		}
		assertFiles(t, "the adopting run", f.mustRun("--adopt-sink"), 2)
		f.assertSink(a)
	})
}
