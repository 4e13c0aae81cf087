package sqltable_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

// lateInsert inserts a row whose transaction commits after a run read past
// its key: on servers, a transaction held open while another commits a
// higher key and the run happens; SQLite has one writer at a time, so
// there the row simply arrives after the run with its lower key. It
// returns the function that runs the given run between insert and commit.
func lateInsert(t *testing.T, db *sqltest.DB, stmts []string, during func()) {
	t.Helper()
	if db.Kind == sqldb.SQLite {
		during()
		for _, s := range stmts {
			db.Exec(t, s)
		}
		return
	}
	h := db.Hold(t)
	for _, s := range stmts {
		h.Exec(s)
	}
	during()
	h.Commit()
}

func TestLateCommitDeliveredOnce(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, "CREATE TABLE orders (id {pk}, v {text})"))
		insertIDs(t, db, "orders", 1, 2, 3, 4)
		s := open(t, db, sqltable.Config{Table: "orders", Lookback: "100"})
		r0 := step(t, s, nil)
		equal(t, "run 0", ints(r0.rows, 0), seq(1, 4))

		// Connection A inserts 5 and holds its transaction; B inserts 6
		// and commits; a run reads past 5.
		var r1 run
		lateInsert(t, db, []string{"INSERT INTO orders (id, v) VALUES (5, 'v5')"}, func() {
			insertIDs(t, db, "orders", 6)
			r1 = step(t, s, r0.ex.Cursor)
		})
		equal(t, "run 1 (5 not committed yet)", ints(r1.rows, 0), []string{"6"})

		r2 := step(t, s, r1.ex.Cursor)
		equal(t, "run 2 (5 committed late)", ints(r2.rows, 0), []string{"5"})
		if r2.plan.Late != 1 || r2.ex.Late != 1 || r2.plan.Regressions != 0 {
			t.Fatalf("run 2: plan late %d, extract late %d, regressions %d; want 1, 1, 0", r2.plan.Late, r2.ex.Late, r2.plan.Regressions)
		}
		r3 := step(t, s, r2.ex.Cursor)
		if len(r3.rows) != 0 || r3.plan.Pending() {
			t.Fatalf("run 3 read %v (pending %t): the late row must be delivered exactly once", r3.rows, r3.plan.Pending())
		}

		// A late row behind the window (7 - 100) is not read but reported,
		// once.
		insertIDs(t, db, "orders", 7)
		r4 := step(t, s, r3.ex.Cursor)
		insertIDs(t, db, "orders", -500)
		r5 := step(t, s, r4.ex.Cursor)
		if len(r5.rows) != 0 || r5.plan.Regressions != 1 {
			t.Fatalf("run 5: rows %v regressions %d; want none read, 1 reported", r5.rows, r5.plan.Regressions)
		}
		r6 := step(t, s, r5.ex.Cursor)
		if r6.plan.Regressions != 0 {
			t.Fatalf("run 6: regressions %d, want 0", r6.plan.Regressions)
		}
	})
}

func TestLateCommitTimeKeyAndTies(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, `CREATE TABLE events (id {pk}, ts {ts} NOT NULL, v {text});
CREATE INDEX events_ts ON events (ts)`))
		ins := func(id int, ts string) string {
			return fmt.Sprintf("INSERT INTO events (id, ts, v) VALUES (%d, '2024-05-01 %s', 'e%d')", id, ts, id)
		}
		db.Exec(t, ins(1, "10:00:00"))
		db.Exec(t, ins(2, "10:01:00"))
		db.Exec(t, ins(3, "10:01:00"))
		s := open(t, db, sqltable.Config{Table: "events", BookmarkKeys: []string{"ts"}, Lookback: "10m"})
		r1 := step(t, s, nil)
		equal(t, "run 1", ints(r1.rows, 0), seq(1, 3))

		// 4 ties with the mark (10:01), 5 is older but within 10 minutes;
		// both commit after run 2 read 6.
		var r2 run
		lateInsert(t, db, []string{ins(4, "10:01:00"), ins(5, "09:55:00")}, func() {
			db.Exec(t, ins(6, "10:02:00"))
			r2 = step(t, s, r1.ex.Cursor)
		})
		equal(t, "run 2", ints(r2.rows, 0), []string{"6"})
		r3 := step(t, s, r2.ex.Cursor)
		equal(t, "run 3 (late rows)", ints(r3.rows, 0), []string{"4", "5"})
		r4 := step(t, s, r3.ex.Cursor)
		if len(r4.rows) != 0 {
			t.Fatalf("run 4 read %v again", r4.rows)
		}
		// 09:40 is more than 10 minutes behind the mark (10:02).
		db.Exec(t, ins(7, "09:40:00"))
		r5 := step(t, s, r4.ex.Cursor)
		if len(r5.rows) != 0 || r5.plan.Regressions != 1 {
			t.Fatalf("run 5: rows %v, regressions %d; want none read, 1 reported", r5.rows, r5.plan.Regressions)
		}
	})
}

