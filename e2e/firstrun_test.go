package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateDeletedAfterFailedFirstRun: a first run that fails (a typo in
// the transform) has claimed the sink location but published nothing; the
// user deletes the state to start over. The state store made anew at the
// same place takes the location over (nothing there could be read twice)
// and the next run delivers once. A state store elsewhere is refused as
// for a lost state, but the message says the location holds no output,
// instead of warning that input already in the sink would be read again;
// --adopt-sink then runs the job once.
func TestStateDeletedAfterFailedFirstRun(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		broken := jobOpts{transform: strings.Replace(cleanOrders, "order_id,", "order_idd,", 1)}
		f := newFixtureOn(t, be, broken)
		a := f.addCSVs("a", 2, 20)
		f.runExpect(1)
		if err := os.RemoveAll(filepath.Dir(f.stateFile())); err != nil {
			t.Fatal(err)
		}
		f.writeJob(jobOpts{})
		s, r := f.run(nil)
		if r.code != 0 {
			t.Fatalf("run on the state made anew: got exit %d, want 0\n%v", r.code, r)
		}
		assertFiles(t, "the run on the state made anew", s, 2)
		assertMentions(t, r, "claiming the sink location anew")
		f.assertSink(a)

		g := newFixtureOn(t, be, broken)
		b := g.addCSVs("b", 2, 20)
		g.runExpect(1)
		g.writeJob(jobOpts{})
		elsewhere := filepath.Join(g.dir, "elsewhere", "state.db")
		_, r = g.runExpect(2, "--state", elsewhere)
		assertMentions(t, r, "holds no output", "--adopt-sink")
		for _, wrong := range []string{"already holds it", "expect it twice"} {
			if strings.Contains(r.output(), wrong) {
				t.Errorf("the refusal says %q of a sink that holds nothing\n%v", wrong, r)
			}
		}
		assertFiles(t, "the adopting run", g.mustRun("--adopt-sink", "--state", elsewhere), 2)
		g.assertSink(b)
	})
}
