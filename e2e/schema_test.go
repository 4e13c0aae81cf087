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
