package docgen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is the repository, from this package's folder.
const repoRoot = "../.."

// buildSite runs scripts/docs.sh on the site whose mkdocs.yml is in dir and
// returns its output and whether the build succeeded.
func buildSite(t *testing.T, dir string) (string, bool) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "docs.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script, dir)
	cmd.Env = append(os.Environ(), "SITE_DIR="+filepath.Join(t.TempDir(), "site"))
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("running scripts/docs.sh: %v", err)
	}
	return string(out), err == nil
}

// copySite copies mkdocs.yml and docs/ into a fresh folder.
func copySite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	yml, err := os.ReadFile(filepath.Join(repoRoot, "mkdocs.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mkdocs.yml"), yml, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "docs"), os.DirFS(filepath.Join(repoRoot, "docs"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// appendTo adds text at the end of a page of the copied site.
func appendTo(t *testing.T, dir, page, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "docs", page), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n" + text + "\n"); err != nil {
		t.Fatal(err)
	}
}

// TestSiteBuildsStrictly: the docs site builds with mkdocs build --strict,
// and a broken link of each kind (a page that does not exist, an anchor
// that no heading makes on another page or on the same one, a relative
// link out of docs/, a page left out of the nav) fails the build, naming
// the page and the link.
func TestSiteBuildsStrictly(t *testing.T) {
	if out, ok := buildSite(t, copySite(t)); !ok {
		t.Fatalf("the docs site does not build:\n%s", out)
	}
	for _, c := range []struct {
		name, page, text string
		want             []string
	}{
		{"missing page", "index.md", "[the guide](no-such-page.md)", []string{"index.md", "no-such-page.md"}},
		{"missing anchor on another page", "index.md", "[run](reference/cli.md#tidemark-rnu)",
			[]string{"index.md", "tidemark-rnu"}},
		{"missing anchor on the same page", "reference/cli.md", "[up](#the-comand-line)",
			[]string{"reference/cli.md", "the-comand-line"}},
		{"relative link out of docs", "index.md", "[the README](../README.md)", []string{"index.md", "../README.md"}},
		{"page not in the nav", "stray.md", "", []string{"stray.md"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copySite(t)
			if c.page == "stray.md" {
				if err := os.WriteFile(filepath.Join(dir, "docs", c.page), []byte("# Stray\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				appendTo(t, dir, c.page, c.text)
			}
			out, ok := buildSite(t, dir)
			if ok {
				t.Fatalf("the build with %s succeeded, want it to fail:\n%s", c.text, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("the failed build's output does not name %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestReadmeLinks: every relative link of the README (into the docs site,
// to an example) names a file or folder of the repository; the site's
// build checks the site's own links, and the README is not part of it.
func TestReadmeLinks(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(string(text), -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		n++
		file, _, _ := strings.Cut(target, "#")
		if _, err := os.Stat(filepath.Join(repoRoot, file)); err != nil {
			t.Errorf("README.md links to %s, which does not exist", target)
		}
	}
	if n == 0 {
		t.Error("README.md has no link into the docs")
	}
}
