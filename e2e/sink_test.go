package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// sinkFiles lists the files a downstream reader sees under a sink folder:
// everything except files and folders whose names start with _ or . (where
// tidemark keeps in-flight files). Paths are sorted.
func sinkFiles(t testing.TB, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == dir {
				return filepath.SkipDir
			}
			return err
		}
		if path != dir && (strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing sink %s: %v", dir, err)
	}
	sort.Strings(files)
	return files
}

// partName is the contract's final file name: part-<run_id>-<n>.<ext>.
var partName = regexp.MustCompile(`^part-(.+)-([0-9]+)\.([a-z0-9.]+)$`)

// runOfFile returns the run id in a published file's name, failing the test
// when the name is not part-<run>-<n>.<ext>.
func runOfFile(t testing.TB, path string) string {
	t.Helper()
	m := partName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		t.Fatalf("published file %s is not named part-<run_id>-<n>.<ext>", path)
	}
	return m[1]
}

// sinkFormat says how to read a sink back.
type sinkFormat struct {
	format string // parquet | csv | json
	hive   bool   // key=value folders hold partition columns
}

var parquetByProduct = sinkFormat{format: "parquet", hive: true}

// readerSQL is a DuckDB table function over files in the given format.
func readerSQL(files []string, sf sinkFormat) string {
	quoted := make([]string, len(files))
	for i, f := range files {
		quoted[i] = sqlString(f)
	}
	list := "[" + strings.Join(quoted, ", ") + "]"
	hive := "false"
	if sf.hive {
		hive = "true"
	}
	switch sf.format {
	case "csv":
		return fmt.Sprintf("read_csv(%s, header = true, hive_partitioning = %s)", list, hive)
	case "json":
		return fmt.Sprintf("read_json(%s, format = 'newline_delimited', hive_partitioning = %s)", list, hive)
	default:
		return fmt.Sprintf("read_parquet(%s, hive_partitioning = %s)", list, hive)
	}
}

// queryRecords reads the sales columns from files with DuckDB.
func queryRecords(t testing.TB, files []string, sf sinkFormat) []record {
	t.Helper()
	if len(files) == 0 {
		return nil
	}
	q := `SELECT CAST(order_id AS BIGINT), CAST(customer_id AS VARCHAR), CAST(product AS VARCHAR), CAST(amount AS BIGINT) FROM ` +
		readerSQL(files, sf)
	rows, err := duck.Query(q)
	if err != nil {
		t.Fatalf("reading back %d files (%s...): %v", len(files), files[0], err)
	}
	defer rows.Close()
	var out []record
	for rows.Next() {
		var r record
		if err := rows.Scan(&r.OrderID, &r.CustomerID, &r.Product, &r.Amount); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// readSink reads every published record of a sink folder.
func readSink(t testing.TB, dir string, sf sinkFormat) []record {
	t.Helper()
	files := sinkFiles(t, dir)
	for _, f := range files {
		runOfFile(t, f)
	}
	return queryRecords(t, files, sf)
}

// readSinkRun reads the records that one run published into a sink folder,
// picked by the run id in the file names.
func readSinkRun(t testing.TB, dir string, sf sinkFormat, runID string) []record {
	t.Helper()
	var mine []string
	for _, f := range sinkFiles(t, dir) {
		if runOfFile(t, f) == runID {
			mine = append(mine, f)
		}
	}
	return queryRecords(t, mine, sf)
}

// assertRecords compares two multisets of records: got must hold each
// wanted record exactly as many times as want does, and nothing else.
func assertRecords(t testing.TB, what string, got, want []record) {
	t.Helper()
	count := map[record]int{}
	for _, r := range want {
		count[r]++
	}
	for _, r := range got {
		count[r]--
	}
	var missing, extra []string
	for r, n := range count {
		switch {
		case n > 0:
			missing = append(missing, fmt.Sprintf("%v x%d", r, n))
		case n < 0:
			extra = append(extra, fmt.Sprintf("%v x%d", r, -n))
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return
	}
	sort.Strings(missing)
	sort.Strings(extra)
	t.Errorf("%s: got %d rows, want %d; %d records missing or short, %d extra or duplicated\n  missing: %s\n  extra:   %s",
		what, len(got), len(want), len(missing), len(extra), firstFew(missing), firstFew(extra))
}

// assertSink checks that a sink holds exactly want (as a multiset).
func assertSink(t testing.TB, dir string, sf sinkFormat, want []record) {
	t.Helper()
	assertRecords(t, "sink "+filepath.Base(dir), readSink(t, dir, sf), want)
}

// assertNoDuplicates checks count(*) == count(DISTINCT order_id) over a sink.
func assertNoDuplicates(t testing.TB, dir string, sf sinkFormat) {
	t.Helper()
	files := sinkFiles(t, dir)
	if len(files) == 0 {
		return
	}
	var n, distinct int64
	q := "SELECT count(*), count(DISTINCT order_id) FROM " + readerSQL(files, sf)
	if err := duck.QueryRow(q).Scan(&n, &distinct); err != nil {
		t.Fatalf("reading back %s: %v", dir, err)
	}
	if n != distinct {
		t.Errorf("sink %s: %d rows but %d distinct order_ids: %d duplicated", dir, n, distinct, n-distinct)
	}
}

// stagedFiles lists the regular files under a sink's _tidemark folder other
// than quarantined rejects: staged output left behind by a run.
func stagedFiles(t testing.TB, sinkDir string) []string {
	t.Helper()
	root := filepath.Join(sinkDir, "_tidemark")
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == root {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() && d.Name() == "rejects" {
			return filepath.SkipDir
		}
		if path == filepath.Join(root, "owner.json") {
			return nil // the location's ownership record, not staged output
		}
		if d.Type().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing %s: %v", root, err)
	}
	return files
}

// rejectFiles lists non-empty regular files under any _tidemark/rejects
// folder below dir.
func rejectFiles(t testing.TB, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if !strings.Contains(filepath.ToSlash(rel), "_tidemark/rejects/") {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Size() > 0 {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing %s: %v", dir, err)
	}
	return files
}

func firstFew(s []string) string {
	if len(s) > 6 {
		return strings.Join(s[:6], ", ") + fmt.Sprintf(", ... (%d more)", len(s)-6)
	}
	return strings.Join(s, ", ")
}
