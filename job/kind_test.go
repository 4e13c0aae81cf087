package job_test

import (
	"errors"
	"strings"
	"testing"

	. "github.com/tidemark-etl/tidemark/job"
	sinkfiles "github.com/tidemark-etl/tidemark/sink/files"
	sinksql "github.com/tidemark-etl/tidemark/sink/sqltable"
	"github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

// errorAt returns the error of err at key, or fails the test.
func errorAt(t *testing.T, err error, key string) *Error {
	t.Helper()
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("got %v, want job.Errors", err)
	}
	for _, e := range es {
		if e.Key == key {
			return e
		}
	}
	t.Fatalf("no error at %s in:\n%v", key, err)
	return nil
}

// TestBlocksDecodedByKind: a block with connection: is a SQL table, any
// other a file block; each is decoded into its component's config, with
// its defaults and the line it starts on.
func TestBlocksDecodedByKind(t *testing.T) {
	s, err := Parse("job.yaml", []byte(validTable+"  - ctx: t_out\n    connection: postgres://etl@db/shop\n    table: t\n    mode: merge\n    merge_keys: [id]\n"))
	if err != nil {
		t.Fatal(err)
	}
	src, ok := s.Sources[0].Config.(*sqltable.JobConfig)
	if !ok || s.Sources[0].Kind != "sqltable" || !s.Sources[0].IsTable() {
		t.Fatalf("source: got kind %q config %T, want sqltable *sqltable.JobConfig", s.Sources[0].Kind, s.Sources[0].Config)
	}
	if src.Table != "orders" || src.PasswordEnv != "SHOP_PASSWORD" || src.BookmarkKeysSortOrder != "asc" {
		t.Errorf("source config: got %+v", src)
	}
	if got, want := s.Sources[0].Line, 3; got != want {
		t.Errorf("source line: got %d, want %d", got, want)
	}
	if k, ok := s.Sinks[0].Config.(*sinkfiles.Config); !ok || s.Sinks[0].Kind != "files" || k.Path != "out/" || k.Format != "parquet" {
		t.Errorf("sink 0: got kind %q config %#v, want a files sink at out/", s.Sinks[0].Kind, s.Sinks[0].Config)
	}
	if k, ok := s.Sinks[1].Config.(*sinksql.JobConfig); !ok || k.Mode != "merge" || s.Sinks[1].From != "orders_db" {
		t.Errorf("sink 1: got %#v from %q, want a merge table sink from orders_db", s.Sinks[1].Config, s.Sinks[1].From)
	}
}

// TestKeyOfAnotherKind: a key of another kind is an error at its key and
// line that says which kind it belongs to, reported with every other.
func TestKeyOfAnotherKind(t *testing.T) {
	src := strings.Replace(validTable, "    table: orders\n", "    table: orders\n    include: ['*.csv']\n    bounded_rows: -1\n", 1)
	src = strings.Replace(src, "    path: out/\n", "    path: out/\n    merge_keys: [id]\n    mode: sideways\n", 1)
	_, err := Parse("job.yaml", []byte(src))
	for _, c := range []struct {
		key, says string
		line      int
	}{
		{"sources[0].include", "is for file sources (path:), not SQL tables (connection:)", 7},
		{"sources[0].bounded_rows", "must be positive", 8},
		{"sinks[0].merge_keys", "is for SQL tables (connection:), not file sinks (path:)", 12},
		{"sinks[0].mode", `"sideways" is not one of append, overwrite, overwrite_partitions`, 13},
	} {
		e := errorAt(t, err, c.key)
		if e.Msg != c.says || e.Line != c.line {
			t.Errorf("%s: got line %d %q, want line %d %q", c.key, e.Line, e.Msg, c.line, c.says)
		}
	}
}

// TestPathAndConnection: a block with both path: and connection: is told
// to choose one, as before kinds were decoded by their component (the
// message is not that path: belongs to file blocks).
func TestPathAndConnection(t *testing.T) {
	src := strings.Replace(validTable, "    table: orders\n", "    table: orders\n    path: in/\n", 1)
	src = strings.Replace(src, "    path: out/\n", "    path: out/\n    connection: postgres://etl@db/shop\n    table: t\n", 1)
	_, err := Parse("job.yaml", []byte(src))
	for _, c := range []struct {
		key, says string
		line      int
	}{
		{"sources[0].path", "a source has either path: or connection:, not both", 7},
		{"sinks[0].path", "a sink has either path: or connection:, not both", 10},
	} {
		e := errorAt(t, err, c.key)
		if e.Msg != c.says || e.Line != c.line {
			t.Errorf("%s: got line %d %q, want line %d %q", c.key, e.Line, e.Msg, c.line, c.says)
		}
	}
}

