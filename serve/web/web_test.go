package web

import (
	"io/fs"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"
)

// ownScripts are the dashboard's own scripts (the vendored library aside).
func ownScripts(t *testing.T) []string {
	t.Helper()
	names, err := fs.Glob(Assets(), "js/*.js")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no js/*.js embedded")
	}
	return names
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := fs.ReadFile(Assets(), name)
	if err != nil {
		t.Fatalf("reading %s from the embedded assets: %v", name, err)
	}
	return string(b)
}

func TestAssetsEmbedThePages(t *testing.T) {
	for _, name := range []string{"index.html", "app.css", "vendor/uPlot.iife.min.js", "vendor/uPlot.min.css", "vendor/uPlot.LICENSE"} {
		if b := read(t, name); len(b) == 0 {
			t.Errorf("%s: got an empty file", name)
		}
	}
	if got := read(t, "vendor/uPlot.iife.min.js"); !strings.Contains(got, "(v1.6.32)") {
		t.Errorf("vendor/uPlot.iife.min.js: got no version banner (v1.6.32), want uPlot 1.6.32 as vendor/README.md says")
	}
}

var (
	scriptSrc = regexp.MustCompile(`<script src="([^"]+)"></script>`)
	styleHref = regexp.MustCompile(`<link rel="stylesheet" href="([^"]+)">`)
)

func TestIndexLoadsEveryScriptAndTheChartLibrary(t *testing.T) {
	index := read(t, "index.html")
	var srcs []string
	for _, m := range scriptSrc.FindAllStringSubmatch(index, -1) {
		srcs = append(srcs, m[1])
	}
	if len(srcs) == 0 || srcs[0] != "vendor/uPlot.iife.min.js" {
		t.Fatalf("index.html scripts: got %q, want vendor/uPlot.iife.min.js first", srcs)
	}
	if srcs[len(srcs)-1] != "js/app.js" {
		t.Errorf("index.html last script: got %q, want js/app.js (it starts the pages once the others are defined)", srcs[len(srcs)-1])
	}
	loaded := map[string]bool{}
	for _, s := range srcs {
		loaded[s] = true
		read(t, s)
	}
	for _, s := range ownScripts(t) {
		if !loaded[s] {
			t.Errorf("%s is embedded but index.html does not load it", s)
		}
	}
	styles := styleHref.FindAllStringSubmatch(index, -1)
	if len(styles) != 2 || styles[0][1] != "vendor/uPlot.min.css" || styles[1][1] != "app.css" {
		t.Errorf("index.html stylesheets: got %q, want vendor/uPlot.min.css and app.css", styles)
	}
	if regexp.MustCompile(`<script>|\son[a-z]+=`).MatchString(index) {
		t.Errorf("index.html has an inline script or event handler; want scripts in files only")
	}
}

var (
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/|<!--.*?-->`)
	lineComment  = regexp.MustCompile(`(?m)(^|\s)//.*$`)
	externalURL  = regexp.MustCompile(`(?i)https?://`)
)

// TestNoExternalURLs: the pages work offline; no asset names a URL outside
// its comments (license files aside).
func TestNoExternalURLs(t *testing.T) {
	err := fs.WalkDir(Assets(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(name, ".LICENSE") || path.Base(name) == "README.md" {
			return nil
		}
		text := blockComment.ReplaceAllString(read(t, name), "")
		if strings.HasSuffix(name, ".js") {
			text = lineComment.ReplaceAllString(text, "")
		}
		if loc := externalURL.FindStringIndex(text); loc != nil {
			end := min(loc[1]+60, len(text))
			t.Errorf("%s names a URL: %q", name, text[loc[0]:end])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoHTMLParsingOfData: the pages build their DOM with createElement
// and textContent only; nothing of ours parses a string as HTML.
func TestNoHTMLParsingOfData(t *testing.T) {
	banned := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser|\beval\(|new Function\(`)
	for _, name := range ownScripts(t) {
		for i, line := range strings.Split(read(t, name), "\n") {
			if m := banned.FindString(line); m != "" {
				t.Errorf("%s:%d uses %s; build the DOM with TM.el / textContent", name, i+1, m)
			}
		}
	}
}

// TestScriptsParse runs node --check on every script, when node is there.
func TestScriptsParse(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	for _, name := range append(ownScripts(t), "vendor/uPlot.iife.min.js") {
		file := path.Join(dir, strings.ReplaceAll(name, "/", "_"))
		writeFile(t, file, read(t, name))
		if out, err := exec.Command(node, "--check", file).CombinedOutput(); err != nil {
			t.Errorf("node --check %s: %v\n%s", name, err, out)
		}
	}
}
