package duckdb

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/engine"
)

// JSON sources under skip or quarantine. DuckDB's JSON reader keeps no
// rejects table, and with ignore_errors it turns a bad line into NULLs
// instead of dropping it, so neither count nor quarantine would be right.
// Such a source is read as lines instead (read_csv with one VARCHAR column
// and no quoting), every line checked with DuckDB's own JSON functions, the
// good ones converted with json_transform (the machinery read_json uses)
// into a temporary table. A line is rejected when it is not a JSON object
// or when a top-level value does not convert to its column's type; inside
// nested values (STRUCT, LIST, MAP columns) a value that does not convert
// becomes NULL, as DuckDB's ignore_errors does. Empty lines are skipped, as
// read_json skips them. This path parses each line several times; it is
// only taken when bad records are to be skipped.

// jsonFileColumn names the file column of the line reads.
const jsonFileColumn = internalPrefix + "_file"

// linesTable names the table of a JSON source's lines.
func (r *reader) linesTable() string { return fmt.Sprintf("%s_lines_%d", internalPrefix, r.n) }

// linesSQL reads the source's files as lines, with hive columns.
func (r *reader) linesSQL() string {
	maxLine := int64(16 << 20) // read_json's maximum_object_size default
	if o, ok := r.opts["maximum_object_size"]; ok {
		maxLine = o.value.(int64)
	}
	comp := ""
	if o, ok := r.opts["compression"]; ok {
		comp = ", compression=" + sqlValue(o.value)
	}
	cols := []string{ident(jsonFileColumn), "line"}
	for _, h := range r.hive {
		cols = append(cols, ident(h.Name))
	}
	var parts []string
	for i, chunk := range r.chunkList {
		parts = append(parts, fmt.Sprintf(`SELECT %s FROM read_csv(%s, columns={'line': 'VARCHAR'}, header=false,
			auto_detect=false, quote='', escape='', delim=E'\x1f', max_line_size=%d, filename=%s%s,
			ignore_errors=true, store_rejects=true, rejects_table=%s, rejects_scan=%s%s)`,
			strings.Join(cols, ", "), pathList(chunk.paths), maxLine, literal(jsonFileColumn), comp,
			literal(r.rejectsTable(i)), literal(r.rejectsScan(i)), r.hiveArgs(false)))
	}
	return strings.Join(parts, "\nUNION ALL\n")
}

// jsonPointer addresses a top-level key (RFC 6901).
func jsonPointer(key string) string {
	return "/" + strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// lineOK is the SQL condition under which a line converts cleanly.
func (r *reader) lineOK() string {
	checks := []string{"json_type(line) = 'OBJECT'"}
	for _, c := range r.data {
		if r.lineRescued(c.Name) {
			continue // never rejects: rescued when it does not fit
		}
		v := fmt.Sprintf("json_extract(line, %s)", literal(jsonPointer(c.Name)))
		typ, _ := json.Marshal(c.Type)
		conv := fmt.Sprintf("TRY(json_transform_strict(%s, %s)) IS NOT NULL", v, literal(string(typ)))
		if strings.ContainsAny(c.Type, "([") {
			conv = fmt.Sprintf("json_transform(%s, %s) IS NOT NULL", v, literal(string(typ)))
		}
		if vc := r.checked[c.Name]; vc != nil {
			// The value must also fit without loss (strict.go).
			t := jsonTextSQL(v)
			conv = fmt.Sprintf("(%s AND %s IS NOT NULL AND (%s))", conv, t, vc.okSQL(t))
		}
		checks = append(checks, fmt.Sprintf("(%s IS NULL OR json_type(%s) = 'NULL' OR %s)", v, v, conv))
	}
	return fmt.Sprintf("CASE WHEN json_valid(line) THEN %s ELSE false END", strings.Join(checks, " AND "))
}

// materializeJSONLines fills table with the source's good rows; the lines
// table keeps every line with its verdict (ok NULL for empty lines).
func (x *execution) materializeJSONLines(ctx context.Context, r *reader, table string) error {
	lines := ident(r.linesTable())
	q := fmt.Sprintf("CREATE TEMP TABLE %s AS SELECT *, CASE WHEN trim(line) <> '' THEN %s END AS ok FROM (%s)",
		lines, r.lineOK(), r.linesSQL())
	if _, err := x.c.ExecContext(ctx, q); err != nil {
		if ie := r.mixedEndingsError(err); ie != nil && ctx.Err() == nil {
			return ie
		}
		return wrap(ctx, err, x.readers, "reading source %s", r.src.Ctx)
	}
	var structure []string
	for _, c := range r.data {
		if r.lineRescued(c.Name) {
			continue
		}
		k, _ := json.Marshal(c.Name)
		t, _ := json.Marshal(c.Type)
		structure = append(structure, string(k)+": "+string(t))
	}
	if len(structure) == 0 { // every column rescued: a struct needs a field
		structure = []string{`"` + internalPrefix + `_none": "VARCHAR"`}
	}
	q = fmt.Sprintf("CREATE TEMP TABLE %s AS SELECT %s FROM (SELECT json_transform(line, %s) AS %s, * FROM %s WHERE ok)",
		table, strings.Join(r.linesFields(internalPrefix+"_row"), ", "), literal("{"+strings.Join(structure, ", ")+"}"), ident(internalPrefix+"_row"), lines)
	if _, err := x.c.ExecContext(ctx, q); err != nil {
		return wrap(ctx, err, x.readers, "converting source %s", r.src.Ctx)
	}
	return nil
}

// collectJSONRejects returns the rejected lines of a JSON source read as
// lines: those that failed the checks (their line numbers found by
// scanning the file, which DuckDB does not report for good lines) and those
// the line reader itself refused (too long).
func (x *execution) collectJSONRejects(ctx context.Context, r *reader) ([]reject, error) {
	csvRejects, err := x.collectRejects(ctx, r)
	if err != nil {
		return nil, err
	}
	q := fmt.Sprintf("SELECT %s, line FROM %s WHERE ok = false", ident(jsonFileColumn), ident(r.linesTable()))
	rows, err := x.c.QueryContext(ctx, q)
	if err != nil {
		return nil, wrap(ctx, err, nil, "source %s: reading rejected lines", r.src.Ctx)
	}
	bad := map[string]map[string]int{} // path -> raw line -> occurrences
	for rows.Next() {
		var path, line string
		if err := rows.Scan(&path, &line); err != nil {
			rows.Close()
			return nil, err
		}
		if bad[path] == nil {
			bad[path] = map[string]int{}
		}
		bad[path][line]++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	order := make(map[string]int, len(r.in.paths))
	for i, p := range r.in.paths {
		order[p] = i
	}
	out := csvRejects
	for path, lines := range bad {
		found, err := findLines(path, lines)
		if err == nil {
			err = r.in.originalLines(path, found)
		}
		if err != nil {
			return nil, fmt.Errorf("source %s: %s: %w", r.src.Ctx, r.in.keyOf(path), err)
		}
		for _, f := range found {
			out = append(out, reject{file: r.in.keyOf(path), order: order[path], line: f.line,
				err: jsonLineError(f.raw), raw: f.raw})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].order != out[j].order {
			return out[i].order < out[j].order
		}
		return out[i].line < out[j].line
	})
	return out, nil
}

// jsonLineError says, roughly, why a line was rejected.
func jsonLineError(raw string) string {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return "malformed JSON: " + err.Error()
	}
	if _, ok := v.(map[string]any); !ok {
		return "not a JSON object"
	}
	return "a value does not convert to its column's type"
}

