package spark

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// Internal names: the corrupt-record column of a source read with
// rejects, and the column that carries each row's file.
const (
	corruptCol = "_tidemark_corrupt"
	fileCol    = "_tidemark_file"
)

// extractNull is the nullValue a SQL table's extract is read with: Spark
// reads an unquoted empty field as the parser's nullValue and a quoted
// one as the empty text, then takes a field equal to nullValue for NULL.
// With the default nullValue (empty) both were NULL; with a text no
// extract holds (a NUL) only the unquoted one is.
const extractNull = "\x00"

// reader is one source of the plan as Spark reads it.
type reader struct {
	src    *engine.Source
	n      int
	paths  []string          // Spark paths, glob-escaped
	files  []engine.Input    // the inputs of paths, in order
	locs   []string          // where paths are, as locations
	keys   map[string]string // filePathKey → Input.Key
	opts   map[string]string // Spark reader options
	schema []bookmark.Column // the schema read with (settled)
	// rejects: the source is read PERMISSIVE with a corrupt-record column;
	// its view leaves bad rows out, and raw() has them.
	rejects bool
	// lossy are the checks of the columns whose values lossyValue found
	// changed by the parser, by name, when r has rejects and such values
	// (skipLossy); nil otherwise.
	lossy map[string]*lossCheck
}

func (r *reader) view() string { return quoteIdent(r.src.Ctx) }
func (r *reader) rawName() string {
	return quoteIdent(fmt.Sprintf("_tidemark_raw_%d", r.n))
}

// openSource settles the source's schema and creates its view.
func (x *execution) openSource(ctx context.Context, src *engine.Source, n int) (*reader, error) {
	opts, err := readerOpts(src.Format, src.Options)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", src.Ctx, err)
	}
	if src.Exact && src.Format == "csv" {
		// tidemark's own extract (a SQL table): its quoted texts may span
		// lines, and a quoted empty text is not NULL.
		opts["multiLine"] = "true"
		opts["nullValue"] = extractNull
	}
	r := &reader{src: src, n: n, opts: opts, keys: map[string]string{}}
	if err := x.needS3(ctx, src); err != nil {
		return nil, err
	}
	var base string
	locs, err := x.unpack.localInputs(src, n)
	if err != nil {
		return nil, err
	}
	if ie := checkPartitionValues(src); ie != nil {
		return nil, ie
	}
	var first *engine.Input // the first file read, for its partition folders
	for i, in := range src.Files {
		if in.Size == 0 {
			continue // as the DuckDB engine: an empty file has no rows, and no header
		}
		if src.Hive {
			if first == nil {
				first = &src.Files[i]
			}
			if ie := samePartitions(src, *first, in); ie != nil {
				return nil, ie
			}
		}
		p, err := sparkPath(locs[i], false)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", src.Ctx, err)
		}
		r.paths = append(r.paths, escapeGlob(p))
		r.files = append(r.files, in)
		r.locs = append(r.locs, locs[i])
		r.keys[filePathKey(p)] = in.Key
		if key := strings.TrimSuffix(in.Key, ".zst"); src.Hive && base == "" && strings.HasSuffix(p, "/"+key) {
			base = strings.TrimSuffix(p, key)
		}
	}
	if base != "" {
		r.opts["basePath"] = escapeGlob(base)
	}
	r.rejects = x.plan.OnBadRecord != engine.BadFail && x.plan.OnBadRecord != "" && src.Format != "parquet"
	if len(r.paths) == 0 {
		return r, x.emptyView(ctx, r)
	}
	if src.Format == "csv" && !src.Exact {
		if ie, err := x.unclosedQuote(ctx, r); err != nil || ie != nil {
			if ie != nil {
				return nil, ie
			}
			return nil, err
		}
		if ie, err := x.emptyUnderNullstr(ctx, r); err != nil || ie != nil {
			if ie != nil {
				return nil, ie
			}
			return nil, err
		}
	}
	if ie, err := x.parquetHiveClash(ctx, r); err != nil || ie != nil {
		if ie != nil {
			return nil, ie
		}
		return nil, err
	}
	if src.Schema == nil {
		if err := x.infer(ctx, r); err != nil {
			return nil, err
		}
	} else {
		r.schema = src.Schema
	}
	if ie, err := x.unknownJSONKey(ctx, r); err != nil || ie != nil {
		if ie != nil {
			return nil, ie
		}
		return nil, err
	}
	if ie, err := x.parquetColumns(ctx, r); err != nil || ie != nil {
		if ie != nil {
			return nil, ie
		}
		return nil, err
	}
	if ie, err := x.lossyValue(ctx, r); err != nil || ie != nil {
		if ie != nil {
			return nil, ie
		}
		return nil, err
	}
	return r, x.createViews(ctx, r)
}

