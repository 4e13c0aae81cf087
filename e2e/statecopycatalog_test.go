package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestStateCopyCarriesCatalog: the catalog lives in the state store, so
// `state copy` moves it with the jobs: a table a sink registers (every
// version, every partition) reads the same from the copy, and the next run
// there adds its partitions to it. Without it the copy's table listed only
// the partitions written after the copy, and readers through the catalog
// (catalog: sources, catalog ddl) missed the rest of the sink. A table
// the destination already has is left as it is.
func TestStateCopyCarriesCatalog(t *testing.T) {
	t.Parallel()
	eachStateStore(t, testStateCopyCarriesCatalog)
}

func testStateCopyCarriesCatalog(t *testing.T, to stateStore) {
	f := newFixture(t, jobOpts{sinkExtra: []string{"catalog: {table: sales_db.orders_clean, update: true}"}})
	dst, env := to.url(t)
	f.env = append(f.env, env...)
	f.addCSVs("monday", 2, 10)
	f.mustRun()
	before := f.catalogShow("sales_db.orders_clean")
	if len(before.Partitions) == 0 {
		t.Fatalf("the sink registered no partitions: %+v", before)
	}
	f.copyState(dst)
	show := func() catalogShow {
		t.Helper()
		r := f.tidemark(nil, "catalog", "show", "sales_db.orders_clean", "--json", "--state", dst)
		if r.code != 0 {
			t.Fatalf("catalog show in the copy: got exit %d, want 0\n%v", r.code, r)
		}
		return decodeOne[catalogShow](t, r)
	}
	if got := show(); !reflect.DeepEqual(got, before) {
		t.Errorf("the copy's table differs:\ngot  %+v\nwant %+v", got, before)
	}
	f.addCSVs("tuesday", 2, 10)
	f.mustRun("--state", dst)
	if got, want := show().products(), f.sinkProducts(); !slices.Equal(got, want) {
		t.Errorf("the copy's table after a run there: partitions %v, want every product in the sink %v", got, want)
	}

	// Another copy into the same store (of a job it does not have) keeps
	// the table there as it is.
	g := f.otherJob("other")
	g.env = append(g.env, env...)
	g.writeJob(jobOpts{name: "other", sinkExtra: []string{"catalog: {table: sales_db.orders_clean, update: true}"}})
	g.addCSVs("other", 1, 5)
	g.mustRun("--adopt-sink")
	grown := show()
	r := f.tidemark(nil, "state", "copy", "--from", f.stateFile(), "--to", dst, "--job", "sales")
	if r.code != 2 {
		t.Errorf("copying sales again: got exit %d, want 2 (it has state there)\n%v", r.code, r)
	}
	r = g.tidemark(nil, "state", "copy", "--from", g.stateFile(), "--to", dst)
	if r.code != 0 {
		t.Fatalf("copying job other: got exit %d, want 0\n%v", r.code, r)
	}
	assertMentions(t, r, "left as they are: sales_db.orders_clean")
	if got := show(); !reflect.DeepEqual(got, grown) {
		t.Errorf("a second copy changed the destination's table:\ngot  %+v\nwant %+v", got, grown)
	}
}

// TestStateCopyCarriesJobCrawler: `state copy --job J` also copies the
// bookmark of J's own crawler (a crawler: block in its job file), so the
// first crawl from the copy reads only the new files, not every file
// again.
func TestStateCopyCarriesJobCrawler(t *testing.T) {
	t.Parallel()
	w := newStoryWorld(t, local, stateStores[0], "add_new_columns")
	job, err := os.ReadFile(w.job)
	if err != nil {
		t.Fatal(err)
	}
	inline := fmt.Sprintf("crawler:\n  database: sales_db\n  targets: [{path: %q, table: orders_raw}]\n  recrawl: new_files_only\nsources:\n", w.sales.loc())
	writeFile(t, w.job, []byte(strings.Replace(string(job), "sources:\n", inline, 1)))
	for i, d := range []string{"2026-12-07", "2026-12-08"} {
		w.day(d, map[string]string{"orders-1.csv": storyHeader + fmt.Sprintf("%d,c1,widget,%d\n", i+1, 10*(i+1))})
		w.run(0)
	}
	dst := filepath.Join(t.TempDir(), "copy.db")
	r := w.tidemark(0, "state", "copy", "--from", w.state, "--to", dst, "--job", "sales")
	assertMentions(t, r, "copied job crawler:sales")
	job, err = os.ReadFile(w.job)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, w.job, []byte(strings.Replace(string(job), fmt.Sprintf("state: %q", w.state), fmt.Sprintf("state: %q", dst), 1)))
	w.day("2026-12-09", map[string]string{"orders-1.csv": storyHeader + "3,c1,widget,30\n"})
	s, r := w.run(0)
	if !strings.Contains(r.stderr, "3 files listed (1 new, 0 excluded), 1 opened") {
		t.Errorf("the first crawl from the copy: want it to open only the new file\n%v", r)
	}
	if s.source().Files != 1 {
		t.Errorf("the first run from the copy read %d files, want the new 1\n%v", s.source().Files, r)
	}
}
