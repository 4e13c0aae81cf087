package duckdb

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// TestJSONKeysSameAsDuckDB: the key check finds the same key outside the
// schema (or none) with Go's scan as with DuckDB's alone (forced here by
// the maximum_object_size option, which only DuckDB's check honours), and
// the run fails with the same error or reads the same rows.
func TestJSONKeysSameAsDuckDB(t *testing.T) {
	e := newEngine(t)
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "VARCHAR"}}
	for _, tc := range []struct {
		name, b string
		want    string // part of the error, or "" for none
	}{
		{"known keys", `{"id":2,"amount":"x"}` + "\n" + `{"amount":"y","id":3}`, ""},
		{"a new key", `{"id":2,"amount":"x"}` + "\n" + `{"id":3,"amount":"y","coupon":"z"}`, "key coupon, which is not in the source's schema"},
		{"a key in another case", `{"id":2,"Amount":"x"}`, "differs from the source's column amount only in case"},
		{"an escaped known key", `{"id":2,"\u0061mount":"x"}`, ""},
		{"an escaped new key", `{"id":2,"c\u006fupon":"x"}`, "key coupon"},
		{"nested keys", `{"id":2,"amount":{"coupon":[1,{"x":null}],"y":"}"}}`, ""},
		{"quotes and braces in strings", `{"id":2,"amount":"a\"}{,\"coupon\":1"}`, ""},
		{"a new key after an array", `{"id":2,"amount":[1,2,[3]],"coupon":true}`, "key coupon"},
		{"blank lines and spaces", "\n  \n" + ` { "id" : 2 , "amount" : -1.5e3 } ` + "\n\n", ""},
		{"an empty object", `{}`, ""},
		{"not an object", `[1,2]`, ""},
		{"not JSON", `{"id":2,"coupon":}`, ""},
		{"two objects on a line", `{"id":2} {"coupon":1}`, ""},
		{"a byte-order mark", "\uFEFF" + `{"id":2,"coupon":1}`, ""},
		{"a bad number", `{"id":2,"amount":01,"coupon":1}`, ""},
		{"a bad escape", `{"id":2,"amount":"\q","coupon":1}`, ""},
		{"not UTF-8", `{"id":2,"amount":"` + "\xff" + `","coupon":1}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outcome := func(opts map[string]any) string {
				root := t.TempDir()
				files := []engine.Input{input(t, root, "a.json", []byte(`{"id":1,"amount":"a"}`+"\n")), input(t, root, "b.json", []byte(tc.b))}
				out := filepath.Join(t.TempDir(), "out")
				_, err := e.Execute(context.Background(), engine.Plan{
					Sources: []engine.Source{{Ctx: "src", Format: "json", Schema: schema, Options: opts, Files: files}},
					Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: out}},
				})
				if err != nil {
					return err.Error()
				}
				return fmt.Sprint(query(t, "SELECT * FROM read_parquet("+literal(filepath.Join(out, "*.parquet"))+") ORDER BY ALL"))
			}
			got, want := outcome(nil), outcome(map[string]any{"maximum_object_size": 16777216})
			if got != want {
				t.Errorf("go's scan:\n %s\nduckdb's:\n %s", got, want)
			}
			if tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("got %s, want an error with %q", got, tc.want)
			}
		})
	}
}
