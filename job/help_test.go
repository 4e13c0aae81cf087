package job_test

import (
	"errors"
	"strings"
	"testing"

	. "github.com/tidemark-etl/tidemark/job"
	sinkfiles "github.com/tidemark-etl/tidemark/sink/files"
	"github.com/tidemark-etl/tidemark/source/files"
)

// TestUnknownKeySuggests: an unknown key names the nearest known one, at
// every level of the file, and is the only error it causes: the key it
// stands for is not reported again as missing, nor what depends on it.
func TestUnknownKeySuggests(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		line           int
		want           string
	}{
		{"top", "sources:\n", "sourcs:\n", 2, `sourcs: unknown key "sourcs" (did you mean sources?)`},
		{"top, another case", "job: sales-daily\n", "Job: sales-daily\n", 1, `Job: unknown key "Job" (did you mean job?)`},
		{"source", "    format: csv\n", "    formt: csv\n", 5, `sources[0].formt: unknown key "formt" (did you mean format?)`},
		{"sink", "    path: out/\n", "    pth: out/\n", 12, `sinks[0].pth: unknown key "pth" (did you mean path?)`},
		{"sink, two letters swapped", "    partition_by:", "    partiton_by:", 13, `(did you mean partition_by?)`},
		{"engine", "sources:\n", "engine: {duckdb: {thredas: 2}}\nsources:\n", 2, `engine.duckdb.thredas: unknown key "thredas" (did you mean threads?)`},
		{"engine below", "sources:\n", "engine:\n  duckdb:\n    thread: 2\nsources:\n", 4, `engine.duckdb.thread: unknown key "thread" (did you mean threads?)`},
		{"io", "sources:\n", "io: {concurency: 2}\nsources:\n", 2, `io.concurency: unknown key "concurency" (did you mean concurrency?)`},
		{"lineage", "sources:\n", "lineage:\n  ulr: http://x\nsources:\n", 3, `lineage.ulr: unknown key "ulr" (did you mean url?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(valid, tc.old) {
				t.Fatalf("%q is not in the job", tc.old)
			}
			_, err := Parse("job.yaml", []byte(strings.Replace(valid, tc.old, tc.new, 1)))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("got %v, want job.Errors", err)
			}
			if len(es) != 1 || es[0].Line != tc.line || !strings.Contains(es[0].Error(), tc.want) {
				t.Errorf("got %d errors:\n%v\nwant one, on line %d: %s", len(es), err, tc.line, tc.want)
			}
		})
	}
	// Far from every known key: no guess, and the missing key is said.
	_, err := Parse("job.yaml", []byte(strings.Replace(valid, "sources:\n", "inputs:\n", 1)))
	if err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "sources: at least one source is required") {
		t.Errorf("inputs: instead of sources: got %v, want the unknown key without a guess, and sources missing", err)
	}
	// A key of another kind of block says so, rather than guessing.
	_, err = Parse("job.yaml", []byte(strings.Replace(valid, "    format: csv\n", "    format: csv\n    table: x\n", 1)))
	if err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "is for SQL tables") {
		t.Errorf("table: in a file source: got %v, want it named as a SQL table's key", err)
	}
}

// TestJSONLinesFormatNames: jsonl and ndjson are JSON Lines, read and
// written as format json.
func TestJSONLinesFormatNames(t *testing.T) {
	for _, f := range []string{"jsonl", "ndjson", "JSONL", "json"} {
		doc := strings.Replace(valid, "format: csv", "format: "+f, 1)
		doc = strings.Replace(doc, "    path: out/\n", "    path: out/\n    format: "+f+"\n", 1)
		s, err := Parse("job.yaml", []byte(doc))
		if err != nil {
			t.Errorf("format: %s: %v", f, err)
			continue
		}
		if got := s.Sources[0].Config.(*files.Config).Format; got != "json" {
			t.Errorf("source format: %s: got %q, want json", f, got)
		}
		if got := s.Sinks[0].Config.(*sinkfiles.Config).Format; got != "json" {
			t.Errorf("sink format: %s: got %q, want json", f, got)
		}
	}
}

// TestYAMLSyntaxErrorLine: a YAML syntax error names the line to fix, not
// the line where the parser noticed.
func TestYAMLSyntaxErrorLine(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line      int
		want      string
	}{
		{"key indented deeper than the one above", "job: a\nsources:\n  - ctx: s\n    path: in/\n     format: csv\nsinks: []\n", 5, "indent"},
		{"top key indented", "job: a\n  sources: x\nsinks: []\n", 2, "indent"},
		{"key indented less", "job: a\nsources:\n  - ctx: s\n    path: in/\n   format: csv\nsinks: []\n", 5, ""},
		{"unclosed list", "job: a\nsources:\n  - ctx: s\n    include: [a, b\nsinks: []\n", 4, "not closed"},
		{"unclosed mapping", "job: a\nsources:\n  - ctx: s\n    options: {header: true\n    format: csv\nsinks: []\n", 4, "not closed"},
		{"unclosed quote", "job: a\nsources:\n  - ctx: s\n    path: \"in/\n    format: csv\nsinks: []\n", 4, ""},
		{"tab", "job: a\nsources:\n  - ctx: s\n\tpath: x\nsinks: []\n", 4, "tab"},
		{"key twice", "job: a\nsources:\n  - ctx: s\n    path: x\n    path: y\nsinks: []\n", 5, "already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("job.yaml", []byte(tc.doc))
			var je *Error
			if !errors.As(err, &je) {
				t.Fatalf("got %v, want *job.Error", err)
			}
			if je.Line != tc.line || !strings.HasPrefix(err.Error(), "job.yaml:") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %q (line %d), want line %d saying %q", err, je.Line, tc.line, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("got several lines, want one:\n%v", err)
			}
		})
	}
}

// TestScaffold: what tidemark init writes is a valid job of the source
// and sink it was given, whatever the paths hold.
func TestScaffold(t *testing.T) {
	for _, sc := range []Scaffold{
		{Job: "sales", Source: "landing/", Format: "csv", Sink: "out/"},
		{Job: "events", Source: "s3://your-input-bucket/events/", Format: "jsonl", Sink: "s3://your-output-bucket/events/"},
		{Job: "x", Source: "../data/2024 orders: #1/", Format: "parquet", Sink: "out dir/"},
		{Job: "same", Source: "data/", Format: "NDJSON", Sink: "elsewhere/data/"},
	} {
		b, err := sc.Bytes()
		if err != nil {
			t.Errorf("%+v: %v", sc, err)
			continue
		}
		s, err := Parse("job.yaml", b)
		if err != nil {
			t.Fatalf("%+v: %v\n%s", sc, err, b)
		}
		src, sink := s.Sources[0].Config.(*files.Config), s.Sinks[0].Config.(*sinkfiles.Config)
		if s.Job != sc.Job || src.Path != sc.Source || src.Format != Format(sc.Format) || sink.Path != sc.Sink || s.Sinks[0].From != s.Sources[0].Ctx {
			t.Errorf("%+v: wrote\n%s", sc, b)
		}
	}
}
