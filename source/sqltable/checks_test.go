package sqltable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

func TestNullKeys(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, `CREATE TABLE t (id {pk}, k {int}, v {text});
CREATE INDEX t_k ON t (k);
INSERT INTO t (id, k, v) VALUES (1, 10, 'a');
INSERT INTO t (id, k, v) VALUES (2, NULL, 'b');
INSERT INTO t (id, k, v) VALUES (3, 30, 'c');
INSERT INTO t (id, k, v) VALUES (4, NULL, 'd')`))
		s := open(t, db, sqltable.Config{Table: "t", BookmarkKeys: []string{"k"}})
		_, err := s.Plan(context.Background(), nil)
		var ne *sqltable.NullKeyError
		if !errors.As(err, &ne) || ne.Rows != 2 {
			t.Fatalf("Plan: %v; want a NullKeyError counting 2 rows", err)
		}
		if !strings.Contains(err.Error(), "2 rows have a NULL bookmark key (k)") || !strings.Contains(err.Error(), "table t") {
			t.Fatalf("message %q does not name the table, key and count", err)
		}

		skip := open(t, db, sqltable.Config{Table: "t", BookmarkKeys: []string{"k"}, OnNullKey: "skip"})
		r := step(t, skip, nil)
		if r.plan.NullKeys != 2 {
			t.Fatalf("NullKeys %d, want 2", r.plan.NullKeys)
		}
		equal(t, "rows read", column(r.rows, 2), []string{"a", "c"})
	})
}

func TestRegressionWithoutLookback(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, "CREATE TABLE t (id {pk}, v {text})"))
		insertIDs(t, db, "t", 1, 2, 3, 4, 6, 7, 8, 9, 10)
		s := open(t, db, sqltable.Config{Table: "t"})
		r1 := step(t, s, nil)
		// 5 arrives behind the mark (10): a non-monotonic key.
		insertIDs(t, db, "t", 5, 11)
		r2 := step(t, s, r1.ex.Cursor)
		equal(t, "run 2", ints(r2.rows, 0), []string{"11"})
		if r2.plan.Regressions != 1 {
			t.Fatalf("run 2: regressions %d, want 1", r2.plan.Regressions)
		}
		r3 := step(t, s, r2.ex.Cursor)
		if r3.plan.Regressions != 0 {
			t.Fatalf("run 3: regressions %d, want 0 (reported once)", r3.plan.Regressions)
		}

		// With the check off nothing is counted; turned on again, it starts
		// a new baseline instead of reporting everything behind the mark.
		off := open(t, db, sqltable.Config{Table: "t", NoRegressionCheck: true})
		insertIDs(t, db, "t", 0, 12)
		r4 := step(t, off, r3.ex.Cursor)
		equal(t, "run 4", ints(r4.rows, 0), []string{"12"})
		if r4.plan.Regressions != 0 {
			t.Fatalf("run 4 (check off): regressions %d", r4.plan.Regressions)
		}
		r5 := step(t, s, r4.ex.Cursor)
		insertIDs(t, db, "t", -1)
		r6 := step(t, s, r5.ex.Cursor)
		if r5.plan.Regressions != 0 || r6.plan.Regressions != 1 {
			t.Fatalf("check back on: regressions %d then %d, want 0 then 1", r5.plan.Regressions, r6.plan.Regressions)
		}
	})
}

func TestOpenErrors(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, ddl(db.Kind, `CREATE TABLE nopk (a {int}, v {text});
CREATE TABLE noidx (id {pk}, k {int}, v {text})`))
		ctx := context.Background()
		base := sqltable.Config{Ctx: "src", Connection: db.Connection, PasswordEnv: db.PasswordEnv}
		for _, tc := range []struct {
			name string
			edit func(*sqltable.Config)
			want string
		}{
			{"missing table", func(c *sqltable.Config) { c.Table = "nope" }, "table nope: no such table"},
			{"no primary key", func(c *sqltable.Config) { c.Table = "nopk" }, "no primary key: name the columns"},
			{"unknown key", func(c *sqltable.Config) { c.Table = "noidx"; c.BookmarkKeys = []string{"zz"} }, "bookmark key zz is not a column"},
			{"query without keys", func(c *sqltable.Config) { c.Query = "SELECT * FROM noidx" }, "a query source needs bookmark_keys"},
			{"duration on an integer", func(c *sqltable.Config) { c.Table = "noidx"; c.Lookback = "10m" }, "is a duration but key id is an integer"},
		} {
			cfg := base
			tc.edit(&cfg)
			_, err := sqltable.Open(ctx, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
			}
			if err != nil && db.Password != "" && strings.Contains(err.Error(), db.Password) {
				t.Errorf("%s: the password appears in %q", tc.name, err)
			}
		}
		s := open(t, db, sqltable.Config{Table: "noidx", BookmarkKeys: []string{"k"}})
		if len(s.Notes()) != 1 || !strings.Contains(s.Notes()[0], "no index starts with the bookmark keys (k)") {
			t.Fatalf("notes %v, want one about the missing index", s.Notes())
		}
		q := open(t, db, sqltable.Config{Query: "SELECT id, k FROM noidx WHERE k > 0", BookmarkKeys: []string{"id"}})
		equal(t, "query keys", q.Keys(), []string{"id"})
	})
}

