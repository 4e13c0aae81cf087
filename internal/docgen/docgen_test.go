package docgen_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark/internal/docgen"
)

// TestCLIReference: a command tree's reference has a section per visible
// command with its usage line and examples, a row per visible flag with
// its default, and nothing of hidden commands and flags.
func TestCLIReference(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "Does things"}
	root.PersistentFlags().String("log-format", "text", "log format: text or json")
	run := &cobra.Command{Use: "run JOBFILE", Short: "Run a job", Example: "  tool run a.yaml\n  tool run b.yaml",
		RunE: func(*cobra.Command, []string) error { return nil }}
	run.Flags().Bool("json", false, "print JSON | on stdout")
	run.Flags().String("secret", "", "not for users")
	_ = run.Flags().MarkHidden("secret")
	hidden := &cobra.Command{Use: "internal", Hidden: true, RunE: func(*cobra.Command, []string) error { return nil }}
	root.AddCommand(run, hidden)

	got := docgen.CLIReference(root)
	for _, want := range []string{
		"## tool\n\nDoes things.\n",
		"| `--log-format` | string | `text` | log format: text or json |",
		"- [`tool run`](#tool-run): Run a job",
		"### tool run\n\nRun a job.\n\n```\ntool run JOBFILE [flags]\n```",
		"```sh\ntool run a.yaml\ntool run b.yaml\n```",
		"| `--json` |  |  | print JSON \\| on stdout |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the reference has no %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"internal", "--secret", "--help"} {
		if strings.Contains(got, not) {
			t.Errorf("the reference shows %q, which --help hides:\n%s", not, got)
		}
	}
	if strings.Count(got, "--log-format") != 1 {
		t.Errorf("the root's flag is listed %d times, want once (under the root):\n%s", strings.Count(got, "--log-format"), got)
	}
}

// TestSplice: the text between the markers is replaced, the rest kept;
// missing or swapped markers are an error naming them.
func TestSplice(t *testing.T) {
	page := "intro\n<!-- B -->\nold\n<!-- E -->\noutro\n"
	got, err := docgen.Splice([]byte(page), "<!-- B -->", "<!-- E -->", "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "intro\n<!-- B -->\n\nnew\n\n<!-- E -->\noutro\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"intro\n", "<!-- E -->\n<!-- B -->\n"} {
		if _, err := docgen.Splice([]byte(bad), "<!-- B -->", "<!-- E -->", "new"); err == nil || !strings.Contains(err.Error(), "<!-- B -->") {
			t.Errorf("Splice(%q): got error %v, want one naming the markers", bad, err)
		}
	}
}

// TestOpenAPIReference: a route's section has its parameters, request body
// and answers, schemas named by a route link to their own sections, and a
// schema's required field says so.
func TestOpenAPIReference(t *testing.T) {
	doc := `{"openapi": "3.0.3", "info": {"title": "t", "version": "1", "description": "The API."},
	  "paths": {"/api/v1/jobs/{job}/reset": {"post": {"summary": "Reset the bookmark",
	    "parameters": [{"name": "job", "in": "path", "required": true, "description": "the job name", "schema": {"type": "string"}}],
	    "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ResetRequest"}}}},
	    "security": [{"bearer": []}],
	    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Version"}}}}},
	      "404": {"description": "unknown job", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}}}}},
	  "components": {"schemas": {
	    "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
	    "ResetRequest": {"type": "object", "properties": {"to_run": {"type": "string", "description": "the run | to rewind to"}}},
	    "Version": {"type": "object", "properties": {"kind": {"type": "string", "enum": ["commit", "reset"]},
	      "at": {"type": "string", "format": "date-time", "nullable": true}}}}}}`
	got, err := docgen.OpenAPIReference([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"The API.\n",
		"### POST /api/v1/jobs/{job}/reset\n\nReset the bookmark.\n",
		"Needs `Authorization: Bearer TOKEN`",
		"| `job` | path | string | the job name |",
		"Request body (JSON): [ResetRequest](#resetrequest).",
		"| 200 | ok | array of [Version](#version) |",
		"| 404 | unknown job | [Error](#error) |",
		"### ResetRequest\n",
		"| `to_run` | string | the run \\| to rewind to |",
		"| `error` | string | always present |",
		"| `kind` | string: commit, reset |",
		"| `at` | string (date-time) or null |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the reference has no %q:\n%s", want, got)
		}
	}
	if _, err := docgen.OpenAPIReference([]byte("{")); err == nil || !strings.Contains(err.Error(), "OpenAPI") {
		t.Errorf("a broken document: got error %v, want one saying it was reading the OpenAPI document", err)
	}
}

// TestMetricsReference: one row per metric, in order, with its labels and
// its help.
func TestMetricsReference(t *testing.T) {
	got := docgen.MetricsReference([]docgen.Metric{
		{Name: "x_up", Help: "1 if up | else 0."},
		{Name: "x_rows", Labels: []string{"job", "ctx"}, Help: "Rows read."},
	})
	want := "| Metric | Labels | Meaning |\n|---|---|---|\n" +
		"| `x_up` |  | 1 if up \\| else 0. |\n" +
		"| `x_rows` | job, ctx | Rows read. |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
