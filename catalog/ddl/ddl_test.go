package ddl

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/tidemark-etl/tidemark/catalog"
)

// exec runs statements on db or fails the test.
func exec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestDuckDBView: the view reads every file of every partition once, with
// the partition columns typed as the catalog says, and leaves out a sink's
// staging folder, markers and hidden files.
func TestDuckDBView(t *testing.T) {
	for _, format := range []string{"parquet", "csv", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			db, err := sql.Open("duckdb", "")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			copyOpts := map[string]string{"parquet": "FORMAT parquet", "csv": "FORMAT csv, HEADER true, DELIMITER '|'", "json": "FORMAT json"}[format]
			write := func(rel string, from, to int) {
				p := filepath.Join(dir, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				exec(t, db, fmt.Sprintf(`COPY (SELECT i AS order_id, 'it''s ' || i AS note, i * 1.5 AS amount
					FROM range(%d, %d) r(i)) TO '%s' (%s)`, from, to, p, copyOpts))
			}
			write("product=a/day=1/part-r1-0."+format, 0, 10)
			write("product=a/day=2/part-r2-0."+format, 10, 25)
			write("product=b/day=10/part-r2-1."+format, 25, 30)
			// Not part of the table: staging, markers, hidden files.
			write("_tidemark/r3/product=a/day=3/part-r3-0."+format, 100, 200)
			write("product=a/day=1/_tidemark/part-x."+format, 100, 200)
			write("product=a/day=1/.hidden."+format, 100, 200)
			write("product=a/day=1/_SUCCESS", 100, 200)

			tbl := catalog.Table{Database: "sales_db", Name: "orders_clean", Location: dir, Format: format,
				Columns:       []catalog.Column{{Name: "order_id", Type: "BIGINT"}, {Name: "note", Type: "VARCHAR"}, {Name: "amount", Type: "DOUBLE"}},
				PartitionKeys: []catalog.Column{{Name: "product", Type: "VARCHAR"}, {Name: "day", Type: "INTEGER"}},
			}
			if format == "csv" {
				tbl.Options = map[string]string{"header": "true", "delimiter": "|"}
			}
			stmts, err := Statements("duckdb", tbl, nil)
			if err != nil {
				t.Fatal(err)
			}
			exec(t, db, stmts...)
			var n, distinct, sum, days int64
			row := db.QueryRow(`SELECT count(*), count(DISTINCT order_id), sum(order_id), sum(day) FROM sales_db.orders_clean`)
			if err := row.Scan(&n, &distinct, &sum, &days); err != nil {
				t.Fatal(err)
			}
			if n != 30 || distinct != 30 || sum != 29*30/2 {
				t.Errorf("view: %d rows, %d distinct, sum %d; want 30, 30, %d\n%s", n, distinct, sum, 29*30/2, strings.Join(stmts, ";\n"))
			}
			if want := int64(10*1 + 15*2 + 5*10); days != want {
				t.Errorf("sum of day = %d, want %d (day read as a number)", days, want)
			}
			var typ string
			if err := db.QueryRow(`SELECT typeof(day) || ' ' || typeof(product) || ' ' || typeof(amount) FROM sales_db.orders_clean LIMIT 1`).Scan(&typ); err != nil {
				t.Fatal(err)
			}
			if typ != "INTEGER VARCHAR DOUBLE" {
				t.Errorf("types = %q, want INTEGER VARCHAR DOUBLE", typ)
			}
		})
	}
}

