package lineage_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemas are the OpenLineage spec's own schema files (testdata/README.md
// has their version) and tidemark's run facet, each under its $id.
var schemaFiles = map[string]string{
	"https://openlineage.io/spec/2-0-2/OpenLineage.json":                                                "testdata/OpenLineage.json",
	"https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json":                                  "testdata/facets/SchemaDatasetFacet.json",
	"https://openlineage.io/spec/facets/1-0-1/DatasourceDatasetFacet.json":                              "testdata/facets/DatasourceDatasetFacet.json",
	"https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json":                  "testdata/facets/OutputStatisticsOutputDatasetFacet.json",
	"https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json":                                "testdata/facets/ErrorMessageRunFacet.json",
	"https://raw.githubusercontent.com/tidemark-etl/tidemark/main/lineage/facets/BookmarkRunFacet.json": "facets/BookmarkRunFacet.json",
}

// validator validates events and facets against the checked-in schemas,
// offline, with format assertions (uri, date-time, uuid) on.
type validator struct {
	t       *testing.T
	schemas map[string]*jsonschema.Schema
}

func newValidator(t *testing.T) *validator {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for id, file := range schemaFiles {
		data, err := os.ReadFile(filepath.FromSlash(file))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatal(err)
		}
	}
	v := &validator{t: t, schemas: map[string]*jsonschema.Schema{}}
	for id := range schemaFiles {
		s, err := c.Compile(id)
		if err != nil {
			t.Fatalf("compiling %s: %v", id, err)
		}
		v.schemas[id] = s
	}
	return v
}

// validate checks doc (JSON) against the schema with id.
func (v *validator) validate(id string, doc []byte) error {
	v.t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		v.t.Fatalf("decoding %s: %v", doc, err)
	}
	s, ok := v.schemas[id]
	if !ok {
		v.t.Fatalf("no schema %s", id)
	}
	return s.Validate(inst)
}

// TestValidatorRejects: the validator is no rubber stamp.
func TestValidatorRejects(t *testing.T) {
	v := newValidator(t)
	ol := "https://openlineage.io/spec/2-0-2/OpenLineage.json"
	good := `{"eventType":"START","eventTime":"2026-01-02T03:04:05Z","producer":"https://x.example/p",
		"schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
		"run":{"runId":"0b6f8f7e-5f1a-4c57-9d3e-1c2a3b4c5d6e"},"job":{"namespace":"n","name":"j"}}`
	if err := v.validate(ol, []byte(good)); err != nil {
		t.Fatalf("a valid event: %v", err)
	}
	for name, bad := range map[string]string{
		"bad run id":     `{"eventType":"START","eventTime":"2026-01-02T03:04:05Z","producer":"https://x.example/p","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json","run":{"runId":"run-1"},"job":{"namespace":"n","name":"j"}}`,
		"no producer":    `{"eventType":"START","eventTime":"2026-01-02T03:04:05Z","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json","run":{"runId":"0b6f8f7e-5f1a-4c57-9d3e-1c2a3b4c5d6e"},"job":{"namespace":"n","name":"j"}}`,
		"bad event type": `{"eventType":"DONE","eventTime":"2026-01-02T03:04:05Z","producer":"https://x.example/p","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json","run":{"runId":"0b6f8f7e-5f1a-4c57-9d3e-1c2a3b4c5d6e"},"job":{"namespace":"n","name":"j"}}`,
	} {
		if err := v.validate(ol, []byte(bad)); err == nil {
			t.Errorf("%s: got valid, want an error", name)
		}
	}
	if err := v.validate("https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json",
		[]byte(`{"outputStatistics":{"_producer":"https://x.example/p","_schemaURL":"https://x.example/s","rowCount":"many"}}`)); err == nil {
		t.Errorf("a rowCount that is no integer: got valid")
	}
}
