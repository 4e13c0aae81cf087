package tidemark

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/job"
)

// TestCheckSinkPaths: the sink path rules on local paths (plain, file://,
// relative, trailing slashes, "..", symlinks) and S3 prefixes.
func TestCheckSinkPaths(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"in", "in/sub", "landing2", "real"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "in"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in")
	state := filepath.Join(dir, ".tidemark", "state.db")
	for _, c := range []struct {
		source, sink string
		sinkS3       string // the sink's s3 endpoint option
		want         string // part of the error; "" for none
	}{
		{in, filepath.Join(dir, "out"), "", ""},
		{in, filepath.Join(dir, "landing2"), "", ""},
		{in, dir + "/in2", "", ""},
		{in, "/", "", "root of the file system"},
		{in, "file:///", "", "root of the file system"},
		{in, dir + "/in/..//../../../../../../..", "", "root of the file system"},
		{in, filepath.Join(dir, ".tidemark"), "", "state store's folder"},
		{in, filepath.Join(dir, ".tidemark", "out") + "/", "", "state store's folder"},
		{in, in, "", "inside the folder of source"},
		{in, in + "/", "", "inside the folder of source"},
		{in, "file://" + in + "/sub/out", "", "inside the folder of source"},
		{in, "in/out", "", "inside the folder of source"}, // relative to the job file
		{in, "./real/../in/x", "", "inside the folder of source"},
		{in, filepath.Join(dir, "link", "out"), "", "inside the folder of source"},
		{in, filepath.Join(dir, "link", "new", "deeper"), "", "inside the folder of source"},
		{filepath.Join(dir, "link", "sub"), in, "", "holds the folder of source"},
		{in + "/sub", dir, "", "holds the folder of source"},
		{"s3://bucket/", "s3://bucket/out/", "", "inside the folder of source"},
		{"s3://bucket", "s3://bucket/out", "", "inside the folder of source"},
		{"s3://bucket/in/", "s3://bucket/in/out/", "", "inside the folder of source"},
		{"s3://bucket/in/x/", "s3://bucket/in", "", "holds the folder of source"},
		{"s3://bucket/in/", "s3://bucket/", "", "holds the folder of source"},
		{"s3://bucket/in/", "s3://bucket/in2/", "", ""},
		{"s3://bucket/in/", "s3://other/in/", "", ""},
		{"s3://bucket/in/", "s3://bucket/", "http://elsewhere:9000", "holds the folder of source"}, // endpoint of one only: same store
		{in, "s3://bucket/", "", ""},
		{"s3://bucket/in/", in, "", ""},
	} {
		t.Run(fmt.Sprintf("%s->%s", c.source, c.sink), func(t *testing.T) {
			yaml := fmt.Sprintf("job: j\nsources:\n  - ctx: src\n    path: %q\nsinks:\n  - ctx: out\n    path: %q\n", c.source, c.sink)
			if c.sinkS3 != "" {
				yaml += fmt.Sprintf("    s3: {endpoint: %q}\n", c.sinkS3)
			}
			spec, err := parseJob(dir, yaml)
			if err != nil {
				t.Fatal(err)
			}
			err = checkSinkPaths(spec, state)
			var je *job.Error
			switch {
			case c.want == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case c.want != "" && err == nil:
				t.Errorf("got no error, want one saying %q", c.want)
			case c.want != "" && (!errors.As(err, &je) || !strings.Contains(err.Error(), c.want) || je.Line != 7 || je.Key != "sinks[0].path"):
				t.Errorf("got %v, want a job-file error at line 7, sinks[0].path saying %q", err, c.want)
			}
		})
	}
	// A source with a different explicit endpoint is another store.
	yaml := "job: j\nsources:\n  - ctx: src\n    path: s3://b/\n    s3: {endpoint: \"http://a:1\"}\nsinks:\n  - ctx: out\n    path: s3://b/out/\n    s3: {endpoint: \"http://b:1\"}\n"
	spec, err := parseJob(dir, yaml)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSinkPaths(spec, state); err != nil {
		t.Errorf("two endpoints: got %v, want no error", err)
	}
	// The state store on S3: a sink in its prefix is refused.
	spec, _ = parseJob(dir, "job: j\nsources:\n  - ctx: src\n    path: in\nsinks:\n  - ctx: out\n    path: s3://st/state/out/\n")
	if err := checkSinkPaths(spec, "s3://st/state"); err == nil || !strings.Contains(err.Error(), "state store's folder") {
		t.Errorf("sink in an S3 state prefix: got %v", err)
	}
	if err := checkSinkPaths(spec, "s3://st/state2/"); err != nil {
		t.Errorf("sink beside an S3 state prefix: got %v", err)
	}
	// Credentials in a URL name no place and are never shown (if the job
	// file's validation lets them through at all).
	if spec, err := parseJob(dir, "job: j\nsources:\n  - ctx: src\n    path: s3://AKIAX:hunter2@b/in/\nsinks:\n  - ctx: out\n    path: s3://b/in/out/\n"); err == nil {
		if err := checkSinkPaths(spec, state); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("source URL with credentials: got %v, want an error that does not show the secret", err)
		}
	}
	// A state file beside the job file: its folder is the project's; a sink
	// below it is fine, the folder itself is not.
	spec, _ = parseJob(dir, "job: j\nsources:\n  - ctx: src\n    path: in\nsinks:\n  - ctx: out\n    path: out/\n")
	if err := checkSinkPaths(spec, filepath.Join(dir, "state.db")); err != nil {
		t.Errorf("sink below the folder of a state file beside the job file: got %v", err)
	}
	spec, _ = parseJob(dir, "job: j\nsources:\n  - ctx: src\n    path: s3://b/in/\nsinks:\n  - ctx: out\n    path: ./\n")
	if err := checkSinkPaths(spec, filepath.Join(dir, "state.db")); err == nil || !strings.Contains(err.Error(), "state store's folder") {
		t.Errorf("sink at the folder of a state file beside the job file: got %v", err)
	}
}

