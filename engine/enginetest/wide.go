package enginetest

import (
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// testHugeIntToParquet: a HUGEINT column past BIGINT's range (a JSON
// number of 20 or 38 digits) written to Parquet reads back with every
// digit. DuckDB's Parquet writer wrote HUGEINT as a DOUBLE, so
// 12345678901234567890 came back as 12345678901234567168, exit 0.
func (s *suite) testHugeIntToParquet(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	in := input(t, root, "wide.json", []byte(`{"id":1,"big":12345678901234567890}`+"\n"+
		`{"id":2,"big":-99999999999999999999999999999999999999}`+"\n"+`{"id":3,"big":null}`+"\n"))
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "big", Type: "HUGEINT"}}
	snk := sink(t, "out", "s", "parquet")
	res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "s", Format: "json", Schema: schema, Files: []engine.Input{in}}},
		Sinks: []engine.Sink{snk}})
	equalRows(t, "rows read back", readBack(t, e, snk, res.Sinks["out"]),
		[]string{"id,big", "1,12345678901234567890", "2,-99999999999999999999999999999999999999", "3,"})
}
