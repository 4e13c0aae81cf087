package enginetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// testNotCutSkipped: under on_bad_record skip and quarantine, a value that
// its column holds only with loss (a seventh fractional digit of a
// TIMESTAMP, a third decimal place of a DECIMAL(5,2), 128 in a TINYINT, a
// number past a DOUBLE's range) is a bad record like any other, in CSV
// and JSON: its row is left out and counted (quarantine: written to the
// rejects, naming the file), the other rows are kept as read, and the run
// succeeds. Neither infinity nor a rounded or cut value with exit 0, nor a
// failed run.
func (s *suite) testNotCutSkipped(t *testing.T) {
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
		{"double_range", "DOUBLE", "1.5", "1e400", "1.5"},
	} {
		schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: c.typ}}
		for _, format := range []string{"csv", "json"} {
			if c.typ == "TINYINT" && format == "csv" {
				continue // CSV readers refuse 128 as they read it: testBadValueInAnyColumn's kind
			}
			row := func(id int, v string) string {
				if format == "csv" {
					return fmt.Sprintf("%d,%s\n", id, v)
				}
				if c.typ == "TINYINT" || c.typ == "DOUBLE" || strings.HasPrefix(c.typ, "DECIMAL") {
					return fmt.Sprintf(`{"id":%d,"v":%s}`+"\n", id, v) // a JSON number
				}
				return fmt.Sprintf(`{"id":%d,"v":%q}`+"\n", id, v)
			}
			head := ""
			if format == "csv" {
				head = "id,v\n"
			}
			key := c.name + "/skip." + format
			in := input(t, root, key, []byte(head+row(1, c.good)+row(2, c.bad)+row(3, c.good)))
			for _, pol := range []string{engine.BadSkip, engine.BadQuarantine} {
				t.Run(c.name+"/"+format+"/"+pol, func(t *testing.T) {
					rejects := filepath.Join(t.TempDir(), "rejects")
					all := sink(t, "all", "o", "csv")
					ids := sink(t, "ids", "ids", "csv")
					res, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{{Ctx: "o", Format: format, Schema: schema, Files: []engine.Input{in}}},
						OnBadRecord: pol, Rejects: fileURL(rejects),
						Transforms: []engine.Transform{{Name: "ids", SQL: "SELECT id FROM o"}},
						Sinks:      []engine.Sink{all, ids}})
					if err != nil {
						t.Fatalf("execute: got %v, want the bad row skipped", err)
					}
					equal(t, "rejected", res.Sources["o"].Rejected, 1)
					equalRows(t, "every column", csvRows(t, all, res.Sinks["all"]), []string{"id,v", "1," + c.read, "3," + c.read})
					equalRows(t, "id alone", csvRows(t, ids, res.Sinks["ids"]), []string{"id", "1", "3"})
					if pol != engine.BadQuarantine {
						return
					}
					entries, err := os.ReadDir(filepath.Join(rejects, "o"))
					if err != nil || len(entries) == 0 {
						t.Fatalf("got %v (%v) under rejects/o, want the rejected row", entries, err)
					}
					data, err := os.ReadFile(filepath.Join(rejects, "o", entries[0].Name()))
					if err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(string(data), key) || !strings.Contains(string(data), c.bad) {
						t.Errorf("rejects %q do not name the file %s and hold the value %s", data, key, c.bad)
					}
				})
			}
		}
	}
}
