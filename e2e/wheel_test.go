package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/s3test"
)

// TestWheel: issue #24 item 1, `pip install tidemark`. The platform wheels
// scripts/release.sh makes (through scripts/wheels.sh) are tagged
// py3-none-manylinux_X_Y_{x86_64,aarch64} with X.Y no older than the glibc
// their binary needs, hold an ELF of their machine, the awsglue face as
// glue/python holds it, and no path of the build machine. The wheel of this
// machine, installed into a fresh venv, gives a tidemark that prints the
// release's version, runs the quickstart job, runs Glue scripts with the
// venv's Python (saying what to install there while pyspark is missing), and,
// with the [glue] extra, runs examples/glue's three days.
//
// CI's release build (scripts/test.sh) names its folder in
// TIDEMARK_TEST_WHEELS; without it the test runs scripts/release.sh itself.
func TestWheel(t *testing.T) {
	dist, version := wheelDist(t)
	wheels := map[string]string{}
	for _, arch := range []string{"x86_64", "aarch64"} {
		wheels[arch] = findWheel(t, dist, arch)
		t.Run(arch, func(t *testing.T) { checkWheel(t, wheels[arch], arch, version) })
	}
	host := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	if host == "" {
		t.Fatalf("no wheel for %s to install", runtime.GOARCH)
	}
	t.Run("install", func(t *testing.T) { installWheel(t, dist, version) })
}

// wheelDist is the folder of the release build's archives and wheels, and
// the version they are of.
func wheelDist(t *testing.T) (dist, version string) {
	t.Helper()
	dist = os.Getenv("TIDEMARK_TEST_WHEELS")
	if dist == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dist = t.TempDir()
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "release.sh"), "e2e-wheel")
		cmd.Env = append(os.Environ(), "DIST="+dist)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scripts/release.sh (TIDEMARK_TEST_WHEELS is not set): %v\n%s", err, out)
		}
	}
	archives, _ := filepath.Glob(filepath.Join(dist, "tidemark_*_linux_amd64.tar.gz"))
	if len(archives) != 1 {
		t.Fatalf("%s holds %d linux amd64 archives (%v), want the release build's one", dist, len(archives), archives)
	}
	name := filepath.Base(archives[0])
	return dist, strings.TrimSuffix(strings.TrimPrefix(name, "tidemark_"), "_linux_amd64.tar.gz")
}

// wheelName is a wheel's file name: tidemark, its version, its tags.
var wheelName = regexp.MustCompile(`^tidemark-([^-]+)-py3-none-manylinux_(\d+)_(\d+)_(x86_64|aarch64)\.whl$`)

// findWheel is the one wheel for arch in dist.
func findWheel(t *testing.T, dist, arch string) string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(dist, "tidemark-*_"+arch+".whl"))
	all, _ := filepath.Glob(filepath.Join(dist, "*.whl"))
	if len(found) != 1 {
		t.Fatalf("%s holds %d wheels for %s, want 1 (all: %v)", dist, len(found), arch, all)
	}
	if !wheelName.MatchString(filepath.Base(found[0])) {
		t.Fatalf("wheel %s: want tidemark-VERSION-py3-none-manylinux_X_Y_%s.whl", filepath.Base(found[0]), arch)
	}
	return found[0]
}

