package enginetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// testTimeNotCut: under on_bad_record fail, a value that a DATE or
// TIMESTAMP column holds only with loss (a time of day in a date, a
// seventh fractional digit that is not zero) fails the run naming file
// and line, in CSV and JSON; a zero there, or midnight, is read.
func (s *suite) testTimeNotCut(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	for _, c := range []struct {
		name, typ, good, bad, read string
	}{
		{"date_with_time", "DATE", "2026-01-02", "2026-01-02 10:30:00", "2026-01-02"},
		{"timestamp_7_digits", "TIMESTAMP", "2026-01-02 10:00:00.1234560", "2026-01-02 10:00:00.1234567", "2026-01-02 10:00:00.123456"},
		{"timestamptz_7_digits", "TIMESTAMP WITH TIME ZONE", "2026-01-02 10:00:00.1234560+00", "2026-01-02 10:00:00.0000001+00", "2026-01-02 10:00:00.123456+00"},
	} {
		schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: c.typ}}
		for _, format := range []string{"csv", "json"} {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				row := func(id int, v string) string {
					if format == "csv" {
						return fmt.Sprintf("%d,%s\n", id, v)
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
