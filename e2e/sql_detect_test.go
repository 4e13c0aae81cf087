package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
)

// The changes: detect scenarios read orders (id, v, amount) on every
// database kind into a Parquet change log (ctx files) and, on PostgreSQL
// and MariaDB, a merge table (orders_out, merge_keys [id]). After every
// run the merge table equals the source table, and the change log
// replayed run by run equals it too: an I only of a key not there, a U or
// D only of a key there (so no change is delivered twice or lost).

// detectJob gives the fixture orders and a changes: detect job.
func (f *sqlFixture) detectJob() {
	f.t.Helper()
	f.createOrders()
	j := sqlJob{src: sqlSrc{extra: []string{"changes: detect"}}}
	if f.kind != sqldb.SQLite {
		j.table, j.mode, j.mergeKeys = "orders_out", "merge", []string{"id"}
	}
	f.writeJob(j)
}

// detectRows is the source table as id:v:amount, sorted.
func (f *sqlFixture) detectRows() []string {
	f.t.Helper()
	var out []string
	for _, r := range f.tableRows("orders", f.detectText()) {
		out = append(out, r[0])
	}
	sort.Strings(out)
	return out
}

// detectText is the SELECT-list expression id:v:amount (NULL as NULL).
func (f *sqlFixture) detectText() string {
	if f.kind == sqldb.MySQL {
		return "CONCAT(id, ':', coalesce(v, 'NULL'), ':', coalesce(CAST(amount AS CHAR), 'NULL'))"
	}
	return "CAST(id AS TEXT) || ':' || coalesce(v, 'NULL') || ':' || coalesce(CAST(amount AS TEXT), 'NULL')"
}

// detectReplayed applies the change log run by run, in the order the
// runs started, and returns the table it makes as id:v:amount, sorted; a
// change that does not fit the table so far (an I of a key there, a U or
// D of one not there, a key twice in a run) fails the test.
func (f *sqlFixture) detectReplayed() []string {
	f.t.Helper()
	r := f.tidemark(nil, "runs", f.jobPath, "--json")
	if r.code != 0 {
		f.t.Fatalf("runs: exit %d\n%v", r.code, r)
	}
	var runs []struct {
		RunID     string `json:"run_id"`
		StartedAt string `json:"started_at"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
		f.t.Fatal(err)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].StartedAt < runs[j].StartedAt })
	byRun := f.parquetFiles()
	table := map[string]string{}
	for _, run := range runs {
		seen := map[string]bool{}
		for _, row := range f.queryParquet(byRun[run.RunID], "_op, CAST(id AS VARCHAR), coalesce(v, 'NULL'), coalesce(CAST(amount AS VARCHAR), 'NULL')") {
			op, id := row[0], row[1]
			if seen[id] {
				f.t.Errorf("run %s delivered key %s twice", run.RunID, id)
			}
			seen[id] = true
			_, there := table[id]
			switch {
			case op == "I" && there:
				f.t.Errorf("run %s: insert of key %s, which the change log already holds", run.RunID, id)
			case op != "I" && !there:
				f.t.Errorf("run %s: %s of key %s, which the change log does not hold", run.RunID, op, id)
			}
			if op == "D" {
				if row[2] != "NULL" || row[3] != "NULL" {
					f.t.Errorf("run %s: delete of key %s carries values %v, want NULLs", run.RunID, id, row[2:])
				}
				delete(table, id)
			} else {
				table[id] = id + ":" + row[2] + ":" + row[3]
			}
		}
	}
	out := make([]string, 0, len(table))
	for _, v := range table {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// assertDetected checks that the merge table (where there is one) and the
// replayed change log equal the source table.
func (f *sqlFixture) assertDetected(what string) {
	f.t.Helper()
	want := f.detectRows()
	if f.kind != sqldb.SQLite {
		var got []string
		for _, r := range f.tableRows("orders_out", f.detectText()) {
			got = append(got, r[0])
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			f.t.Fatalf("%s: merge table\n got %v\nwant %v", what, got, want)
		}
	}
	if got := f.detectReplayed(); strings.Join(got, " ") != strings.Join(want, " ") {
		f.t.Fatalf("%s: change log replayed\n got %v\nwant %v", what, got, want)
	}
}

// detectCounts are a run's counts of the orders_db source.
type detectCounts struct {
	Rows   int64 `json:"rows"`
	Detect struct {
		Inserts       int64 `json:"inserts"`
		Updates       int64 `json:"updates"`
		Deletes       int64 `json:"deletes"`
		Ranges        int64 `json:"ranges"`
		RangesChanged int64 `json:"ranges_changed"`
		Fetched       int64 `json:"rows_fetched"`
	} `json:"detect"`
}

// detectRun runs the job and returns the source's counts.
func (f *sqlFixture) detectRun() detectCounts {
	f.t.Helper()
	r := f.tidemark(nil, "run", f.jobPath, "--json")
	if r.code != 0 {
		f.t.Fatalf("run: exit %d\n%v", r.code, r)
	}
	var s struct {
		Sources map[string]detectCounts `json:"sources"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		f.t.Fatalf("run --json: %v\n%s", err, r.stdout)
	}
	return s.Sources["orders_db"]
}

