package sqltable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

// regressions returns the regressions each run reported.
func regressions(runs ...run) []int64 {
	out := make([]int64, len(runs))
	for i, r := range runs {
		out[i] = r.plan.Regressions
	}
	return out
}

// TestRegressionUpdateHidesNoInsert is issue 7 item 11: with an
// [updated_at, id] cursor, an old row updated out of the regression
// check's region while a new row appears in it left the count unchanged
// and nothing was reported. The check now tells a row that appears from
// one that leaves: by an update moving it forward, by a delete, with or
// without a lookback. With an integer primary key (new rows get higher
// ones, as from a sequence) it counts the region's rows above the highest
// key the last run saw, at any depth; with a composite primary key that
// is not all in the keys it keeps the identities of the region's rows
// nearest the boundary. Ordinary updates, deletes and the floor moving
// report nothing.
func TestRegressionUpdateHidesNoInsert(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		for _, tc := range []struct {
			name, lookback string
			depth          int64
			composite      bool
		}{{"no lookback", "", 0, false}, {"no lookback, depth 5", "", 5, false}, {"lookback", "10m", 0, false},
			{"lookback, depth 5", "10m", 5, false}, {"composite key, no lookback", "", 0, true},
			{"composite key, no lookback, depth 5", "", 5, true}, {"composite key, lookback", "10m", 0, true},
			{"composite key, lookback, depth 5", "10m", 5, true}, {"composite key, depth 1000", "10m", 1000, true}} {
			table := fmt.Sprintf("ev_%d_%t_%t", tc.depth, tc.lookback != "", tc.composite)
			pk := "id"
			if tc.composite {
				pk = "tenant, id"
			}
			db.Exec(t, ddl(db.Kind, "CREATE TABLE "+table+` (tenant {int} NOT NULL, id {int} NOT NULL, updated_at {ts} NOT NULL, v {text},
PRIMARY KEY (`+pk+`));
CREATE INDEX `+table+`_cursor ON `+table+` (updated_at, id)`))
			at := func(id int, hms string) {
				db.Exec(t, fmt.Sprintf("INSERT INTO %s (tenant, id, updated_at, v) VALUES (%d, %d, '2024-05-01 %s', 'e%d')", table, id%2, id, hms, id))
			}
			update := func(id int, hms string) {
				db.Exec(t, fmt.Sprintf("UPDATE %s SET updated_at = '2024-05-01 %s', v = 'u%d' WHERE id = %d", table, hms, id, id))
			}
			for i := 1; i <= 10; i++ {
				at(i, fmt.Sprintf("08:%02d:00", i))
			}
			at(20, "10:00:00") // the mark; with a lookback of 10m, 1-10 are behind the window
			s := open(t, db, sqltable.Config{Table: table, BookmarkKeys: []string{"updated_at", "id"}, Lookback: tc.lookback, RegressionRows: tc.depth})
			r1 := step(t, s, nil)

			// 8 is updated forward, out of the region, as 21 appears in it.
			update(8, "10:30:00")
			at(21, "08:09:30")
			r2 := step(t, s, r1.ex.Cursor)
			equal(t, tc.name+", run 2", ints(r2.rows, 1), []string{"8"})
			r3 := step(t, s, r2.ex.Cursor)
			if got := regressions(r2, r3); !slices.Equal(got, []int64{1, 0}) {
				t.Fatalf("%s: an update out of the region hid the row that appeared in it: regressions %v, want [1 0]", tc.name, got)
			}

			// Ordinary updates move rows forward; a delete takes one away.
			update(9, "10:40:00")
			update(10, "10:41:00")
			r4 := step(t, s, r3.ex.Cursor)
			db.Exec(t, fmt.Sprintf("DELETE FROM %s WHERE id = 7", table))
			r5 := step(t, s, r4.ex.Cursor)
			// A delete no longer hides a row that appears.
			db.Exec(t, fmt.Sprintf("DELETE FROM %s WHERE id = 21", table))
			at(22, "08:09:40")
			r6 := step(t, s, r5.ex.Cursor)
			if got := regressions(r4, r5, r6); !slices.Equal(got, []int64{0, 0, 1}) {
				t.Fatalf("%s: updates forward, a delete, a delete with a row appearing: regressions %v, want [0 0 1]", tc.name, got)
			}

			// Many updates and new rows move the region's floor; nothing is
			// made up, and a row appearing near the boundary is still seen.
			for i := 1; i <= 5; i++ {
				update(i, fmt.Sprintf("11:%02d:00", i))
			}
			for i := 30; i < 45; i++ {
				at(i, fmt.Sprintf("11:%02d:00", i))
			}
			r7 := step(t, s, r6.ex.Cursor)
			r8 := step(t, s, r7.ex.Cursor)
			// Near the boundary: the mark (11:44) or the window (11:34).
			moved, appears := 42, "11:42:30"
			if tc.lookback != "" {
				moved, appears = 31, "11:31:30"
			}
			update(moved, "12:00:00")
			at(46, appears)
			at(47, "12:00:00")
			r9 := step(t, s, r8.ex.Cursor)
			r10 := step(t, s, r9.ex.Cursor)
			if got := regressions(r7, r8, r9, r10); !slices.Equal(got, []int64{0, 0, 1, 0}) {
				t.Fatalf("%s: after the floor moved: regressions %v, want [0 0 1 0]", tc.name, got)
			}
			equal(t, tc.name+", run 9", ints(r9.rows, 1), []string{fmt.Sprint(moved), "47"})
		}
	})
}

