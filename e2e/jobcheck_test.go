package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestJobFileEveryErrorAtOnce: a job file with many mistakes gets one
// message listing each of them with its line and key — decoding errors
// (an unknown key, values of the wrong type), rule errors (ordered listing
// on a local folder, max_band with exact tracking, a bad mode) and
// component errors (an unknown reader option, an unknown s3: setting) —
// from run and plan alike; nothing runs.
func TestJobFileEveryErrorAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{
		sourceExtra: []string{
			`include: "*.csv"`,
			"trakking: exact",
			"listing: ordered",
			"max_band: 5m",
			"s3: {regoin: eu-west-1}",
		},
		options: "{header: true, delimitr: ','}",
		mode:    "sideways",
	})
	f.addCSVs("a", 1, 10)
	// job: [1, 2] as the name.
	writeFile(t, f.jobPath, []byte(strings.Replace(readText(t, f.jobPath), "job: sales", "job: [1, 2]", 1)))
	want := []struct{ key, lineHas, says string }{
		{"job", "job:", "want text, got a list"},
		{"sources[0].options", "delimitr", "delimitr"},
		{"sources[0].include", "include:", `want a list, got "*.csv"`},
		{"sources[0].trakking", "trakking:", `unknown key "trakking"`},
		{"sources[0].listing", "listing:", "local folder"},
		{"sources[0].max_band", "max_band:", "tracking: timestamp"},
		{"sources[0].s3.regoin", "regoin", `unknown s3 option "regoin"`},
		{"sinks[0].mode", "sideways", `"sideways" is not one of`},
	}
	for _, cmd := range []string{"run", "plan"} {
		r := f.tidemark(nil, cmd, f.jobPath)
		if r.code != 2 {
			t.Errorf("%s: got exit %d, want 2\n%v", cmd, r.code, r)
			continue
		}
		for _, w := range want {
			line := lineOf(t, f.jobPath, w.lineHas)
			re := regexp.MustCompile(`:` + line + `: ` + regexp.QuoteMeta(w.key) + `: .*` + regexp.QuoteMeta(w.says))
			if !re.MatchString(r.stderr) {
				t.Errorf("%s: no error at line %s, key %s saying %q\n%v", cmd, line, w.key, w.says, r)
			}
		}
	}
	if files := f.sinkFiles(); len(files) > 0 {
		t.Errorf("a job file error published %d files", len(files))
	}
}

// TestJobFileTypeErrorsNameTheKey: a value of the wrong type names its key
// and says what the key wants.
func TestJobFileTypeErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts jobOpts
		edit func(string) string
		want string
	}{
		{"include as text", jobOpts{sourceExtra: []string{`include: "*.csv"`}}, nil, `sources[0].include: want a list, got "*.csv"`},
		{"job as a list", jobOpts{}, func(s string) string { return strings.Replace(s, "job: sales", "job: [1,2]", 1) }, "job: want text, got a list"},
		{"bounded_files as text", jobOpts{sourceExtra: []string{"bounded_files: many"}}, nil, `sources[0].bounded_files: want a whole number, got "many"`},
		{"partition_by as text", jobOpts{partitionBy: "product"}, nil, `sinks[0].partition_by: want a list, got "product"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.opts)
			if tc.edit != nil {
				writeFile(t, f.jobPath, []byte(tc.edit(readText(t, f.jobPath))))
			}
			r := f.tidemark(nil, "plan", f.jobPath)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("got exit %d, want 2 and %q\n%v", r.code, tc.want, r)
			}
		})
	}
}

// TestJobFileSourceRules: rules that need more than one key of a source:
// ordered listing only on S3, max_band only with timestamp tracking.
func TestJobFileSourceRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		extra []string
		key   string
		ok    bool
	}{
		{"ordered listing on a local folder", []string{"listing: ordered"}, "sources[0].listing", false},
		{"max_band with exact tracking", []string{"max_band: 5m"}, "sources[0].max_band", false},
		{"max_band with timestamp tracking", []string{"tracking: timestamp", "max_band: 5m"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{sourceExtra: tc.extra})
			recs := f.addCSVs("a", 1, 10)
			if tc.ok {
				f.mustRun()
				f.assertSink(recs)
				return
			}
			_, r := f.runExpect(2)
			line := lineOf(t, f.jobPath, strings.SplitN(tc.extra[len(tc.extra)-1], ":", 2)[0]+":")
			assertMentions(t, r, fmt.Sprintf(":%s: %s:", line, tc.key))
			if files := f.sinkFiles(); len(files) > 0 {
				t.Errorf("a job file error published %d files", len(files))
			}
		})
	}
}

// TestRaisingMaxLineSizeIsNotASourceChange: a line longer than
// max_line_size fails the run; raising the limit is not a change of the
// source (no "changed since its bookmark was written", no flag needed),
// the bookmark carries over and the next run reads the file. A real
// change of options is still reported.
func TestRaisingMaxLineSizeIsNotASourceChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{options: "{header: true, max_line_size: 2097152}"})
	first := f.addCSVs("a", 2, 10)
	f.mustRun()
	long := []record{{OrderID: 9001, CustomerID: strings.Repeat("c", 3<<20), Product: "widget", Amount: 1}}
	f.putCSV("b-long.csv", long)
	if _, r := f.run(nil); r.code != 1 {
		t.Fatalf("a line over max_line_size: got exit %d, want 1\n%v", r.code, r)
	}

	f.writeJob(jobOpts{options: "{header: true, max_line_size: 8388608}"})
	s := f.mustRun()
	assertFiles(t, "run after raising max_line_size", s, 1)
	f.assertSink(concat(first, long))
	assertFiles(t, "next run", f.mustRun(), 0)

	f.writeJob(jobOpts{options: "{header: true, max_line_size: 8388608, delim: ';'}"})
	_, r := f.runExpect(2)
	assertMentions(t, r, "orders_source", "delim")
}

func readText(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