// TestSQLChangesDetect: the first run delivers the table, every row an
// insert; later runs deliver the inserts, updates (a key moved to another
// too) and deletes since, each once; a run over an unchanged table fetches
// no row; plan shows the cost and changes nothing; a reset deletes the
// key snapshot and the next run delivers the table again.
func TestSQLChangesDetect(t *testing.T) {
	eachSQL(t, sqlAllKinds, func(t *testing.T, f *sqlFixture) {
		f.detectJob()
		f.fillDetect(1, 400)
		c := f.detectRun()
		if c.Rows != 400 || c.Detect.Inserts != 400 {
			t.Fatalf("first run: %+v, want 400 rows, every one an insert", c)
		}
		f.assertDetected("after the first run")

		f.exec("UPDATE orders SET v = 'two', amount = 2 WHERE id = 2")
		f.exec("UPDATE orders SET v = NULL WHERE id = 20")
		f.exec("DELETE FROM orders WHERE id = 3")
		f.exec("DELETE FROM orders WHERE id > 390")
		f.insertOrders(1000, 1001)
		f.exec("UPDATE orders SET id = 4000 WHERE id = 4")
		c = f.detectRun()
		if c.Detect.Inserts != 3 || c.Detect.Updates != 2 || c.Detect.Deletes != 12 || c.Rows != 17 {
			t.Errorf("second run: %+v, want 3 inserts (1000, 1001, 4000), 2 updates, 12 deletes (3, 4, 391-400)", c)
		}
		if c.Detect.RangesChanged == 0 || c.Detect.RangesChanged >= c.Detect.Ranges || c.Detect.Fetched >= 400 {
			t.Errorf("second run: %+v, want only the ranges that changed fetched", c)
		}
		f.assertDetected("after the changes")

		// plan shows the cost of the next comparison and changes nothing.
		f.exec("DELETE FROM orders WHERE id = 5")
		before := f.bookmark()
		r := f.tidemark(nil, "plan", f.jobPath, "--json")
		if r.code != 0 || !strings.Contains(r.stdout, `"ranges_changed":1`) || !strings.Contains(r.stdout, `"rows_to_fetch"`) {
			t.Errorf("plan --json does not show one range to fetch\n%v", r)
		}
		r = f.tidemark(nil, "plan", f.jobPath)
		if r.code != 0 || !strings.Contains(r.output(), "1 of ") || !strings.Contains(r.output(), "rows to fetch") {
			t.Errorf("plan does not show the ranges and rows to fetch\n%v", r)
		}
		if after := f.bookmark(); after != before {
			t.Errorf("plan changed the bookmark\nbefore %s\nafter  %s", before, after)
		}
		c = f.detectRun()
		if c.Rows != 1 || c.Detect.Deletes != 1 {
			t.Errorf("run after plan: %+v, want the one delete", c)
		}
		f.assertDetected("after a delete")

		c = f.detectRun()
		if c.Rows != 0 || c.Detect.Fetched != 0 || c.Detect.RangesChanged != 0 {
			t.Errorf("a run over an unchanged table: %+v, want nothing fetched", c)
		}
		f.assertDetected("after a run with nothing new")

		// A reset deletes the key snapshot; the next run delivers the
		// whole table again, every row an insert, into a fresh sink.
		snap := filepath.Join(f.dir, ".tidemark", "detect")
		if entries, _ := os.ReadDir(snap); len(entries) != 1 {
			t.Fatalf("key snapshot folder %s: %d entries, want the source's one", snap, len(entries))
		}
		r = f.reset("--purge-output")
		if !strings.Contains(r.output(), "key snapshot") {
			t.Errorf("bookmark reset does not say what it did to the key snapshot\n%v", r)
		}
		if entries, _ := os.ReadDir(snap); len(entries) != 0 {
			t.Errorf("after bookmark reset the key snapshot folder still holds %v", entries)
		}
		c = f.detectRun()
		if want := int64(len(f.detectRows())); c.Rows != want || c.Detect.Inserts != want {
			t.Errorf("run after the reset: %+v, want the %d rows again, every one an insert", c, want)
		}
	})
}