// TestRegressionDuringRun: a row that appears in the region after Plan
// read it and before the extract's snapshot is reported by the next run,
// also when the extract moves the region's floor into the old region.
func TestRegressionDuringRun(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, "CREATE TABLE t (id {pk}, v {text})"))
		insertIDs(t, db, "t", 10, 20, 30, 40, 50, 60, 70, 80)
		s := open(t, db, sqltable.Config{Table: "t", RegressionRows: 5})
		r1 := step(t, s, nil)
		insertIDs(t, db, "t", 90, 100)
		r2 := step(t, s, r1.ex.Cursor) // the region holds 10 rows, twice the depth

		insertIDs(t, db, "t", 110, 120)
		ctx := context.Background()
		p, err := s.PlanRun(ctx, r2.ex.Cursor)
		if err != nil {
			t.Fatal(err)
		}
		insertIDs(t, db, "t", 95) // after Plan; the floor moves to 90
		ex, err := p.Extract(ctx, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		r4 := step(t, s, ex.Cursor)
		r5 := step(t, s, r4.ex.Cursor)
		if got := regressions(r4, r5); !slices.Equal(got, []int64{1, 0}) {
			t.Fatalf("a row that appeared during the run: regressions %v, want [1 0]", got)
		}
		// A delete and a row appearing in the same interval.
		db.Exec(t, "DELETE FROM t WHERE id = 100")
		insertIDs(t, db, "t", 105)
		r6 := step(t, s, r5.ex.Cursor)
		if r6.plan.Regressions != 1 {
			t.Fatalf("a delete hid the row that appeared: regressions %d, want 1", r6.plan.Regressions)
		}
	})
}

// TestRegressionQueryWithoutPrimaryKey: a query has no primary key; the
// region's rows are told apart by their key values, so an update moving
// a row forward does not hide one that appears, an update that keeps the
// keys is no regression, and one that moves them backwards is.
func TestRegressionQueryWithoutPrimaryKey(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, `CREATE TABLE ev (id {int} NOT NULL, updated_at {ts} NOT NULL, v {text});
CREATE INDEX ev_cursor ON ev (updated_at, id)`))
		for i := 1; i <= 6; i++ {
			db.Exec(t, fmt.Sprintf("INSERT INTO ev VALUES (%d, '2024-05-01 08:0%d:00', 'e%d')", i, i, i))
		}
		s := open(t, db, sqltable.Config{Query: "SELECT id, updated_at, v FROM ev", BookmarkKeys: []string{"updated_at", "id"}})
		r1 := step(t, s, nil)
		db.Exec(t, "UPDATE ev SET updated_at = '2024-05-01 09:00:00' WHERE id = 2")
		db.Exec(t, "INSERT INTO ev VALUES (7, '2024-05-01 08:03:30', 'e7')")
		r2 := step(t, s, r1.ex.Cursor)
		db.Exec(t, "UPDATE ev SET v = 'changed' WHERE id = 3") // the keys stay
		db.Exec(t, "UPDATE ev SET updated_at = '2024-05-01 09:10:00' WHERE id = 4")
		r3 := step(t, s, r2.ex.Cursor)
		// An update that moves a row's keys backwards, behind the mark:
		// its new version is not read, so it is reported.
		db.Exec(t, "UPDATE ev SET updated_at = '2024-05-01 08:04:30' WHERE id = 5")
		r4 := step(t, s, r3.ex.Cursor)
		if got := regressions(r2, r3, r4); !slices.Equal(got, []int64{1, 0, 1}) {
			t.Fatalf("query source: regressions %v, want [1 0 1]", got)
		}
	})
}

