package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// modulePath is what `go install MODULE/cmd/tidemark@VERSION` names, as
// the README's first install line does.
const modulePath = "github.com/tidemark-etl/tidemark"

// TestGoInstallFromCleanCheckout: the module is installable as the README
// says: its path is the one users type, nothing needs a replace directive
// (go install ...@VERSION refuses a module that has one), and go install
// of a clean checkout builds a tidemark that names its commit and DuckDB's
// version.
func TestGoInstallFromCleanCheckout(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "mod", "edit", "-json", filepath.Join(root, "go.mod")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var mod struct {
		Module  struct{ Path string }
		Replace []any
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	if mod.Module.Path != modulePath || len(mod.Replace) > 0 {
		t.Fatalf("go.mod: module %q with %d replace directives, want %q and none", mod.Module.Path, len(mod.Replace), modulePath)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "go install "+modulePath+"/cmd/tidemark@") {
		t.Errorf("the README has no go install %s/cmd/tidemark@VERSION line", modulePath)
	}

	head := strings.TrimSpace(runCmd(t, root, nil, "git", "rev-parse", "HEAD"))
	src := filepath.Join(t.TempDir(), "src")
	runCmd(t, root, nil, "git", "clone", "--quiet", "--no-checkout", root, src)
	runCmd(t, src, nil, "git", "checkout", "--quiet", head)
	gobin := t.TempDir()
	// Only what go.sum names, from the module cache: a clean checkout
	// needs nothing else. buildvcs stamps the commit, as it does by
	// default in a checkout.
	runCmd(t, src, []string{"GOBIN=" + gobin, "GOFLAGS=-mod=readonly -buildvcs=true", "CGO_ENABLED=1"}, "go", "install", "./cmd/tidemark")
	var v struct{ Version, Commit, DuckDB string }
	if err := json.Unmarshal([]byte(runCmd(t, src, nil, filepath.Join(gobin, "tidemark"), "version", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Commit != head || !strings.HasPrefix(v.DuckDB, "v") {
		t.Errorf("the installed tidemark says commit %q, DuckDB %q; want %s and a version", v.Commit, v.DuckDB, head)
	}
}

// runCmd runs a command in dir and returns its stdout, failing the test on
// an error.
func runCmd(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
