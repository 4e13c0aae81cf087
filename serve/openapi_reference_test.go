package serve

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/docgen"
)

var updateOpenAPIReference = flag.Bool("update", false, "rewrite docs/reference/openapi.md's generated HTTP API reference")

// openAPIPage is the docs site's HTTP API reference.
const openAPIPage = "../docs/reference/openapi.md"

// TestOpenAPIReference: the docs site's HTTP API reference is the one
// generated from the OpenAPI document serve answers with (every route and
// schema); -update rewrites it.
func TestOpenAPIReference(t *testing.T) {
	doc, err := json.Marshal(openAPIDoc())
	if err != nil {
		t.Fatal(err)
	}
	gen, err := docgen.OpenAPIReference(doc)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(openAPIPage)
	if err != nil {
		t.Fatal(err)
	}
	want, err := docgen.Splice(text, docgen.OpenAPIBegin, docgen.OpenAPIEnd, gen)
	if err != nil {
		t.Fatal(err)
	}
	if *updateOpenAPIReference {
		if err := os.WriteFile(openAPIPage, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(text, want) {
		t.Errorf("docs/reference/openapi.md's HTTP API reference is stale: run go test ./serve -run TestOpenAPIReference -update")
	}
	// Every route of the document has its section.
	for path, ops := range openAPIDoc()["paths"].(obj) {
		for method := range ops.(obj) {
			if h := "### " + strings.ToUpper(method) + " " + path + "\n"; !strings.Contains(string(want), h) {
				t.Errorf("the reference has no %q", h)
			}
		}
	}
}