// TestCheckStatePath: a state store inside a source folder is refused
// unless a name below the source's folder is hidden (_ or .); the error
// names the job file's state: when it comes from there.
func TestCheckStatePath(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	for _, c := range []struct {
		source, state string
		inFile        bool   // the state is the job file's state:
		want          string // the key the error names; "" for no error
	}{
		{"s3://b/in/", "s3://b/in/", false, "sources[0].path"},
		{"s3://b/in/", "s3://b/in/state/", true, "state"},
		{"s3://b/in", "s3://b/in/x/state", false, "sources[0].path"},
		{"s3://b/", "s3://b/state/?endpoint=http://127.0.0.1:9000", false, "sources[0].path"},
		{"s3://b/in/", "s3://b/in/_state/", false, ""},
		{"s3://b/in/", "s3://b/in/x/.st/", false, ""},
		{"s3://b/in/", "s3://b/in2/", false, ""},
		{"s3://b/in/", "s3://other/in/", false, ""},
		{in, filepath.Join(in, "state.db"), true, "state"},
		{in, filepath.Join(in, "st", "state.db"), false, "sources[0].path"},
		{in, filepath.Join(in, ".tidemark", "state.db"), false, ""},
		{in, filepath.Join(in, "_state.db"), false, ""},
		{in, filepath.Join(dir, "state.db"), false, ""},
		{in, "s3://b/in/", false, ""},
		{in, "postgres://u@127.0.0.1/db", false, ""},
	} {
		yaml := fmt.Sprintf("job: j\nsources:\n  - ctx: src\n    path: %q\nsinks:\n  - ctx: out\n    path: %q\n", c.source, filepath.Join(dir, "out"))
		if c.inFile {
			yaml += fmt.Sprintf("state: %q\n", c.state)
		}
		spec, err := parseJob(dir, yaml)
		if err != nil {
			t.Fatal(err)
		}
		err = checkSinkPaths(spec, c.state)
		var je *job.Error
		switch {
		case c.want == "" && err != nil:
			t.Errorf("source %s, state %s: got %v, want no error", c.source, c.state, err)
		case c.want != "" && (!errors.As(err, &je) || je.Key != c.want || !strings.Contains(err.Error(), "read its own state")):
			t.Errorf("source %s, state %s: got %v, want a job-file error at %s", c.source, c.state, err, c.want)
		}
	}
}

// parseJob parses a job file in dir, on the tests' fake engine.
func parseJob(dir, yaml string) (*job.Spec, error) {
	return job.Parse(filepath.Join(dir, "job.yaml"), []byte(yaml+"engine: fake\n"))
}

// TestCheckSinkPathsRelativeWithoutJobFile: a job built in code (no job
// file, so no folder: relative paths are the working folder's, as the
// state's is) has its sinks checked against the state's folder and its
// sources as a job file's are: a relative sink in the state's folder is
// refused.
func TestCheckSinkPathsRelativeWithoutJobFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ source, sink, want string }{
		{"in", ".tidemark/out", "state store's folder"},
		{"in", "in/out", "inside the folder of source"},
		{"in", "out", ""},
	} {
		spec, err := parseJob(dir, fmt.Sprintf("job: j\nsources:\n  - ctx: src\n    path: %q\nsinks:\n  - ctx: out\n    path: %q\n", c.source, c.sink))
		if err != nil {
			t.Fatal(err)
		}
		spec.Dir = "" // built in code
		err = checkSinkPaths(spec, ".tidemark/state.db")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("sink %s: got %v, want no error", c.sink, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("sink %s: got %v, want an error saying %q", c.sink, err, c.want)
		}
	}
}
