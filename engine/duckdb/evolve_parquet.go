package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// Schema evolution for Parquet. Each distinct footer schema is compared
// with the settled schema by name. A column the schema lacks is appended
// (add_new_columns, with the file's type), rescued as text (rescue) or
// ignored (none). A column whose type differs: a file type that widens to
// the schema's (bookmark.Widens: an INTEGER file column in a BIGINT
// schema) is read in the schema's type; a schema type that widens to the
// file's becomes the file's under add_new_columns (a new version); under
// rescue a value that does not convert without loss is rescued; anything
// else fails naming file and column, so a narrowing is never silent. The
// files are read with union_by_name, which gives NULL for a column a file
// lacks, and every column is cast to the schema's type.

// evolveParquet applies one footer schema, cols, of file to the settled
// schema.
func (r *reader) evolveParquet(file string, cols []bookmark.Column) error {
	known := r.dataIndex()
	for _, col := range cols {
		i, ok := known[strings.ToLower(col.Name)]
		if !ok {
			if r.evolution() == bookmark.EvolveAddNewColumns && !r.isHiveName(col.Name) {
				r.data = append(r.data, col)
				known[strings.ToLower(col.Name)] = len(r.data) - 1
			}
			continue
		}
		want := r.data[i]
		if sameType(col.Type, want.Type) {
			continue
		}
		ft, err1 := modelType(col.Type)
		st, err2 := modelType(want.Type)
		switch {
		case err1 == nil && err2 == nil && bookmark.Widens(ft, st):
		case err1 == nil && err2 == nil && r.evolution() == bookmark.EvolveAddNewColumns && bookmark.Widens(st, ft):
			r.data[i].Type = col.Type
		case r.rescuing():
		default:
			return &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(file), Column: col.Name,
				Msg: fmt.Sprintf("column %s is %s in this file and %s in the source's schema, which is not a widening "+
					"(schema_evolution: %s widens int → bigint → double and anything → string, never narrows)",
					col.Name, col.Type, want.Type, r.evolution())}
		}
	}
	return nil
}

// chunkBySchema regroups the source's chunks so that the files of one
// chunk share a footer schema (fileSig: file → signature), in the plan
// order of each schema's first file. A union_by_name read of files of
// different types converts first (a BOOLEAN column read with a BIGINT one
// gives 1 for true), and the projection would judge the converted value,
// not the file's.
func (r *reader) chunkBySchema(fileSig map[string]string) {
	groups := map[string][]string{}
	var order []string
	for _, p := range r.in.paths {
		sig := fileSig[p]
		if _, ok := groups[sig]; !ok {
			order = append(order, sig)
		}
		groups[sig] = append(groups[sig], p)
	}
	r.chunkList = nil
	for _, sig := range order {
		g := groups[sig]
		for i := 0; i < len(g); i += chunkFiles {
			r.chunkList = append(r.chunkList, readChunk{paths: g[i:min(i+chunkFiles, len(g))], cols: r.data})
		}
	}
}

// parquetChunks sets each chunk's columns to what its union_by_name read
// gives.
func (r *reader) parquetChunks(ctx context.Context, c *sql.Conn) error {
	for i := range r.chunkList {
		ch := &r.chunkList[i]
		cols, err := describe(ctx, c, fmt.Sprintf("SELECT * FROM read_parquet(%s%s, union_by_name=true, hive_partitioning=false)",
			pathList(ch.paths), namedArgs(r.opts, nil)))
		if err != nil {
			return wrap(ctx, err, []*reader{r}, "source %s: reading schema", r.src.Ctx)
		}
		ch.cols = cols
	}
	return nil
}