// TestRegressionOldCursor: a cursor written before the check counted by
// primary key (main's) is read: that run compares counts, and the next
// counts by primary key too.
func TestRegressionOldCursor(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, `CREATE TABLE ev (id {pk}, updated_at {ts} NOT NULL, v {text});
CREATE INDEX ev_cursor ON ev (updated_at, id)`))
		for i := 1; i <= 6; i++ {
			db.Exec(t, fmt.Sprintf("INSERT INTO ev VALUES (%d, '2024-05-01 08:0%d:00', 'e%d')", i, i, i))
		}
		s := open(t, db, sqltable.Config{Table: "ev", BookmarkKeys: []string{"updated_at", "id"}})
		r1 := step(t, s, nil)
		var old map[string]any
		if err := json.Unmarshal(r1.ex.Cursor, &old); err != nil {
			t.Fatal(err)
		}
		if old["pk_max"] == nil || old["region"] != nil {
			t.Fatalf("cursor %s keeps no highest primary key, or a region", r1.ex.Cursor)
		}
		delete(old, "pk_max")
		delete(old, "pk")
		prev, _ := json.Marshal(old)

		db.Exec(t, "INSERT INTO ev VALUES (7, '2024-05-01 08:03:30', 'e7')")
		r2 := step(t, s, prev)
		if !strings.Contains(string(r2.ex.Cursor), `"pk_max":"7"`) {
			t.Fatalf("the run on an old cursor keeps no highest primary key: %s", r2.ex.Cursor)
		}
		db.Exec(t, "UPDATE ev SET updated_at = '2024-05-01 09:00:00' WHERE id = 2")
		db.Exec(t, "INSERT INTO ev VALUES (8, '2024-05-01 08:04:30', 'e8')")
		r3 := step(t, s, r2.ex.Cursor)
		if got := regressions(r2, r3); !slices.Equal(got, []int64{1, 1}) {
			t.Fatalf("from an old cursor: regressions %v, want [1 1]", got)
		}
	})
}

// TestRegressionEveryRowNote: regression_check_rows 0 counts every row and
// keeps no identities; Open says what that cannot see.
func TestRegressionEveryRowNote(t *testing.T) {
	sqltest.EachOf(t, sqltest.Kinds[2:], func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, "CREATE TABLE t (id {pk}, v {text})"))
		note := func(s *sqltable.Source) bool {
			return slices.ContainsFunc(s.Notes(), func(n string) bool { return strings.Contains(n, "regression_check_rows: 0") })
		}
		if !note(open(t, db, sqltable.Config{Table: "t", RegressionRows: -1})) {
			t.Fatal("regression_check_rows 0: no note that updates can hide rows that appear")
		}
		if note(open(t, db, sqltable.Config{Table: "t"})) || note(open(t, db, sqltable.Config{Table: "t", RegressionRows: -1, NoRegressionCheck: true})) {
			t.Fatal("a note about regression_check_rows 0 without it")
		}
	})
}

// TestRegressionPrimaryKeyAdded: a primary key added to the table changes
// what identifies a region's row; the next run compares counts instead of
// taking every row for a new one, and identifies rows anew from then on.
func TestRegressionPrimaryKeyAdded(t *testing.T) {
	sqltest.EachOf(t, sqltest.Kinds[:2], func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, `CREATE TABLE ev (tenant {int} NOT NULL, id {int} NOT NULL, updated_at {ts} NOT NULL, v {text});
CREATE INDEX ev_cursor ON ev (updated_at, id)`))
		for i := 1; i <= 6; i++ {
			db.Exec(t, fmt.Sprintf("INSERT INTO ev VALUES (%d, %d, '2024-05-01 08:0%d:00', 'e%d')", i%2, i, i, i))
		}
		cfg := sqltable.Config{Table: "ev", BookmarkKeys: []string{"updated_at", "id"}}
		r1 := step(t, open(t, db, cfg), nil)
		db.Exec(t, "ALTER TABLE ev ADD PRIMARY KEY (tenant, id)")
		s := open(t, db, cfg)
		r2 := step(t, s, r1.ex.Cursor)
		db.Exec(t, "UPDATE ev SET updated_at = '2024-05-01 09:00:00' WHERE id = 2")
		db.Exec(t, "INSERT INTO ev VALUES (1, 7, '2024-05-01 08:03:30', 'e7')")
		r3 := step(t, s, r2.ex.Cursor)
		if got := regressions(r2, r3); !slices.Equal(got, []int64{0, 1}) {
			t.Fatalf("primary key added: regressions %v, want [0 1]", got)
		}
	})
}

