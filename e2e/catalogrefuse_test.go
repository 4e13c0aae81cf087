package e2e

import (
	"os"
	"strings"
	"testing"
)

// TestCatalogSourceNamesWhatIsNotThere: a catalog source naming a table
// that is not in the catalog, or a push_down_predicate naming a key the
// table does not partition by, is a job-file error: exit 2 naming the key
// and its line, and no run recorded (it exited 1 after recording a failed
// run).
func TestCatalogSourceNamesWhatIsNotThere(t *testing.T) {
	t.Parallel()
	w := newStoryWorld(t, local, stateStores[0], "fail")
	w.day("2026-12-07", map[string]string{"orders-1.csv": storyHeader + "1,c1,widget,10\n"})
	w.crawl()
	job, err := os.ReadFile(w.job)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, edit, key string
		says            []string
	}{
		{"a key the table lacks", "    catalog: sales_db.orders_raw\n    push_down_predicate: \"dya = '2026-12-07'\"\n",
			"push_down_predicate", []string{`"dya"`, "not a partition key", "day"}},
		{"a table not in the catalog", "    catalog: sales_db.orders_rwa\n", "catalog", []string{"sales_db.orders_rwa", "orders_raw"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, w.job, []byte(strings.Replace(string(job), "    catalog: sales_db.orders_raw\n", tc.edit, 1)))
			_, r := w.run(2)
			assertMentions(t, r, append(tc.says, "sources[0]."+tc.key)...)
			if line := lineOf(t, w.job, tc.key+":"); !strings.Contains(r.output(), "job.yaml:"+line+":") {
				t.Errorf("the error does not name line %s of the job file\n%v", line, r)
			}
			// The job has no state yet (exit 2), or no run in it.
			if runs := tidemark(t, w.dir, w.env, "runs", w.job, "--json"); runs.code == 0 && strings.Contains(runs.stdout, `"run_id"`) || runs.code == 1 {
				t.Errorf("a refused run was recorded:\n%v", runs)
			}
		})
	}
	writeFile(t, w.job, job)
	if s, _ := w.run(0); s.source().Files != 1 {
		t.Errorf("the job as it was: read %d files, want 1", s.source().Files)
	}
}
