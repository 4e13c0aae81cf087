package enginetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// testPartitionTexts: a partition column's empty text is written in the
// folder p= and read back as the empty text, apart from its NULLs (in
// p=__HIVE_DEFAULT_PARTITION__); the text __HIVE_DEFAULT_PARTITION__
// itself, which every reader takes for NULL, fails the sink naming the
// column, alone or beside an empty text. So does the text NULL in any
// case, written in the folder p=NULL, which DuckDB reads back as NULL.
func (s *suite) testPartitionTexts(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	// JSON, so that the empty text and the NULL are two values.
	good := input(t, root, "good.json", []byte(`{"id":1,"p":"x"}`+"\n"+`{"id":2,"p":""}`+"\n"+`{"id":3,"p":null}`+"\n"))
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "p", Type: "VARCHAR"}}
	for _, format := range []string{"parquet", "csv", "json"} {
		t.Run(format, func(t *testing.T) {
			snk := sink(t, "out", "s", format)
			snk.PartitionBy = []string{"p"}
			res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "s", Format: "json", Schema: schema, Files: []engine.Input{good}}},
				Sinks: []engine.Sink{snk}})
			checkStaged(t, snk, res.Sinks["out"])
			rows := map[string]int64{}
			for _, f := range res.Sinks["out"].Files {
				rows[strings.SplitN(f.Path, "/", 2)[0]] += f.Rows
			}
			equal(t, "partitions", fmt.Sprint(rows), "map[p=:1 p=__HIVE_DEFAULT_PARTITION__:1 p=x:1]")

			for _, v := range []string{`{"id":4,"p":"__HIVE_DEFAULT_PARTITION__"}`, `{"id":4,"p":"__HIVE_DEFAULT_PARTITION__"}` + "\n" + `{"id":5,"p":""}`} {
				bad := input(t, root, "bad.json", []byte(`{"id":1,"p":"x"}`+"\n"+v+"\n"))
				snk := sink(t, "out", "s", format)
				snk.PartitionBy = []string{"p"}
				_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{{Ctx: "s", Format: "json", Schema: schema, Files: []engine.Input{bad}}},
					Sinks: []engine.Sink{snk}})
				if err == nil || !strings.Contains(err.Error(), "partition column p") || !strings.Contains(err.Error(), "__HIVE_DEFAULT_PARTITION__") {
					t.Errorf("got %v, want the sink refused naming partition column p and the text __HIVE_DEFAULT_PARTITION__", err)
				}
			}
			for _, text := range []string{"NULL", "null", "Null"} {
				bad := input(t, root, "bad.json", []byte(`{"id":1,"p":"x"}`+"\n"+`{"id":4,"p":"`+text+`"}`+"\n"))
				snk := sink(t, "out", "s", format)
				snk.PartitionBy = []string{"p"}
				_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{{Ctx: "s", Format: "json", Schema: schema, Files: []engine.Input{bad}}},
					Sinks: []engine.Sink{snk}})
				if err == nil || !strings.Contains(err.Error(), "partition column p") || !strings.Contains(err.Error(), `"`+text+`"`) {
					t.Errorf("the text %s: got %v, want the sink refused naming partition column p and the text", text, err)
				}
			}
		})
	}
}
