package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJobFileMergeKeys: a second source written as a YAML merge of the
// first (`<<: *orders`) that overrides its ctx and path is the job file it
// says: both sources are read, each from its own folder. A merge key
// written after keys of its mapping would let the merged values replace
// those keys without a word: it is a job-file error naming the line, and
// nothing runs.
func TestJobFileMergeKeys(t *testing.T) {
	t.Parallel()
	transform := "SELECT order_id, customer_id, product, CAST(amount AS BIGINT) AS amount FROM orders_source " +
		"UNION ALL SELECT order_id, customer_id, product, CAST(amount AS BIGINT) AS amount FROM late_source"
	f := newFixture(t, jobOpts{transform: transform})
	late := f.place("late")
	a := f.addCSV("a.csv", 20)
	b := f.gen.records(15)
	late.put(t, "b.csv", csvBytes(b))

	data, err := os.ReadFile(f.jobPath)
	if err != nil {
		t.Fatal(err)
	}
	valid := string(data)
	anchored := strings.Replace(valid, "  - ctx: orders_source\n", "  - &orders\n    ctx: orders_source\n", 1)
	merged := fmt.Sprintf("  - <<: *orders\n    ctx: late_source\n    path: %q\n", late.loc())
	writeFile(t, f.jobPath, []byte(strings.Replace(anchored, "transforms:\n", merged+"transforms:\n", 1)))
	s := f.mustRun()
	if s.Sources["late_source"].Files != 1 || s.Sources["orders_source"].Files != 1 {
		t.Errorf("run with a merged source: sources %+v, want one file each", s.Sources)
	}
	f.assertSink(concat(a, b))

	after := fmt.Sprintf("  - ctx: later_source\n    path: %q\n    <<: *orders\n", late.loc())
	writeFile(t, f.jobPath, []byte(strings.Replace(anchored, "transforms:\n", after+"transforms:\n", 1)))
	line := lineOf(t, f.jobPath, "<<: *orders")
	for _, cmd := range []string{"run", "plan"} {
		r := f.tidemark(nil, cmd, f.jobPath)
		if r.code != 2 {
			t.Errorf("%s with a merge key after other keys: got exit %d, want 2\n%v", cmd, r.code, r)
			continue
		}
		assertMentions(t, r, ":"+line+":", "merge key")
	}
	f.assertSink(concat(a, b))
}

// TestTildePathRefused: a local path written as ~/x (a sink, a source, the
// state) is a job-file error naming the key and line: nothing expands ~,
// so the sink would be a folder named "~" beside the job file.
func TestTildePathRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, key string }{
		{"sink", "sinks[0].path"},
		{"source", "sources[0].path"},
		{"state", "state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{})
			f.addCSVs("a", 1, 10)
			o := jobOpts{}
			in, out := f.in.loc(), f.out.loc()
			switch tc.name {
			case "sink":
				out = "~/tidemark-out"
			case "source":
				in = "~/landing"
			case "state":
				o.top = []string{`state: "~/tidemark/state.db"`}
			}
			writeFile(t, f.jobPath, []byte(o.yaml(in, out)))
			line := lineOf(t, f.jobPath, "~/")
			for _, cmd := range []string{"run", "plan"} {
				r := f.tidemark(nil, cmd, f.jobPath)
				if r.code != 2 {
					t.Errorf("%s with a ~ path: got exit %d, want 2\n%v", cmd, r.code, r)
					continue
				}
				assertMentions(t, r, ":"+line+": "+tc.key+":", "not expanded")
			}
			if _, err := os.Stat(filepath.Join(f.dir, "~")); err == nil {
				t.Errorf("a folder named ~ was made beside the job file")
			}
		})
	}
}

// TestSinkPathErrorsAllReported: a job file with several sinks whose paths
// break the rules (the file system root, inside the source folder, the
// location of another sink spelled with a trailing slash, which failed the
// run later with "staging folder is not empty") gets one error for each,
// with its key and line, in one go.
func TestSinkPathErrorsAllReported(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 1, 10)
	data, err := os.ReadFile(f.jobPath)
	if err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf("  - ctx: root_sink\n    path: /\n    format: csv\n  - ctx: inner_sink\n    path: %q\n    format: csv\n"+
		"  - ctx: twin_sink\n    path: %q\n    format: csv\n", filepath.Join(f.in.loc(), "out"), f.out.loc()+"/")
	writeFile(t, f.jobPath, append(data, extra...))
	rootLine, innerLine := lineOf(t, f.jobPath, "path: /"), lineOf(t, f.jobPath, "out\"")
	twinLine := lineOf(t, f.jobPath, "/\"")
	for _, cmd := range []string{"run", "plan"} {
		r := f.tidemark(nil, cmd, f.jobPath)
		if r.code != 2 {
			t.Errorf("%s: got exit %d, want 2\n%v", cmd, r.code, r)
			continue
		}
		assertMentions(t, r, ":"+rootLine+": sinks[1].path:", "root of the file system",
			":"+innerLine+": sinks[2].path:", "lies inside the folder of source",
			":"+twinLine+": sinks[3].path:", "is the location of sink orders_sink")
	}
	if files := f.sinkFiles(); len(files) > 0 {
		t.Errorf("a job file error published %d files", len(files))
	}
}
