package enginetest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// testTextOutput: CSV and JSON sinks write every value as the DuckDB
// engine writes it, byte for byte: timestamps with their microseconds
// (trailing zeros left out, an instant in UTC with +00), a NULL of JSON as
// null, an empty text apart from a NULL. A writer that cut timestamps to
// milliseconds changed values with exit 0.
func (s *suite) testTextOutput(t *testing.T) {
	e := s.engine(t)
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "ts", Type: "TIMESTAMP"},
		{Name: "tz", Type: "TIMESTAMP WITH TIME ZONE"}, {Name: "d", Type: "DATE"}, {Name: "s", Type: "VARCHAR"}}
	// JSON, so that the empty text and the NULL are two values.
	in := input(t, t.TempDir(), "a.json", []byte(
		`{"id":1,"ts":"2026-01-02 10:00:00.123456","tz":"2026-01-02 10:00:00.123456+00","d":"0001-01-01","s":"say \"hi\""}`+"\n"+
			`{"id":2,"ts":"2026-01-02 10:00:00.000001","tz":"1969-12-31 23:59:59.999999Z","d":"9999-12-31","s":"é ✓"}`+"\n"+
			`{"id":3,"ts":"1969-12-31 23:59:59.12","tz":"2026-01-02 12:00:00+02:00","d":"1969-12-31","s":""}`+"\n"+
			`{"id":4,"ts":null,"tz":null,"d":null,"s":null}`+"\n"))
	want := map[string][]string{
		"csv": {
			"id,ts,tz,d,s",
			`1,2026-01-02 10:00:00.123456,2026-01-02 10:00:00.123456+00,0001-01-01,"say ""hi"""`,
			"2,2026-01-02 10:00:00.000001,1969-12-31 23:59:59.999999+00,9999-12-31,é ✓",
			`3,1969-12-31 23:59:59.12,2026-01-02 10:00:00+00,1969-12-31,""`,
			"4,,,,",
		},
		"json": {
			`{"id":1,"ts":"2026-01-02 10:00:00.123456","tz":"2026-01-02 10:00:00.123456+00","d":"0001-01-01","s":"say \"hi\""}`,
			`{"id":2,"ts":"2026-01-02 10:00:00.000001","tz":"1969-12-31 23:59:59.999999+00","d":"9999-12-31","s":"é ✓"}`,
			`{"id":3,"ts":"1969-12-31 23:59:59.12","tz":"2026-01-02 10:00:00+00","d":"1969-12-31","s":""}`,
			`{"id":4,"ts":null,"tz":null,"d":null,"s":null}`,
		},
	}
	for _, format := range []string{"csv", "json"} {
		t.Run(format, func(t *testing.T) {
			snk := sink(t, "out", "a", format)
			res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "a", Format: "json", Schema: schema, Files: []engine.Input{in}}},
				Sinks: []engine.Sink{snk}})
			equalRows(t, "lines written", fileLines(t, snk, res.Sinks["out"], format == "csv"), want[format])
		})
	}
}

// fileLines is the lines of the files a sink wrote, sorted (a CSV header
// first, once).
func fileLines(t *testing.T, s engine.Sink, res engine.SinkResult, header bool) []string {
	t.Helper()
	var head string
	var lines []string
	for _, f := range res.Files {
		data, err := os.ReadFile(filepath.Join(localDir(t, s), filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		ls := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if header {
			head, ls = ls[0], ls[1:]
		}
		lines = append(lines, ls...)
	}
	sort.Strings(lines)
	if header {
		return append([]string{head}, lines...)
	}
	return lines
}
