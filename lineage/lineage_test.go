package lineage_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/lineage"
)

const (
	olSchema      = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
	schemaFacet   = "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json"
	sourceFacet   = "https://openlineage.io/spec/facets/1-0-1/DatasourceDatasetFacet.json"
	statsFacet    = "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json"
	errorFacet    = "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json"
	bookmarkFacet = "https://raw.githubusercontent.com/tidemark-etl/tidemark/main/lineage/facets/BookmarkRunFacet.json"
)

// validEvent validates one event and each of its facets against the
// spec's schemas.
func validEvent(t *testing.T, v *validator, body []byte) {
	t.Helper()
	if err := v.validate(olSchema, body); err != nil {
		t.Errorf("event does not follow the OpenLineage schema: %v\n%s", err, body)
	}
	var raw struct {
		Run struct {
			Facets map[string]json.RawMessage `json:"facets"`
		} `json:"run"`
		Inputs, Outputs []struct {
			Facets       map[string]json.RawMessage `json:"facets"`
			OutputFacets map[string]json.RawMessage `json:"outputFacets"`
		}
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	check := func(schema, name string, facet json.RawMessage) {
		t.Helper()
		doc, _ := json.Marshal(map[string]json.RawMessage{name: facet})
		if err := v.validate(schema, doc); err != nil {
			t.Errorf("facet %s does not follow its schema: %v\n%s", name, err, doc)
		}
	}
	facetSchemas := map[string]string{"schema": schemaFacet, "dataSource": sourceFacet, "outputStatistics": statsFacet,
		"errorMessage": errorFacet, "tidemark_bookmark": bookmarkFacet}
	all := []map[string]json.RawMessage{raw.Run.Facets}
	for _, d := range append(raw.Inputs, raw.Outputs...) {
		all = append(all, d.Facets, d.OutputFacets)
	}
	for _, fs := range all {
		for name, f := range fs {
			s, ok := facetSchemas[name]
			if !ok {
				t.Errorf("facet %s: no schema to check it against", name)
				continue
			}
			check(s, name, f)
		}
	}
}

// TestRunEvents: a succeeded and a failed run send START then COMPLETE,
// START then FAIL, valid against the OpenLineage schema, with the same
// run UUID, the datasets named by the naming conventions, and the
// figures of the run's result.
func TestRunEvents(t *testing.T) {
	v := newValidator(t)
	rc := newReceiver(t)
	d := newJobDir(t)
	d.put("a.csv", "id,v\n1,x\n2,y\n3,z\n")
	d.put("b.csv", "id,v\n4,x\n")
	cfg := lineage.Config{URL: rc.URL, APIKey: "key-1234"}
	res, _, logs, err := run(t, d.spec(""), cfg, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d.put("c.csv", "id,v\n5,x\n")
	failed, _, _, ferr := run(t, d.spec("transforms:\n  t: SELECT no_such_column FROM landing\n"), cfg, 5*time.Second)
	if ferr == nil {
		t.Fatal("the second run succeeded; want it to fail")
	}
	evs, bodies := rc.events(t)
	if len(evs) != 4 {
		t.Fatalf("got %d events, want 4 (log: %s)", len(evs), logs)
	}
	for _, b := range bodies {
		validEvent(t, v, b)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.EventType)
	}
	if got, want := strings.Join(types, " "), "START COMPLETE START FAIL"; got != want {
		t.Errorf("event types: got %s, want %s", got, want)
	}
	for i, r := range []string{res.RunID, res.RunID, failed.RunID, failed.RunID} {
		if got, want := evs[i].Run.RunID, lineage.RunID("ljob", r); got != want {
			t.Errorf("event %d: run id %s, want %s", i, got, want)
		}
		if got, want := evs[i].Job, (lineage.Job{Namespace: "tidemark", Name: "ljob"}); got != want {
			t.Errorf("event %d: job %+v, want %+v", i, got, want)
		}
	}
	if evs[0].Run.RunID == evs[2].Run.RunID {
		t.Errorf("two runs share the run id %s", evs[0].Run.RunID)
	}
	for i, a := range rc.auth {
		if a != "Bearer key-1234" {
			t.Errorf("request %d: Authorization %q, want the bearer key", i, a)
		}
	}
	if rc.paths[0] != "/api/v1/lineage" {
		t.Errorf("posted to %s, want /api/v1/lineage", rc.paths[0])
	}

	complete := evs[1]
	if len(complete.Inputs) != 1 || len(complete.Outputs) != 1 {
		t.Fatalf("COMPLETE: got %d inputs and %d outputs, want 1 and 1", len(complete.Inputs), len(complete.Outputs))
	}
	in, out := complete.Inputs[0], complete.Outputs[0]
	if in.Namespace != "file" || in.Name != filepath.Join(d.dir, "in") {
		t.Errorf("input: got %s %s, want file %s", in.Namespace, in.Name, filepath.Join(d.dir, "in"))
	}
	if out.Namespace != "file" || out.Name != filepath.Join(d.dir, "out") {
		t.Errorf("output: got %s %s, want file %s", out.Namespace, out.Name, filepath.Join(d.dir, "out"))
	}
	var facets struct {
		Run struct {
			Facets struct {
				Bookmark lineage.BookmarkFacet `json:"tidemark_bookmark"`
			} `json:"facets"`
		} `json:"run"`
		Inputs []struct {
			Facets struct {
				Schema     lineage.SchemaFacet     `json:"schema"`
				DataSource lineage.DataSourceFacet `json:"dataSource"`
			} `json:"facets"`
		} `json:"inputs"`
		Outputs []struct {
			OutputFacets struct {
				Stats lineage.OutputStatisticsFacet `json:"outputStatistics"`
			} `json:"outputFacets"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(bodies[1], &facets); err != nil {
		t.Fatal(err)
	}
	bm := facets.Run.Facets.Bookmark
	if bm.Version != res.Version || bm.Version != 1 || bm.BaseVersion != 0 || bm.RunID != res.RunID || bm.Mode != "enable" {
		t.Errorf("bookmark facet: got %+v, want version %d from 0 of run %s", bm, res.Version, res.RunID)
	}
	st := facets.Outputs[0].OutputFacets.Stats
	sink := res.Sinks["out"]
	if st.RowCount != sink.Rows || st.Size != sink.Bytes || st.FileCount != sink.Files || st.RowCount != 4 {
		t.Errorf("outputStatistics: got %+v, want the run's sink count %+v (4 rows)", st, sink)
	}
	var cols []string
	for _, f := range facets.Inputs[0].Facets.Schema.Fields {
		cols = append(cols, f.Name)
	}
	if strings.Join(cols, ",") != "id,v" {
		t.Errorf("input schema: got %v, want id,v", cols)
	}
	if ds := facets.Inputs[0].Facets.DataSource; ds.Name != "file" || ds.URI != "file://"+filepath.ToSlash(filepath.Join(d.dir, "in")) {
		t.Errorf("input dataSource: got %+v", ds)
	}
	if !strings.Contains(string(bodies[3]), "no_such_column") || !strings.Contains(string(bodies[3]), `"errorMessage"`) {
		t.Errorf("FAIL carries no error message: %s", bodies[3])
	}
	if strings.Contains(string(bodies[3]), "outputStatistics") {
		t.Errorf("FAIL has output statistics: %s", bodies[3])
	}
}
