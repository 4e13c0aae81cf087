// Command countrows reads a tidemark sink folder back with DuckDB and prints
// its row count, distinct order_ids and rows per product. It reads what a
// downstream reader would: files under folders whose names start with _ or .
// (tidemark's in-flight _tidemark/ folder) are skipped.
//
//	go run ./examples/sales/countrows examples/sales/output
package main

import (
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: countrows SINK_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "countrows:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	files, err := parquetFiles(dir)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fmt.Printf("%s: no parquet files\n", dir)
		return nil
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()

	quoted := make([]string, len(files))
	for i, f := range files {
		quoted[i] = "'" + strings.ReplaceAll(f, "'", "''") + "'"
	}
	from := fmt.Sprintf("read_parquet([%s], hive_partitioning = true)", strings.Join(quoted, ", "))

	var rows, distinct int64
	if err := db.QueryRow("SELECT count(*), count(DISTINCT order_id) FROM "+from).Scan(&rows, &distinct); err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	fmt.Printf("%s: %d files, %d rows, %d distinct order_ids\n", dir, len(files), rows, distinct)

	res, err := db.Query("SELECT product, count(*), sum(amount) FROM " + from + " GROUP BY product ORDER BY product")
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	defer res.Close()
	for res.Next() {
		var product string
		var n, amount int64
		if err := res.Scan(&product, &n, &amount); err != nil {
			return err
		}
		fmt.Printf("  %-10s %5d rows  amount %7d\n", product, n, amount)
	}
	return res.Err()
}

// parquetFiles lists the published parquet files under dir, skipping _- and
// .-prefixed files and folders as Spark, DuckDB and Hive readers do.
func parquetFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path != dir && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(name, ".parquet") {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}
