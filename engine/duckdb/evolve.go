package duckdb

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// Schema evolution (engine.Source.SchemaEvolution) for CSV and JSON Lines.
// The schema settled (recorded or inferred) is compared with each file's
// columns: a CSV file's header (read for every file anyway, byname.go), a
// JSON file's keys (one pass over its objects with json_keys, taken only
// when evolving). Columns a file lacks are NULL in its rows under every
// mode but fail. New columns are, under add_new_columns, appended to the
// schema with the types DuckDB's sniffer gives them over the files that
// have them; under rescue they are read as text into _rescued_data; under
// none CSV reads them (columns are positional) and drops them, JSON never
// reads them.
//
// Under add_new_columns a value that does not fit its column's type widens
// the column: one more pass reads every file column as text and counts,
// per column, the values that do not fit its type and each wider one
// (bookmark.Wider: integers to BIGINT, DOUBLE, VARCHAR; FLOAT and DECIMAL
// to DOUBLE, VARCHAR; anything to VARCHAR), with the same lossless checks
// the typed read makes (strict.go); the narrowest type every value fits is
// the column's new type. So a run never fails on a value under
// add_new_columns, and never converts one with loss. The pass costs one
// extra read of the run's files as text.

// evolution is the source's schema evolution mode.
func (r *reader) evolution() string {
	if r.src.SchemaEvolution == "" {
		return bookmark.EvolveFail
	}
	return r.src.SchemaEvolution
}

// evolving reports whether files may differ from the schema.
func (r *reader) evolving() bool { return r.evolution() != bookmark.EvolveFail }

// rescuing reports whether what does not fit goes to _rescued_data.
func (r *reader) rescuing() bool { return r.evolution() == bookmark.EvolveRescue }

// dataIndex maps the lowercase names of the schema's file columns to
// their index.
func (r *reader) dataIndex() map[string]int {
	m := make(map[string]int, len(r.data))
	for i, c := range r.data {
		m[strings.ToLower(c.Name)] = i
	}
	return m
}

// isHiveName reports whether name is a partition column of the source.
func (r *reader) isHiveName(name string) bool { return containsFold(r.in.hiveKeys, name) }

// evolveText settles a CSV or JSON source's columns under an evolving mode,
// after the header grouping: new columns, their types, widened types, and
// each chunk's columns.
func (r *reader) evolveText(ctx context.Context, c *sql.Conn) error {
	if len(r.in.paths) == 0 || len(r.data) == 0 || (r.src.Format == "json" && r.evolution() == bookmark.EvolveNone) {
		return nil // JSON reads only the schema's keys: none needs nothing
	}
	known := r.dataIndex()
	var names []string             // new columns, in order of first sight
	files := map[string][]string{} // lowercase new column -> files that have it
	note := func(name string, paths ...string) {
		l := strings.ToLower(name)
		if _, seen := files[l]; !seen {
			names = append(names, name)
		}
		files[l] = append(files[l], paths...)
	}
	if r.src.Format == "csv" {
		for _, ch := range r.chunkList {
			for _, col := range ch.cols {
				if _, ok := known[strings.ToLower(col.Name)]; ok {
					continue
				}
				if r.isHiveName(col.Name) && r.evolution() != bookmark.EvolveNone {
					return r.hiveClash(jsonKey{name: col.Name, paths: ch.paths})
				}
				note(col.Name, ch.paths...)
			}
		}
	} else {
		keys, err := r.jsonKeys(ctx, c)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if i, ok := known[strings.ToLower(k.name)]; ok {
				if r.data[i].Name != k.name {
					return r.caseClash(k, r.data[i].Name)
				}
				continue
			}
			if r.isHiveName(k.name) {
				return r.hiveClash(k)
			}
			if k.name == "" {
				return &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(k.paths[0]),
					Msg: `an object has the empty key "", which cannot be a column: rename it in the files, or set schema_evolution: none to ignore it`}
			}
			note(k.name, k.paths...)
		}
	}
	switch r.evolution() {
	case bookmark.EvolveAddNewColumns:
		if len(names) > 0 {
			var paths []string
			seen := map[string]bool{}
			for _, n := range names {
				for _, p := range files[strings.ToLower(n)] {
					if !seen[p] {
						seen[p] = true
						paths = append(paths, p)
					}
				}
			}
			types, err := r.sniffTypes(ctx, c, paths)
			if err != nil {
				return err
			}
			for _, n := range names {
				t, ok := types[strings.ToLower(n)]
				if !ok {
					t = "VARCHAR"
				}
				r.data = append(r.data, bookmark.Column{Name: n, Type: t})
			}
		}
		if err := r.widen(ctx, c); err != nil {
			return err
		}
	case bookmark.EvolveRescue:
		if r.src.Format == "json" {
			for _, n := range names {
				r.extra = append(r.extra, bookmark.Column{Name: n, Type: "JSON"})
			}
		}
	}
	r.refreshChunks()
	return nil
}