func TestReadRanges(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, "CREATE TABLE orders (id {pk}, v {text})"))
		insertIDs(t, db, "orders", 1, 2, 3)
		s := open(t, db, sqltable.Config{Table: "orders", Lookback: "10"})
		r1 := step(t, s, nil)
		insertIDs(t, db, "orders", 5, 6)
		r2 := step(t, s, r1.ex.Cursor)
		insertIDs(t, db, "orders", 4, 7) // 4 is late (behind the mark 6, within 10)
		r3 := step(t, s, r2.ex.Cursor)
		equal(t, "run 3", ints(r3.rows, 0), []string{"4", "7"})
		insertIDs(t, db, "orders", 8)
		step(t, s, r3.ex.Cursor)

		ctx := context.Background()
		for _, tc := range []struct {
			name   string
			ranges [][]byte
			want   []string
		}{
			{"run 3", [][]byte{r3.ex.Range}, []string{"4", "7"}},
			// 4 committed into run 2's key span after run 2: read with it.
			{"runs 1-2", [][]byte{r1.ex.Range, r2.ex.Range}, []string{"1", "2", "3", "4", "5", "6"}},
			// ... and once, though run 3 lists it as late.
			{"runs 2-3", [][]byte{r2.ex.Range, r3.ex.Range}, []string{"4", "5", "6", "7"}},
		} {
			ex, err := s.ReadRanges(ctx, tc.ranges, t.TempDir())
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if ex.Cursor != nil || ex.Range != nil {
				t.Fatalf("%s: ReadRanges returned a cursor or range", tc.name)
			}
			equal(t, tc.name, ints(readBack(t, ex), 0), tc.want)
		}
		// Rows are read as they are now.
		db.Exec(t, "UPDATE orders SET v = 'changed' WHERE id = 7")
		db.Exec(t, "DELETE FROM orders WHERE id = 4")
		ex, err := s.ReadRanges(ctx, [][]byte{r3.ex.Range}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		rows := readBack(t, ex)
		if len(rows) != 1 || rows[0][0] != "7" || rows[0][1] != "changed" {
			t.Fatalf("after update and delete: %v, want [[7 changed]]", rows)
		}
	})
}

func TestLateCommitDescendingKeys(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, "CREATE TABLE countdown (id {pk}, v {text})"))
		insertIDs(t, db, "countdown", 100, 90)
		s := open(t, db, sqltable.Config{Table: "countdown", SortOrder: "desc", Lookback: "10"})
		r1 := step(t, s, nil)
		// 93 commits after run 2 moved the mark to 85: within 10 of it.
		var r2 run
		lateInsert(t, db, []string{"INSERT INTO countdown (id, v) VALUES (93, 'v93')"}, func() {
			insertIDs(t, db, "countdown", 85)
			r2 = step(t, s, r1.ex.Cursor)
		})
		equal(t, "run 2", ints(r2.rows, 0), []string{"85"})
		insertIDs(t, db, "countdown", 99) // behind the window (85 + 10 = 95)
		r3 := step(t, s, r2.ex.Cursor)
		equal(t, "run 3 (93 late)", ints(r3.rows, 0), []string{"93"})
		if r3.plan.Regressions != 1 {
			t.Fatalf("run 3: regressions %d, want 1 (key 99)", r3.plan.Regressions)
		}
		if r4 := step(t, s, r3.ex.Cursor); len(r4.rows) != 0 || r4.plan.Regressions != 0 {
			t.Fatalf("run 4: rows %v regressions %d", r4.rows, r4.plan.Regressions)
		}
	})
}
