package e2e

import (
	"testing"
)

// TestJobNameFlagChecked: --JOB_NAME is held to job:'s rule (letters,
// digits, '_', '-', '.'; a letter or digit first). Unchecked, "*" made a
// run's clean-up of its dead runs' temporary folders (a glob of
// tidemark_JOB@...) match every job of the state store on the host, the
// running ones' too, and ".." put the job's objects outside jobs/ in an
// S3 state store. Run and plan refuse it (exit 2, naming the flag) and
// record nothing.
func TestJobNameFlagChecked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 1, 5)
	f.mustRun()
	before := f.tidemark(nil, "runs", f.jobPath, "--json")
	for _, name := range []string{"*", "..", ".", "a/b", "sales?", "two words", "-x"} {
		for _, cmd := range []string{"run", "plan"} {
			r := f.tidemark(nil, cmd, f.jobPath, "--JOB_NAME", name, "--json")
			if r.code != 2 {
				t.Errorf("%s --JOB_NAME %q: got exit %d, want 2\n%v", cmd, name, r.code, r)
			}
			assertMentions(t, r, "--JOB_NAME")
		}
	}
	if after := f.tidemark(nil, "runs", f.jobPath, "--json"); !jsonEqual(t, before.stdout, after.stdout) {
		t.Errorf("runs changed:\nbefore %s\nafter  %s", before.stdout, after.stdout)
	}
}
