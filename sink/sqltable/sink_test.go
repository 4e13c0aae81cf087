package sqltable_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/sink/sqltable"
)

var servers = []sqldb.Kind{sqldb.Postgres, sqldb.MySQL}

// parquet writes the rows of a DuckDB query to a Parquet file, as the
// engine would for a sink.
func parquet(t *testing.T, query string) string {
	t.Helper()
	d, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	path := filepath.Join(t.TempDir(), "part-0.parquet")
	if _, err := d.Exec("COPY (" + query + ") TO '" + path + "' (FORMAT parquet)"); err != nil {
		t.Fatalf("writing parquet: %v", err)
	}
	return path
}

func openSink(t *testing.T, db *sqltest.DB, cfg sqltable.SinkConfig) *sqltable.Sink {
	t.Helper()
	cfg.Connection, cfg.PasswordEnv = db.Connection, db.PasswordEnv
	if cfg.Ctx == "" {
		cfg.Ctx = "out"
	}
	k, err := sqltable.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// load stages and publishes one run of rows given as a DuckDB query.
func load(t *testing.T, k *sqltable.Sink, run, query string) {
	t.Helper()
	ctx := context.Background()
	files := []string{}
	if query != "" {
		files = append(files, parquet(t, query))
	}
	if _, err := k.Stage(ctx, run, files, nil); err != nil {
		t.Fatalf("Stage %s: %v", run, err)
	}
	if err := k.Publish(ctx, "job", run); err != nil {
		t.Fatalf("Publish %s: %v", run, err)
	}
}

// contents lists the target's rows as "id:v" sorted by id.
func contents(t *testing.T, db *sqltest.DB, table string) []string {
	t.Helper()
	concat := "CAST(id AS VARCHAR(20)) || ':' || coalesce(v, 'NULL')"
	if db.Kind == sqldb.MySQL {
		concat = "CONCAT(id, ':', coalesce(v, 'NULL'))"
	}
	return db.Strings(t, "SELECT "+concat+" FROM "+db.Q(table)+" ORDER BY id")
}

func TestSinkAppend(t *testing.T) {
	sqltest.EachOf(t, servers, func(t *testing.T, db *sqltest.DB) {
		ctx := context.Background()
		k := openSink(t, db, sqltable.SinkConfig{Table: "out"})
		load(t, k, "20260101T000000Z-aaaaaa", "SELECT * FROM (VALUES (1, 'a'), (2, NULL), (3, '')) t(id, v)")
		equal(t, "after run 1", contents(t, db, "out"), []string{"1:a", "2:NULL", "3:"})
		// Publishing again (a roll-forward) changes nothing.
		if err := k.Publish(ctx, "job", "20260101T000000Z-aaaaaa"); err != nil {
			t.Fatal(err)
		}
		equal(t, "after publishing twice", contents(t, db, "out"), []string{"1:a", "2:NULL", "3:"})
		load(t, k, "20260101T000001Z-bbbbbb", "SELECT 4 AS id, 'd' AS v")
		equal(t, "after run 2", contents(t, db, "out"), []string{"1:a", "2:NULL", "3:", "4:d"})
		if n := db.Count(t, "SELECT count(*) FROM "+db.Q("_tidemark_runs")+" WHERE job = 'job' AND sink = 'out'"); n != 2 {
			t.Fatalf("%d markers, want 2", n)
		}
		if n := db.Count(t, "SELECT count(*) FROM "+db.Q("out")+" WHERE "+db.Q(sqltable.RunColumn)+" = '20260101T000001Z-bbbbbb'"); n != 1 {
			t.Fatalf("run 2 owns %d rows, want 1", n)
		}

		n, err := k.Purge(ctx, "job", "20260101T000001Z-bbbbbb")
		if err != nil || n != 1 {
			t.Fatalf("Purge: %d, %v; want 1 row", n, err)
		}
		equal(t, "after purging run 2", contents(t, db, "out"), []string{"1:a", "2:NULL", "3:"})
		if n, err := k.Purge(ctx, "job", "20260101T000001Z-bbbbbb"); err != nil || n != 0 {
			t.Fatalf("Purge again: %d, %v; want 0, nil", n, err)
		}
		if ok, _ := k.Published(ctx, "job", "20260101T000001Z-bbbbbb"); ok {
			t.Fatal("the purged run still has its marker")
		}
		if n := db.Count(t, stageCount(db)); n != 0 {
			t.Fatalf("%d staging tables left", n)
		}
	})
}

func stageCount(db *sqltest.DB) string {
	if db.Kind == sqldb.Postgres {
		return "SELECT count(*) FROM pg_tables WHERE tablename LIKE '\\_tidemark\\_stage\\_%'"
	}
	return "SELECT count(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '\\_tidemark\\_stage\\_%'"
}

func TestSinkMerge(t *testing.T) {
	sqltest.EachOf(t, servers, func(t *testing.T, db *sqltest.DB) {
		ctx := context.Background()
		k := openSink(t, db, sqltable.SinkConfig{Table: "m", Mode: "merge", MergeKeys: []string{"id"}})
		load(t, k, "r1", "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(id, v)")
		// 3 comes twice: the last row wins.
		run2 := "SELECT * FROM (VALUES (2, 'B', 1), (3, 'c', 2), (3, 'C', 3)) t(id, v, o) ORDER BY o"
		files := []string{parquet(t, "SELECT id, v FROM ("+run2+")")}
		if _, err := k.Stage(ctx, "r2", files, nil); err != nil {
			t.Fatal(err)
		}
		if err := k.Publish(ctx, "job", "r2"); err != nil {
			t.Fatal(err)
		}
		equal(t, "after merge", contents(t, db, "m"), []string{"1:a", "2:B", "3:C"})

		// A crash after the commit, before the stage was dropped: the
		// stage is there again, the marker too; publishing once more
		// changes nothing.
		if _, err := k.Stage(ctx, "r2", files, nil); err != nil {
			t.Fatal(err)
		}
		if err := k.Publish(ctx, "job", "r2"); err != nil {
			t.Fatal(err)
		}
		equal(t, "after the roll-forward", contents(t, db, "m"), []string{"1:a", "2:B", "3:C"})
		if n := db.Count(t, stageCount(db)); n != 0 {
			t.Fatalf("%d staging tables left after the roll-forward", n)
		}

		// Purge deletes the rows whose current version r2 wrote; the old
		// version of 2 is not restored.
		n, err := k.Purge(ctx, "job", "r2")
		if err != nil || n != 2 {
			t.Fatalf("Purge: %d, %v; want 2 rows", n, err)
		}
		equal(t, "after purging r2", contents(t, db, "m"), []string{"1:a"})
	})
}

func TestSinkOverwrite(t *testing.T) {
	sqltest.EachOf(t, servers, func(t *testing.T, db *sqltest.DB) {
		k := openSink(t, db, sqltable.SinkConfig{Table: "o", Mode: "overwrite"})
		load(t, k, "r1", "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(id, v)")
		load(t, k, "r2", "SELECT 9 AS id, 'z' AS v")
		equal(t, "after overwrite", contents(t, db, "o"), []string{"9:z"})
		load(t, k, "r3", "") // a run with no output empties the table
		equal(t, "after an empty overwrite", contents(t, db, "o"), nil)
	})
}

func TestSinkCleanupAndErrors(t *testing.T) {
	sqltest.EachOf(t, servers, func(t *testing.T, db *sqltest.DB) {
		ctx := context.Background()
		k := openSink(t, db, sqltable.SinkConfig{Table: "c"})
		for _, r := range []string{"committed", "abandoned"} {
			if _, err := k.Stage(ctx, r, []string{parquet(t, "SELECT 1 AS id, '"+r+"' AS v")}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if n := db.Count(t, stageCount(db)); n != 2 {
			t.Fatalf("%d staging tables, want 2", n)
		}
		if err := k.Cleanup(ctx, func(run string) bool { return run == "committed" }); err != nil {
			t.Fatal(err)
		}
		if n := db.Count(t, stageCount(db)); n != 1 {
			t.Fatalf("%d staging tables after Cleanup, want 1", n)
		}
		if err := k.Publish(ctx, "job", "committed"); err != nil {
			t.Fatal(err)
		}
		err := k.Publish(ctx, "job", "abandoned")
		if err == nil || !strings.Contains(err.Error(), "nothing is staged for run abandoned") {
			t.Fatalf("publishing a cleaned-up run: %v", err)
		}
		equal(t, "table", contents(t, db, "c"), []string{"1:committed"})

		// A table tidemark did not create: loads work, purge refuses.
		db.Exec(t, "CREATE TABLE theirs (id bigint, v varchar(20), extra int)")
		th := openSink(t, db, sqltable.SinkConfig{Table: "theirs"})
		load(t, th, "r1", "SELECT 5 AS id, 'x' AS v")
		equal(t, "their table", contents(t, db, "theirs"), []string{"5:x"})
		if _, err := th.Purge(ctx, "job", "r1"); !errors.Is(err, sqltable.ErrNoRunColumn) {
			t.Fatalf("Purge on a table without %s: %v", sqltable.RunColumn, err)
		}
		// merge without a unique index on the keys is refused before loading.
		mg := openSink(t, db, sqltable.SinkConfig{Table: "theirs", Mode: "merge", MergeKeys: []string{"id"}})
		if _, err := mg.Stage(ctx, "r2", []string{parquet(t, "SELECT 5 AS id, 'y' AS v")}, nil); err == nil ||
			!strings.Contains(err.Error(), "needs a unique index on exactly the merge keys (id)") {
			t.Fatalf("merge into a table without a unique index: %v", err)
		}
		// Missing output columns are named.
		if _, err := th.Stage(ctx, "r3", []string{parquet(t, "SELECT 5 AS id, 'y' AS v, 1 AS nope")}, nil); err == nil ||
			!strings.Contains(err.Error(), "lacks output columns nope") {
			t.Fatalf("loading a column the table lacks: %v", err)
		}
	})
}

func TestSinkTypes(t *testing.T) {
	sqltest.EachOf(t, servers, func(t *testing.T, db *sqltest.DB) {
		k := openSink(t, db, sqltable.SinkConfig{Table: "typed"})
		load(t, k, "r1", `SELECT 1 AS id, true AS b, 42::SMALLINT AS i2, 9223372036854775807 AS i8,
			123456789.123::DECIMAL(12,3) AS n, 0.1::DOUBLE AS d, 'a "q", '' \ x
y' AS v, DATE '2024-02-29' AS dt, TIMESTAMP '2024-05-01 10:11:12.123456' AS ts,
			TIMESTAMPTZ '2024-05-01 10:11:12.5+02' AS tz, '\x00\xFFA'::BLOB AS bl,
			'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID AS u, '{"k": [1, 2]}'::JSON AS j,
			[1, NULL, 3] AS li, ['a', 'b,c', NULL, 'q"x'] AS lt
			UNION ALL SELECT 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL`)
		var checks map[string]string
		if db.Kind == sqldb.Postgres {
			checks = map[string]string{
				"b::text": "true", "i2::text": "42", "i8::text": "9223372036854775807", "n::text": "123456789.123",
				"d::text": "0.1", "v": "a \"q\", ' \\ x\ny", "dt::text": "2024-02-29", "ts::text": "2024-05-01 10:11:12.123456",
				"tz::text": "2024-05-01 08:11:12.5+00", "encode(bl, 'hex')": "00ff41", "u::text": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
				"j->>'k'": "[1, 2]", "li::text": "{1,NULL,3}", "lt::text": `{a,"b,c",NULL,"q\"x"}`,
			}
		} else {
			checks = map[string]string{
				"b": "1", "i2": "42", "i8": "9223372036854775807", "n": "123456789.123",
				"d": "0.1", "v": "a \"q\", ' \\ x\ny", "dt": "2024-02-29", "ts": "2024-05-01 10:11:12.123456",
				"tz": "2024-05-01 08:11:12.500000", "HEX(bl)": "00FF41", "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
				"JSON_EXTRACT(j, '$.k')": "[1, 2]", "li": "[1,null,3]", "lt": `["a","b,c",null,"q\"x"]`,
			}
		}
		exprs := slices.Sorted(func(yield func(string) bool) {
			for e := range checks {
				if !yield(e) {
					return
				}
			}
		})
		for _, e := range exprs {
			got := db.Strings(t, "SELECT "+e+" FROM typed WHERE id = 1")
			if len(got) != 1 || got[0] != checks[e] {
				t.Errorf("%s: got %q, want %q", e, got, checks[e])
			}
			nul := db.Strings(t, "SELECT "+e+" FROM typed WHERE id = 2")
			if len(nul) != 1 || nul[0] != "NULL" {
				t.Errorf("%s of the NULL row: got %q", e, nul)
			}
		}
	})
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

var _ = fmt.Sprint
