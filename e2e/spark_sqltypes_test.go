package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// sqlTypesTable makes the table typed in f's database: a row of values of
// the kind's column types, one of NULLs and rows of edge values (empty
// texts and blobs, false, NaN and infinities). It returns the checks of
// known values: a DuckDB expression over the Parquet sink and its
// expected text, for the row with id 1.
func sqlTypesTable(f *sqlFixture) map[string]string {
	switch f.kind {
	case sqldb.Postgres:
		f.exec(`CREATE TYPE mood AS ENUM ('sad', 'happy')`)
		f.exec(`CREATE TABLE typed (id integer PRIMARY KEY, b boolean, bb bytea, nn numeric(10,2), u uuid, j json, jb jsonb,
			ai integer[], tx text[], iv interval, tz timestamptz, ts timestamp, tm time, e mood, s text, f float8, r real,
			d date, bi bigint, bt bit(4), m money, nb numeric, n38 numeric(38,10), tmz timetz, vb varbit, ch char(3), x xml, ip inet,
			sm smallint, ts0 timestamp(0), tzneg timestamptz)`)
		f.exec(`INSERT INTO typed VALUES (1, true, '\x00ff41', 12.34, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
			'{"a": [1, 2], "b": "x"}', '{"b": 1, "a": "y"}', '{1,NULL,3}', ARRAY['a b', 'c,d', '', 'q"x', 'back\s', 'NULL', 'x,NULL,y', E'l1\nl2'],
			'1 year 2 mons 3 days 04:05:06.789', '2024-05-01 10:11:12.5+02', '2024-05-01 10:11:12.123456', '10:11:12.5',
			'happy', E'line1\nline2 "q" back\\ ,comma', 0.1, 1.5, '2024-02-29', 9223372036854775807, B'1010', 12.34,
			123456789012345678901234567890.123456789012345678901234567890, 1234567890123456789012345678.0123456789,
			'10:11:12+05:30', B'101', 'ab', '<a>x</a>', '10.0.0.1/8', -32768, '2024-05-01 10:11:12', '1999-12-31 23:59:59.999999-08:30')`)
		f.exec(`INSERT INTO typed (id) VALUES (2)`)
		f.exec(`INSERT INTO typed (id, b, bb, s, f, r, tx, ai) VALUES (3, false, '', '', 'NaN', 'Infinity', '{}', '{}')`)
		f.exec(`INSERT INTO typed (id, b, f, r, nb) VALUES (4, false, '-Infinity', '-Infinity', 'NaN')`)
		return map[string]string{"hex(bb)": "00FF41", "CAST(b AS VARCHAR)": "true",
			"CAST(ai AS VARCHAR)": "[1, NULL, 3]", "len(tx)": "8", "tx[4] || tx[5] || tx[6] || tx[7] || tx[8]": "q\"xback\\sNULLx,NULL,yl1\nl2"}
	case sqldb.MySQL:
		f.exec(`CREATE TABLE typed (id int PRIMARY KEY, b boolean, vb varbinary(16), bl blob, n decimal(30,10), j json,
			e enum('x','y'), s text, f double, d date, dt datetime(6), ts timestamp(6) NULL, tm time(6), bt bit(4), y year,
			st set('a','b'), t1 tinyint(1), mu mediumint unsigned, fl float, big decimal(65,30), bn binary(4), lt longtext, ntm time)`)
		f.exec(`INSERT INTO typed VALUES (1, true, x'00ff41', x'00ff41', 12345678901234567890.0123456789, '{"a": [1, 2]}',
			'y', 'line1\nline2 "q" back\\ ,comma', 0.1, '2024-02-29', '2024-05-01 10:11:12.123456', '2024-05-01 10:11:12.5',
			'10:11:12.5', b'1010', 2024, 'a,b', 1, 16777215, 1.5, 12345678901234567890123456789012345.123456789012345678901234567890,
			x'0102', 'x\ty', '23:59:59')`)
		f.exec(`INSERT INTO typed (id) VALUES (2)`)
		f.exec(`INSERT INTO typed (id, b, vb, bl, s) VALUES (3, false, x'', x'', '')`)
		return map[string]string{"hex(vb)": "00FF41", "hex(bl)": "00FF41", "CAST(b AS VARCHAR)": "1"}
	default:
		f.exec(`CREATE TABLE typed (id INTEGER PRIMARY KEY, b BOOLEAN, bl BLOB, s TEXT, f REAL, n NUMERIC(10,2), d DATE, ts DATETIME,
			u UUID, j JSON, tz TIMESTAMPTZ, untyped, bi BIGINT)`)
		f.exec(`INSERT INTO typed VALUES (1, 1, x'00ff41', 'line1
line2 "q" back\ ,comma', 0.1, 12.34, '2024-02-29', '2024-05-01 10:11:12.5', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
			'{"a": 1}', '2024-05-01 10:11:12+02:00', 'free', 9223372036854775807)`)
		f.exec(`INSERT INTO typed (id, f) VALUES (4, 1e308 * 10)`)
		f.exec(`INSERT INTO typed (id) VALUES (2)`)
		f.exec(`INSERT INTO typed (id, b, bl, s) VALUES (3, 0, x'', '')`)
		return map[string]string{"hex(bl)": "00FF41", "CAST(b AS VARCHAR)": "true"}
	}
}

