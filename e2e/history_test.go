package e2e

import (
	"os"
	"os/user"
	"regexp"
	"strings"
	"testing"
)

// TestBookmarkShowListsResets: `bookmark reset` records who asked (cli
// USER@HOST) with the new bookmark version, and the human `bookmark show`
// lists the rewinds and resets, newest first, with when and who; the
// --json form is unchanged (no history field).
func TestBookmarkShowListsResets(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("monday", 2, 10)
	r1 := f.mustRun()
	f.addCSVs("tuesday", 1, 10)
	f.mustRun()
	f.reset("--to-run", r1.RunID)
	f.reset()

	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	by := "cli " + u.Username + "@" + host
	r := f.tidemark(nil, "bookmark", "show", f.jobPath)
	if r.code != 0 {
		t.Fatalf("bookmark show: got exit %d, want 0\n%v", r.code, r)
	}
	want := regexp.MustCompile(`(?s)  version 4: cleared at \S+Z by ` + regexp.QuoteMeta(by) + `\n` +
		`  version 3: rewound to run ` + regexp.QuoteMeta(r1.RunID) + ` at \S+Z by ` + regexp.QuoteMeta(by) + `\n`)
	if !want.MatchString(r.stdout) {
		t.Errorf("bookmark show: got\n%s\nwant the reset (version 4) and the rewind (version 3) by %q, newest first", r.stdout, by)
	}
	if strings.Contains(r.stdout, "version 2:") || strings.Contains(r.stdout, "version 1:") {
		t.Errorf("bookmark show lists commits as resets:\n%s", r.stdout)
	}
	j := f.tidemark(nil, "bookmark", "show", f.jobPath, "--json")
	if j.code != 0 || strings.Contains(j.stdout, `"history"`) || strings.Contains(j.stdout, by) {
		t.Errorf("bookmark show --json: got exit %d %s, want the bookmark alone", j.code, j.stdout)
	}
}
