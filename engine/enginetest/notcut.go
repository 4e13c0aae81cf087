package enginetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// testNotCut: under on_bad_record fail, a value that its column's type
// holds only with loss (a time of day in a DATE, a seventh fractional
// digit of a TIMESTAMP that is not zero, a third decimal place of a
// DECIMAL(5,2), 128 in a TINYINT) fails the run naming file and line, in
// CSV and JSON; a zero there, or midnight, is read.
func (s *suite) testNotCut(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	for _, c := range []struct {
		name, typ, good, bad, read string
	}{
		{"date_with_time", "DATE", "2026-01-02", "2026-01-02 10:30:00", "2026-01-02"},
		{"timestamp_7_digits", "TIMESTAMP", "2026-01-02 10:00:00.1234560", "2026-01-02 10:00:00.1234567", "2026-01-02 10:00:00.123456"},
		{"timestamptz_7_digits", "TIMESTAMP WITH TIME ZONE", "2026-01-02 10:00:00.1234560+00", "2026-01-02 10:00:00.0000001+00", "2026-01-02 10:00:00.123456+00"},
		{"decimal_places", "DECIMAL(5,2)", "1.230", "1.234", "1.23"},
		{"decimal_exponent", "DECIMAL(5,2)", "1.5e-1", "1.5e-3", "0.15"},
		{"tinyint_range", "TINYINT", "127", "128", "127"},
	} {
		schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: c.typ}}
		for _, format := range []string{"csv", "json"} {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				row := func(id int, v string) string {
					if format == "csv" {
						return fmt.Sprintf("%d,%s\n", id, v)
					}
					if c.typ == "TINYINT" || strings.HasPrefix(c.typ, "DECIMAL") {
						return fmt.Sprintf(`{"id":%d,"v":%s}`+"\n", id, v) // a JSON number
					}
					return fmt.Sprintf(`{"id":%d,"v":%q}`+"\n", id, v)
				}
				head := ""
				if format == "csv" {
					head = "id,v\n"
				}
				good := input(t, root, c.name+"/good."+format, []byte(head+row(1, c.good)))
				snk := sink(t, "out", "o", "csv")
				res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "o", Format: format, Schema: schema, Files: []engine.Input{good}}},
					Sinks: []engine.Sink{snk}})
				equalRows(t, "good value", csvRows(t, snk, res.Sinks["out"]), []string{"id,v", "1," + c.read})

				key := c.name + "/bad." + format
				bad := input(t, root, key, []byte(head+row(1, c.good)+row(2, c.bad)))
				_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{{Ctx: "o", Format: format, Schema: schema, Files: []engine.Input{bad}}},
					Sinks: []engine.Sink{sink(t, "out", "o", "csv")}})
				var ie *engine.InputError
				if !errors.As(err, &ie) {
					t.Fatalf("got error %v, want an *engine.InputError naming %s", err, key)
				}
				equal(t, "file", ie.File, key)
				equal(t, "line", ie.Line, map[string]int64{"csv": 3, "json": 2}[format])
				if ie.Column != "" {
					equal(t, "column", ie.Column, "v")
				}
			})
		}
	}
}
