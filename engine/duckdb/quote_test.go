package duckdb

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
)

// TestQuoteIsNotSniffed: the quote character is the job's or '"', never
// one DuckDB's sniffer guesses from a sample. Given escape '\', the sniffer
// settled on the quote "'" for a file quoted with '"', and "a\"b" was read
// with its quotes and backslash, exit 0; a file whose apostrophes pair up
// could be read with them as quotes.
func TestQuoteIsNotSniffed(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name, content string
		opts          map[string]any
		want          string
	}{
		{"escape backslash, header false", "1,\"a\\\"b\",x\n2,\"c\\\\d\",y\n", map[string]any{"header": false, "escape": `\`},
			`[1|a"b|x 2|c\d|y]`},
		{"escape backslash, a doubled quote", "1,\"a\\\"b\",x\n2,\"c\"\"d\",y\n", map[string]any{"header": false, "escape": `\`}, `error: a.csv`},
		{"apostrophes", "id,name,n\n1,'a,b',2\n3,'c',4\n", nil, `error: a.csv line 2`},
		{"job's quote", "id,name,n\n1,'a,b',2\n", map[string]any{"quote": "'"}, `[1|a,b|2]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			src := engine.Source{Ctx: "src", Format: "csv", Options: c.opts,
				Files: []engine.Input{input(t, root, "a.csv", []byte(c.content))}}
			out := filepath.Join(t.TempDir(), "out")
			_, err := e.Execute(t.Context(), engine.Plan{
				Sources: []engine.Source{src},
				Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: out}},
			})
			if want, ok := strings.CutPrefix(c.want, "error: "); ok {
				// A row split at the comma between apostrophes has a field
				// too many; "c""d" is no field under escape '\': refused
				// naming the file, not read with another quote.
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %v, want an error naming %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rows := query(t, fmt.Sprintf("SELECT concat_ws('|', COLUMNS(*)) FROM read_parquet(%s)", literal(filepath.Join(out, "*.parquet"))))
			slices.Sort(rows)
			equal(t, "rows", fmt.Sprint(rows), c.want)
		})
	}
}
