package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestSparkUnclosedQuote: Spark reads CSV a line at a time, so a line
// that opens a quote it does not close was read as if the line closed
// it: an unterminated quote became a value and the run succeeded, and
// with skip or quarantine a quoted field spanning lines was cut (its
// first line kept as the row, the rest one "bad record"). Under every
// policy the run now fails naming the file and the line, publishes
// nothing and keeps the bookmark, as the DuckDB engine does for an
// unterminated quote.
func TestSparkUnclosedQuote(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"fail", "skip", "quarantine"} {
		for _, tc := range []struct{ name, line string }{
			{"unterminated", `9001,c1,pear,"5`},
			{"spanning lines", "9001,c1,\"pear\nand fig\",5"},
		} {
			t.Run(policy+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, jobOpts{top: []string{sparkEngine(t), "on_bad_record: " + policy}})
				first := f.addCSVs("good", 1, 5)
				f.mustRun()
				before := f.bookmark()
				filesBefore := relFiles(t, f.outDir())

				good := f.gen.records(3)
				var b strings.Builder
				b.WriteString("order_id,customer_id,product,amount\n")
				for i, r := range good {
					if i == 2 { // lines 2-3 good; line 4 opens the quote
						b.WriteString(tc.line + "\n")
					}
					fmt.Fprintf(&b, "%d,%s,%s,%d\n", r.OrderID, r.CustomerID, r.Product, r.Amount)
				}
				f.put("quote.csv", []byte(b.String()))
				_, r := f.runExpect(1)
				assertMentions(t, r, "quote.csv")
				if !strings.Contains(r.stderr, "line 4") || !strings.Contains(r.stderr, "quote") {
					t.Errorf("got stderr %q, want it to name line 4 and the quote", r.stderr)
				}
				if after := f.bookmark(); string(after.Version) != string(before.Version) {
					t.Errorf("bookmark moved by a failed run: version %s -> %s", before.Version, after.Version)
				}
				if got := relFiles(t, f.outDir()); strings.Join(got, "\n") != strings.Join(filesBefore, "\n") {
					t.Errorf("a failed run published files: before %d, after %d", len(filesBefore), len(got))
				}
				f.assertSink(first)
			})
		}
	}
}