// checkWheel checks one wheel's tags, metadata, binary and contents.
func checkWheel(t *testing.T, path, arch, version string) {
	m := wheelName.FindStringSubmatch(filepath.Base(path))
	pyversion, tag := m[1], "py3-none-manylinux_"+m[2]+"_"+m[3]+"_"+arch
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	files := map[string][]byte{}
	for _, f := range z.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("reading %s from %s: %v", f.Name, path, err)
		}
		files[f.Name] = b
		if f.Name == "tidemark/bin/tidemark" && f.Mode()&0o111 == 0 {
			t.Errorf("tidemark/bin/tidemark has mode %v in the wheel, want executable", f.Mode())
		}
	}
	info := "tidemark-" + pyversion + ".dist-info/"

	// Tags and metadata.
	if tags := regexp.MustCompile(`(?m)^Tag: .*$`).FindAllString(string(files[info+"WHEEL"]), -1); len(tags) != 1 || tags[0] != "Tag: "+tag {
		t.Errorf("%sWHEEL has tags %q, want just %q (the file's name)", info, tags, "Tag: "+tag)
	}
	meta := string(files[info+"METADATA"])
	for _, want := range []string{"Name: tidemark\n", "Version: " + pyversion + "\n", "Provides-Extra: glue\n",
		"Requires-Dist: pyspark==4.0.*; extra == \"glue\"\n"} {
		if !strings.Contains(meta, want) {
			t.Errorf("%sMETADATA lacks %q:\n%s", info, want, meta)
		}
	}
	if !strings.Contains(string(files[info+"entry_points.txt"]), "tidemark = tidemark.__main__:main") {
		t.Errorf("%sentry_points.txt names no tidemark command:\n%s", info, files[info+"entry_points.txt"])
	}
	if v := string(files["tidemark/_version.py"]); !strings.Contains(v, fmt.Sprintf("VERSION = %q", version)) {
		t.Errorf("tidemark/_version.py does not hold VERSION %q:\n%s", version, v)
	}

	// The binary: this wheel's machine, and no newer glibc than its tag.
	bin, ok := files["tidemark/bin/tidemark"]
	if !ok {
		t.Fatalf("%s holds no tidemark/bin/tidemark", path)
	}
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("tidemark/bin/tidemark is no ELF: %v", err)
	}
	want := map[string]elf.Machine{"x86_64": elf.EM_X86_64, "aarch64": elf.EM_AARCH64}[arch]
	if f.Machine != want {
		t.Errorf("tidemark/bin/tidemark is an %v ELF, want %v", f.Machine, want)
	}
	needs, err := f.DynamicVersionNeeds()
	if err != nil {
		t.Fatal(err)
	}
	tagGlibc := [2]int{atoi(t, m[2]), atoi(t, m[3])}
	for _, n := range needs {
		for _, d := range n.Needs {
			v, ok := strings.CutPrefix(d.Dep, "GLIBC_")
			if !ok {
				continue
			}
			major, minor, _ := strings.Cut(v, ".")
			minor, _, _ = strings.Cut(minor, ".")
			if need := [2]int{atoi(t, major), atoi(t, minor)}; need[0] > tagGlibc[0] || need[0] == tagGlibc[0] && need[1] > tagGlibc[1] {
				t.Errorf("the binary needs %s from %s, newer than the tag's glibc %d.%d", d.Dep, n.Name, tagGlibc[0], tagGlibc[1])
			}
		}
	}

	// The awsglue face: the files glue run embeds, byte for byte.
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	face, _ := filepath.Glob(filepath.Join(root, "glue", "python", "awsglue", "*.py"))
	if len(face) < 5 {
		t.Fatalf("glue/python/awsglue holds %d files", len(face))
	}
	for _, p := range face {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := files["awsglue/"+filepath.Base(p)]; !ok || !bytes.Equal(got, src) {
			t.Errorf("awsglue/%s: in the wheel %v, the same as glue/python's %v", filepath.Base(p), ok, bytes.Equal(got, src))
		}
	}

	// No path of the build machine, in a name or in a file.
	home, _ := os.UserHomeDir()
	leaks := []string{root, home}
	for _, v := range []string{"GOROOT", "GOMODCACHE", "GOCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		leaks = append(leaks, strings.TrimSpace(string(out)))
	}
	for name, b := range files {
		for _, l := range leaks {
			if l = strings.TrimRight(l, "/"); l == "" {
				continue
			}
			if strings.Contains(name, l+"/") || bytes.Contains(b, []byte(l+"/")) {
				t.Errorf("%s holds %s/, a path of the build machine", name, l)
			}
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// installWheel installs this machine's wheel into a fresh venv and uses it
// as a user would: by the venv's own paths, the venv not on PATH.
func installWheel(t *testing.T, dist, version string) {
	// The Python of the test's pyspark venv makes the fresh venv, so that
	// pyspark's folder can stand for what `pip install 'tidemark[glue]'`
	// would download (400 MB) with the same Python.
	sparkPython := gluePython(t)
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	venv := filepath.Join(tmp, "venv")
	run(t, tmp, nil, sparkPython, "-m", "venv", venv)
	python, bin := filepath.Join(venv, "bin", "python"), filepath.Join(venv, "bin", "tidemark")
	pip := func(what string) {
		t.Helper()
		run(t, tmp, nil, python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index",
			"--find-links", dist, what)
	}
	pip("tidemark")

	// tidemark version --json names the release's version.
	var v struct{ Version, Commit, DuckDB string }
	out := run(t, tmp, nil, bin, "version", "--json")
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("tidemark version --json: %v\n%s", err, out)
	}
	if v.Version != version || v.Commit == "" || !strings.HasPrefix(v.DuckDB, "v") {
		t.Errorf("the installed tidemark says version %q, commit %q, DuckDB %q; want %q, a commit and a version", v.Version, v.Commit, v.DuckDB, version)
	}
	out = run(t, tmp, nil, python, "-c", "import tidemark, awsglue; print(tidemark.VERSION); print(awsglue.__file__)")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || lines[0] != version || !strings.HasPrefix(lines[1], venv+"/") {
		t.Errorf("import tidemark, awsglue in the venv: %q, want the version %s and awsglue from %s", out, version, venv)
	}

	// The quickstart's job: Monday's 10 files, then Tuesday's 5.
	sales := filepath.Join(tmp, "sales")
	if err := os.CopyFS(filepath.Join(sales, "arrivals"), os.DirFS(filepath.Join(root, "examples", "sales", "arrivals"))); err != nil {
		t.Fatal(err)
	}
	job, err := os.ReadFile(filepath.Join(root, "examples", "sales", "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sales, "job.yaml"), job, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, day := range []struct {
		name  string
		files float64
	}{{"monday", 10}, {"tuesday", 5}} {
		if err := os.CopyFS(filepath.Join(sales, "landing", day.name), os.DirFS(filepath.Join(sales, "arrivals", day.name))); err != nil {
			t.Fatal(err)
		}
		var res map[string]any
		out := run(t, sales, nil, bin, "run", "job.yaml", "--json")
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("tidemark run job.yaml --json on %s: %v\n%s", day.name, err, out)
		}
		if src := res["sources"].(map[string]any)["orders_source"].(map[string]any); res["status"] != "succeeded" || src["files"] != day.files {
			t.Errorf("%s's run: %s, want status succeeded and %v files read", day.name, out, day.files)
		}
	}

	// glue run starts scripts with the venv's Python: without pyspark
	// there, it says so for that Python.
	probe := filepath.Join(tmp, "probe.py")
	if err := os.WriteFile(probe, []byte("import sys\nprint('python', sys.executable)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCode(t, tmp, nil, bin, "glue", "run", probe)
	if r.code != 2 || !strings.Contains(r.stderr, "pyspark is not installed for "+python) {
		t.Errorf("glue run without pyspark in the venv: %v; want exit 2 saying pyspark is not installed for %s", r, python)
	}

	// The [glue] extra: pyspark 4.0, here the test venv's (a .pth names
	// its folder), so pip finds it installed rather than downloading it.
	site := strings.TrimSpace(run(t, tmp, nil, sparkPython, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
	venvSite := strings.TrimSpace(run(t, tmp, nil, python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
	if err := os.WriteFile(filepath.Join(venvSite, "test_pyspark.pth"), []byte(site+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pip("tidemark[glue]")
	if r := runCode(t, tmp, nil, bin, "glue", "run", probe); r.code != 0 || !strings.Contains(r.stdout, "python "+python+"\n") {
		t.Errorf("glue run with the [glue] extra: %v; want exit 0 and the script run by %s", r, python)
	}

	// examples/glue/run.sh, finding tidemark on PATH: the venv's.
	gw := s3test.RequireBinary(t)
	for _, dir := range []string{"examples/glue", "examples/sales/arrivals"} {
		if err := os.CopyFS(filepath.Join(tmp, "repo", dir), os.DirFS(filepath.Join(root, dir))); err != nil {
			t.Fatal(err)
		}
	}
	here := filepath.Join(tmp, "repo", "examples", "glue")
	for _, junk := range []string{".venv", ".s3", ".tidemark", "landing", "bin"} {
		_ = os.RemoveAll(filepath.Join(here, junk))
	}
	path := filepath.Join(venv, "bin") + string(os.PathListSeparator) + filepath.Dir(gw) + string(os.PathListSeparator) + os.Getenv("PATH")
	ctx, cancel := context.WithTimeout(context.Background(), 3*glueTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(here, "run.sh"))
	cmd.Dir = tmp
	cmd.Env = baseEnv("PATH="+path, "TIDEMARK_PYTHON="+python)
	glueOut, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash examples/glue/run.sh with the venv's tidemark: %v\n%s", err, glueOut)
	}
	for _, want := range []string{"$ " + bin + " glue run etl.py", "source orders_source: 10 files", "source orders_source: 5 files"} {
		if !strings.Contains(string(glueOut), want) {
			t.Errorf("run.sh's output lacks %q:\n%s", want, glueOut)
		}
	}
	var runs []map[string]any
	out = run(t, here, nil, bin, "runs", "sales-etl", "--state", filepath.Join(here, ".tidemark", "state.db"), "--json")
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 3 {
		t.Fatalf("runs sales-etl: %d runs (%v), want 3:\n%s", len(runs), err, out)
	}
	for i, files := range []float64{0, 5, 10} { // newest first
		if src := runs[i]["sources"].(map[string]any)["orders_source"].(map[string]any); src["files"] != files || runs[i]["status"] != "succeeded" {
			t.Errorf("glue run %d read %v (%v), want %v files", 3-i, src, runs[i]["status"], files)
		}
	}
}

// run runs a command in dir with baseEnv and extra variables and returns
// its stdout, failing the test unless it exits 0.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	r := runCode(t, dir, env, name, args...)
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	return r.stdout
}

// runCode runs a command in dir with baseEnv and extra variables and
// returns what it did, whatever its exit code.
func runCode(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), glueTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = baseEnv(env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{args: append([]string{name}, args...), stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return r
}