type foundLine struct {
	line int64
	raw  string
}

// findLines scans a (possibly compressed) file for the given lines and
// returns their numbers, each occurrence once.
func findLines(path string, want map[string]int) ([]foundLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rd io.Reader = f
	switch compressionSuffix(path) {
	case ".gz", ".gzip":
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		rd = zr
	case ".zst", ".zstd":
		zr, err := zstd.NewReader(f)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		rd = zr
	}
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var out []foundLine
	for n := int64(1); sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if want[line] > 0 {
			want[line]--
			out = append(out, foundLine{line: n, raw: line})
		}
	}
	return out, sc.Err()
}

// mixedEndingsError explains the error DuckDB's line reader gives for a
// file whose lines do not all end alike (CRLF and LF, or a carriage return
// inside a line; read_json reads such a file): "The CSV Parser state
// machine reached an invalid state", naming neither the line nor what is
// wrong. It names the file and the first line that ends otherwise; nil
// when err is not that error.
func (r *reader) mixedEndingsError(err error) *engine.InputError {
	raw := err.Error()
	if !strings.Contains(raw, "state machine reached an invalid state") {
		return nil
	}
	_, path := locate(raw, []*reader{r})
	if path == "" {
		return nil
	}
	line, serr := mixedEndings(path, r.opts)
	if serr != nil || line == 0 {
		return nil
	}
	return &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(path), Line: line,
		Msg: "this line ends otherwise than the file's first line (CRLF against LF, or a carriage return inside it): " +
			"under on_bad_record skip and quarantine JSON Lines are read line by line, and a file's lines must all end alike " +
			"(convert the file, e.g. with dos2unix, or set on_bad_record: fail)"}
}

// mixedEndings returns the number of the first line of the (possibly
// compressed) file at path that does not end as its first line does, or
// that holds a carriage return before its end; 0 when there is none.
func mixedEndings(path string, opts options) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	rd, closer, err := decompress(f, path, opts)
	if err != nil {
		return 0, err
	}
	defer closer()
	br := bufio.NewReaderSize(rd, 64<<10)
	crlf := false
	for n := int64(1); ; n++ {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return 0, err
		}
		if strings.HasSuffix(line, "\n") {
			body := strings.TrimSuffix(line, "\n")
			cr := strings.HasSuffix(body, "\r")
			if n == 1 {
				crlf = cr
			}
			if cr != crlf || strings.Contains(strings.TrimSuffix(body, "\r"), "\r") {
				return n, nil
			}
		} else if strings.Contains(line, "\r") && (!crlf || strings.Index(line, "\r") < len(line)-1) {
			return n, nil // the last line, without an end of its own
		}
		if err == io.EOF {
			return 0, nil
		}
	}
}