// checkJSONKeys fails a JSON source under schema_evolution fail when an
// object has a key its schema lacks (DuckDB's read_json with columns
// ignores such keys: the values would be dropped without a word), or a key
// named like a partition folder. Files outside a first run's inference
// sample are checked against the inferred schema the same way.
//
// Go scans each line's keys, on every core (jsonkeys.go); DuckDB checks
// the chunks of files with a line the scan does not follow. Its check is
// one pass over the files' objects, cheaper than jsonKeys' listing: an
// object whose keys are exactly the schema's, in its order (files written
// by one program, the usual case), is passed over after one comparison of
// its key list; only the others' keys are looked at. Over 268 MB of
// six-key objects that took 310 ms where listing every key took 500 ms
// (the typed read itself: about 220 ms).
func (r *reader) checkJSONKeys(ctx context.Context, c *sql.Conn) error {
	if len(r.in.paths) == 0 || len(r.data) == 0 {
		return nil
	}
	names := make([]string, len(r.data))
	known := make(map[string]bool, len(r.data))
	for i, col := range r.data {
		names[i] = col.Name
		known[col.Name] = true
	}
	chunks := r.in.chunks()
	if !r.opts.has("maximum_object_size") {
		// Go's scan first (jsonkeys.go); DuckDB's over the chunks with
		// a file it leaves (DuckDB reads a file's byte-order mark, for
		// one, only when another file comes first in its list).
		i, key, doubt, err := scanJSONKeys(ctx, r.in.paths, r.opts, known)
		if err != nil {
			return wrap(ctx, err, []*reader{r}, "source %s: checking the objects' keys", r.src.Ctx)
		}
		if i >= 0 {
			return r.keyError(r.in.paths[i], key, names)
		}
		chunks = slices.DeleteFunc(chunks, func(chunk []string) bool {
			return !slices.ContainsFunc(chunk, func(p string) bool { return slices.Contains(doubt, p) })
		})
	}
	comp := r.objectReadArgs()
	order := make([]string, len(r.data))
	for i, col := range r.data {
		order[i] = literal(col.Name)
	}
	for _, chunk := range chunks {
		// Keys are compared exactly: the reader matches them so (a key
		// Amount is not read into a column amount).
		q := fmt.Sprintf(`SELECT filename, k FROM (
				SELECT filename, unnest(json_keys(json)) AS k FROM read_ndjson_objects(%s, filename=true, ignore_errors=true%s, hive_partitioning=false)
				WHERE json_keys(json) <> [%s])
			WHERE k NOT IN (%s) LIMIT 1`, pathList(chunk), comp, strings.Join(order, ", "), strings.Join(order, ", "))
		var file, key string
		err := c.QueryRowContext(ctx, q).Scan(&file, &key)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return wrap(ctx, err, []*reader{r}, "source %s: checking the objects' keys", r.src.Ctx)
		}
		return r.keyError(file, key, names)
	}
	return nil
}

