package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateInsideSourceFolder: a job whose state store lies inside the
// folder of one of its file sources (state: s3://bucket/landing/state/
// with the source at s3://bucket/landing/, or a SQLite file in the
// landing folder) would read its own state — the lease, run records,
// bookmark versions — as input, and again each time it changed. It is a
// job-file error (exit 2, naming the state and the source) and nothing is
// written; a state folder whose name starts with _ or . is one a listing
// skips, and the job runs.
func TestStateInsideSourceFolder(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		recs := f.addCSVs("monday", 2, 10)
		state := func(name string) string {
			if be == onS3 {
				return subLoc(f.in, name)
			}
			return filepath.Join(strings.TrimPrefix(f.in.loc(), "file://"), name, "state.db")
		}
		for _, name := range []string{"state", "tidemark/state"} {
			loc := state(name)
			writeFile(t, f.jobPath, []byte(jobOpts{top: []string{fmt.Sprintf("state: %q", loc)}}.yaml(f.in.loc(), f.out.loc())))
			_, r := f.run(nil)
			if r.code != 2 {
				t.Errorf("state %s inside the source folder: got exit %d, want 2\n%v", loc, r.code, r)
			}
			assertMentions(t, r, "job.yaml:2: state", "inside the folder of source orders_source")
			f.assertSink(nil)
		}
		loc := state("_state")
		writeFile(t, f.jobPath, []byte(jobOpts{top: []string{fmt.Sprintf("state: %q", loc)}}.yaml(f.in.loc(), f.out.loc())))
		assertFiles(t, "a run with its state in a hidden folder of the source", f.mustRun(), 2)
		assertFiles(t, "the next run", f.mustRun(), 0)
		f.assertSink(recs)
	})
}
