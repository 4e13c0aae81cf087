package e2e

import (
	"regexp"
	"testing"
)

// TestSparkEngineNotBuiltIn: a job file that asks for the Spark engine,
// by name or with its options, is a job-file error (exit 2) at the
// engine: key and its line (the spark: key's in a block), saying this binary has no spark engine, from
// run and plan alike; nothing runs and the bookmark does not move.
func TestSparkEngineNotBuiltIn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, engine, lineHas string }{
		{"by name", "engine: spark", "engine:"},
		{"with options", `engine: {spark: {remote: "sc://127.0.0.1:15002"}}`, "engine:"},
		{"as a block", "engine:\n  spark:\n    remote: sc://127.0.0.1:15002", "spark:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{top: []string{tc.engine}})
			f.addCSVs("a", 2, 10)
			line := lineOf(t, f.jobPath, tc.lineHas)
			re := regexp.MustCompile(`:` + line + `: engine: "spark": this binary has no spark engine \(built in: duckdb\)`)
			for _, cmd := range []string{"run", "plan"} {
				r := f.tidemark(nil, cmd, f.jobPath)
				if r.code != 2 {
					t.Errorf("%s: got exit %d, want 2\n%v", cmd, r.code, r)
				}
				if !re.MatchString(r.stderr) {
					t.Errorf("%s: got stderr %q, want it to match %s", cmd, r.stderr, re)
				}
			}
			if files := f.sinkFiles(); len(files) > 0 {
				t.Errorf("a job file error published %d files", len(files))
			}
		})
	}
}
