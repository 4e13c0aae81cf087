package enginetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// testHugeIntegers: a first run types a CSV column of integers past
// BIGINT as DECIMAL(p,0), p the most digits of its values (Spark's
// decimal(20,0)), and keeps every value exactly (DuckDB inferred DOUBLE and
// wrote 12345678901234567890 as 1.2345678901234567e+19); a later run whose
// value does not fit the recorded BIGINT or DECIMAL(20,0) is a bad record
// naming its line.
func (s *suite) testHugeIntegers(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	in := input(t, root, "h.csv", []byte("id,big\n1,12345678901234567890\n2,42\n3,-9223372036854775809\n"))
	snk := sink(t, "out", "h", "csv")
	res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "h", Format: "csv", Files: []engine.Input{in}}}, Sinks: []engine.Sink{snk}})
	equal(t, "schema", fmt.Sprint(res.Sources["h"].Schema), "[{id BIGINT} {big DECIMAL(20,0)}]")
	equalRows(t, "rows", csvRows(t, snk, res.Sinks["out"]), []string{"id,big", "1,12345678901234567890", "2,42", "3,-9223372036854775809"})

	// Fractions a DOUBLE would round, and an integer past BIGINT beside
	// a fraction, are kept as text; 0.30000000000000004 is a DOUBLE's own.
	long := input(t, root, "f.csv", []byte("id,x,y,z\n1,0.12345678901234567890,0.30000000000000004,12345678901234567890\n2,1.5,2.5,1.5\n"))
	snk = sink(t, "out", "f", "csv")
	res = execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "f", Format: "csv", Files: []engine.Input{long}}}, Sinks: []engine.Sink{snk}})
	equal(t, "schema of long numbers", fmt.Sprint(res.Sources["f"].Schema), "[{id BIGINT} {x VARCHAR} {y DOUBLE} {z VARCHAR}]")
	equalRows(t, "rows of long numbers", csvRows(t, snk, res.Sinks["out"]),
		[]string{"id,x,y,z", "1,0.12345678901234567890,0.30000000000000004,12345678901234567890", "2,1.5,2.5,1.5"})

	for typ, v := range map[string]string{"BIGINT": "9223372036854775808", "DECIMAL(20,0)": "123456789012345678901"} {
		bad := input(t, root, "bad.csv", []byte("id,big\n1,5\n2,"+v+"\n"))
		schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "big", Type: typ}}
		_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{{Ctx: "h", Format: "csv", Schema: schema, Files: []engine.Input{bad}}},
			Sinks: []engine.Sink{sink(t, "out", "h", "csv")}})
		if err == nil || !strings.Contains(err.Error(), "line 3") {
			t.Errorf("%s into %s: got %v, want a bad record naming line 3", v, typ, err)
		}
	}
}
