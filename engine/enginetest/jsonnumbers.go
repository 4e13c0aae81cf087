package enginetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// testJSONNumbersAsWritten: a JSON number is read as written into a
// DECIMAL(38,10) column, at the type's limits too (a reader that parses
// numbers into a DOUBLE first read -99999999.9999999999 as
// -100000000.0000000000 with exit 0, and refused the 38-digit limit), and
// into a VARCHAR column as its text (1.50, not 1.5; 1e3, not 1000.0),
// plain and under skip, where files are read another way; a line
// quarantined shows its numbers as written too.
func (s *suite) testJSONNumbersAsWritten(t *testing.T) {
	e := s.engine(t)
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "d", Type: "DECIMAL(38,10)"}, {Name: "s", Type: "VARCHAR"}}
	in := input(t, t.TempDir(), "n.json", []byte(`{"id":1,"d":-99999999.9999999999,"s":1.50}`+"\n"+
		`{"id":2,"d":9999999999999999999999999999.9999999999,"s":1e3}`+"\n"+
		`{"id":3,"d":-9999999999999999999999999999.9999999999,"s":-0.0}`+"\n"+
		`{"id":4, "d" : 1234567890123456.7890123456 , "s" : 12345678901234567890.123}`+"\n"+
		`{"id":5,"d":"1.5","s":"1.50"}`+"\n"))
	want := []string{"id,d,s",
		"1,-99999999.9999999999,1.50",
		"2,9999999999999999999999999999.9999999999,1e3",
		"3,-9999999999999999999999999999.9999999999,-0.0",
		"4,1234567890123456.7890123456,12345678901234567890.123",
		"5,1.5000000000,1.50"}
	for _, pol := range []string{engine.BadFail, engine.BadSkip} {
		t.Run(pol, func(t *testing.T) {
			out := sink(t, "out", "n", "csv")
			res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "n", Format: "json", Schema: schema, Files: []engine.Input{in}}},
				OnBadRecord: pol, Sinks: []engine.Sink{out}})
			equalRows(t, "rows", csvRows(t, out, res.Sinks["out"]), want)
			equal(t, "rejected", res.Sources["n"].Rejected, 0)
		})
	}
}

func (s *suite) testJSONNumbersQuarantined(t *testing.T) {
	e := s.engine(t)
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "s", Type: "VARCHAR"}}
	in := input(t, t.TempDir(), "q.json", []byte(`{"id":1,"s":2.50}`+"\n"+`{"id":"x","s":1.50}`+"\n"))
	rejects := filepath.Join(t.TempDir(), "rejects")
	out := sink(t, "out", "q", "csv")
	res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "q", Format: "json", Schema: schema, Files: []engine.Input{in}}},
		OnBadRecord: engine.BadQuarantine, Rejects: fileURL(rejects), Sinks: []engine.Sink{out}})
	equalRows(t, "rows", csvRows(t, out, res.Sinks["out"]), []string{"id,s", "1,2.50"})
	equal(t, "rejected", res.Sources["q"].Rejected, 1)
	entries, err := os.ReadDir(filepath.Join(rejects, "q"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("got %v (%v) under rejects/q, want the rejected line", entries, err)
	}
	data, err := os.ReadFile(filepath.Join(rejects, "q", entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "1.50}") || strings.Contains(string(data), `""1.50""`) {
		t.Errorf("rejects %q do not hold the line as written ({\"id\":\"x\",\"s\":1.50})", data)
	}
}