// TestSparkSQLTypesAsDuckDB: a table of every usual column type of
// PostgreSQL, MariaDB and SQLite goes through a table source into a
// Parquet sink on both engines: the files hold the same rows and schema,
// and the known values (a blob 00FF41, booleans, arrays of awkward texts)
// read back as they were. Spark read a blob's text as its bytes (00FF41
// became the 12 characters \x00\xFF\x41), failed every run of a
// PostgreSQL table with a boolean (COPY's t/f) and refused arrays.
func TestSparkSQLTypesAsDuckDB(t *testing.T) {
	t.Parallel()
	spark := sparkEngine(t)
	eachSQL(t, sqlAllKinds, func(t *testing.T, f *sqlFixture) {
		checks := sqlTypesTable(f)
		var files [2][]string
		for i, engine := range []string{"", spark} {
			out := filepath.Join(f.dir, fmt.Sprintf("out%d", i))
			f.out = out
			var top []string
			if engine != "" {
				top = []string{engine}
			}
			f.writeJob(sqlJob{name: fmt.Sprintf("types%d", i), top: top, src: sqlSrc{table: "typed"}})
			f.mustRun()
			if files[i] = sinkFiles(t, out); len(files[i]) == 0 {
				t.Fatalf("engine %q: no output", engine)
			}
			reader := readerSQL(files[i], sinkFormat{format: "parquet"})
			for expr, want := range checks {
				if got := strings.TrimSpace(queryText(t, "SELECT "+expr+" FROM "+reader+" WHERE id = 1")); got != "["+want+"]" {
					t.Errorf("engine %q: %s of row 1 = %s, want [%s]", engine, expr, got, want)
				}
			}
		}
		sameParquet(t, files[0], files[1])
	})
}

// sparkTypeDiffs are the Parquet column types Spark writes differently
// from DuckDB for want of the type: JSON, UUID, TIME and INTERVAL as
// texts, unsigned integers as the next wider signed type (UBIGINT as
// DECIMAL(20,0)).
var sparkTypeDiffs = map[string]string{"JSON": "VARCHAR", "UUID": "VARCHAR", "TIME": "VARCHAR", "INTERVAL": "VARCHAR",
	"UBIGINT": "DECIMAL(20,0)", "UINTEGER": "BIGINT", "USMALLINT": "INTEGER", "UTINYINT": "SMALLINT"}

