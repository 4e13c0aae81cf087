package sqltable_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/engine/duckdb"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

// typeCase is one column of the type round trip: its database type, the
// SQL literal stored, the recorded type it must map to (canonical text of
// the type model), and the value as DuckDB renders it (lists and JSON
// through to_json, so that quoting is unambiguous).
type typeCase struct {
	col, dbType, value, model, want string
}

const tricky = `a "quoted", multi
line 'text' ✓ \ back`

var typeCases = map[sqldb.Kind][]typeCase{
	sqldb.Postgres: {
		{"i2", "smallint", "-32768", "SMALLINT", "-32768"},
		{"i4", "integer", "2147483647", "INTEGER", "2147483647"},
		{"i8", "bigint", "9223372036854775807", "BIGINT", "9223372036854775807"},
		{"n", "numeric(12,3)", "123456789.123", "DECIMAL(12,3)", "123456789.123"},
		{"nbig", "numeric(50,10)", "1234567890123456789012345678901234567890.0123456789", "VARCHAR", "1234567890123456789012345678901234567890.0123456789"},
		{"nfree", "numeric", "3.14159265358979323846", "VARCHAR", "3.14159265358979323846"},
		{"r", "real", "1.5", "FLOAT", "1.5"},
		{"d", "double precision", "0.1", "DOUBLE", "0.1"},
		{"t", "text", "E'" + strings.NewReplacer(`\`, `\\`, "'", `\'`, "\n", `\n`).Replace(tricky) + "'", "VARCHAR", tricky},
		{"vc", "varchar(20)", "''", "VARCHAR", ""},
		{"b", "boolean", "true", "BOOLEAN", "true"},
		{"dt", "date", "'2024-02-29'", "DATE", "2024-02-29"},
		{"ts", "timestamp(6)", "'2024-05-01 10:11:12.123456'", "TIMESTAMP", "2024-05-01 10:11:12.123456"},
		{"tstz", "timestamptz", "'2024-05-01 10:11:12.5+02'", "TIMESTAMP WITH TIME ZONE", "2024-05-01 08:11:12.5+00"},
		{"j", "json", `'{"k": [1, 2], "s": "x\"y"}'`, "JSON", `{"k":[1,2],"s":"x\"y"}`},
		{"jb", "jsonb", `'{"a": null}'`, "JSON", `{"a":null}`},
		{"by", "bytea", `'\x00ff41'::bytea`, "BLOB", `\x00\xFFA`},
		{"u", "uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "UUID", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"ai", "integer[]", "'{1,NULL,3}'", "ARRAY<INTEGER>", "[1,null,3]"},
		{"at", "text[]", `ARRAY['a', 'b,c', NULL, 'q"x', 'back\slash', ' ', 'NULL', '']`, "ARRAY<VARCHAR>", `["a","b,c",null,"q\"x","back\\slash"," ","NULL",""]`},
		{"ats", "timestamptz[]", "ARRAY['2024-01-01 00:00:00+00'::timestamptz]", "ARRAY<TIMESTAMP WITH TIME ZONE>", `["2024-01-01 00:00:00+00"]`},
		{"iv", "interval", "'1 day 02:03:04'", "INTERVAL", "1 day 02:03:04"},
		{"tm", "time", "'23:59:59.999999'", "TIME", "23:59:59.999999"},
	},
	sqldb.MySQL: {
		{"i1", "tinyint", "-128", "TINYINT", "-128"},
		{"u1", "tinyint unsigned", "255", "UTINYINT", "255"},
		{"i2", "smallint", "-32768", "SMALLINT", "-32768"},
		{"i3", "mediumint", "8388607", "INTEGER", "8388607"},
		{"i4", "int", "2147483647", "INTEGER", "2147483647"},
		{"i8", "bigint", "9223372036854775807", "BIGINT", "9223372036854775807"},
		{"u8", "bigint unsigned", "18446744073709551615", "UBIGINT", "18446744073709551615"},
		{"n", "decimal(12,3)", "123456789.123", "DECIMAL(12,3)", "123456789.123"},
		{"nbig", "decimal(50,10)", "1234567890123456789012345678901234567890.0123456789", "VARCHAR", "1234567890123456789012345678901234567890.0123456789"},
		{"f", "float", "1.5", "FLOAT", "1.5"},
		{"d", "double", "0.1", "DOUBLE", "0.1"},
		{"t", "text", "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`, "\n", `\n`).Replace(tricky) + "'", "VARCHAR", tricky},
		{"vc", "varchar(20)", "''", "VARCHAR", ""},
		{"sp", "varchar(20)", "'  padded\t'", "VARCHAR", "  padded\t"},
		{"nl", "varchar(20)", "'NULL'", "VARCHAR", "NULL"},
		{"dt", "date", "'2024-02-29'", "DATE", "2024-02-29"},
		{"dtm", "datetime(6)", "'2024-05-01 10:11:12.123456'", "TIMESTAMP", "2024-05-01 10:11:12.123456"},
		{"ts", "timestamp(6) NULL", "'2024-05-01 10:11:12.5'", "TIMESTAMP WITH TIME ZONE", "2024-05-01 10:11:12.5+00"},
		{"j", "json", `'{"k": [1, 2], "s": "x\\"y"}'`, "JSON", `{"k":[1,2],"s":"x\"y"}`},
		{"bl", "blob", "X'00FF41'", "BLOB", `\x00\xFFA`},
		{"vb", "varbinary(10)", "X'5C22'", "BLOB", `\x5C\x22`},
		{"bt", "bit(10)", "b'1010101010'", "UBIGINT", "682"},
		{"y", "year", "2024", "SMALLINT", "2024"},
		{"tm", "time(6)", "'12:34:56.5'", "TIME", "12:34:56.5"},
		{"e", "enum('x','y')", "'y'", "VARCHAR", "y"},
		{"u", "uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "UUID", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
	},
	sqldb.SQLite: {
		{"i", "INTEGER", "9223372036854775807", "BIGINT", "9223372036854775807"},
		{"n", "DECIMAL(12,3)", "123456789.123", "DECIMAL(12,3)", "123456789.123"},
		{"r", "REAL", "0.1", "DOUBLE", "0.1"},
		{"t", "TEXT", "'" + strings.ReplaceAll(tricky, "'", "''") + "'", "VARCHAR", tricky},
		{"vc", "VARCHAR(20)", "''", "VARCHAR", ""},
		{"sp", "VARCHAR(20)", "'  padded\t'", "VARCHAR", "  padded\t"},
		{"nl", "VARCHAR(20)", "'NULL'", "VARCHAR", "NULL"},
		{"b", "BOOLEAN", "1", "BOOLEAN", "true"},
		{"dt", "DATE", "'2024-02-29'", "DATE", "2024-02-29"},
		{"ts", "DATETIME", "'2024-05-01 10:11:12.123456'", "TIMESTAMP", "2024-05-01 10:11:12.123456"},
		{"j", "JSON", `'{"k": [1, 2]}'`, "JSON", `{"k":[1,2]}`},
		{"bl", "BLOB", "X'00FF41'", "BLOB", `\x00\xFFA`},
		{"u", "UUID", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "UUID", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"untyped", "", "42", "VARCHAR", "42"},
	},
}

// render is the DuckDB expression a value is compared through.
func render(c typeCase) string {
	q := fmt.Sprintf("%q", c.col)
	switch {
	case strings.HasPrefix(c.model, "ARRAY<"), c.model == "JSON":
		return "CAST(to_json(" + q + ") AS VARCHAR)"
	}
	return "CAST(" + q + " AS VARCHAR)"
}

func TestTypeRoundTrip(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, db *sqltest.DB) {
		cases := typeCases[db.Kind]
		defs := []string{ddl(db.Kind, "id {pk}")}
		cols := []string{"id"}
		vals := []string{"1"}
		for _, c := range cases {
			defs = append(defs, db.Q(c.col)+" "+c.dbType)
			cols = append(cols, db.Q(c.col))
			vals = append(vals, c.value)
		}
		db.Exec(t, "CREATE TABLE types ("+strings.Join(defs, ", ")+")")
		db.Exec(t, "INSERT INTO types ("+strings.Join(cols, ", ")+") VALUES ("+strings.Join(vals, ", ")+")")
		db.Exec(t, "INSERT INTO types (id) VALUES (2)") // every other column NULL
		s := open(t, db, sqltable.Config{Table: "types"})

		schema := s.Schema()
		for i, c := range cases {
			if got := schema[i+1]; got.Name != c.col || got.Type != c.model {
				t.Errorf("column %s (%s): mapped to %s %s, want %s", c.col, c.dbType, got.Name, got.Type, c.model)
			}
		}
		p, err := s.Plan(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := p.Extract(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := duckdb.ValidateSourceOptions(ex.Format, ex.Options); err != nil {
			t.Fatalf("the engine refuses the extract's options: %v", err)
		}
		exprs := make([]string, len(cases))
		nulls := make([]string, len(cases))
		for i, c := range cases {
			exprs[i] = render(c)
			nulls[i] = fmt.Sprintf("%q IS NULL", c.col)
		}
		// Through the engine itself: the source as the engine reads it,
		// written to Parquet, read back.
		parquet := throughEngine(t, ex)
		for _, from := range []string{readCall(t, ex), "read_parquet(" + lit(parquet) + ")"} {
			var got []any
			row := duckDB(t).QueryRow("SELECT " + strings.Join(exprs, ", ") + " FROM " + from + " WHERE id = 1")
			got = make([]any, len(cases))
			ptrs := make([]any, len(cases))
			for i := range got {
				ptrs[i] = &got[i]
			}
			if err := row.Scan(ptrs...); err != nil {
				t.Fatalf("reading back from %s: %v", from, err)
			}
			for i, c := range cases {
				if fmt.Sprint(got[i]) != c.want {
					t.Errorf("%s (%s) via %s: got %q, want %q", c.col, c.dbType, from[:9], got[i], c.want)
				}
			}
			var allNull bool
			if err := duckDB(t).QueryRow("SELECT " + strings.Join(nulls, " AND ") + " FROM " + from + " WHERE id = 2").Scan(&allNull); err != nil || !allNull {
				t.Errorf("row 2 via %s: NULLs not kept (%v)", from[:9], err)
			}
		}
	})
}

// throughEngine runs the engine over the extract with one Parquet sink and
// returns the file it wrote.
func throughEngine(t *testing.T, ex *sqltable.Extract) string {
	t.Helper()
	eng, err := engine.Open(job.Engine{Name: "duckdb"}, engine.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	dir := t.TempDir()
	src := engine.Source{Ctx: "src", Format: ex.Format, Options: ex.Options, Schema: append([]bookmark.Column(nil), ex.Schema...)}
	for _, f := range ex.Files {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Files = append(src.Files, engine.Input{Location: f, Key: filepath.Base(f), Size: info.Size()})
	}
	res, err := eng.Execute(context.Background(), engine.Plan{
		Sources:     []engine.Source{src},
		Sinks:       []engine.Sink{{Ctx: "out", From: "src", Format: "parquet", Location: filepath.Join(dir, "out")}},
		OnBadRecord: engine.BadFail,
	})
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	if res.Sources["src"].Rows != ex.Rows || len(res.Sinks["out"].Files) == 0 {
		t.Fatalf("engine read %d rows, extract has %d; sink files %v", res.Sources["src"].Rows, ex.Rows, res.Sinks["out"].Files)
	}
	return filepath.Join(dir, "out", filepath.FromSlash(res.Sinks["out"].Files[0].Path))
}