func TestPasswordNeverShown(t *testing.T) {
	sqltest.EachOf(t, sqltest.Kinds[:2], func(t *testing.T, db *sqltest.DB) {
		ctx := context.Background()
		// A wrong database name: the server's error must not carry the
		// password, nor must ours.
		cfg := sqltable.Config{Ctx: "src", Connection: strings.Replace(db.Connection, db.Name, "no_such_db", 1),
			PasswordEnv: db.PasswordEnv, Table: "t"}
		_, err := sqltable.Open(ctx, cfg)
		if err == nil || strings.Contains(err.Error(), db.Password) {
			t.Fatalf("Open on a missing database: %v", err)
		}
		// An inline password is refused without being echoed.
		inline := strings.Replace(db.Connection, "@", ":"+db.Password+"@", 1)
		_, err = sqltable.Open(ctx, sqltable.Config{Ctx: "src", Connection: inline, Table: "t"})
		if err == nil || !strings.Contains(err.Error(), "must not contain a password") || strings.Contains(err.Error(), db.Password) {
			t.Fatalf("inline password: %v", err)
		}
		// An unset variable is named.
		_, err = sqltable.Open(ctx, sqltable.Config{Ctx: "src", Connection: db.Connection, PasswordEnv: "TIDEMARK_NO_SUCH_VAR", Table: "t"})
		if err == nil || !strings.Contains(err.Error(), "TIDEMARK_NO_SUCH_VAR is not set") {
			t.Fatalf("unset password_env: %v", err)
		}
	})
}

// TestRegressionDepth checks the regression check's bounded region: with
// RegressionRows 5 it sees a row that appears near the boundary but not
// one far behind, which the full check (-1) sees too; as the region's floor
// moves up over later runs, nothing is reported twice or made up.
func TestRegressionDepth(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		for _, tc := range []struct {
			name, lookback string
		}{{"no lookback", ""}, {"lookback", "10"}} {
			for _, depth := range []int64{5, -1} {
				table := fmt.Sprintf("d_%d_%t", max(depth, 0), tc.lookback != "")
				db.Exec(t, ddl(db.Kind, "CREATE TABLE "+table+" (id {pk}, v {text})"))
				var ids []int
				for i := 10; i <= 200; i += 10 {
					ids = append(ids, i)
				}
				insertIDs(t, db, table, ids...)
				s := open(t, db, sqltable.Config{Table: table, Lookback: tc.lookback, RegressionRows: depth})
				r1 := step(t, s, nil)

				// 175 lands near the boundary, 15 far behind it.
				insertIDs(t, db, table, 175, 15, 210)
				r2 := step(t, s, r1.ex.Cursor)
				want := int64(1)
				if depth < 0 {
					want = 2
				}
				if r2.plan.Regressions != want {
					t.Fatalf("%s, depth %d, run 2: regressions %d, want %d", tc.name, depth, r2.plan.Regressions, want)
				}

				// Many new rows move the region's floor up.
				insertIDs(t, db, table, 220, 230, 240, 250, 260, 270, 280, 290, 300)
				r3 := step(t, s, r2.ex.Cursor)
				insertIDs(t, db, table, 265)
				r4 := step(t, s, r3.ex.Cursor)
				r5 := step(t, s, r4.ex.Cursor)
				got := []int64{r3.plan.Regressions, r4.plan.Regressions, r5.plan.Regressions}
				if !slices.Equal(got, []int64{0, 1, 0}) {
					t.Fatalf("%s, depth %d, runs 3-5: regressions %v, want [0 1 0]", tc.name, depth, got)
				}

				// Off for a run, then on again: the new baseline starts near
				// the boundary (a floor, not every row behind it), and it
				// counts from the next run on.
				off := open(t, db, sqltable.Config{Table: table, Lookback: tc.lookback, RegressionRows: depth, NoRegressionCheck: true})
				insertIDs(t, db, table, 310)
				r6 := step(t, off, r5.ex.Cursor)
				insertIDs(t, db, table, 320)
				r7 := step(t, s, r6.ex.Cursor)
				var cur struct {
					Behind *int64  `json:"behind"`
					Floor  *string `json:"floor"`
				}
				if err := json.Unmarshal(r7.ex.Cursor, &cur); err != nil {
					t.Fatal(err)
				}
				if cur.Behind == nil || (depth > 0) != (cur.Floor != nil) {
					t.Fatalf("%s, depth %d: after the check came back on, cursor %s; want a baseline, with a floor when the depth is bounded",
						tc.name, depth, r7.ex.Cursor)
				}
				insertIDs(t, db, table, 285)
				r8 := step(t, s, r7.ex.Cursor)
				if r7.plan.Regressions != 0 || r8.plan.Regressions != 1 {
					t.Fatalf("%s, depth %d: check back on: regressions %d then %d, want 0 then 1", tc.name, depth, r7.plan.Regressions, r8.plan.Regressions)
				}
			}
		}
	})
}