// TestSQLChangesDetectCrash: runs killed after staging (before the
// commit), after the commit (before publishing) and in the middle of
// publishing lose no change and deliver none twice: the key snapshot
// moves only with the committed bookmark.
func TestSQLChangesDetectCrash(t *testing.T) {
	eachSQL(t, sqlAllKinds, func(t *testing.T, f *sqlFixture) {
		f.detectJob()
		f.fillDetect(1, 50)
		f.killedAt("after-stage") // the first run dies before its commit
		f.detectRun()
		f.assertDetected("after the first run killed before its commit")
		next := int64(100)
		for _, step := range []string{"after-stage", "after-commit", "mid-publish", "after-plan"} {
			f.exec(fmt.Sprintf("UPDATE orders SET amount = amount + 1 WHERE id %% 3 = %d", next%3))
			f.exec("DELETE FROM orders WHERE id = (SELECT min(id) FROM (SELECT id FROM orders) o)")
			f.insertOrders(next, next+1)
			next += 2
			f.killedAt(step)
			f.exec(fmt.Sprintf("UPDATE orders SET v = 'after %s' WHERE id = %d", step, next-1))
			f.detectRun()
			f.assertDetected("after a run killed at " + step)
		}
	})
}

// TestSQLChangesDetectRefused: a table without a primary key, a query and
// bookmark_keys are refused, naming the table or the key.
func TestSQLChangesDetectRefused(t *testing.T) {
	eachSQL(t, sqlAllKinds, func(t *testing.T, f *sqlFixture) {
		f.exec(f.ddl("CREATE TABLE nokey (id {int}, v {text})"))
		f.writeJob(sqlJob{src: sqlSrc{table: "nokey", extra: []string{"changes: detect"}}})
		_, r := f.runExpect(1, nil)
		if !strings.Contains(r.output(), "nokey") || !strings.Contains(r.output(), "no primary key") {
			t.Errorf("a table without a primary key: want an error naming it and the missing key\n%v", r)
		}
		f.writeJob(sqlJob{src: sqlSrc{keys: []string{"id"}, extra: []string{"changes: detect"}}})
		_, r = f.runExpect(2, nil)
		if !strings.Contains(r.output(), "bookmark_keys") || !strings.Contains(r.output(), "changes: detect") {
			t.Errorf("bookmark_keys with changes: detect: want a job-file error at the key\n%v", r)
		}
	})
}

// fillDetect inserts orders from..to.
func (f *sqlFixture) fillDetect(from, to int64) {
	f.t.Helper()
	var ids []int64
	for i := from; i <= to; i++ {
		ids = append(ids, i)
	}
	f.insertOrders(ids...)
}

// TestSQLChangesDetectPostgresState: with the job's state in PostgreSQL
// the key snapshot is kept beside the job file, and runs (one killed
// before its commit) deliver each change once.
func TestSQLChangesDetectPostgresState(t *testing.T) {
	t.Parallel()
	state := sqltest.New(t, sqldb.Postgres)
	f := newSQLFixture(t, sqldb.SQLite)
	f.createOrders()
	f.writeJob(sqlJob{src: sqlSrc{extra: []string{"changes: detect"}}, top: []string{"state: " + state.Connection + "?schema=detect_state"}})
	f.env = append(f.env, "PGPASSWORD="+state.Password)
	f.secrets = append(f.secrets, state.Password)
	f.fillDetect(1, 100)
	f.detectRun()
	f.exec("DELETE FROM orders WHERE id = 10")
	f.exec("UPDATE orders SET v = 'x' WHERE id = 11")
	f.killedAt("after-stage")
	f.insertOrders(500)
	if c := f.detectRun(); c.Detect.Deletes != 1 || c.Detect.Updates != 1 || c.Detect.Inserts != 1 {
		t.Errorf("run after a killed one: %+v, want 1 insert, 1 update, 1 delete", c)
	}
	f.assertDetected("with the state in PostgreSQL")
	if _, err := os.Stat(filepath.Join(f.dir, ".tidemark", "state.db")); err == nil {
		t.Error("a state file was written beside the job")
	}
	if entries, _ := os.ReadDir(filepath.Join(f.dir, ".tidemark", "detect")); len(entries) != 1 {
		t.Errorf("key snapshot beside the job file: %d entries, want 1", len(entries))
	}
}