// TestDuckDBViewColumnNoFileHas: a Parquet table column that no file has
// (a version's column whose files a purge deleted) reads as NULL; the view
// does not fail.
func TestDuckDBViewColumnNoFileHas(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := os.MkdirAll(filepath.Join(dir, "product=a"), 0o755); err != nil {
		t.Fatal(err)
	}
	exec(t, db, fmt.Sprintf(`COPY (SELECT 1::INTEGER AS order_id) TO '%s' (FORMAT parquet)`, filepath.Join(dir, "product=a", "part-r1-0.parquet")))
	tbl := catalog.Table{Database: "sales_db", Name: "orders_clean", Location: dir, Format: "parquet",
		Columns:       []catalog.Column{{Name: "order_id", Type: "BIGINT"}, {Name: "coupon", Type: "VARCHAR"}},
		PartitionKeys: []catalog.Column{{Name: "product", Type: "VARCHAR"}},
	}
	stmts, err := Statements("duckdb", tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, db, stmts...)
	var got string
	if err := db.QueryRow(`SELECT order_id || '|' || coalesce(coupon, 'NULL') || '|' || product || '|' || typeof(order_id) FROM sales_db.orders_clean`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "1|NULL|a|BIGINT"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestSparkTrino(t *testing.T) {
	tbl := catalog.Table{Database: "sales_db", Name: "orders", Location: "s3://out/sales/", Format: "parquet",
		Columns: []catalog.Column{{Name: "id", Type: "UBIGINT"}, {Name: "at", Type: "TIMESTAMP WITH TIME ZONE"},
			{Name: "tags", Type: "ARRAY<VARCHAR>"}, {Name: "m", Type: "STRUCT<a: INTEGER, \"b c\": MAP<VARCHAR, DOUBLE>>"}},
		PartitionKeys: []catalog.Column{{Name: "product", Type: "VARCHAR"}},
	}
	parts := []catalog.Partition{{Values: []string{"it's"}, Location: "s3://out/sales/product=it's/"}}
	got, err := Statements("spark", tbl, parts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"CREATE DATABASE IF NOT EXISTS `sales_db`",
		"CREATE TABLE IF NOT EXISTS `sales_db`.`orders` (\n  `id` DECIMAL(20,0),\n  `at` TIMESTAMP,\n  `tags` ARRAY<STRING>,\n" +
			"  `m` STRUCT<`a`: INT, `b c`: MAP<STRING, DOUBLE>>,\n  `product` STRING\n)\nUSING parquet\nPARTITIONED BY (`product`)\n" +
			"LOCATION 's3a://out/sales/'",
		"ALTER TABLE `sales_db`.`orders` ADD IF NOT EXISTS PARTITION (`product` = 'it''s') LOCATION 's3a://out/sales/product=it''s/'",
	}
	if strings.Join(got, ";\n") != strings.Join(want, ";\n") {
		t.Errorf("spark:\n got %s\nwant %s", strings.Join(got, ";\n"), strings.Join(want, ";\n"))
	}
	got, err = Statements("trino", tbl, parts)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		`CREATE SCHEMA IF NOT EXISTS "sales_db"`,
		"CREATE TABLE IF NOT EXISTS \"sales_db\".\"orders\" (\n  \"id\" DECIMAL(20,0),\n  \"at\" TIMESTAMP,\n  \"tags\" ARRAY(VARCHAR),\n" +
			"  \"m\" ROW(\"a\" INTEGER, \"b c\" MAP(VARCHAR, DOUBLE)),\n  \"product\" VARCHAR\n)\nWITH (\n" +
			"  external_location = 's3://out/sales/',\n  format = 'PARQUET',\n  partitioned_by = ARRAY['product']\n)",
		"CALL system.register_partition('sales_db', 'orders', ARRAY['product'], ARRAY['it''s'], 's3://out/sales/product=it''s/')",
	}
	if strings.Join(got, ";\n") != strings.Join(want, ";\n") {
		t.Errorf("trino:\n got %s\nwant %s", strings.Join(got, ";\n"), strings.Join(want, ";\n"))
	}

	// CSV in Trino is all VARCHAR; a type without equivalent names its column.
	csv := tbl
	csv.Format, csv.Options, csv.PartitionKeys = "csv", map[string]string{"header": "false", "sep": ";"}, nil
	got, _ = Statements("trino", csv, nil)
	if s := got[1]; !strings.Contains(s, `"id" VARCHAR`) || !strings.Contains(s, "csv_separator = ';'") || strings.Contains(s, "skip_header") {
		t.Errorf("trino csv: %s", s)
	}
	got, _ = Statements("spark", csv, nil)
	if s := got[1]; !strings.Contains(s, "OPTIONS (header 'false', sep ';')") {
		t.Errorf("spark csv: %s", s)
	}
	// With a header, Spark checks it against the columns: by default it
	// reads a file whose header orders them otherwise by position, its
	// values under the wrong names.
	csv.Options["header"] = "true"
	got, _ = Statements("spark", csv, nil)
	if s := got[1]; !strings.Contains(s, "OPTIONS (header 'true', sep ';', enforceSchema 'false')") {
		t.Errorf("spark csv with a header: %s", s)
	}
	odd := tbl
	odd.Columns = []catalog.Column{{Name: "e", Type: "ENUM('a', 'b')"}}
	for _, d := range []string{"spark", "trino"} {
		if _, err := Statements(d, odd, nil); err == nil || !strings.Contains(err.Error(), "column e of sales_db.orders") {
			t.Errorf("%s with an ENUM column: %v, want an error naming the column", d, err)
		}
	}
	if _, err := Statements("hive", tbl, nil); err == nil || !strings.Contains(err.Error(), "duckdb, spark, trino") {
		t.Errorf("unknown dialect: %v", err)
	}
}

// TestDuckDBViewCSVByName: a CSV table's files with a header are read by
// their names: a file whose header orders the columns otherwise, one that
// lacks a column, and a column no file has all read under the right names,
// typed as the catalog says, dates by the table's format.
func TestDuckDBViewCSVByName(t *testing.T) {
	dir := t.TempDir()
	for rel, text := range map[string]string{
		"day=1/a.csv": "id|note|paid\n1|one|02/01/2026\n2|two|03/01/2026\n",
		"day=1/b.csv": "paid|id|note\n04/01/2026|3|three\n",
		"day=2/c.csv": "id|note\n4|four\n",
	} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tbl := catalog.Table{Database: "sales_db", Name: "orders", Location: dir, Format: "csv",
		Options: map[string]string{"header": "true", "delimiter": "|", "dateformat": "%d/%m/%Y"},
		Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}, {Name: "note", Type: "VARCHAR"}, {Name: "paid", Type: "DATE"},
			{Name: "coupon", Type: "VARCHAR"}},
		PartitionKeys: []catalog.Column{{Name: "day", Type: "INTEGER"}},
	}
	stmts, err := Statements("duckdb", tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec(t, db, stmts...)
	rows, err := db.Query(`SELECT id || ' ' || note || ' ' || coalesce(strftime(paid, '%Y-%m-%d'), '-') || ' ' || coalesce(coupon, '-') || ' ' || day
		|| ' ' || typeof(id) || ' ' || typeof(paid) FROM sales_db.orders ORDER BY id`)
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(stmts, ";\n"))
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	want := []string{"1 one 2026-01-02 - 1 BIGINT DATE", "2 two 2026-01-03 - 1 BIGINT DATE",
		"3 three 2026-01-04 - 1 BIGINT DATE", "4 four - - 2 BIGINT DATE"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), strings.Join(stmts, ";\n"))
	}
}
