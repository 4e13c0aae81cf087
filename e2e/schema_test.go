package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestSchemaRecorded: a source's schema is inferred on its first run and
// applied to later runs; a later file that does not fit (an extra column, a
// missing one, a value of another type) fails the run with a message that
// names the file, and nothing is published.
func TestSchemaRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		content func(recs []record) string
	}{
		{"extra column", func(recs []record) string {
			var b strings.Builder
			b.WriteString("order_id,customer_id,product,amount,coupon\n")
			for _, r := range recs {
				fmt.Fprintf(&b, "%d,%s,%s,%d,SAVE10\n", r.OrderID, r.CustomerID, r.Product, r.Amount)
			}
			return b.String()
		}},
		{"missing column", func(recs []record) string {
			var b strings.Builder
			b.WriteString("order_id,customer_id,product\n")
			for _, r := range recs {
				fmt.Fprintf(&b, "%d,%s,%s\n", r.OrderID, r.CustomerID, r.Product)
			}
			return b.String()
		}},
		{"incompatible type", func(recs []record) string {
			var b strings.Builder
			b.WriteString("order_id,customer_id,product,amount\n")
			for _, r := range recs {
				fmt.Fprintf(&b, "ORD-%d,%s,%s,%d\n", r.OrderID, r.CustomerID, r.Product, r.Amount)
			}
			return b.String()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{})
			first := f.addCSVs("first", 2, 20)
			f.mustRun()
			before := f.bookmark()

			next := f.addCSV("next-ok.csv", 20)
			f.put("drifted.csv", []byte(tc.content(f.gen.records(20))))
			_, r := f.runExpect(1)
			assertMentions(t, r, "drifted.csv")
			if after := f.bookmark(); string(after.Version) != string(before.Version) {
				t.Errorf("bookmark moved by a failed run: version %s -> %s", before.Version, after.Version)
			}
			f.assertSink(first)

			// Without the drifted file, the run reads the file that fits.
			f.remove("drifted.csv")
			s := f.mustRun()
			assertFiles(t, "run without the drifted file", s, 1)
			f.assertSink(concat(first, next))
		})
	}
}

// csvInOrder renders records as CSV with the sales columns in the order
// given by cols (names from the sales header).
func csvInOrder(recs []record, cols ...string) []byte {
	var b strings.Builder
	b.WriteString(strings.Join(cols, ",") + "\n")
	for _, r := range recs {
		vals := map[string]string{"order_id": fmt.Sprint(r.OrderID), "customer_id": r.CustomerID,
			"product": r.Product, "amount": fmt.Sprint(r.Amount)}
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = vals[c]
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	return []byte(b.String())
}

// TestCSVColumnsByName: a later CSV file whose header lists the recorded
// columns in another order is read by name (on the first run and later
// ones); a header with a column the schema lacks, or without one of its
// columns, fails the run naming file and column, and nothing is published.
func TestCSVColumnsByName(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	first := f.addCSVs("first", 1, 20)
	swapped := f.gen.records(20)
	f.put("first-swapped.csv", csvInOrder(swapped, "amount", "customer_id", "product", "order_id"))
	f.mustRun()
	f.assertSink(concat(first, swapped))

	later := f.gen.records(20)
	f.put("later.csv", csvInOrder(later, "product", "order_id", "amount", "customer_id"))
	f.mustRun()
	f.assertSink(concat(first, swapped, later))
	before := f.bookmark()
	filesBefore := relFiles(t, f.outDir())

	for _, tc := range []struct {
		name   string
		cols   []string
		column string
	}{
		{"renamed", []string{"id", "customer_id", "product", "amount"}, "id"},
		{"extra", []string{"order_id", "customer_id", "product", "amount", "coupon"}, "coupon"},
		{"missing", []string{"order_id", "customer_id", "amount"}, "product"},
	} {
		name := "drifted-" + tc.name + ".csv"
		f.put(name, csvInOrder(f.gen.records(5), tc.cols...))
		_, r := f.runExpect(1)
		assertMentions(t, r, name, "column "+tc.column)
		if after := f.bookmark(); string(after.Version) != string(before.Version) {
			t.Errorf("%s: bookmark moved by a failed run: version %s -> %s", tc.name, before.Version, after.Version)
		}
		if got := relFiles(t, f.outDir()); strings.Join(got, "\n") != strings.Join(filesBefore, "\n") {
			t.Errorf("%s: a failed run published files: before %d, after %d", tc.name, len(filesBefore), len(got))
		}
		f.remove(name)
	}
	f.assertSink(concat(first, swapped, later))
}
