package sqltable_test

import (
	"fmt"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

func TestInsertsAcrossRuns(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, "CREATE TABLE orders (id {pk}, v {text})"))
		insertIDs(t, db, "orders", 1, 2, 3, 4, 5)
		s := open(t, db, sqltable.Config{Table: "orders"})
		equal(t, "keys default to the primary key", s.Keys(), []string{"id"})

		r1 := step(t, s, nil)
		equal(t, "run 1", ints(r1.rows, 0), seq(1, 5))
		if r1.plan.NewRows != 5 || !r1.plan.Pending() {
			t.Fatalf("run 1 plan: NewRows %d Pending %t, want 5", r1.plan.NewRows, r1.plan.Pending())
		}

		insertIDs(t, db, "orders", 6, 7, 8)
		r2 := step(t, s, r1.ex.Cursor)
		equal(t, "run 2", ints(r2.rows, 0), seq(6, 8))
		equal(t, "run 2 values", column(r2.rows, 1), []string{"v6", "v7", "v8"})

		r3 := step(t, s, r2.ex.Cursor)
		if r3.plan.Pending() || len(r3.rows) != 0 || len(r3.ex.Files) != 0 {
			t.Fatalf("run 3: pending %t, rows %v, files %v; want nothing", r3.plan.Pending(), r3.rows, r3.ex.Files)
		}
		if r3.plan.Regressions != 0 {
			t.Fatalf("run 3: %d regressions, want 0", r3.plan.Regressions)
		}
		// An unchanged cursor reads the same nothing again.
		r4 := step(t, s, r3.ex.Cursor)
		if len(r4.rows) != 0 {
			t.Fatalf("run 4 read %v", r4.rows)
		}
	})
}

func TestCompositeKeys(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, "CREATE TABLE pairs (a {int} NOT NULL, b {int} NOT NULL, v {text}, PRIMARY KEY (a, b))"))
		ins := func(pairs ...[2]int) {
			for _, p := range pairs {
				db.Exec(t, fmt.Sprintf("INSERT INTO pairs (a, b, v) VALUES (%d, %d, '%d-%d')", p[0], p[1], p[0], p[1]))
			}
		}
		ins([2]int{1, 1}, [2]int{1, 2}, [2]int{2, 1})
		s := open(t, db, sqltable.Config{Table: "pairs"})
		equal(t, "keys", s.Keys(), []string{"a", "b"})
		if len(s.Notes()) != 0 {
			t.Fatalf("notes %v, want none (the primary key is an index on the keys)", s.Notes())
		}
		r1 := step(t, s, nil)
		equal(t, "run 1", column(r1.rows, 2), []string{"1-1", "1-2", "2-1"})

		// (2, 2) and (3, 0) are after the mark (2, 1) in tuple order,
		// though 0 < 1: the comparison is on the tuple.
		ins([2]int{2, 2}, [2]int{3, 0})
		r2 := step(t, s, r1.ex.Cursor)
		equal(t, "run 2", column(r2.rows, 2), []string{"2-2", "3-0"})

		// bounded_rows splits rows sharing the first key across runs.
		ins([2]int{5, 1}, [2]int{5, 2}, [2]int{5, 3})
		b := open(t, db, sqltable.Config{Table: "pairs", BoundedRows: 1})
		cur := r2.ex.Cursor
		var got []string
		for i := 0; i < 3; i++ {
			r := step(t, b, cur)
			if !r.plan.Bounded && i < 2 {
				t.Fatalf("bounded run %d: plan not bounded", i)
			}
			if len(r.rows) != 1 {
				t.Fatalf("bounded run %d read %v, want 1 row", i, r.rows)
			}
			got = append(got, r.rows[0][2])
			cur = r.ex.Cursor
		}
		equal(t, "bounded runs", got, []string{"5-1", "5-2", "5-3"})
		if r := step(t, b, cur); len(r.rows) != 0 {
			t.Fatalf("after the bounded runs: read %v", r.rows)
		}
	})
}

func TestDescendingKeys(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, "CREATE TABLE countdown (id {pk}, v {text})"))
		insertIDs(t, db, "countdown", 100, 90, 80)
		s := open(t, db, sqltable.Config{Table: "countdown", SortOrder: "desc"})
		r1 := step(t, s, nil)
		equal(t, "run 1", ints(r1.rows, 0), []string{"80", "90", "100"})

		// New keys are smaller; 85 lands behind the mark (80) in key
		// order and is reported, not read.
		insertIDs(t, db, "countdown", 70, 60, 85)
		r2 := step(t, s, r1.ex.Cursor)
		equal(t, "run 2", ints(r2.rows, 0), []string{"60", "70"})
		if r2.plan.Regressions != 1 {
			t.Fatalf("run 2: %d regressions, want 1 (key 85)", r2.plan.Regressions)
		}
		r3 := step(t, s, r2.ex.Cursor)
		if len(r3.rows) != 0 || r3.plan.Regressions != 0 {
			t.Fatalf("run 3: rows %v regressions %d, want none (85 is reported once)", r3.rows, r3.plan.Regressions)
		}

		// bounded_rows takes the largest remaining keys first.
		insertIDs(t, db, "countdown", 50, 40, 30)
		b := open(t, db, sqltable.Config{Table: "countdown", SortOrder: "desc", BoundedRows: 2})
		r4 := step(t, b, r3.ex.Cursor)
		equal(t, "bounded desc run", ints(r4.rows, 0), []string{"40", "50"})
		r5 := step(t, b, r4.ex.Cursor)
		equal(t, "next bounded desc run", ints(r5.rows, 0), []string{"30"})
	})
}

func TestUpdatedAtCursor(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, `CREATE TABLE items (id {pk}, updated_at {ts} NOT NULL, v {text});
CREATE INDEX items_cursor ON items (updated_at, id)`))
		// 10 rows share one timestamp: bounded runs split them by id.
		for i := 1; i <= 10; i++ {
			db.Exec(t, fmt.Sprintf("INSERT INTO items (id, updated_at, v) VALUES (%d, '2024-05-01 10:00:00.000000', 'a%d')", i, i))
		}
		s := open(t, db, sqltable.Config{Table: "items", BookmarkKeys: []string{"updated_at", "id"}, BoundedRows: 4})
		var cur []byte
		var got []string
		for _, want := range []int{4, 4, 2} {
			r := step(t, s, cur)
			if len(r.rows) != want {
				t.Fatalf("bounded run read %d rows, want %d: %v", len(r.rows), want, r.rows)
			}
			got = append(got, column(r.rows, 0)...)
			cur = r.ex.Cursor
		}
		equal(t, "all rows once", sortInts(got), seq(1, 10))

		// An update moves the row past the mark: its new version is read.
		db.Exec(t, "UPDATE items SET updated_at = '2024-05-01 10:05:00.000000', v = 'b3' WHERE id = 3")
		r := step(t, s, cur)
		if len(r.rows) != 1 || r.rows[0][0] != "3" || r.rows[0][2] != "b3" {
			t.Fatalf("after the update: read %v, want the new version of row 3", r.rows)
		}
		if r := step(t, s, r.ex.Cursor); len(r.rows) != 0 {
			t.Fatalf("read %v again", r.rows)
		}
	})
}
