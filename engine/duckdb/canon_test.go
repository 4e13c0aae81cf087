package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// TestCanonRegistered: the engine registers the checks' fast path with the
// pinned duckdb-go (a duckdb-go whose vector handle changed would leave
// every check on its SQL path, correct but slower, silently).
func TestCanonRegistered(t *testing.T) {
	e := newEngine(t)
	if !e.canon {
		t.Fatalf("fast path not registered: %v", e.registerCanon())
	}
	got := query1(t, e, fmt.Sprintf("SELECT %[1]s('1'), %[1]s('01'), %[1]s(NULL) IS NULL, %[2]s('2024-02-29 23:59:59.999999'), %[2]s('2023-02-29 00:00:00')",
		canonKinds["INTEGER"].fn, canonKinds["TIMESTAMP"].fn))
	equal(t, "canonical?", got, "true|false|true|true|false")
}

func query1(tb testing.TB, e *Engine, q string) string {
	tb.Helper()
	rows, err := e.db.QueryContext(context.Background(), q)
	if err != nil {
		tb.Fatalf("query %s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		tb.Fatalf("query %s: no row", q)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		tb.Fatal(err)
	}
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, "|")
}

// TestCanonText: what the fast path takes as canonical; everything else
// is left to the exact check.
func TestCanonText(t *testing.T) {
	for _, tc := range []struct {
		typ, value string
		want       bool
	}{
		{"BIGINT", "0", true},
		{"BIGINT", "-7", true},
		{"BIGINT", "123456789012345678", true},
		{"BIGINT", "-999999999999999999", true},
		{"BIGINT", "1234567890123456789", false}, // 19 digits: the exact check decides
		{"BIGINT", "-0", false},
		{"BIGINT", "07", false},
		{"BIGINT", "+7", false},
		{"BIGINT", " 7", false},
		{"BIGINT", "7 ", false},
		{"BIGINT", "", false},
		{"BIGINT", "-", false},
		{"BIGINT", "1.0", false},
		{"BIGINT", "1e3", false},
		{"BIGINT", "0x1F", false},
		{"BIGINT", "1_000", false},
		{"INTEGER", "2147483647", true},
		{"INTEGER", "-2147483648", true},
		{"INTEGER", "2147483648", false},
		{"INTEGER", "-2147483649", false},
		{"SMALLINT", "32767", true},
		{"SMALLINT", "-32769", false},
		{"TINYINT", "-128", true},
		{"TINYINT", "128", false},
		{"DATE", "2024-02-29", true},
		{"DATE", "2023-02-29", false},
		{"DATE", "2000-02-29", true},
		{"DATE", "1900-02-29", false},
		{"DATE", "0001-01-01", true},
		{"DATE", "0000-01-01", false},
		{"DATE", "2024-13-01", false},
		{"DATE", "2024-1-05", false},
		{"DATE", "2024-01-01 00:00:00", false},
		{"TIMESTAMP", "2024-01-01 10:00:00", true},
		{"TIMESTAMP", "2024-01-01 10:00:00.5", true},
		{"TIMESTAMP", "2024-01-01 10:00:00.123456", true},
		{"TIMESTAMP", "2024-01-01 10:00:00.1234567", false},
		{"TIMESTAMP", "2024-01-01 10:00:00.", false},
		{"TIMESTAMP", "2024-01-01 10:00:00,5", false},
		{"TIMESTAMP", "2024-01-01T10:00:00", false},
		{"TIMESTAMP", "2024-01-01 10:00:00Z", false},
		{"TIMESTAMP", "2024-01-01 10:00:00+00", false},
		{"TIMESTAMP", "2024-01-01 24:00:00", false},
		{"TIMESTAMP", "2024-01-01 23:59:60", false},
		{"TIMESTAMP", "2024-01-01 10:00", false},
		{"TIMESTAMP", "2024-01-01", false},
	} {
		if got := canonKinds[tc.typ].check(tc.value); got != tc.want {
			t.Errorf("%s %q: canonical = %v, want %v", tc.typ, tc.value, got, tc.want)
		}
	}
}

