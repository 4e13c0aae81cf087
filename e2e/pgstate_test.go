package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
)

// TestPostgresState runs the two-day story with the job's state in
// PostgreSQL (state: postgres://user@host/db?schema=..., the password in
// PGPASSWORD): each day reads only its new files, runs and bookmark show
// read the state back from the database, every record is in the sink
// exactly once, no state file is written beside the job, and the password
// is never printed.
func TestPostgresState(t *testing.T) {
	t.Parallel()
	db := sqltest.New(t, sqldb.Postgres)
	loc := db.Connection + "?schema=sales_state"
	f := newFixture(t, jobOpts{top: []string{"state: " + loc}})
	f.env = append(f.env, "PGPASSWORD="+db.Password)
	f.secrets = append(f.secrets, db.Password)

	monday := f.addCSVs("monday", 4, 30)
	mon := f.mustRun()
	assertFiles(t, "Monday", mon, 4)
	tuesday := f.addCSVs("tuesday", 3, 20)
	tue := f.mustRun()
	assertFiles(t, "Tuesday", tue, 3)
	f.assertSink(concat(monday, tuesday))
	f.assertNoDuplicates()

	r := f.tidemark(nil, "runs", f.jobPath, "--json")
	if r.code != 0 {
		t.Fatalf("runs: got exit %d, want 0\n%v", r.code, r)
	}
	runs := decodeOne[[]runSummary](t, r)
	if len(runs) != 2 || runs[0].RunID != tue.RunID || runs[1].RunID != mon.RunID {
		t.Fatalf("runs --json = %+v, want Tuesday's run then Monday's", runs)
	}
	for i, want := range []int64{3, 4} {
		if runs[i].Status != "succeeded" || runs[i].source().Files != want || runs[i].StartedAt == "" || runs[i].FinishedAt == "" {
			t.Errorf("runs --json[%d] = %+v, want succeeded with %d files and its times", i, runs[i], want)
		}
	}
	bm := f.bookmark()
	if bm.Job != "sales" || bm.RunID != tue.RunID || string(bm.Version) != "2" {
		t.Errorf("bookmark show --json = job %q run %q version %s, want sales, %s, 2", bm.Job, bm.RunID, bm.Version, tue.RunID)
	}
	if _, ok := bm.Sources["orders_source"]; !ok {
		t.Errorf("bookmark show --json: no orders_source in %v", keys(bm.Sources))
	}

	// Wednesday: nothing new, nothing read, nothing written again.
	wed := f.mustRun()
	assertFiles(t, "Wednesday", wed, 0)
	f.assertSink(concat(monday, tuesday))

	// The state is objects in the schema's state_objects: the job's head
	// and segments of its file records.
	var heads, segments int
	if err := db.SQL.QueryRow(`SELECT count(*) FILTER (WHERE key = 'jobs/sales/head.json'),
		count(*) FILTER (WHERE key LIKE 'jobs/sales/%.seg') FROM sales_state.state_objects`).Scan(&heads, &segments); err != nil || heads != 1 || segments == 0 {
		t.Errorf("objects of job sales in sales_state.state_objects: %d heads, %d segments, %v; want 1 head and segments", heads, segments, err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, ".tidemark")); err == nil {
		t.Errorf("a .tidemark folder was made beside the job file; the state is in PostgreSQL")
	}

	// A wrong password fails, naming the store and not the password.
	const wrong = "not-the-Pa55word"
	_, r = f.run([]string{"PGPASSWORD=" + wrong})
	if r.code == 0 || strings.Contains(r.output(), wrong) || !strings.Contains(r.stderr, "postgres://") {
		t.Errorf("run with a wrong PGPASSWORD: exit %d, want a failure naming the store without the password\n%v", r.code, r)
	}
}
