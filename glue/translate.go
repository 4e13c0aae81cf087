package glue

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	sinkfiles "github.com/tidemark-etl/tidemark/sink/files"
	"github.com/tidemark-etl/tidemark/source/files"
)

// csvOptions maps Glue's CSV format_options to the reader options
// tidemark records for the source (and would give its own engine).
var csvOptions = map[string]string{
	"withHeader": "header",
	"separator":  "delim",
	"quoteChar":  "quote",
	"escaper":    "escape",
}

// sourceOf turns a source request into a file source. A request without
// a ctx reads without a bookmark under a name made from n.
func sourceOf(req SourceRequest, n int) (job.Source, bool, error) {
	ctx, noBookmark := req.Ctx, false
	if ctx == "" {
		ctx, noBookmark = fmt.Sprintf("unbookmarked_%d", n), true
	}
	if c := req.Catalog; c != nil {
		if c.Database == "" || c.Table == "" {
			return job.Source{}, false, fmt.Errorf("%w: from_catalog needs database and table_name", tidemark.ErrUsage)
		}
		if len(req.Paths) > 0 || req.Format != "" || len(req.Options) > 0 {
			return job.Source{}, false, fmt.Errorf("%w: a catalog source takes its paths, format and options from the table %s.%s", tidemark.ErrUsage, c.Database, c.Table)
		}
		cfg := &files.Config{Catalog: c.Database + "." + c.Table, PushDownPredicate: c.PushDownPredicate,
			Exclude: req.Exclusions, BoundedFiles: req.BoundedFiles}
		if req.BoundedSize > 0 {
			cfg.BoundedSize = job.Size{Bytes: req.BoundedSize}
		}
		return job.Source{Ctx: ctx, Kind: "files", Config: cfg}, noBookmark, nil
	}
	if len(req.Paths) != 1 {
		return job.Source{}, false, fmt.Errorf("%w: connection_options paths: want exactly one folder, got %d (give each folder its own transformation_ctx)", tidemark.ErrUsage, len(req.Paths))
	}
	// Glue's scripts also write exclusions as full paths under the folder.
	var exclude []string
	for _, g := range req.Exclusions {
		exclude = append(exclude, files.RelativeGlob(req.Paths[0], g))
	}
	cfg := &files.Config{Path: req.Paths[0], Format: req.Format, Exclude: exclude, BoundedFiles: req.BoundedFiles}
	if req.BoundedSize > 0 {
		cfg.BoundedSize = job.Size{Bytes: req.BoundedSize}
	}
	if req.Recurse != nil && !*req.Recurse {
		cfg.Include = []string{"*"}
	}
	opts, err := readerOptions(req.Format, req.Options)
	if err != nil {
		return job.Source{}, false, err
	}
	cfg.Options = opts
	return job.Source{Ctx: ctx, Kind: "files", Config: cfg}, noBookmark, nil
}

// readerOptions maps Glue's format_options; an option tidemark does not
// know is refused rather than silently read otherwise.
func readerOptions(format string, in map[string]any) (map[string]any, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := map[string]any{}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := in[k]
		if format == "csv" {
			if name, ok := csvOptions[k]; ok {
				out[name] = v
				continue
			}
		}
		if format == "json" && (k == "jsonPath" && v == "$[*]" || k == "multiline" && v == false) {
			continue
		}
		return nil, fmt.Errorf("%w: format_options %q (format %s) is not supported by tidemark's awsglue", tidemark.ErrUsage, k, format)
	}
	return out, nil
}

// identRE matches what a sink ctx may be.
var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// sinkOf turns a sink request into a file sink; a sink without a ctx is
// named after n.
func sinkOf(req SinkRequest, n int) (job.Sink, error) {
	if req.Path == "" {
		return job.Sink{}, fmt.Errorf("%w: connection_options path is required", tidemark.ErrUsage)
	}
	ctx := req.Ctx
	if ctx == "" {
		ctx = fmt.Sprintf("sink_%d", n)
	}
	if !identRE.MatchString(ctx) {
		return job.Sink{}, fmt.Errorf("%w: transformation_ctx %q of a write must be an identifier (letters, digits, '_')", tidemark.ErrUsage, ctx)
	}
	cfg := &sinkfiles.Config{Path: req.Path, Format: req.Format, PartitionBy: req.PartitionKeys}
	if c, ok := req.Options["compression"]; ok {
		cfg.Options = map[string]any{"compression": c}
	}
	return job.Sink{Ctx: ctx, Kind: "files", Config: cfg}, nil
}

// sourceResponse is what the program is told of a planned source.
func sourceResponse(req SourceRequest, src job.Source, in engine.Source) SourceResponse {
	out := SourceResponse{Ctx: req.Ctx, Name: src.Ctx, Format: in.Format, Options: in.Options, Files: []InputFile{}, Schema: in.Schema}
	if out.Format == "" { // nothing to read: the engine's view was not made
		// The request's, as sourceOf gave them to the source (it refused
		// options it could not translate).
		out.Format = req.Format
		out.Options, _ = readerOptions(req.Format, req.Options)
	}
	for _, f := range in.Files {
		out.Files = append(out.Files, InputFile{Location: f.Location, Key: f.Key, Size: f.Size, Partition: partitionOf(f.Key)})
	}
	return out
}

// partitionOf reads the key=value folders of a key, percent-decoded as
// both engines read them (DuckDB writes product=日本 encoded).
func partitionOf(key string) map[string]string {
	dir := path.Dir(key)
	if dir == "." {
		return nil
	}
	var out map[string]string
	for _, part := range strings.Split(dir, "/") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			continue
		}
		if dec, err := url.PathUnescape(v); err == nil {
			v = dec
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