// keyError is the error for the key of a file (a read path) that is not
// in the source's schema, names.
func (r *reader) keyError(file, key string, names []string) error {
	if r.isHiveName(key) {
		return r.hiveClash(jsonKey{name: key, paths: []string{file}})
	}
	if i, ok := r.dataIndex()[strings.ToLower(key)]; ok {
		return r.caseClash(jsonKey{name: key, paths: []string{file}}, r.data[i].Name)
	}
	return &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(file), Column: key,
		Msg: fmt.Sprintf("an object has key %s, which is not in the source's schema (%s) "+
			"(set the source's schema_evolution to add_new_columns, rescue or none to read new keys)",
			key, strings.Join(names, ", "))}
}

// hiveClash is the error for a file column (a JSON key) named like a
// partition folder.
func (r *reader) hiveClash(k jsonKey) error {
	return engine.PartitionClash(r.src.Ctx, r.in.keyOf(k.paths[0]), k.name, r.src.Format == "json")
}

// caseClash is the error for a JSON key that differs from the schema's
// column col only in case (Amount, amount): DuckDB's JSON reader matches
// keys exactly, so its values would not be read into col, and a column of
// its own cannot be told from col (names are case-insensitive in SQL). A
// first run meets it as a column DuckDB renamed (amount, Amount_1), when
// the files hold both spellings.
func (r *reader) caseClash(k jsonKey, col string) error {
	return &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(k.paths[0]), Column: k.name,
		Msg: fmt.Sprintf("an object has key %s, which differs from the source's column %s only in case; "+
			"JSON keys are matched exactly, so its values would be lost: write the key as %s in every file", k.name, col, col)}
}

// refreshChunks gives each chunk's columns the schema's types (a CSV
// column the schema lacks stays VARCHAR); JSON chunks read the whole
// schema, plus the rescued extra columns.
func (r *reader) refreshChunks() {
	known := r.dataIndex()
	for i := range r.chunkList {
		ch := &r.chunkList[i]
		if r.src.Format == "json" {
			ch.cols = append(append([]bookmark.Column(nil), r.data...), r.extra...)
			continue
		}
		cols := make([]bookmark.Column, len(ch.cols))
		for j, col := range ch.cols {
			cols[j] = col
			if k, ok := known[strings.ToLower(col.Name)]; ok {
				cols[j] = r.data[k]
			}
		}
		ch.cols = cols
	}
}

// objectReadArgs are the named arguments a read of the source's JSON
// objects as such (read_ndjson_objects: the key pass, the search for a
// line that is not an object) takes from its options: its compression,
// and its maximum_object_size, without which larger objects would go
// unseen.
func (r *reader) objectReadArgs() string {
	args := ""
	for _, name := range []string{"compression", "maximum_object_size"} {
		if o, ok := r.opts[name]; ok {
			args += ", " + name + "=" + sqlValue(o.value)
		}
	}
	return args
}

// jsonKey is a top-level key of a JSON source and the files that have it.
type jsonKey struct {
	name  string
	paths []string
}

// jsonKeys lists the top-level keys of the source's objects, in plan order
// of the first file that has each (then by name).
func (r *reader) jsonKeys(ctx context.Context, c *sql.Conn) ([]jsonKey, error) {
	order := make(map[string]int, len(r.in.paths))
	for i, p := range r.in.paths {
		order[p] = i
	}
	comp := r.objectReadArgs()
	byName := map[string]*jsonKey{}
	var out []*jsonKey
	for _, chunk := range r.in.chunks() {
		q := fmt.Sprintf(`SELECT DISTINCT filename, unnest(json_keys(json)) AS k FROM read_ndjson_objects(%s, filename=true, ignore_errors=true%s, hive_partitioning=false)
			WHERE json_type(json) = 'OBJECT'`, pathList(chunk), comp)
		rows, err := c.QueryContext(ctx, q)
		if err != nil {
			return nil, wrap(ctx, err, []*reader{r}, "source %s: listing the files' keys", r.src.Ctx)
		}
		for rows.Next() {
			var file, k string
			if err := rows.Scan(&file, &k); err != nil {
				rows.Close()
				return nil, err
			}
			jk := byName[k]
			if jk == nil {
				jk = &jsonKey{name: k}
				byName[k] = jk
				out = append(out, jk)
			}
			jk.paths = append(jk.paths, file)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, wrap(ctx, err, []*reader{r}, "source %s: listing the files' keys", r.src.Ctx)
		}
	}
	first := func(k *jsonKey) int {
		m := len(order)
		for _, p := range k.paths {
			m = min(m, order[p])
		}
		return m
	}
	res := make([]jsonKey, 0, len(out))
	for _, k := range out {
		res = append(res, *k)
	}
	slices.SortStableFunc(res, func(a, b jsonKey) int {
		return cmp.Or(cmp.Compare(first(&a), first(&b)), cmp.Compare(a.name, b.name))
	})
	return res, nil
}

