package e2e

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// TestSQLTypesRoundTrip: a row of the usual column types (and one of
// NULLs) goes from a table through the engine into a sink table that
// tidemark creates on the same server: every value reads back the same
// (JSON compared as JSON).
func TestSQLTypesRoundTrip(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		var cols []string
		var jsonCols = map[string]bool{"j": true}
		switch f.kind {
		case sqldb.Postgres:
			f.exec(`CREATE TABLE typed (id bigint PRIMARY KEY, i integer, s smallint, n numeric(12,2), r double precision,
				t text, b boolean, d date, ts timestamp(6), tz timestamptz, j jsonb, by bytea, u uuid, arr integer[], tarr text[])`)
			f.exec(`INSERT INTO typed VALUES (1, -42, 7, 12345.67, 0.1, E'héllo, "quoted"\nline\\back', true, '2024-02-29',
				'2024-05-01 10:11:12.123456', '2024-05-01 10:11:12.5+02', '{"a": [1, 2], "b": "x"}', '\xdeadbeef00',
				'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{1,2,3}', '{"a b","c,d",""}')`)
			f.exec(`INSERT INTO typed (id) VALUES (2)`)
			cols = []string{"id", "i", "s", "n", "r", "t", "b", "d", "ts", "tz", "j", "by", "u", "arr", "tarr"}
		case sqldb.MySQL:
			f.exec(`CREATE TABLE typed (id bigint PRIMARY KEY, i int, ub bigint unsigned, n decimal(12,2), r double,
				t varchar(100), d date, dt datetime(6), ts timestamp(6) NULL, j json, vb varbinary(16), e enum('x','y'))`)
			f.exec(`INSERT INTO typed VALUES (1, -42, 18446744073709551615, 12345.67, 0.1, 'héllo, "quoted"\nline\\back',
				'2024-02-29', '2024-05-01 10:11:12.123456', '2024-05-01 10:11:12.500000', '{"a": [1, 2], "b": "x"}',
				x'deadbeef00', 'y')`)
			f.exec(`INSERT INTO typed (id) VALUES (2)`)
			cols = []string{"id", "i", "ub", "n", "r", "t", "d", "dt", "ts", "j", "vb", "e"}
		}
		f.writeJob(sqlJob{src: sqlSrc{table: "typed"}, noFiles: true, table: "typed_out"})
		f.mustRun()

		for _, c := range cols {
			expr := f.txt(c)
			if c == "by" || c == "vb" {
				if f.kind == sqldb.Postgres {
					expr = "encode(" + c + ", 'hex')"
				} else {
					expr = "hex(" + c + ")"
				}
			}
			src := f.tableRows("typed", f.txt("id")+", "+expr)
			out := f.tableRows("typed_out", f.txt("id")+", "+expr)
			if len(src) != 2 || len(out) != 2 {
				t.Fatalf("column %s: source rows %v, sink rows %v; want 2 each", c, src, out)
			}
			for i := range src {
				a, b := src[i][1], out[i][1]
				if jsonCols[c] && a != "NULL" && b != "NULL" {
					var x, y any
					if json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y) {
						continue
					}
				}
				if a != b {
					t.Errorf("column %s, id %s: source %q, sink table %q", c, src[i][0], a, b)
				}
			}
		}
		if t.Failed() || os.Getenv("E2E_DEBUG") != "" {
			t.Logf("sink table columns: %v", f.columnTypes("typed_out"))
			t.Logf("sink rows: %v", f.tableRows("typed_out", f.txt(cols...)))
		}
	})
}

// columnTypes lists a table's columns and types from information_schema.
func (f *sqlFixture) columnTypes(table string) string {
	f.t.Helper()
	q := "SELECT column_name || ' ' || data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position"
	if f.kind == sqldb.MySQL {
		q = "SELECT CONCAT(column_name, ' ', column_type) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position"
	}
	return strings.Join(f.db.Strings(f.t, q, table), ", ")
}
