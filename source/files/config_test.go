package files_test

import (
	"strings"
	"testing"

	_ "github.com/tidemark-etl/tidemark/engine/duckdb"
	"github.com/tidemark-etl/tidemark/job"
	_ "github.com/tidemark-etl/tidemark/sink/files"
	_ "github.com/tidemark-etl/tidemark/source/files"
)

// TestFullPathGlobRefused: include and exclude globs match keys relative
// to the source's path, so one written as a full path would match nothing
// and the files it meant to keep out would be read. It is a job-file
// error at its line, suggesting the relative glob when it lies under the
// path.
func TestFullPathGlobRefused(t *testing.T) {
	for _, tc := range []struct {
		path, glob, want string
	}{
		{"s3://land/in/", "s3://land/in/tmp/**", `job.yaml:5: sources[0].exclude[0]: globs match keys relative to path: write "tmp/**"`},
		{"s3://land/in", "s3://land/in/tmp/**", `write "tmp/**"`},
		{"/data/in", "/data/in/*.tmp", `write "*.tmp"`},
		{"s3://land/in/", "s3://other/tmp/**", `"s3://other/tmp/**" is a full path, and globs match keys relative to path "s3://land/in/": it would match nothing`},
		{"in", "/tmp/**", `"/tmp/**" is a full path`},
	} {
		text := "job: j\nsources:\n  - ctx: s\n    path: " + tc.path + "\n    exclude: [\"" + tc.glob + "\"]\nsinks:\n  - ctx: out\n    path: out\n"
		_, err := job.Parse("job.yaml", []byte(text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("path %s, exclude %s: got %v, want an error with %q", tc.path, tc.glob, err, tc.want)
		}
	}
	text := "job: j\nsources:\n  - ctx: s\n    path: s3://land/in/\n    include: [\"**/*.csv\"]\n    exclude: [\"tmp/**\"]\nsinks:\n  - ctx: out\n    path: out\n"
	if _, err := job.Parse("job.yaml", []byte(text)); err != nil {
		t.Errorf("relative globs: %v", err)
	}
}
