package spark

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/tidemark-etl/tidemark/engine"
)

// parquetColumns checks the columns of each of r's Parquet files against
// its settled schema and returns the first file with a column the schema
// lacks, or lacking one it has, as an *engine.InputError naming file and
// column (nil when every file has the schema's columns). Spark's Parquet
// reader given a schema drops a file's other columns and reads a missing
// one as NULL, where the DuckDB engine fails the source (schema_evolution
// fail, the only mode this engine reads). Names compare as Spark matches
// them, without case; partition columns come from the folders. A local
// file's footer is read here; a remote one's by Spark.
func (x *execution) parquetColumns(ctx context.Context, r *reader) (*engine.InputError, error) {
	if r.src.Format != "parquet" || len(r.paths) == 0 {
		return nil, nil
	}
	hive := hiveNames(r.src)
	want := map[string]bool{}
	for _, c := range r.schema {
		want[strings.ToLower(c.Name)] = true
	}
	for i, in := range r.files {
		names, err := x.fileColumns(ctx, r, i)
		if err != nil {
			return &engine.InputError{Source: r.src.Ctx, File: in.Key, Msg: "reading the file's columns: " + err.Error()}, nil
		}
		have := map[string]bool{}
		for _, n := range names {
			l := strings.ToLower(n)
			have[l] = true
			if !want[l] && !hive[l] {
				return &engine.InputError{Source: r.src.Ctx, File: in.Key, Column: n,
					Msg: "the file has a column the schema lacks; it would be dropped (schema_evolution: fail)"}, nil
			}
		}
		for _, c := range r.schema {
			if l := strings.ToLower(c.Name); !have[l] && !hive[l] {
				return &engine.InputError{Source: r.src.Ctx, File: in.Key, Column: c.Name,
					Msg: "the file lacks a column of the schema; it would be read as NULL (schema_evolution: fail)"}, nil
			}
		}
	}
	return nil, nil
}

// fileColumns is the top-level column names of r's i-th file (of those
// it reads).
func (x *execution) fileColumns(ctx context.Context, r *reader, i int) ([]string, error) {
	if p, err := engine.LocalPath(r.locs[i]); err == nil {
		f, err := file.OpenParquetFile(p, false)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		root := f.MetaData().Schema.Root()
		names := make([]string, root.NumFields())
		for j := range names {
			names[j] = root.Field(j).Name()
		}
		return names, nil
	}
	name := fmt.Sprintf("_tidemark_file_columns_%d", r.n)
	if err := x.createRead(ctx, name, "parquet", "", map[string]string{}, []string{r.paths[i]}, false); err != nil {
		return nil, cleanError(err)
	}
	cols, err := x.columnsOf(ctx, name)
	if err != nil {
		return nil, cleanError(err)
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.name)
	}
	return names, x.sql(ctx, "DROP VIEW IF EXISTS "+quoteIdent(name), "source %s: reading the files' columns", r.src.Ctx)
}
