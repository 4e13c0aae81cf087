package e2e

import (
	"testing"
)

// TestHiveFoldersAndIgnoredFiles: key=value folders of the input become
// columns; files and folders whose names start with _ or . are not read;
// include and exclude globs select files below the source path.
func TestHiveFoldersAndIgnoredFiles(t *testing.T) {
	t.Parallel()
	eachBackend(t, testHiveFoldersAndIgnoredFiles)
}

func testHiveFoldersAndIgnoredFiles(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{
		transform:   `SELECT order_id, customer_id, product, CAST(amount AS BIGINT) AS amount, CAST(region AS VARCHAR) AS region FROM orders_source`,
		partitionBy: "[region]",
		sourceExtra: []string{`include: ["**/*.csv"]`, `exclude: ["**/skip-*.csv"]`},
	})
	eu := f.addCSV("region=eu/orders-1.csv", 20)
	us := f.addCSV("region=us/orders-2.csv", 15)
	us2 := f.addCSV("region=us/deeper/orders-3.csv", 10)

	// None of these may be read.
	f.addCSV("region=eu/_partial.csv", 5)
	f.addCSV("region=eu/.hidden.csv", 5)
	f.addCSV("_tmp/region=eu/orders-9.csv", 5)
	f.addCSV(".staging/region=us/orders-9.csv", 5)
	f.addCSV("region=us/skip-1.csv", 5)
	f.put("_SUCCESS", nil)
	f.put("region=eu/notes.txt", []byte("not,a\ncsv file\"\n"))

	s := f.mustRun()
	assertFiles(t, "run", s, 3)

	files := f.sinkFiles()
	q := `SELECT CAST(order_id AS BIGINT), CAST(region AS VARCHAR) FROM ` + readerSQL(files, sinkFormat{format: "parquet", hive: true})
	rows, err := duck.Query(q)
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	defer rows.Close()
	region := map[int64]string{}
	n := 0
	for rows.Next() {
		var id int64
		var r string
		if err := rows.Scan(&id, &r); err != nil {
			t.Fatal(err)
		}
		region[id] = r
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{}
	for _, r := range eu {
		want[r.OrderID] = "eu"
	}
	for _, r := range concat(us, us2) {
		want[r.OrderID] = "us"
	}
	if n != len(want) {
		t.Errorf("sink holds %d rows, want %d (only the three included files)", n, len(want))
	}
	for id, w := range want {
		if got := region[id]; got != w {
			t.Errorf("order %d: region = %q, want %q", id, got, w)
		}
	}
	for id := range region {
		if _, ok := want[id]; !ok {
			t.Errorf("order %d is in the sink but comes from an ignored or excluded file", id)
		}
	}
	assertFiles(t, "next run", f.mustRun(), 0)
}
