package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// TestSQLMixedWithFiles: one job reads a SQL table and a folder of CSV
// files, unions them in a transform and writes Parquet files and (on
// servers) a table. Runs where only one of the sources has something new,
// and a run killed after its commit, still deliver every row exactly once.
func TestSQLMixedWithFiles(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlAllKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		landing := filepath.Join(f.dir, "landing")
		var b strings.Builder
		fmt.Fprintf(&b, "job: mixed\nsources:\n")
		fmt.Fprintf(&b, "  - ctx: landing\n    path: %q\n    format: csv\n    options: {header: true}\n", landing)
		fmt.Fprintf(&b, "  - ctx: orders_db\n    connection: %q\n    table: orders\n", f.conn)
		if f.password != "" {
			fmt.Fprintf(&b, "    password_env: %s\n", sqlPasswordEnv)
		}
		b.WriteString(`transforms:
  all_orders: |
    SELECT CAST(id AS BIGINT) AS id, CAST(v AS VARCHAR) AS v, CAST(amount AS BIGINT) AS amount, 'db' AS origin FROM orders_db
    UNION ALL
    SELECT CAST(id AS BIGINT), CAST(v AS VARCHAR), CAST(amount AS BIGINT), 'file' FROM landing
sinks:
`)
		fmt.Fprintf(&b, "  - ctx: files\n    path: %q\n    format: parquet\n", f.out)
		table := f.kind != sqldb.SQLite
		if table {
			fmt.Fprintf(&b, "  - ctx: rows_out\n    connection: %q\n    password_env: %s\n    table: orders_out\n    mode: append\n",
				f.conn, sqlPasswordEnv)
		}
		writeFile(t, f.jobPath, []byte(b.String()))
		addCSV := func(name string, from, to int64) {
			var c strings.Builder
			c.WriteString("id,v,amount\n")
			for id := from; id <= to; id++ {
				fmt.Fprintf(&c, "%d,f%d,%d\n", id, id, id*10)
			}
			writeFile(t, filepath.Join(landing, name), []byte(c.String()))
		}
		check := func(what string, want []int64) {
			t.Helper()
			assertIDSet(t, what+": files", f.fileIDs(), want)
			if table {
				assertIDSet(t, what+": table orders_out", f.tableIDs("orders_out"), want)
			}
		}

		f.insertOrders(idRange(1, 10)...)
		addCSV("a.csv", 1001, 1005)
		s := f.mustRun()
		assertIDSet(t, "run 1", f.fileIDsOfRun(s.RunID), joinIDs(idRange(1, 10), idRange(1001, 1005)))

		f.insertOrders(idRange(11, 15)...) // only the table has something new
		s = f.mustRun()
		assertIDSet(t, "run 2 (table rows only)", f.fileIDsOfRun(s.RunID), idRange(11, 15))

		addCSV("b.csv", 1006, 1010) // only the folder has something new
		s = f.mustRun()
		assertIDSet(t, "run 3 (a file only)", f.fileIDsOfRun(s.RunID), idRange(1006, 1010))
		byOrigin := map[string]int{}
		for _, r := range f.fileRows("origin") {
			byOrigin[r[0]]++
		}
		if byOrigin["db"] != 15 || byOrigin["file"] != 10 || len(byOrigin) != 2 {
			t.Errorf("rows by origin: got %v, want db 15, file 10", byOrigin)
		}

		f.insertOrders(idRange(16, 20)...)
		addCSV("c.csv", 1011, 1015)
		f.killedAt("after-commit")
		s = f.mustRun()
		assertIDSet(t, "rerun after a kill after the commit", f.fileIDsOfRun(s.RunID), nil)
		check("after the rerun", joinIDs(idRange(1, 20), idRange(1001, 1015)))

		s = f.mustRun()
		assertIDSet(t, "run with nothing new", f.fileIDsOfRun(s.RunID), nil)
		check("at the end", joinIDs(idRange(1, 20), idRange(1001, 1015)))
	})
}

// TestSQLEngineFailsBeforeReadingTable: a table source's rows reach the
// engine through a pipe while they are read. When the engine fails on an
// earlier source (a truncated Parquet file) before it opens that pipe, the
// run still ends at once with the file named, commits nothing, and the
// next run, with the file replaced, delivers every row once.
func TestSQLEngineFailsBeforeReadingTable(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlAllKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		landing := filepath.Join(f.dir, "landing")
		other := filepath.Join(f.dir, "out-landing")
		var b strings.Builder
		fmt.Fprintf(&b, "job: fails-first\nsources:\n")
		fmt.Fprintf(&b, "  - ctx: landing\n    path: %q\n    format: parquet\n", landing)
		fmt.Fprintf(&b, "  - ctx: orders_db\n    connection: %q\n    table: orders\n", f.conn)
		if f.password != "" {
			fmt.Fprintf(&b, "    password_env: %s\n", sqlPasswordEnv)
		}
		fmt.Fprintf(&b, "sinks:\n  - ctx: landing_out\n    from: landing\n    path: %q\n    format: parquet\n", other)
		fmt.Fprintf(&b, "  - ctx: files\n    from: orders_db\n    path: %q\n    format: parquet\n", f.out)
		writeFile(t, f.jobPath, []byte(b.String()))

		recs := (&gen{}).records(5)
		whole := parquetBytes(t, recs)
		writeFile(t, filepath.Join(landing, "a.parquet"), whole[:len(whole)/2])
		f.insertOrders(idRange(1, 2000)...)
		before := f.bookmarkOrEmpty("fails-first") // no state before the first run
		_, r := f.runExpect(1, nil)
		assertMentions(t, r, "a.parquet")
		if r.took > time.Minute {
			t.Errorf("the failed run took %s", r.took)
		}
		if after := f.bookmark(); after != before {
			t.Errorf("the failed run changed the bookmark:\n%s\nwant\n%s", after, before)
		}
		assertIDSet(t, "after the failed run", f.fileIDs(), nil)

		writeFile(t, filepath.Join(landing, "a.parquet"), whole)
		s := f.mustRun()
		assertIDSet(t, "run after the fix", f.fileIDsOfRun(s.RunID), idRange(1, 2000))
		s = f.mustRun()
		assertIDSet(t, "run with nothing new", f.fileIDsOfRun(s.RunID), nil)
	})
}
