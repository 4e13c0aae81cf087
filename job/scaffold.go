package job

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/goccy/go-yaml"
)

// Scaffold is what `tidemark init` writes a job file from.
type Scaffold struct {
	Job    string // the job's name
	Source string // the source's path (relative to the job file, or a URL)
	Format string // the source's format: csv, json (jsonl, ndjson) or parquet
	Sink   string // the sink's path, as Source
}

// scaffoldTemplate is a small job that runs as it is, with the keys a
// newcomer changes next shown in comments.
var scaffoldTemplate = template.Must(template.New("job").Parse(`# A tidemark job, written by tidemark init. Each run reads the files of the
# source that are new since the last run, writes them to the sink and then
# advances the job's bookmark. See what the next run would read with
# tidemark plan FILE; run it with tidemark run FILE.
job: {{.Job}}
# state: .tidemark/state.db   # the default, next to this file; or postgres://... or s3://bucket/prefix/
sources:
  - ctx: {{.SourceCtx}}   # the bookmark's stable id; also the source's SQL view name
    path: {{.Source}}
    format: {{.Format}}   # csv | json (JSON Lines) | parquet; .gz and .zst files are read too
{{- if eq .Format "csv"}}
    options: {header: true}
{{- end}}
    # include: ["**/*.{{.Ext}}"]   # only these files (globs); exclude: [...] likewise
# transforms:   # optional SQL views over the sources, in order; a sink reads the last one
#   cleaned: |
#     SELECT * FROM {{.SourceCtx}}
sinks:
  - ctx: {{.SinkCtx}}
    path: {{.Sink}}
    format: parquet   # parquet | csv | json
    mode: append      # append | overwrite | overwrite_partitions
    # partition_by: [column]
`))

// Bytes is the job file, checked: it parses as a valid job.
func (sc Scaffold) Bytes() ([]byte, error) {
	format := Format(sc.Format)
	data := struct {
		Job, Source, Format, Ext, Sink, SourceCtx, SinkCtx string
	}{
		Job: sc.Job, Source: scalar(sc.Source), Format: format, Ext: format, Sink: scalar(sc.Sink),
		SourceCtx: ctxFrom(sc.Source, "input"), SinkCtx: ctxFrom(sc.Sink, "output"),
	}
	if data.SinkCtx == data.SourceCtx {
		data.SinkCtx += "_out"
	}
	var b bytes.Buffer
	if err := scaffoldTemplate.Execute(&b, data); err != nil {
		return nil, err
	}
	if _, err := Parse("job.yaml", b.Bytes()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// scalar writes s as a YAML value, quoted when it has to be.
func scalar(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return strings.TrimSpace(string(out))
}

var notIdent = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// ctxFrom makes a ctx of a path's last folder name ("landing/" →
// landing, "s3://b/sales/orders/" → orders); def when that is no
// identifier.
func ctxFrom(path, def string) string {
	p := strings.TrimRight(path, "/")
	if i := strings.LastIndex(p, "/"); i >= 0 {
		p = p[i+1:]
	}
	if i := strings.Index(p, "."); i > 0 {
		p = p[:i] // a file's name without its extension
	}
	p = strings.Trim(notIdent.ReplaceAllString(strings.ToLower(p), "_"), "_")
	if p == "" || !Identifier(p) {
		return def
	}
	return p
}
