package all_test

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	_ "github.com/tidemark-etl/tidemark/all"
	"github.com/tidemark-etl/tidemark/job"
)

var updateReference = flag.Bool("update", false, "rewrite docs/reference/job-file.md's generated job-file reference")

// references are the pages whose job-file reference documents the kinds
// this package links: the docs site's page.
var references = []string{"../docs/reference/job-file.md"}

// TestJobFileReference: each page's job-file reference is the one
// generated from the components' configs (every key, type, default and
// doc); -update rewrites it.
func TestJobFileReference(t *testing.T) {
	for _, page := range references {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		want, err := job.SpliceReference(text)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		if *updateReference {
			if err := os.WriteFile(page, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !bytes.Equal(text, want) {
			t.Errorf("%s's job-file reference is stale: run go test ./all -run TestJobFileReference -update", page)
		}
	}
}

// TestEveryKeyDocumented: every key of every kind built into the program
// has a doc and a row in the reference.
func TestEveryKeyDocumented(t *testing.T) {
	ref := job.Reference()
	kinds := map[string][]job.Kind{"engine": job.EngineKinds(), "source": job.SourceKinds(), "sink": job.SinkKinds()}
	for what, want := range map[string]int{"engine": 2, "source": 3, "sink": 3} {
		if got := len(kinds[what]); got != want {
			t.Errorf("%s kinds: got %d, want %d", what, got, want)
		}
	}
	for what, ks := range kinds {
		for _, k := range ks {
			ct := reflect.TypeOf(k.New()).Elem()
			for i := range ct.NumField() {
				f := ct.Field(i)
				key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
				if key == "-" {
					continue // set by the component itself, not a job-file key
				}
				if key == "" {
					t.Errorf("%s %s: field %s has no yaml key", what, k.Name, f.Name)
					continue
				}
				if f.Tag.Get("doc") == "" {
					t.Errorf("%s %s: key %s has no doc", what, k.Name, key)
				}
				// A block's key (iceberg:) has a row per key inside it.
				if !strings.Contains(ref, "| `"+key+"` |") && !strings.Contains(ref, "| `"+key+".") {
					t.Errorf("%s %s: key %s is not in the reference", what, k.Name, key)
				}
			}
		}
	}
}