// sniffTypes infers the column types of the files at paths (a sample of
// them, as a first run's inference does), by lowercase name.
func (r *reader) sniffTypes(ctx context.Context, c *sql.Conn, paths []string) (map[string]string, error) {
	sample := spread(paths, sampleFiles)
	var q string
	if r.src.Format == "csv" {
		quote, _ := r.dialect.str("quote")
		q = fmt.Sprintf("SELECT * FROM read_csv(%s, files_to_sniff=-1, union_by_name=true, ignore_errors=true%s%s, hive_partitioning=false)",
			pathList(sample),
			namedArgs(r.dialect, func(o option) bool { return o.name == "escape" && o.value == quote }),
			namedArgs(r.opts, func(o option) bool { return r.dialect.has(o.name) }))
	} else {
		q = fmt.Sprintf("SELECT * FROM read_json(%s, format='newline_delimited', records=true, union_by_name=true, maximum_sample_files=%d, ignore_errors=true%s, hive_partitioning=false)",
			pathList(sample), sampleFiles, namedArgs(r.opts, nil))
	}
	cols, err := describe(ctx, c, q)
	if err != nil {
		return nil, wrap(ctx, err, []*reader{r}, "source %s: inferring the types of new columns", r.src.Ctx)
	}
	out := make(map[string]string, len(cols))
	for _, col := range cols {
		out[strings.ToLower(col.Name)] = col.Type
	}
	return out, nil
}

// textOf is a column's value as text, and the condition that it is not
// null, for a read of the column as text (CSV VARCHAR, JSON JSON).
func (r *reader) textOf(name string) (text, present string) {
	if r.src.Format == "json" {
		return jsonTextSQL(ident(name)), fmt.Sprintf("(%[1]s IS NOT NULL AND json_type(%[1]s) <> 'NULL')", ident(name))
	}
	return ident(name), ident(name) + " IS NOT NULL"
}

// fitsText is the condition that the text expression t converts to typ
// without loss: the checks of strict.go where a type has one, else that
// the cast succeeds.
func (r *reader) fitsText(t, typ string) string {
	if strings.EqualFold(typ, "VARCHAR") {
		return "true"
	}
	if f, ok := r.formatOf(typ); ok {
		return fmt.Sprintf("try_strptime(%s, %s) IS NOT NULL", t, literal(f))
	}
	if vc := checkFor(typ, r.src.Format, r.opts, r.dialect); vc != nil {
		return "(" + vc.okSQL(t) + ")"
	}
	return fmt.Sprintf("TRY_CAST(%s AS %s) IS NOT NULL", t, typ)
}

// convertText converts the text expression t to typ (NULL when it does
// not convert).
func (r *reader) convertText(t, typ string) string {
	if f, ok := r.formatOf(typ); ok {
		return fmt.Sprintf("CAST(try_strptime(%s, %s) AS %s)", t, literal(f), typ)
	}
	if vc := checkFor(typ, r.src.Format, r.opts, r.dialect); vc != nil {
		return vc.tryCastSQL(t)
	}
	return fmt.Sprintf("TRY_CAST(%s AS %s)", t, typ)
}

// widenable reports whether a file column takes part in widening: a
// scalar other than VARCHAR whose values are not read with a format.
func (r *reader) widenable(col bookmark.Column) ([]string, bool) {
	t, err := modelType(col.Type)
	if err != nil {
		return nil, false
	}
	wider := bookmark.Wider(t)
	if len(wider) == 0 || t.Kind == bookmark.Other {
		return nil, false
	}
	if r.formatted(t) {
		return nil, false
	}
	out := []string{duckType(t)}
	for _, w := range wider {
		out = append(out, duckType(w))
	}
	return out, true
}

