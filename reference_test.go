package tidemark_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/tidemark-etl/tidemark/job"
)

var updateReadme = flag.Bool("update", false, "rewrite the README's generated job-file reference")

// TestReadmeReference: the README's job-file reference is the one
// generated from the components' configs (every key, type, default and
// doc); -update rewrites it.
func TestReadmeReference(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := job.SpliceReference(readme)
	if err != nil {
		t.Fatal(err)
	}
	if *updateReadme {
		if err := os.WriteFile("README.md", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(readme, want) {
		t.Errorf("README.md's job-file reference is stale: run go test . -run TestReadmeReference -update")
	}
}
