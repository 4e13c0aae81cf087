package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/job"
)

// helpJob is a valid job file; the tests below spoil it.
const helpJob = `job: help
sources:
  - ctx: orders
    path: landing/
    format: csv
sinks:
  - ctx: out
    path: out/
    format: parquet
`

// TestJobFileOneMistakeOneError: with the engines this binary links, one
// mistake in a job file is one message: a format the kind refuses is not
// refused again by the engine's check of its options, and a misspelt key
// does not make the keys that depend on it missing.
func TestJobFileOneMistakeOneError(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		keys           []string
	}{
		{"source format", "format: csv", "format: xml", []string{"sources[0].format"}},
		{"sink format", "format: parquet", "format: xml", []string{"sinks[0].format"}},
		{"top key", "sources:", "sorces:", []string{"sorces"}},
		{"sink key", "    path: out/", "    pat: out/", []string{"sinks[0].pat"}},
	} {
		_, err := job.Parse("job.yaml", []byte(strings.Replace(helpJob, tc.old, tc.new, 1)))
		var es job.Errors
		if !errors.As(err, &es) {
			t.Errorf("%s: got %v, want job.Errors", tc.name, err)
			continue
		}
		var keys []string
		for _, e := range es {
			keys = append(keys, e.Key)
		}
		if strings.Join(keys, " ") != strings.Join(tc.keys, " ") {
			t.Errorf("%s: got errors at %v, want only at %v:\n%v", tc.name, keys, tc.keys, err)
		}
	}
	if _, err := job.Parse("job.yaml", []byte(strings.Replace(helpJob, "format: csv", "format: jsonl", 1))); err != nil {
		t.Errorf("format: jsonl: %v", err)
	}
}
