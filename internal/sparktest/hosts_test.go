package sparktest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// registryHosts are package registries' hosts, written as their labels so
// that this file does not name them itself.
var registryHosts = [][]string{
	{"repo1", "maven", "org"},
	{"repo", "maven", "apache", "org"},
	{"central", "sonatype", "com"},
	{"pypi", "org"},
	{"files", "pythonhosted", "org"},
	{"registry", "npmjs", "org"},
	{"proxy", "golang", "org"},
	{"sum", "golang", "org"},
	{"crates", "io"},
	{"deb", "debian", "org"},
	{"security", "debian", "org"},
}

// TestNoRegistryHostInRepository: the repository names no package
// registry's host. scripts/test.sh fetched the s3a jars with curl from
// Maven Central's address; it now fetches them by their coordinates through
// mvn, and pip, go and apt-get find their registries themselves.
func TestNoRegistryHostInRepository(t *testing.T) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	script, err := os.ReadFile(filepath.Join(root, "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(script, []byte("dependency:copy -Dartifact=")) {
		t.Error("scripts/test.sh: want the s3a jars fetched by their Maven coordinates (mvn dependency:copy -Dartifact=...)")
	}
	var hosts []string
	for _, labels := range registryHosts {
		hosts = append(hosts, strings.Join(labels, "."))
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() || info.Size() > 16<<20 {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, h := range hosts {
			if i := bytes.Index(data, []byte(h)); i >= 0 {
				rel, _ := filepath.Rel(root, path)
				line := bytes.Count(data[:i], []byte("\n")) + 1
				t.Errorf("%s:%d names the registry host %s; fetch by package name or coordinates instead", rel, line, h)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
}
