package spark

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/tidemark-etl/tidemark/bookmark"
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
	sparkTypes := map[string]string{} // lowercase name -> the schema's type in Spark's DDL
	for _, c := range r.schema {
		if t, err := bookmark.ParseType(c.Type); err == nil {
			if st, err := sparkType(t); err == nil {
				sparkTypes[strings.ToLower(c.Name)] = strings.ToLower(st)
			}
		}
	}
	for i, in := range r.files {
		cols, err := x.fileColumns(ctx, r, i)
		if err != nil {
			return &engine.InputError{Source: r.src.Ctx, File: in.Key, Msg: "reading the file's columns: " + err.Error()}, nil
		}
		have := map[string]bool{}
		for _, c := range cols {
			l := strings.ToLower(c.name)
			have[l] = true
			if !want[l] && !hive[l] {
				return &engine.InputError{Source: r.src.Ctx, File: in.Key, Column: c.name,
					Msg: "the file has a column the schema lacks; it would be dropped (schema_evolution: fail)"}, nil
			}
			if st := sparkTypes[l]; c.typ != "" && st != "" && !readsAs(c.typ, st) {
				return &engine.InputError{Source: r.src.Ctx, File: in.Key, Column: c.name,
					Msg: fmt.Sprintf("the file's column is %s, the schema's %s (schema_evolution: fail)", strings.ToUpper(c.typ), strings.ToUpper(st))}, nil
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

// fileColumns is the top-level columns of r's i-th file (of those it
// reads), with their types in Spark's spelling ("" for a type not
// checked).
func (x *execution) fileColumns(ctx context.Context, r *reader, i int) ([]column, error) {
	if p, err := engine.LocalPath(r.locs[i]); err == nil {
		f, err := file.OpenParquetFile(p, false)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		root := f.MetaData().Schema.Root()
		cols := make([]column, root.NumFields())
		as, err := pqarrow.FromParquet(f.MetaData().Schema, &pqarrow.ArrowReadProperties{}, f.MetaData().KeyValueMetadata())
		for j := range cols {
			cols[j].name = root.Field(j).Name()
			if err == nil && j < len(as.Fields()) {
				cols[j].typ = arrowSparkType(as.Field(j).Type)
			}
		}
		return cols, nil
	}
	name := fmt.Sprintf("_tidemark_file_columns_%d", r.n)
	if err := x.createRead(ctx, name, "parquet", "", map[string]string{}, []string{r.paths[i]}, false); err != nil {
		return nil, cleanError(err)
	}
	cols, err := x.columnsOf(ctx, name)
	if err != nil {
		return nil, cleanError(err)
	}
	return cols, x.sql(ctx, "DROP VIEW IF EXISTS "+quoteIdent(name), "source %s: reading the files' columns", r.src.Ctx)
}

// arrowSparkType is the Spark type (as DESCRIBE spells it) that Spark
// reads a Parquet column of arrow type t as; "" for nested and other
// types, which are not checked here.
func arrowSparkType(t arrow.DataType) string {
	switch t := t.(type) {
	case *arrow.Int8Type:
		return "tinyint"
	case *arrow.Int16Type, *arrow.Uint8Type:
		return "smallint"
	case *arrow.Int32Type, *arrow.Uint16Type:
		return "int"
	case *arrow.Int64Type, *arrow.Uint32Type:
		return "bigint"
	case *arrow.Uint64Type:
		return "decimal(20,0)"
	case *arrow.Float32Type:
		return "float"
	case *arrow.Float64Type:
		return "double"
	case *arrow.BooleanType:
		return "boolean"
	case *arrow.StringType, *arrow.LargeStringType:
		return "string"
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return "binary"
	case *arrow.Date32Type:
		return "date"
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return "timestamp"
		}
		return "timestamp_ntz"
	case arrow.DecimalType:
		return fmt.Sprintf("decimal(%d,%d)", t.GetPrecision(), t.GetScale())
	}
	return ""
}

// integerRank orders Spark's integer types by width.
var integerRank = map[string]int{"tinyint": 1, "smallint": 2, "int": 3, "integer": 3, "bigint": 4}

// readsAs reports whether a file column of Spark type file reads as the
// schema's type schema without loss: the same type, a wider integer,
// FLOAT as DOUBLE, a DECIMAL into one with as many digits on each side
// of the point. Nested types are not compared.
func readsAs(file, schema string) bool {
	if file == schema || strings.Contains(file, "<") || strings.Contains(schema, "<") {
		return true // nested types are left to Spark's reader
	}
	if f, s := integerRank[file], integerRank[schema]; f > 0 && s > 0 {
		return f <= s
	}
	if file == "float" && schema == "double" {
		return true
	}
	var fp, fs, sp, ss int
	if _, err := fmt.Sscanf(file, "decimal(%d,%d)", &fp, &fs); err == nil {
		if _, err := fmt.Sscanf(schema, "decimal(%d,%d)", &sp, &ss); err == nil {
			return ss >= fs && sp-ss >= fp-fs
		}
	}
	return false
}