// sameParquet fails t unless the Parquet files spark (Spark's output) hold
// the rows of duck (DuckDB's), and the same schema but for
// sparkTypeDiffs; Spark's columns are read back as DuckDB's types.
func sameParquet(t *testing.T, duck, spark []string) {
	t.Helper()
	dr, sr := readerSQL(duck, sinkFormat{format: "parquet"}), readerSQL(spark, sinkFormat{format: "parquet"})
	describe := func(r string) [][]string {
		var out [][]string
		for _, l := range strings.Split(strings.TrimSpace(queryText(t, "SELECT column_name || ' ' || column_type FROM (DESCRIBE SELECT * FROM "+r+")")), "\n") {
			l = strings.TrimSuffix(strings.TrimPrefix(l, "["), "]")
			out = append(out, strings.SplitN(l, " ", 2))
		}
		return out
	}
	ds, ss := describe(dr), describe(sr)
	if len(ds) != len(ss) {
		t.Fatalf("schema:\nduckdb %v\nspark  %v", ds, ss)
	}
	casts := make([]string, len(ds))
	for i := range ds {
		if ds[i][0] != ss[i][0] || (ds[i][1] != ss[i][1] && sparkTypeDiffs[ds[i][1]] != ss[i][1]) {
			t.Errorf("column %d: duckdb %v, spark %v", i+1, ds[i], ss[i])
		}
		casts[i] = fmt.Sprintf("CAST(%q AS %s) AS %q", ds[i][0], ds[i][1], ds[i][0])
	}
	want := queryText(t, "SELECT * FROM "+dr+" ORDER BY 1")
	if got := queryText(t, "SELECT "+strings.Join(casts, ", ")+" FROM "+sr+" ORDER BY 1"); got != want {
		t.Errorf("rows:\nduckdb %s\nspark  %s", want, got)
	}
}

// TestSQLValueNoTypeHolds: a value the column's type in the engine cannot
// hold (NaN in a PostgreSQL numeric(10,2), -838:59:59 in a MySQL TIME, a
// text in a SQLite NUMERIC column) fails the run on both engines with an error naming the table
// and the column, never the extract file tidemark wrote for the engine
// (rows.csv, src-rows.csv), and publishes nothing.
func TestSQLValueNoTypeHolds(t *testing.T) {
	t.Parallel()
	spark := sparkEngine(t)
	eachSQL(t, sqlAllKinds, func(t *testing.T, f *sqlFixture) {
		switch f.kind {
		case sqldb.Postgres:
			f.exec(`CREATE TABLE typed (id integer PRIMARY KEY, n numeric(10,2))`)
			f.exec(`INSERT INTO typed VALUES (1, 1.5), (2, 'NaN'), (3, 2.5)`)
		case sqldb.MySQL:
			// TIME is a duration in MySQL, a time of day in the engines.
			f.exec(`CREATE TABLE typed (id int PRIMARY KEY, n time)`)
			f.exec(`INSERT INTO typed VALUES (1, '10:00:00'), (2, '-838:59:59'), (3, '11:00:00')`)
		default:
			f.exec(`CREATE TABLE typed (id INTEGER PRIMARY KEY, n NUMERIC(10,2))`)
			f.exec(`INSERT INTO typed VALUES (1, 1.5), (2, 'abc'), (3, 2.5)`)
		}
		for i, engine := range []string{"", spark} {
			f.out = filepath.Join(f.dir, fmt.Sprintf("out%d", i))
			var top []string
			if engine != "" {
				top = []string{engine}
			}
			f.writeJob(sqlJob{name: fmt.Sprintf("bad%d", i), top: top, src: sqlSrc{table: "typed"}})
			_, r := f.runExpect(1, nil)
			msg := r.stderr
			if testing.Verbose() {
				t.Logf("engine %q: %s", engine, msg)
			}
			for _, want := range []string{"typed", "column n"} {
				if !strings.Contains(msg, want) {
					t.Errorf("engine %q: error does not name %q:\n%s", engine, want, msg)
				}
			}
			if strings.Contains(msg, "rows.csv") {
				t.Errorf("engine %q: error names the internal extract file:\n%s", engine, msg)
			}
			if files := sinkFiles(t, f.out); len(files) != 0 {
				t.Errorf("engine %q: a failed run published %v", engine, files)
			}
		}
	})
}