// TestSparkIsRefused: an engine not built into the program is a job-file
// error at engine:, by name or with options; what it was given is still
// checked for secrets.
func TestSparkIsRefused(t *testing.T) {
	for _, engine := range []string{"spark", "{spark: {remote: 'sc://h:15002'}}"} {
		_, err := Parse("job.yaml", []byte(strings.Replace(valid, "sources:", "engine: "+engine+"\nsources:", 1)))
		e := errorAt(t, err, "engine")
		if want := `"spark": this binary has no spark engine (built in: duckdb)`; e.Msg != want || e.Line != 2 {
			t.Errorf("engine: %s: got line %d %q, want line 2 %q", engine, e.Line, e.Msg, want)
		}
	}
	if _, err := Parse("job.yaml", []byte(strings.Replace(valid, "sources:", "engine: {duckdb: {threads: 2}}\nsources:", 1))); err != nil {
		t.Errorf("engine duckdb: got %v, want it accepted", err)
	}
}

// TestSpecBuiltInCode: a source or sink built in code gets the kind of its
// config, or the default kind and its empty block, with its defaults.
func TestSpecBuiltInCode(t *testing.T) {
	s := &Spec{Job: "j", Sources: []Source{{Ctx: "a", Config: &files.Config{Path: "in/"}}, {Ctx: "b"}},
		Sinks: []Sink{{Ctx: "o", From: "a", Config: &sinksql.JobConfig{Connection: "postgres://x@h/db", Table: "t"}}}}
	s.ApplyDefaults()
	for i, src := range s.Sources {
		c, ok := src.Config.(*files.Config)
		if src.Kind != "files" || !ok || c.Tracking != files.DefaultTracking || c.OnBadRecord != DefaultOnBadRecord {
			t.Errorf("source %d: got kind %q config %#v, want files with its defaults", i, src.Kind, src.Config)
		}
	}
	if k := s.Sinks[0]; k.Kind != "sqltable" || k.Config.(*sinksql.JobConfig).Mode != "append" {
		t.Errorf("sink: got kind %q config %#v, want sqltable in mode append", k.Kind, k.Config)
	}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "sources[1].path: is required") {
		t.Errorf("got %v, want sources[1].path required", err)
	}
}

// TestRegisterTwice: a second kind of the same name is a programming error.
func TestRegisterTwice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("registering a second files source kind did not panic")
		}
	}()
	RegisterSource(Kind{Name: "files", Marker: "other", New: func() Config { return new(files.Config) }})
}

func TestSpliceReferenceNeedsMarkers(t *testing.T) {
	if _, err := SpliceReference([]byte("# readme\n" + ReferenceEnd + "\n" + ReferenceBegin + "\n")); err == nil {
		t.Errorf("markers out of order: got no error")
	}
	got, err := SpliceReference([]byte("a\n" + ReferenceBegin + "\nold\n" + ReferenceEnd + "\nb\n"))
	if err != nil || strings.Contains(string(got), "\nold\n") || !strings.Contains(string(got), "| `max_band` |") ||
		!strings.HasSuffix(string(got), ReferenceEnd+"\nb\n") {
		t.Errorf("got %q, %v; want the section replaced by the reference", got, err)
	}
}

// TestShippedKindsPlaceThemselves: every shipped source and sink kind
// describes its place (job.Placer): a folder with its dataset, or a table
// with its dataset and no folder, shown without a secret.
func TestShippedKindsPlaceThemselves(t *testing.T) {
	spec := &Spec{Dir: "/jobs"}
	for _, c := range []struct {
		cfg            Config
		folder, ns, nm string
	}{
		{&files.Config{Path: "in/"}, "/jobs/in", "file", "/jobs/in"},
		{&sinkfiles.Config{Path: "s3://b/out/"}, "s3://b/out/", "s3://b", "out"},
		{&sqltable.JobConfig{Connection: "postgres://etl:hunter2@db/shop", Table: "orders"}, "", "postgres://db:5432", "shop.public.orders"},
		{&sinksql.JobConfig{Connection: "sqlite:out.db", Table: "orders"}, "", "sqlite:///jobs/out.db", "orders"},
	} {
		p, ok := c.cfg.(Placer)
		if !ok {
			t.Errorf("%T is no job.Placer", c.cfg)
			continue
		}
		pl := p.Place(spec)
		if pl.Folder != c.folder || pl.Dataset.Namespace != c.ns || pl.Dataset.Name != c.nm {
			t.Errorf("%T: got folder %q dataset %q %q, want %q %q %q", c.cfg, pl.Folder, pl.Dataset.Namespace, pl.Dataset.Name, c.folder, c.ns, c.nm)
		}
		if pl.Shown == "" || strings.Contains(pl.Shown, "hunter2") {
			t.Errorf("%T: shown as %q, want its place without the password", c.cfg, pl.Shown)
		}
	}
}