// TestCanonSameAsExact: every value, canonical or not, reads the same and
// fails with the same error (file, line, column, message) with the fast
// path as with the exact check alone, from CSV and from JSON, in the fail
// and the skip policy.
func TestCanonSameAsExact(t *testing.T) {
	fast, slow := newEngine(t), newEngine(t)
	slow.canon = false
	edge := map[string][]string{
		"BIGINT": {"0", "-0", "7", "-7", "+7", "007", " 7", "7 ", "", "123456789012345678", "-123456789012345678",
			"999999999999999999", "1234567890123456789", "9223372036854775807", "-9223372036854775808",
			"9223372036854775808", "-9223372036854775809", "1.0", "1e3", "1.5", "0x1F", "1_000", "abc", "--1", "-"},
		"INTEGER":  {"2147483647", "-2147483648", "2147483648", "-2147483649", "02147483647"},
		"SMALLINT": {"32767", "-32768", "32768", "-32769"},
		"TINYINT":  {"127", "-128", "128", "-129", "0"},
		"DATE": {"2024-02-29", "2023-02-29", "2024-13-01", "2024-00-10", "0001-01-01", "0000-01-01", "9999-12-31",
			"2024-1-5", "2024-01-01 00:00:00", "2024-01-01 10:00:00", " 2024-01-01", "2024-01-01T00:00:00", ""},
		"TIMESTAMP": {"2024-01-01 10:00:00", "2024-01-01 10:00:00.", "2024-01-01 10:00:00.5", "2024-01-01 10:00:00.123456",
			"2024-01-01 10:00:00.1234567", "2024-01-01 10:00:00.1234560", "2024-01-01 24:00:00", "2024-01-01 23:59:60",
			"2024-01-01T10:00:00", "2024-01-01 10:00:00Z", "2024-01-01 10:00:00+00", "2024-01-01 10:00:00+02",
			"2024-01-01 10:00:00,5", "2024-02-30 10:00:00", "2024-01-01 10:00", "2024-01-01", "0001-01-01 00:00:00",
			"9999-12-31 23:59:59.999999", ""},
	}
	edge["TIMESTAMP WITH TIME ZONE"] = edge["TIMESTAMP"]
	for typ, values := range edge {
		for _, format := range []string{"csv", "json"} {
			// Under skip, all of the type's values in one file: the same
			// rows kept, the same rejected.
			var all []string
			for _, v := range values {
				all = append(all, csvOrJSON(format, v, false))
				if format == "json" && json.Valid([]byte(v)) && strings.TrimSpace(v) != "" {
					all = append(all, csvOrJSON(format, v, true))
				}
			}
			for i := range all {
				if format == "csv" && i > 0 {
					all[i] = strings.TrimPrefix(all[i], "id,v\n")
				}
			}
			content := strings.Join(all, "")
			got, want := canonOutcome(t, fast, format, engine.BadSkip, typ, content), canonOutcome(t, slow, format, engine.BadSkip, typ, content)
			if got != want {
				t.Errorf("%s skip %s:\n fast %s\nexact %s", format, typ, got, want)
			}
			for _, v := range values {
				name := fmt.Sprintf("%s %s %q", format, typ, v)
				content := csvOrJSON(format, v, false)
				if got, want := canonOutcome(t, fast, format, engine.BadFail, typ, content), canonOutcome(t, slow, format, engine.BadFail, typ, content); got != want {
					t.Errorf("%s:\n fast %s\nexact %s", name, got, want)
				}
				if format == "json" && json.Valid([]byte(v)) && strings.TrimSpace(v) != "" {
					content := csvOrJSON(format, v, true)
					if got, want := canonOutcome(t, fast, format, engine.BadFail, typ, content), canonOutcome(t, slow, format, engine.BadFail, typ, content); got != want {
						t.Errorf("%s as a JSON number:\n fast %s\nexact %s", name, got, want)
					}
				}
			}
		}
	}
}

// csvOrJSON is a file of three rows: a NULL, the value v (quoted; for JSON
// with number, as a bare number) and a missing value after it.
func csvOrJSON(format, v string, number bool) string {
	if format == "csv" {
		return "id,v\n1,\n2,\"" + v + "\"\n3,\n"
	}
	js, _ := json.Marshal(v)
	if number {
		js = []byte(v)
	}
	return `{"id":1,"v":null}` + "\n" + `{"id":2,"v":` + string(js) + "}\n" + `{"id":3}` + "\n"
}

// canonOutcome converts content with e and says what came of it: the rows
// read back, the rejected count, or the error's file, line, column and
// message.
func canonOutcome(t *testing.T, e *Engine, format, policy, typ, content string) string {
	t.Helper()
	root := t.TempDir()
	in := input(t, root, "x."+format, []byte(content))
	out := filepath.Join(t.TempDir(), "out")
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: typ}}
	res, err := e.Execute(context.Background(), engine.Plan{
		OnBadRecord: policy,
		Sources:     []engine.Source{{Ctx: "src", Format: format, Schema: schema, Files: []engine.Input{in}}},
		Sinks:       []engine.Sink{{Ctx: "snk", Format: "parquet", Location: out}},
	})
	if err != nil {
		ie := inputError(t, err)
		return fmt.Sprintf("error %s:%d column %s: %s", ie.File, ie.Line, ie.Column, ie.Msg)
	}
	rows := query(t, "SELECT id, v FROM read_parquet("+literal(filepath.Join(out, "*.parquet"))+") ORDER BY ALL")
	return fmt.Sprintf("rows %v, %d rejected", rows, res.Sources["src"].Rejected)
}
