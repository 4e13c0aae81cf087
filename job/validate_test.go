package job_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/tidemark-etl/tidemark/job"
	_ "github.com/tidemark-etl/tidemark/sink/files"
	_ "github.com/tidemark-etl/tidemark/sink/sqltable"
	_ "github.com/tidemark-etl/tidemark/source/files"
	_ "github.com/tidemark-etl/tidemark/source/sqltable"
)

// TestParseReportsEveryError: one Parse reports every error of the file,
// each with its key and line, in line order — decoding errors (unknown
// keys, values of the wrong type) and rule errors together, without
// repeating a key that could not be decoded as missing.
func TestParseReportsEveryError(t *testing.T) {
	src := `job: [1, 2]
sources:
  - ctx: orders_source
    path: landing/
    include: "*.csv"
    formatt: csv
    bounded_files: many
    listing: ordered
    max_band: 5m
sinks:
  - ctx: orders_sink
    path: out/
    mode: sideways
    partition_by: product
`
	_, err := Parse("job.yaml", []byte(src))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("got %v, want job.Errors", err)
	}
	want := []struct {
		line int
		key  string
		says string
	}{
		{1, "job", "want text, got a list"},
		{5, "sources[0].include", `want a list, got "*.csv"`},
		{6, "sources[0].formatt", `unknown key "formatt"`},
		{7, "sources[0].bounded_files", `want a whole number, got "many"`},
		{8, "sources[0].listing", "local folder"},
		{9, "sources[0].max_band", "tracking: timestamp"},
		{13, "sinks[0].mode", `"sideways" is not one of`},
		{14, "sinks[0].partition_by", `want a list, got "product"`},
	}
	if len(es) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(es), len(want), err)
	}
	for i, w := range want {
		if e := es[i]; e.Line != w.line || e.Key != w.key || !strings.Contains(e.Msg, w.says) {
			t.Errorf("error %d: got line %d key %q %q, want line %d key %q saying %q", i, e.Line, e.Key, e.Msg, w.line, w.key, w.says)
		}
	}
	// errors.As still finds the first one.
	var je *Error
	if !errors.As(err, &je) || je.Line != 1 {
		t.Errorf("errors.As(*Error): got %v", je)
	}
}

func TestParseRuleErrorsTogether(t *testing.T) {
	edit := strings.Replace(valid, "format: csv", "format: xml\n    tracking: fuzzy", 1)
	edit = strings.Replace(edit, "partition_by: [product]", "partition_by: [product]\n    mode: sideways", 1)
	_, err := Parse("job.yaml", []byte(edit))
	var es Errors
	if !errors.As(err, &es) || len(es) != 3 {
		t.Fatalf("got %v, want 3 errors (format, tracking, mode)", err)
	}
}

func TestParseBandAndListingRules(t *testing.T) {
	for _, c := range []struct {
		name, extra, path string
		ok                bool
	}{
		{"max_band with timestamp tracking", "tracking: timestamp\n    max_band: 5m", "landing/", true},
		{"max_band with exact tracking", "max_band: 5m", "landing/", false},
		{"max_band with explicit exact tracking", "tracking: exact\n    max_band: 15m", "landing/", false},
		{"ordered listing on S3", "listing: ordered", "s3://bucket/in/", true},
		{"ordered listing on a local folder", "listing: ordered", "landing/", false},
		{"ordered listing on a file URL", "listing: ordered", "file:///data/in/", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(valid, "format: csv", "format: csv\n    "+c.extra, 1)
			src = strings.Replace(src, "path: landing/", "path: "+c.path, 1)
			_, err := Parse("job.yaml", []byte(src))
			if c.ok && err != nil {
				t.Fatalf("got %v, want it accepted", err)
			}
			if !c.ok && err == nil {
				t.Fatal("accepted, want an error")
			}
		})
	}
}