// TestRegressionStateSize: what the check keeps in the cursor at its
// largest: a few bytes with an integer primary key or counting every row;
// with a text primary key, the identities of up to 1,000 rows nearest the
// boundary at the default depth (about 3 KB), all of a region of up to
// 2,000 rows at depth 1,000 (about 6 KB).
func TestRegressionStateSize(t *testing.T) {
	sqltest.EachOf(t, sqltest.Kinds[2:], func(t *testing.T, db *sqltest.DB) {
		for _, tc := range []struct {
			name, pk string
			depth    int64
			most     int
		}{{"integer primary key", "INTEGER PRIMARY KEY", 0, 250}, {"text primary key", "TEXT PRIMARY KEY", 0, 3200},
			{"text primary key, depth 1000", "TEXT PRIMARY KEY", 1000, 6200}, {"text primary key, every row", "TEXT PRIMARY KEY", -1, 250}} {
			table := fmt.Sprintf("ev_%d_%d", len(tc.pk), tc.depth+1)
			db.Exec(t, fmt.Sprintf(`CREATE TABLE %s (id %s, updated_at TIMESTAMP NOT NULL, v TEXT);
CREATE INDEX %s_cursor ON %s (updated_at, id);
WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 2000)
INSERT INTO %s SELECT i, datetime('2024-05-01', '+' || i || ' seconds'), 'v' FROM g`, table, tc.pk, table, table, table))
			r := step(t, open(t, db, sqltable.Config{Table: table, BookmarkKeys: []string{"updated_at", "id"}, RegressionRows: tc.depth}), nil)
			if n := len(r.ex.Cursor); n > tc.most || (tc.depth >= 0 && tc.pk != "INTEGER PRIMARY KEY") != strings.Contains(string(r.ex.Cursor), `"region"`) {
				t.Errorf("%s: cursor of %d bytes (at most %d): %.300s", tc.name, n, tc.most, r.ex.Cursor)
			} else {
				t.Logf("%s: cursor of %d bytes", tc.name, n)
			}
		}
	})
}

// TestRegressionFurtherBack: with a text primary key at the default depth
// the check keeps the identities of the 500 to 1,000 rows nearest the
// boundary and counts the rest of the region: a row that appears there
// while another leaves is the documented limit (not reported); near the
// boundary it is reported.
func TestRegressionFurtherBack(t *testing.T) {
	sqltest.EachOf(t, sqltest.Kinds[2:], func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, `CREATE TABLE ev (id TEXT PRIMARY KEY, updated_at TIMESTAMP NOT NULL, v TEXT);
CREATE INDEX ev_cursor ON ev (updated_at, id);
WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 3000)
INSERT INTO ev SELECT printf('k%05d', i), datetime('2024-05-01', '+' || (i * 10) || ' seconds'), 'v' FROM g`)
		s := open(t, db, sqltable.Config{Table: "ev", BookmarkKeys: []string{"updated_at", "id"}})
		r1 := step(t, s, nil)
		at := func(id string, secs int) {
			db.Exec(t, fmt.Sprintf("INSERT INTO ev VALUES ('%s', datetime('2024-05-01', '+%d seconds'), 'v')", id, secs))
		}
		leave := func(i int) {
			db.Exec(t, fmt.Sprintf("UPDATE ev SET updated_at = datetime('2024-05-02', '+%d seconds') WHERE id = 'k%05d'", i, i))
		}
		leave(100)
		at("far", 1005) // behind the 2,000 rows nearest the mark
		r2 := step(t, s, r1.ex.Cursor)
		leave(2900)
		at("near", 29005) // among the 100 rows nearest the mark
		r3 := step(t, s, r2.ex.Cursor)
		at("far 2", 1015) // counted: reported when nothing leaves
		r4 := step(t, s, r3.ex.Cursor)
		leave(2950)
		at("near 2", 29105)
		at("far 3", 1025)
		r5 := step(t, s, r4.ex.Cursor)
		r6 := step(t, s, r5.ex.Cursor)
		if got := regressions(r2, r3, r4, r5, r6); !slices.Equal(got, []int64{0, 1, 1, 2, 0}) {
			t.Fatalf("further back, near the mark, further back alone, both: regressions %v, want [0 1 1 2 0] (the first is the documented limit)", got)
		}
	})
}
