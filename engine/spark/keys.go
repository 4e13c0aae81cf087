package spark

import (
	"context"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
)

// unknownJSONKey finds a top-level key of r's JSON objects that its
// settled schema lacks, or one named like a key=value folder of its files,
// and returns it as an *engine.InputError (nil when there is none).
// Spark's JSON reader given a schema ignores other keys, so their values
// would be dropped without a word; inference reads a sample, so a first
// run is checked against what it inferred. One pass over the files as
// text; only the first such key comes back.
func (x *execution) unknownJSONKey(ctx context.Context, r *reader) (*engine.InputError, error) {
	if r.src.Format != "json" || len(r.paths) == 0 {
		return nil, nil
	}
	// Keys are compared exactly: Spark's JSON reader matches a key to a
	// column by its exact name, so Amount is not amount (its values would
	// be NULL).
	hive := hiveNames(r.src)
	var known []string
	column := map[string]string{} // lowercase name -> the schema's spelling
	for _, c := range r.schema {
		if l := strings.ToLower(c.Name); !hive[l] {
			known = append(known, hexString(c.Name))
			column[l] = c.Name
		}
	}
	if len(known) == 0 {
		return nil, nil
	}
	// A line that is not an object gives the key NUL, which no schema has:
	// Spark's reader would take an array of objects as that many rows,
	// where JSON Lines (and the DuckDB engine) has one object per line.
	// With on_bad_record skip or quarantine a bare value is a bad record
	// of the read; an array still is not one.
	// JSON's whitespace before an object is spaces and tabs too (Spark's
	// trim takes spaces alone).
	lead := "trim(LEADING " + hexString(" \t\r") + " FROM value)"
	other := "array(" + hexString(notAnObject) + ")"
	if r.rejects {
		other = "CASE WHEN startswith(" + lead + ", '[') THEN " + other + " ELSE array() END"
	}
	rows, ie, err := x.scanLines(ctx, r, "checking the objects' keys", func(lines string) string {
		return fmt.Sprintf(`SELECT f, k, value FROM (
			SELECT %s AS f, value, CASE WHEN %s = '' THEN array()
				WHEN startswith(%s, '{') THEN json_object_keys(value) ELSE %s END AS ks FROM %s)
		LATERAL VIEW explode(ks) t AS k WHERE k NOT IN (%s) LIMIT 1`,
			fileCol, lead, lead, other, lines, strings.Join(known, ", "))
	})
	if ie != nil || err != nil {
		return ie, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	file, _ := rows[0][0].(string)
	key, _ := rows[0][1].(string)
	if key == notAnObject {
		line, _ := rows[0][2].(string)
		return &engine.InputError{Source: r.src.Ctx, File: r.key(file), Line: x.lineOf(ctx, file, line),
			Msg: "a line holds JSON that is not an object: format json reads JSON Lines, one object per line " +
				"(a file holding one JSON array of objects is not JSON Lines): " + clip(line)}, nil
	}
	ie = &engine.InputError{Source: r.src.Ctx, File: r.key(file), Column: key}
	if name, ok := column[strings.ToLower(key)]; ok {
		ie.Msg = fmt.Sprintf("an object has key %s, which differs from the source's column %s only in case; "+
			"the reader matches keys exactly, so its values would be lost: write the key as %s", key, name, name)
		return ie, nil
	}
	if hive[strings.ToLower(key)] {
		return engine.PartitionClash(r.src.Ctx, ie.File, key, true), nil
	}
	names := make([]string, 0, len(r.schema))
	for _, c := range r.schema {
		if !hive[strings.ToLower(c.Name)] {
			names = append(names, c.Name)
		}
	}
	ie.Msg = fmt.Sprintf("an object has key %s, which is not in the source's schema (%s) "+
		"(the spark engine reads schema_evolution fail only: add the key to the files' schema by hand or read it with the duckdb engine)",
		key, strings.Join(names, ", "))
	return ie, nil
}

// notAnObject is the key unknownJSONKey's query gives a line that is not
// an object.
const notAnObject = "\x00"

// hiveNames is the lowercase names of the key=value folders of src's
// files (none unless src.Hive).
func hiveNames(src *engine.Source) map[string]bool {
	out := map[string]bool{}
	if !src.Hive {
		return out
	}
	for _, in := range src.Files {
		for _, k := range partitionNames(in.Key) {
			out[strings.ToLower(k)] = true
		}
	}
	return out
}

// partitionNames is the keys of the key=value folders of an input key, in
// order.
func partitionNames(key string) []string {
	var out []string
	for _, seg := range strings.Split(path.Dir(key), "/") {
		if k, _, ok := strings.Cut(seg, "="); ok && k != "" {
			out = append(out, k)
		}
	}
	return out
}

// samePartitions checks that in lies under the same key=value folders as
// first (the source's first file), as the DuckDB engine requires: Spark
// given files of both kinds reads one kind's rows and drops the others'
// without a word (a file beside p=1/ under no folder at all).
func samePartitions(src *engine.Source, first, in engine.Input) *engine.InputError {
	if ie := engine.PartitionFolders(src.Ctx, in.Key); ie != nil {
		return ie
	}
	for _, seg := range strings.Split(path.Dir(in.Key), "/") {
		if k, v, ok := strings.Cut(seg, "="); ok && k != "" && v == "" {
			// Spark's partition discovery fails inside (INTERNAL_ERROR),
			// naming no file.
			return &engine.InputError{Source: src.Ctx, File: in.Key, Column: k,
				Msg: fmt.Sprintf("partition folder %s= has an empty value, which the spark engine cannot read: "+
					"name it %s=%s for NULL, or read it with the duckdb engine (which reads '')", k, k, hiveDefault)}
		}
	}
	want, got := partitionNames(first.Key), partitionNames(in.Key)
	if slices.EqualFunc(want, got, strings.EqualFold) {
		return nil
	}
	return &engine.InputError{Source: src.Ctx, File: in.Key,
		Msg: fmt.Sprintf("partition folders %v differ from %v in %s", got, want, first.Key)}
}

// hexString is s as a Spark SQL string literal that needs no escaping.
func hexString(s string) string {
	return fmt.Sprintf("CAST(X'%s' AS STRING)", hex.EncodeToString([]byte(s)))
}

// parquetHiveClash finds a column of r's Parquet files named like a
// key=value folder of theirs and returns it as an *engine.InputError (nil
// when there is none): Spark reads such a column as the partition column,
// and one of the two values is lost. The files' footers are read without
// partition discovery (mergeSchema, so every file counts); on a clash each
// file's own is read until one has the column, for the message.
func (x *execution) parquetHiveClash(ctx context.Context, r *reader) (*engine.InputError, error) {
	hive := hiveNames(r.src)
	if r.src.Format != "parquet" || len(r.paths) == 0 || len(hive) == 0 {
		return nil, nil
	}
	columns := func(paths []string, merge string) ([]string, error) {
		name := fmt.Sprintf("_tidemark_footers_%d", r.n)
		if err := x.createRead(ctx, name, "parquet", "", map[string]string{"mergeSchema": merge}, paths, false); err != nil {
			return nil, err
		}
		rows, err := x.queryRows(ctx, "DESCRIBE "+quoteIdent(name))
		if err != nil {
			return nil, err
		}
		var out []string
		for _, row := range rows {
			if n, _ := row[0].(string); n != "" && !strings.HasPrefix(n, "#") {
				out = append(out, n)
			}
		}
		return out, x.sql(ctx, "DROP VIEW IF EXISTS "+quoteIdent(name), "source %s: reading the files' columns", r.src.Ctx)
	}
	clash := func(cols []string) string {
		for _, c := range cols {
			if hive[strings.ToLower(c)] {
				return c
			}
		}
		return ""
	}
	all, err := columns(r.paths, "true")
	if err != nil {
		return nil, nil // files that do not merge: the read says which
	}
	col := clash(all)
	if col == "" {
		return nil, nil
	}
	var keys []string // r.paths[i] is the i-th file that is not empty
	for _, in := range r.src.Files {
		if in.Size > 0 {
			keys = append(keys, in.Key)
		}
	}
	file := keys[0]
	for i, p := range r.paths {
		if cols, err := columns([]string{p}, "false"); err == nil && clash(cols) != "" {
			file = keys[i]
			break
		}
	}
	return engine.PartitionClash(r.src.Ctx, file, col, false), nil
}
