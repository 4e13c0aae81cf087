package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// record is one sales order, the row shape of every test's input and output.
type record struct {
	OrderID    int64
	CustomerID string
	Product    string
	Amount     int64
}

func (r record) String() string {
	return fmt.Sprintf("{%d %s %s %d}", r.OrderID, r.CustomerID, r.Product, r.Amount)
}

var products = []string{"widget", "gadget", "gizmo", "sprocket", "doohickey"}

// gen hands out records with order_ids unique within one test.
type gen struct{ next int64 }

func newGen() *gen { return &gen{next: 1000} }

// records returns n new records with deterministic contents.
func (g *gen) records(n int) []record {
	out := make([]record, n)
	for i := range out {
		id := g.next
		g.next++
		out[i] = record{
			OrderID:    id,
			CustomerID: fmt.Sprintf("C%04d", 1+(id*31)%997),
			Product:    products[(id*7)%int64(len(products))],
			Amount:     5 + (id*13)%496,
		}
	}
	return out
}

// concat joins record lists, keeping duplicates: the expected contents of a
// sink that legitimately holds some records more than once (disable, pause).
func concat(lists ...[]record) []record {
	var out []record
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// csvBytes renders records as CSV with the sales header.
func csvBytes(recs []record) []byte {
	var b bytes.Buffer
	b.WriteString("order_id,customer_id,product,amount\n")
	for _, r := range recs {
		fmt.Fprintf(&b, "%d,%s,%s,%d\n", r.OrderID, r.CustomerID, r.Product, r.Amount)
	}
	return b.Bytes()
}

// jsonlBytes renders records as JSON Lines.
func jsonlBytes(recs []record) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		line, _ := json.Marshal(map[string]any{
			"order_id": r.OrderID, "customer_id": r.CustomerID, "product": r.Product, "amount": r.Amount,
		})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// compressFor compresses data as the file name's extension says (.gz, .zst).
func compressFor(t testing.TB, name string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	switch {
	case strings.HasSuffix(name, ".gz"):
		w := gzip.NewWriter(&b)
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	case strings.HasSuffix(name, ".zst"):
		w, err := zstd.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	default:
		return data
	}
	return b.Bytes()
}

// writeFile writes data to path, creating folders.
func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeCSV writes records as a CSV file (compressed by its extension).
func writeCSV(t testing.TB, path string, recs []record) {
	t.Helper()
	writeFile(t, path, compressFor(t, path, csvBytes(recs)))
}

// writeJSONL writes records as a JSON Lines file (compressed by its extension).
func writeJSONL(t testing.TB, path string, recs []record) {
	t.Helper()
	writeFile(t, path, compressFor(t, path, jsonlBytes(recs)))
}

// writeParquet writes records as a Parquet file, through DuckDB.
func writeParquet(t testing.TB, path string, recs []record) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "rows.csv")
	writeFile(t, tmp, csvBytes(recs))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf(`COPY (SELECT CAST(order_id AS BIGINT) AS order_id, CAST(customer_id AS VARCHAR) AS customer_id,
		CAST(product AS VARCHAR) AS product, CAST(amount AS BIGINT) AS amount
		FROM read_csv(%s, header = true, all_varchar = true)) TO %s (FORMAT parquet)`, sqlString(tmp), sqlString(path))
	if _, err := duck.Exec(q); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
}

// parquetBytes renders records as a Parquet file, through DuckDB.
func parquetBytes(t testing.TB, recs []record) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rows.parquet")
	writeParquet(t, path, recs)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// setMtime sets a file's modification (and access) time.
func setMtime(t testing.TB, path string, mtime time.Time) {
	t.Helper()
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies src to dst, keeping nothing but the bytes.
func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, data)
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// removeFile deletes a file.
func removeFile(t testing.TB, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}
