package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tidemark-etl/tidemark/internal/docgen"
)

var updateCLIReference = flag.Bool("update", false, "rewrite docs/reference/cli.md's generated command reference")

// cliReferencePage is the docs site's command-line reference.
const cliReferencePage = "../../docs/reference/cli.md"

// TestCLIReference: the docs site's command reference is the one generated
// from the cobra commands (every command, its usage, examples and flags);
// -update rewrites it.
func TestCLIReference(t *testing.T) {
	text, err := os.ReadFile(cliReferencePage)
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCmd(&globals{}, new(bool))
	want, err := docgen.Splice(text, docgen.CLIBegin, docgen.CLIEnd, docgen.CLIReference(root))
	if err != nil {
		t.Fatal(err)
	}
	if *updateCLIReference {
		if err := os.WriteFile(cliReferencePage, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(text, want) {
		t.Errorf("docs/reference/cli.md's command reference is stale: run go test ./cmd/tidemark -run TestCLIReference -update")
	}
	// Every command and every flag of the tree is on the page.
	walk(root, func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		if !strings.Contains(string(want), "# "+c.CommandPath()+"\n") {
			t.Errorf("the reference has no section for %s", c.CommandPath())
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Name != "help" && !strings.Contains(string(want), "`--"+f.Name+"`") {
				t.Errorf("the reference has no flag --%s of %s", f.Name, c.CommandPath())
			}
		})
	})
}