// formatted reports whether values of type t are read with a format
// option (dateformat, timestampformat), which only the reader applies.
func (r *reader) formatted(t bookmark.Type) bool {
	has := func(n string) bool { return r.opts.has(n) || r.dialect.has(n) }
	switch t.Kind {
	case bookmark.Date:
		return has("dateformat")
	case bookmark.Timestamp, bookmark.TimestampS, bookmark.TimestampMS, bookmark.TimestampNS, bookmark.TimestampTZ, bookmark.Time, bookmark.TimeTZ:
		return has("timestampformat")
	}
	return false
}

// formatOf returns the format option values of type typ are read with.
func (r *reader) formatOf(typ string) (string, bool) {
	t, err := modelType(typ)
	if err != nil || !r.formatted(t) {
		return "", false
	}
	name := "timestampformat"
	if t.Kind == bookmark.Date {
		name = "dateformat"
	}
	if f, ok := r.opts.str(name); ok {
		return f, true
	}
	return r.dialect.str(name)
}

// widen gives each file column the narrowest of its type and the wider
// ones that all the run's values fit (see the comment at the top).
func (r *reader) widen(ctx context.Context, c *sql.Conn) error {
	type cand struct {
		col   int
		types []string
	}
	var cands []cand
	for i, col := range r.data {
		if types, ok := r.widenable(col); ok {
			cands = append(cands, cand{col: i, types: types})
		}
	}
	if len(cands) == 0 {
		return nil
	}
	r.refreshChunks()
	r.allText = true
	defer func() { r.allText = false }()
	parts := make([]string, len(r.chunkList))
	for i, ch := range r.chunkList {
		in := map[string]bool{}
		for _, col := range ch.cols {
			in[strings.ToLower(col.Name)] = true
		}
		sel := make([]string, len(cands))
		for j, cd := range cands {
			name := r.data[cd.col].Name
			sel[j] = fmt.Sprintf("CAST(NULL AS %s) AS %s", r.textType(), ident(fmt.Sprintf("c%d", j)))
			if in[strings.ToLower(name)] {
				sel[j] = ident(name) + " AS " + ident(fmt.Sprintf("c%d", j))
			}
		}
		call := strings.TrimSuffix(r.readCall(ch.paths, ch.cols, i, false), ")") + ", ignore_errors=true)"
		parts[i] = fmt.Sprintf("SELECT %s FROM %s", strings.Join(sel, ", "), call)
	}
	var aggs []string
	for j, cd := range cands {
		t, present := r.textOf(fmt.Sprintf("c%d", j))
		for _, typ := range cd.types[:len(cd.types)-1] {
			// count_if over no rows (every line malformed) is NULL.
			aggs = append(aggs, fmt.Sprintf("coalesce(count_if(%s AND NOT coalesce(%s, false)), 0)", present, r.fitsText(t, typ)))
		}
	}
	q := fmt.Sprintf("SELECT %s FROM (%s)", strings.Join(aggs, ", "), strings.Join(parts, "\nUNION ALL\n"))
	counts := make([]int64, len(aggs))
	dest := make([]any, len(aggs))
	for i := range counts {
		dest[i] = &counts[i]
	}
	if err := c.QueryRowContext(ctx, q).Scan(dest...); err != nil {
		return wrap(ctx, err, []*reader{r}, "source %s: checking values against the schema's types", r.src.Ctx)
	}
	k := 0
	for _, cd := range cands {
		chosen := cd.types[len(cd.types)-1]
		for _, typ := range cd.types[:len(cd.types)-1] {
			if counts[k] == 0 && chosen == cd.types[len(cd.types)-1] {
				chosen = typ
			}
			k++
		}
		r.data[cd.col].Type = chosen
	}
	return nil
}

// textType is the type a column is read as when read as text.
func (r *reader) textType() string {
	if r.src.Format == "json" {
		return "JSON"
	}
	return "VARCHAR"
}
