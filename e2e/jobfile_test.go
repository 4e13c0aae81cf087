package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestUnknownJobKey: an unknown key anywhere in the job file exits 2 naming
// the key and its line, for run and plan alike, and nothing runs.
func TestUnknownJobKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, key string
		opts      jobOpts
	}{
		{"top level", "shedule", jobOpts{top: []string{"shedule: daily"}}},
		{"source", "trakking", jobOpts{sourceExtra: []string{"trakking: exact"}}},
		{"sink", "partiton_by", jobOpts{sinkExtra: []string{"partiton_by: [customer_id]"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.opts)
			f.addCSVs("a", 1, 10)
			line := lineOf(t, f.jobPath, tc.key+":")
			for _, cmd := range []string{"run", "plan"} {
				r := f.tidemark(nil, cmd, f.jobPath)
				if r.code != 2 {
					t.Errorf("%s with unknown key %q: got exit %d, want 2\n%v", cmd, tc.key, r.code, r)
					continue
				}
				assertMentions(t, r, tc.key)
				if !regexp.MustCompile(`(?i)(line:?\s*` + line + `\b|:` + line + `\b)`).MatchString(r.output()) {
					t.Errorf("%s: the error does not name line %s of the job file\n%v", cmd, line, r)
				}
			}
			if files := f.sinkFiles(); len(files) > 0 {
				t.Errorf("a job file error published %d files", len(files))
			}
		})
	}
}

// TestJobFileErrors: other job-file and usage errors exit 2.
func TestJobFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, []byte("job: x\nsources: [\n"))
	noSink := filepath.Join(dir, "nosink.yaml")
	writeFile(t, noSink, []byte("job: x\nsources:\n  - ctx: s\n    path: in\n    format: xml\n"))
	for _, args := range [][]string{
		{"run", filepath.Join(dir, "missing.yaml")},
		{"run", bad},
		{"run", noSink},
		{"run"},
		{"frobnicate"},
	} {
		r := tidemark(t, dir, nil, args...)
		if r.code != 2 {
			t.Errorf("tidemark %s: got exit %d, want 2\n%v", strings.Join(args, " "), r.code, r)
		}
	}
}

// lineOf returns the 1-based line number (as text) of the first line of
// path that contains s.
func lineOf(t testing.TB, path, s string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, s) {
			return strconv.Itoa(i + 1)
		}
	}
	t.Fatalf("%s has no line with %q", path, s)
	return ""
}

// TestSourceChanged: when a ctx's path, format or options change since its
// bookmark was written, run exits 2 and says so, unless
// --allow-source-change is given.
func TestSourceChanged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		changed func(f *fixture) jobOpts
		newSays string // the new setting, which the message must show
	}{
		{"path", func(f *fixture) jobOpts { return jobOpts{sourcePath: f.in.loc()} }, "landing2"},
		{"options", func(f *fixture) jobOpts { return jobOpts{options: "{header: true, delim: ','}"} }, "delim"},
		{"format", func(f *fixture) jobOpts { return jobOpts{format: "json"} }, "json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{})
			first := f.addCSVs("first", 2, 20)
			f.mustRun()
			before := f.bookmark()

			var second []record
			if tc.name == "path" {
				// The new landing place, on the same backend.
				f.in = f.place("landing2")
				second = f.addCSV("second-01.csv", 20)
			}
			f.writeJob(tc.changed(f))
			_, r := f.runExpect(2)
			assertMentions(t, r, "orders_source")
			if !strings.Contains(r.output(), tc.newSays) {
				t.Errorf("the error does not show the new %s (%s)\n%v", tc.name, tc.newSays, r)
			}
			if !strings.Contains(r.output(), "--allow-source-change") && !strings.Contains(r.output(), "bookmark reset") {
				t.Errorf("the error suggests neither --allow-source-change nor bookmark reset\n%v", r)
			}
			if after := f.bookmark(); string(after.Version) != string(before.Version) {
				t.Errorf("bookmark moved: version %s -> %s", before.Version, after.Version)
			}
			f.assertSink(first)
			// Refused before it began: no run recorded, attempt unchanged.
			assertFailureJSON(t, r, 2, "source_changed")
			runs := f.tidemark(nil, "runs", f.jobPath, "--json")
			if got := decodeOne[[]runSummary](t, runs); len(got) != 1 {
				t.Errorf("runs after the refused run: %d, want the 1 real run\n%v", len(got), runs)
			}

			if tc.name == "path" {
				s := f.mustRun("--allow-source-change")
				assertFiles(t, "run with --allow-source-change", s, 1)
				f.assertSink(concat(first, second))
				// Accepted once: the new path is now the ctx's fingerprint.
				assertFiles(t, "next run", f.mustRun(), 0)
			}
		})
	}
}