// TestParseRefusesInlineSecrets: every form of inline secret is an error
// at its key and line whose message shows the value masked.
func TestParseRefusesInlineSecrets(t *testing.T) {
	const pw = "hunter2"
	table := func(conn string) string {
		return strings.Replace(validTable, "postgres://etl@db.internal:5432/shop", conn, 1)
	}
	sinkTable := func(conn string) string {
		return validTable + fmt.Sprintf("  - ctx: t_out\n    connection: %q\n    password_env: X\n    table: t\n", conn)
	}
	for _, c := range []struct {
		name, src, key string
		line           int
	}{
		{"user info", table("postgres://etl:" + pw + "@db/shop"), "sources[0].connection", 4},
		{"query password", table("postgres://etl@db/shop?password=" + pw), "sources[0].connection", 4},
		{"query sslpassword", table("postgres://etl@db/shop?sslmode=require&sslpassword=" + pw), "sources[0].connection", 4},
		{"mysql pass", table("mysql://etl@db/shop?pass=" + pw), "sources[0].connection", 4},
		{"key=value", table(`"host=db user=etl password=` + pw + ` dbname=shop"`), "sources[0].connection", 4},
		{"mysql DSN", table(`"etl:` + pw + `@tcp(db:3306)/shop"`), "sources[0].connection", 4},
		{"sink connection", sinkTable("postgres://etl:" + pw + "@db/shop"), "sinks[1].connection", 11},
		{"S3 source", strings.Replace(valid, "path: landing/", "path: s3://AKIAEXAMPLE:"+pw+"/x@bucket/in/", 1), "sources[0].path", 4},
		{"S3 sink", strings.Replace(valid, "path: out/", "path: s3://AKIAEXAMPLE:"+pw+"@bucket/out/", 1), "sinks[0].path", 12},
		{"s3 endpoint", strings.Replace(valid, "format: csv", "format: csv\n    s3: {endpoint: 'https://a:"+pw+"@h/'}", 1), "sources[0].s3.endpoint", 6},
		{"s3 secret setting", strings.Replace(valid, "format: csv", "format: csv\n    s3: {secret_access_key: "+pw+"}", 1), "sources[0].s3.secret_access_key", 6},
		{"state user info", strings.Replace(valid, "sources:", "state: postgres://tm:"+pw+"@db/state\nsources:", 1), "state", 2},
		{"state query", strings.Replace(valid, "sources:", "state: postgres://tm@db/state?password="+pw+"\nsources:", 1), "state", 2},
		{"state S3", strings.Replace(valid, "sources:", "state: s3://AKIA:"+pw+"@bucket/state/\nsources:", 1), "state", 2},
		{"spark token", strings.Replace(valid, "sources:", "engine: {spark: {remote: 'sc://h:15002/;token="+pw+"'}}\nsources:", 1), "engine.spark.remote", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("job.yaml", []byte(c.src))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("got %v, want job.Errors", err)
			}
			var e *Error
			for _, x := range es {
				if x.Key == c.key {
					e = x
				}
			}
			switch {
			case e == nil:
				t.Fatalf("no error at %s: %v", c.key, err)
			case strings.Contains(err.Error(), pw):
				t.Errorf("the message shows the secret: %v", err)
			case !strings.Contains(e.Msg, "xxxxx"):
				t.Errorf("the message does not show the value masked: %v", e)
			case e.Line != c.line:
				t.Errorf("got line %d, want %d: %v", e.Line, c.line, e)
			}
		})
	}
	// Accepted: password_env, and local paths that merely look like user info.
	for _, src := range []string{
		validTable,
		strings.Replace(validTable, "shop", "shop?sslmode=require&application_name=etl", 1),
		strings.Replace(valid, "path: landing/", "path: 'landing/a:b@c/'", 1),
		strings.Replace(valid, "path: landing/", "path: s3://bucket/in/2026-01-01T00:00@x/", 1),
	} {
		if _, err := Parse("job.yaml", []byte(src)); err != nil {
			t.Errorf("got %v, want it accepted:\n%s", err, src)
		}
	}
}

func TestParseConnectionScheme(t *testing.T) {
	_, err := Parse("job.yaml", []byte(strings.Replace(validTable, "postgres://etl@db.internal:5432/shop", `"host=db user=etl"`, 1)))
	if err == nil || !strings.Contains(err.Error(), "sources[0].connection: is not a connection URL") || strings.Contains(err.Error(), "host=db") {
		t.Errorf("got %v, want a connection error that does not quote the string", err)
	}
}

// TestParseAliasesKeepTheFirstError: a file with YAML aliases is decoded
// as a whole, and its first decoding error is still reported with its line.
func TestParseAliasesKeepTheFirstError(t *testing.T) {
	src := "job: sales\nx-defaults: &d {format: csv}\nsources:\n  - ctx: a\n    path: in/\n    <<: *d\nsinks:\n  - ctx: o\n    path: out/\n"
	_, err := Parse("job.yaml", []byte(src))
	var je *Error
	if !errors.As(err, &je) || je.Line != 2 || !strings.Contains(err.Error(), "x-defaults") {
		t.Fatalf("got %v, want the unknown key x-defaults at line 2", err)
	}
}