// createViews defines the source's view with its settled schema: a plain
// read, or with rejects a PERMISSIVE read (raw, with a corrupt-record and
// a file column) and a view of its good rows.
func (x *execution) createViews(ctx context.Context, r *reader) error {
	ddl, exprs, err := r.readDDL()
	if err != nil {
		return fmt.Errorf("source %s: %w", r.src.Ctx, err)
	}
	opts := copyOpts(r.opts)
	if r.src.Format != "parquet" {
		opts["mode"] = "FAILFAST"
	}
	if !r.rejects && exprs == nil {
		return x.e.wrapErr(ctx, x.createRead(ctx, r.view(), r.src.Format, ddl, opts, r.paths, false), "source %s: creating view", r.src.Ctx)
	}
	if !r.rejects {
		text := quoteIdent(fmt.Sprintf("_tidemark_text_%d", r.n))
		if err := x.createRead(ctx, text, r.src.Format, ddl, opts, r.paths, false); err != nil {
			return x.e.wrapErr(ctx, err, "source %s: creating view", r.src.Ctx)
		}
		return x.sql(ctx, fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s AS SELECT %s FROM %s", r.view(), strings.Join(exprs, ", "), text),
			"source %s: creating view", r.src.Ctx)
	}
	list := columnList(r.schema)
	if exprs != nil {
		list = strings.Join(exprs, ", ")
	}
	opts["mode"] = "PERMISSIVE"
	opts["columnNameOfCorruptRecord"] = corruptCol
	if err := x.createRead(ctx, r.rawName(), r.src.Format, ddl+", "+corruptCol+" STRING", opts, r.paths, true); err != nil {
		return x.e.wrapErr(ctx, err, "source %s: creating view", r.src.Ctx)
	}
	if r.lossy != nil {
		if err := x.joinLossy(ctx, r); err != nil {
			return err
		}
	}
	from, bad := r.rawRows()
	// The condition on a data column keeps Spark from reading the corrupt
	// column alone (a count of the view), which it refuses.
	return x.sql(ctx, fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s AS SELECT %s FROM %s WHERE NOT %s AND %s",
		r.view(), list, from, bad, usesColumn(r)), "source %s: creating view", r.src.Ctx)
}

// readDDL is the schema Spark reads r's files with, as DDL, and for a SQL
// table's extract that needs them (extractRead) the expressions of the
// view's columns over that read; nil exprs: the read is the view.
func (r *reader) readDDL() (string, []string, error) {
	cols, exprs := r.schema, []string(nil)
	if r.src.Exact && r.src.Format == "csv" {
		read, ex, err := extractRead(r.schema)
		if err != nil {
			return "", nil, err
		}
		for i := range read {
			if read[i] != r.schema[i] {
				cols, exprs = read, ex
				break
			}
		}
	}
	ddl, err := schemaDDL(cols)
	return ddl, exprs, err
}

// emptyView defines a source without files: no rows, the recorded schema.
func (x *execution) emptyView(ctx context.Context, r *reader) error {
	if r.src.Schema == nil {
		return fmt.Errorf("source %s: no files to read and no recorded schema", r.src.Ctx)
	}
	r.schema = r.src.Schema
	cols := make([]string, len(r.schema))
	for i, c := range r.schema {
		t, err := bookmark.ParseType(c.Type)
		if err != nil {
			return fmt.Errorf("source %s: column %s: %w", r.src.Ctx, c.Name, err)
		}
		st, err := sparkType(t)
		if err != nil {
			return fmt.Errorf("source %s: column %s: %w", r.src.Ctx, c.Name, err)
		}
		cols[i] = fmt.Sprintf("CAST(NULL AS %s) AS %s", st, quoteIdent(c.Name))
	}
	return x.sql(ctx, fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s AS SELECT %s WHERE false", r.view(), strings.Join(cols, ", ")),
		"source %s: creating view", r.src.Ctx)
}

// createRead defines view name over a read of paths with a schema (DDL,
// "" to infer), through the protocol's DataSource read: SQL's CREATE VIEW
// USING takes one path. withFile adds the file of each row as fileCol.
func (x *execution) createRead(ctx context.Context, name, format, ddl string, opts map[string]string, paths []string, withFile bool) error {
	ds := map[string]any{"format": format, "options": opts, "paths": paths}
	if ddl != "" {
		ds["schema"] = ddl
	}
	rel := map[string]any{"read": map[string]any{"dataSource": ds}}
	if withFile {
		rel = map[string]any{"project": map[string]any{"input": rel, "expressions": []any{
			map[string]any{"unresolvedStar": map[string]any{}},
			map[string]any{"alias": map[string]any{"expr": map[string]any{"unresolvedAttribute": map[string]any{"unparsedIdentifier": "_metadata.file_path"}}, "name": []string{fileCol}}},
		}}}
	}
	cmd := map[string]any{"createDataframeView": map[string]any{"input": rel, "name": strings.Trim(name, "`"), "isGlobal": false, "replace": true}}
	js, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	return x.command(ctx, string(js))
}

// columnList is the quoted names of cols.
func columnList(cols []bookmark.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteIdent(c.Name)
	}
	return strings.Join(names, ", ")
}

func copyOpts(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+3)
	for k, v := range m {
		out[k] = v
	}
	return out
}
