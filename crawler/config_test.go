package crawler

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/tidemark-etl/tidemark/engine/duckdb"
	"github.com/tidemark-etl/tidemark/job"
	_ "github.com/tidemark-etl/tidemark/sink/files"
	_ "github.com/tidemark-etl/tidemark/source/files"
)

func TestCrawlerFileErrors(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"unknown keys with their lines", "crawler: c\ndatabase: d\ntargets:\n  - path: x\n    exlude: [a]\nsample: 3\n",
			[]string{`c.yaml:5: targets[0].exlude: unknown key "exlude"`, `c.yaml:6: sample: unknown key "sample"`}},
		{"bad values", "crawler: c\ndatabase: 9d\ntargets: [{path: x, exclude: ['[a']}]\nrecrawl: sometimes\ntable_level: -1\n" +
			"schema_change_policy: {update: replace, delete: drop}\nsample_bytes: 10\n",
			[]string{`c.yaml:2: database: "9d" must be an identifier`, `c.yaml:3: targets[0].exclude[0]: glob "[a": unclosed [`,
				`c.yaml:4: recrawl: "sometimes" is not one of everything, new_folders_only, new_files_only`,
				`c.yaml:5: table_level: must be 0 or more`, `c.yaml:6: schema_change_policy.update: "replace" is not one of update, log`,
				`c.yaml:6: schema_change_policy.delete: "drop" is not one of deprecate, delete, log`,
				`c.yaml:7: sample_bytes: must be at least 1KiB`}},
		{"required keys", "recrawl: everything\n", []string{"crawler: is required", "database: is required", "targets: at least one target is required"}},
		{"a value of the wrong type", "crawler: c\ndatabase: d\ntargets: [{path: x}]\nmax_tables: many\n", []string{`c.yaml:4: max_tables: want a whole number, got "many"`}},
		{"an exclude written as a full path", "crawler: c\ndatabase: d\ntargets: [{path: 's3://land/sales/', exclude: ['s3://land/sales/tmp/**', '/tmp/**']}]\n",
			[]string{`c.yaml:3: targets[0].exclude[0]: globs match keys relative to path: write "tmp/**"`,
				`c.yaml:3: targets[0].exclude[1]: "/tmp/**" is a full path, and globs match keys relative to path "s3://land/sales/": it would match nothing`}},
		{"a secret in an S3 URL", "crawler: c\ndatabase: d\ntargets: [{path: 's3://AKIA:secret@bucket/x'}]\n", []string{"targets[0].path"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tc.text))
			if err == nil {
				t.Fatalf("got no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got:\n%v\nwant it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret@") {
				t.Errorf("the message shows the secret: %v", err)
			}
		})
	}
}

func TestCrawlerFileDefaults(t *testing.T) {
	dir := t.TempDir()
	c := crawlerFile(t, dir, "crawler: c\ndatabase: d\ntargets: [{path: data/sales}]\n")
	if c.SampleFiles != DefaultSampleFiles || c.SampleBytes.Bytes != DefaultSampleBytes || !c.Combine() || c.MaxTables != DefaultMaxTables ||
		c.Recrawl != "everything" || c.SchemaChangePolicy != (Policy{"update", "deprecate"}) {
		t.Errorf("defaults: got %+v", c)
	}
	if got, want := c.Location(c.Targets[0]), filepath.Join(dir, "data", "sales"); got != want {
		t.Errorf("a relative target: got %s, want %s", got, want)
	}
	if c.Job() != "crawler:c" {
		t.Errorf("job: got %s", c.Job())
	}
}

// TestJobFileCrawler: a job file's crawler: is a crawler file's path or a
// block inline, named after the job, its errors with their lines.
func TestJobFileCrawler(t *testing.T) {
	base := "job: sales-daily\nsources:\n  - ctx: orders\n    path: in\nsinks:\n  - ctx: out\n    path: out\n"
	s, err := job.Parse("job.yaml", []byte(base+"crawler: crawler.yaml\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Crawler == nil || s.Crawler.File != "crawler.yaml" || s.Crawler.Line != 8 {
		t.Errorf("a file: got %+v", s.Crawler)
	}
	s, err = job.Parse("job.yaml", []byte(base+"crawler:\n  database: sales_db\n  targets: [{path: in}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := s.Crawler.Config.(*Config)
	if !ok || c.Name != "sales-daily" || c.Database != "sales_db" || c.Job() != "crawler:sales-daily" {
		t.Errorf("inline: got %+v", s.Crawler)
	}
	_, err = job.Parse("job.yaml", []byte(base+"crawler:\n  database: sales_db\n  state: other.db\n  targets: [{path: in, exlude: []}]\n"))
	var lines []string
	if err != nil {
		lines = strings.Split(err.Error(), "\n")
	}
	if !slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "job.yaml:11") && strings.Contains(l, `unknown key "exlude"`)
	}) {
		t.Errorf("inline with an unknown key: got %v", err)
	}
	_, err = job.Parse("job.yaml", []byte(base+"crawler:\n  database: sales_db\n  state: other.db\n  targets: [{path: in}]\n"))
	if err == nil || !strings.Contains(err.Error(), "job.yaml:10: crawler.state: a job's crawler uses the job's state store") {
		t.Errorf("inline with state: got %v", err)
	}
}

func TestSpread(t *testing.T) {
	tests := []struct {
		n, k int
		want []int
	}{
		{3, 10, []int{0, 1, 2}},
		{10, 3, []int{0, 4, 9}},
		{100, 10, []int{0, 11, 22, 33, 44, 55, 66, 77, 88, 99}},
		{5, 1, []int{4}},
		{0, 3, []int{}},
	}
	for _, tc := range tests {
		if got := spread(tc.n, tc.k); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("spread(%d, %d): got %v, want %v", tc.n, tc.k, got, tc.want)
		}
	}
}
