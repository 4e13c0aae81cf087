package job_test

import (
	"errors"
	"strings"
	"testing"

	. "github.com/tidemark-etl/tidemark/job"
	sinkfiles "github.com/tidemark-etl/tidemark/sink/files"
	_ "github.com/tidemark-etl/tidemark/sink/sqltable"
	"github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

const valid = `job: sales-daily
sources:
  - ctx: orders_source
    path: landing/
    format: csv
    options: {header: true}
transforms:
  clean_orders: |
    SELECT order_id FROM orders_source
sinks:
  - ctx: orders_sink
    path: out/
    partition_by: [product]
`

func TestParseDefaults(t *testing.T) {
	s, err := Parse("job.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	src, sink := s.Sources[0].Config.(*files.Config), s.Sinks[0].Config.(*sinkfiles.Config)
	if src.Tracking != "exact" || src.OnModified != "reprocess" || src.MaxBand.Duration != files.DefaultMaxBand || !*src.HivePartitioning {
		t.Errorf("source defaults: got %+v", src)
	}
	if s.Sinks[0].From != "clean_orders" || sink.Format != "parquet" || sink.Mode != "append" {
		t.Errorf("sink defaults: got from %q format %q mode %q", s.Sinks[0].From, sink.Format, sink.Mode)
	}
	if src.AllowMissing {
		t.Errorf("allow_missing defaults to true, want false")
	}
	if s, err := Parse("job.yaml", []byte(strings.Replace(valid, "format: csv", "format: csv\n    allow_missing: true", 1))); err != nil || !s.Sources[0].Config.(*files.Config).AllowMissing {
		t.Errorf("allow_missing: true: got %v", err)
	}
	if s.Engine.Name != "duckdb" || s.Bookmark != "enable" {
		t.Errorf("job defaults: engine %q bookmark %q", s.Engine.Name, s.Bookmark)
	}
}

// validTable is a valid job with a SQL table source.
const validTable = `job: orders-sync
sources:
  - ctx: orders_db
    connection: postgres://etl@db.internal:5432/shop
    password_env: SHOP_PASSWORD
    table: orders
sinks:
  - ctx: out
    path: out/
`

func TestParseTableSource(t *testing.T) {
	s, err := Parse("job.yaml", []byte(strings.Replace(validTable, "table: orders", "table: orders\n    regression_check_rows: 0", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Sources[0].Config.(*sqltable.JobConfig).RegressionCheckRows; n == nil || *n != 0 {
		t.Fatalf("regression_check_rows = %v, want 0 (every row)", n)
	}
	s, err = Parse("job.yaml", []byte(validTable))
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Sources[0].Config.(*sqltable.JobConfig).RegressionCheckRows; n == nil || *n != sqltable.DefaultRegressionRows {
		t.Fatalf("regression_check_rows unset = %v, want the default %d", n, sqltable.DefaultRegressionRows)
	}
}

func TestParseErrorsNameKeyAndLine(t *testing.T) {
	cases := []struct {
		name, edit, want string
		line             int
	}{
		{"unknown key", strings.Replace(valid, "    format: csv\n", "    format: csv\n    formatt: csv\n", 1), `unknown key "formatt"`, 6},
		{"bad format", strings.Replace(valid, "format: csv", "format: xml", 1), "sources[0].format", 5},
		{"bad tracking", strings.Replace(valid, "format: csv", "format: csv\n    tracking: fuzzy", 1), "sources[0].tracking", 6},
		{"bad from", strings.Replace(valid, "    partition_by", "    from: nope\n    partition_by", 1), "sinks[0].from", 13},
		{"bad duration", strings.Replace(valid, "format: csv", "format: csv\n    max_band: soon", 1), "invalid duration", 6},
		{"bad engine", strings.Replace(valid, "sources:", "engine: {flink: {}}\nsources:", 1), "engine", 2},
		{"missing job", strings.Replace(valid, "job: sales-daily\n", "", 1), "job: is required", 0},
		{"duplicate ctx", strings.Replace(valid, "clean_orders: |", "orders_source: |", 1), "already used", 0},
		{"negative regression depth", strings.Replace(validTable, "table: orders", "table: orders\n    regression_check_rows: -5", 1), "sources[0].regression_check_rows", 7},
		{"allow_missing not a bool", strings.Replace(valid, "format: csv", "format: csv\n    allow_missing: sometimes", 1), "allow_missing", 6},
		{"allow_missing on a table", strings.Replace(validTable, "table: orders", "table: orders\n    allow_missing: true", 1), "sources[0].allow_missing: is for file sources", 7},
		{"regression depth not a number", strings.Replace(validTable, "table: orders", "table: orders\n    regression_check_rows: many", 1), "regression_check_rows", 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("job.yaml", []byte(c.edit))
			var je *Error
			if !errors.As(err, &je) {
				t.Fatalf("got %v, want *job.Error", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %q, want it to mention %q", err, c.want)
			}
			if c.line > 0 && je.Line != c.line {
				t.Errorf("got line %d, want %d (%v)", je.Line, c.line, err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(valid))
	f.Add([]byte("job: [x\n"))
	f.Add([]byte("job: x\nsources: 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("job.yaml", data)
		if err == nil && (s.Job == "" || len(s.Sources) == 0 || len(s.Sinks) == 0) {
			t.Fatalf("accepted an incomplete job: %+v", s)
		}
	})
}
