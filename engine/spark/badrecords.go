package spark

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// malformed turns a failed statement that met a malformed record (fail
// policy: FAILFAST) into an *engine.InputError naming the file and line:
// Spark's error names neither, so the sources read with FAILFAST are read
// again PERMISSIVE, for their first bad record. Other errors pass.
func (x *execution) malformed(ctx context.Context, err error) error {
	var se *Error
	if err == nil || ctx.Err() != nil || !errors.As(err, &se) || !isMalformed(se) {
		return err
	}
	for _, r := range x.readers {
		if r.rejects || r.src.Format == "parquet" || len(r.paths) == 0 {
			continue
		}
		// A file that cannot be read at all fails this read too: then
		// the file named in Spark's message is what there is to say.
		if ie, ferr := x.firstBad(ctx, r); ferr == nil && ie != nil {
			return ie
		}
	}
	// No bad record: a file Spark could not read at all.
	for _, r := range x.readers {
		if ie := r.unreadable(se); ie != nil {
			if clash := x.headerClash(ctx, r, se); clash != nil {
				return clash
			}
			return ie
		}
	}
	return err
}

// headerClash explains Spark's refusal of a CSV file of r whose header
// does not match the schema (Spark's message says only the lengths): an
// *engine.InputError naming the file and the first column the header has
// and the schema lacks (one named like a key=value folder of the file is
// a partition clash), or the first the header lacks; nil when the
// header's names are the schema's, or for other errors. It reads the
// file's first line, on this error path only.
func (x *execution) headerClash(ctx context.Context, r *reader, se *Error) *engine.InputError {
	m := readFileRE.FindStringSubmatch(se.Msg)
	if r.src.Format != "csv" || r.opts["header"] != "true" || m == nil {
		return nil
	}
	line, err := x.firstLine(ctx, escapeGlob(m[1]))
	if err != nil {
		return nil
	}
	hive := hiveNames(r.src)
	want := map[string]bool{}
	for _, c := range r.schema {
		want[strings.ToLower(c.Name)] = true
	}
	have := map[string]bool{}
	for i, name := range headerNames(line, r.opts) {
		if name == "" {
			return &engine.InputError{Source: r.src.Ctx, File: r.key(m[1]), Line: 1,
				Msg: fmt.Sprintf("column %d of the header has no name, which the spark engine cannot read: name it (the duckdb engine reads it as column%d)", i+1, i)}
		}
		have[strings.ToLower(name)] = true
		if hive[strings.ToLower(name)] {
			ie := engine.PartitionClash(r.src.Ctx, r.key(m[1]), name, false)
			ie.Line = 1
			return ie
		}
		if !want[strings.ToLower(name)] {
			return &engine.InputError{Source: r.src.Ctx, File: r.key(m[1]), Line: 1, Column: name,
				Msg: "the header has a column the schema lacks (schema_evolution: fail)"}
		}
	}
	for _, c := range r.schema {
		if l := strings.ToLower(c.Name); !have[l] && !hive[l] {
			return &engine.InputError{Source: r.src.Ctx, File: r.key(m[1]), Line: 1, Column: c.Name,
				Msg: "the header lacks a column of the schema (schema_evolution: fail)"}
		}
	}
	return nil
}

// headerNames is the column names of a CSV header line read with opts.
func headerNames(line []byte, opts map[string]string) []string {
	sep := opts["sep"]
	if sep == "" {
		sep = ","
	}
	q := quoteOf(opts)
	var out []string
	for _, f := range strings.Split(strings.TrimSuffix(string(line), "\r"), sep) {
		name := strings.TrimSpace(f)
		if q != "" {
			name = strings.TrimSuffix(strings.TrimPrefix(name, q), q)
		}
		out = append(out, name)
	}
	return out
}

// unreadable is Spark's error of a file of r that it could not read at
// all (FAILED_READ_FILE) as an *engine.InputError naming the file; nil
// for other errors.
func (r *reader) unreadable(se *Error) *engine.InputError {
	if m := readFileRE.FindStringSubmatch(se.Msg); m != nil {
		if k, ok := r.keys[filePathKey(m[1])]; ok {
			return &engine.InputError{Source: r.src.Ctx, File: k, Msg: se.Error()}
		}
	}
	return nil
}

// readFileRE finds the file in Spark's FAILED_READ_FILE message.
// (Spark may end the sentence with a period after it).
var readFileRE = regexp.MustCompile(`while reading file (\S+?)\.?(?:\s|$)`)

func isMalformed(e *Error) bool {
	return strings.HasPrefix(e.Class, "MALFORMED_RECORD") || strings.HasPrefix(e.Class, "FAILED_READ_FILE") || strings.Contains(e.Msg, "Malformed records are detected") ||
		strings.Contains(e.Msg, "MALFORMED_RECORD_IN_PARSING")
}

// firstBad reads r PERMISSIVE and returns its first bad record (by file,
// then line) as an *engine.InputError, or nil when it has none.
func (x *execution) firstBad(ctx context.Context, r *reader) (*engine.InputError, error) {
	ddl, _, err := r.readDDL()
	if err != nil {
		return nil, err
	}
	opts := copyOpts(r.opts)
	opts["mode"] = "PERMISSIVE"
	opts["columnNameOfCorruptRecord"] = corruptCol
	if err := x.createRead(ctx, r.rawName(), r.src.Format, ddl+", "+corruptCol+" STRING", opts, r.paths, true); err != nil {
		return nil, err
	}
	rows, err := x.queryRows(ctx, fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s IS NOT NULL AND %s ORDER BY 1 LIMIT 1",
		fileCol, corruptCol, r.rawName(), corruptCol, usesColumn(r)))
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	file, _ := rows[0][0].(string)
	record, _ := rows[0][1].(string)
	ie := &engine.InputError{Source: r.src.Ctx, File: r.key(file), Msg: "malformed record: " + clip(record)}
	ie.Line = x.lineOf(ctx, file, record)
	return ie, nil
}

// usesColumn is a condition that is always true but needs every data
// column. Spark's CSV and JSON readers convert only the columns a query
// needs, and a record is corrupt only when one of those does not convert:
// a query of fewer columns (a count of the bad records, a transform that
// selects some) would see a row with a bad value elsewhere as good, so
// that the count missed rows the sinks left out, and a transform kept rows
// the DuckDB engine sets aside. Needing every column also keeps Spark from
// reading the corrupt-record column alone, which it refuses. A sum of
// isnull flags is never folded away (file sources' columns are nullable).
func usesColumn(r *reader) string {
	if len(r.schema) == 0 {
		return "true"
	}
	flags := make([]string, len(r.schema))
	for i, c := range r.schema {
		flags[i] = fmt.Sprintf("CAST(isnull(%s) AS INT)", quoteIdent(c.Name))
	}
	return "(" + strings.Join(flags, " + ") + ") >= 0"
}

// key is the input key of a file Spark named.
func (r *reader) key(file string) string {
	if k, ok := r.keys[filePathKey(file)]; ok {
		return k
	}
	return file
}

// lineOf finds the line of record in file (1-based, 0 when not found):
// Spark reads the file as lines, numbered in file order.
func (x *execution) lineOf(ctx context.Context, file, record string) int64 {
	first := strings.SplitN(record, "\n", 2)[0]
	q := fmt.Sprintf("SELECT min(n) FROM (SELECT value, row_number() OVER (ORDER BY monotonically_increasing_id()) AS n FROM text.%s) WHERE value = CAST(X'%s' AS STRING)",
		quoteIdent(escapeGlob(file)), hex.EncodeToString([]byte(first)))
	n, err := x.count(ctx, q)
	if err != nil {
		return 0
	}
	return n
}

func clip(s string) string {
	s = strings.TrimRight(s, "\r\n")
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// rejected counts a source's bad records and, with quarantine, writes
// them (file, record) under Rejects/<source> as CSV.
func (x *execution) rejected(ctx context.Context, r *reader) (int64, error) {
	from, cond := r.rawRows()
	record := corruptCol
	if r.lossy != nil {
		record = fmt.Sprintf("coalesce(%s, %s)", corruptCol, recordCol)
	}
	bad := fmt.Sprintf("SELECT %s AS file, %s AS record FROM %s WHERE %s AND %s",
		fileCol, record, from, cond, usesColumn(r))
	n, err := x.count(ctx, "SELECT count(*) FROM ("+bad+")")
	if err != nil {
		return 0, x.wrap(ctx, err, "source %s: counting bad records", r.src.Ctx)
	}
	if x.plan.OnBadRecord != engine.BadQuarantine || n == 0 {
		return n, nil
	}
	loc := joinLoc(x.plan.Rejects, r.src.Ctx)
	q := "SELECT /*+ COALESCE(1) */ file, record FROM (" + bad + ")"
	opts, err := writerOpts("csv", nil)
	if err != nil {
		return 0, err
	}
	if err := x.write(ctx, q, "csv", loc, opts, nil); err != nil {
		return 0, x.wrap(ctx, err, "source %s: writing rejects", r.src.Ctx)
	}
	if _, err := x.staged(ctx, r.src.Ctx, loc, "csv", opts); err != nil {
		return 0, err
	}
	return n, nil
}

// Names of what the skip path of lossyValue adds to a read: each row's id
// and its ordinal in its file, and a bad row's text.
const (
	idCol     = "_tidemark_id"
	ordCol    = "_tidemark_ord"
	recordCol = "_tidemark_record"
)

func (r *reader) lossyName() string { return quoteIdent(fmt.Sprintf("_tidemark_lossy_%d", r.n)) }
func (r *reader) rawLossyName() string {
	return quoteIdent(fmt.Sprintf("_tidemark_rawl_%d", r.n))
}

// numbered is the rows of view with ordCol, each row's ordinal in its
// file (fileCol): Spark reads a file's splits in order, and the rows of a
// split in order (lineOf relies on it too).
func numbered(view string) string {
	return fmt.Sprintf("SELECT *, row_number() OVER (PARTITION BY %[1]s ORDER BY %[2]s) AS %[3]s FROM (SELECT *, monotonically_increasing_id() AS %[2]s FROM %[4]s)",
		fileCol, idCol, ordCol, view)
}

// skipLossy makes the rows of r that hold a value that checks find in the
// text read name (lossyValue) bad records, under skip and quarantine: the
// view r.lossyName() holds them (their file, ordinal and text), and
// createViews leaves them out of the source's view and rejected counts
// (and quarantines) them, as the DuckDB engine does. Nothing changes when
// there are none.
func (x *execution) skipLossy(ctx context.Context, r *reader, name string, text []bookmark.Column, checks map[string]*lossCheck) error {
	var conds []string
	for _, c := range r.schema {
		if lc := checks[c.Name]; lc != nil {
			conds = append(conds, lc.cond(quoteIdent(c.Name)))
		}
	}
	if err := x.sql(ctx, fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s AS SELECT *, %s AS %s FROM (%s) WHERE %s",
		r.lossyName(), recordSQL(r, text), recordCol, numbered(quoteIdent(name)), strings.Join(conds, " OR ")),
		"source %s: checking values", r.src.Ctx); err != nil {
		return err
	}
	n, err := x.count(ctx, "SELECT count(*) FROM "+r.lossyName())
	if err != nil {
		return x.wrap(ctx, err, "source %s: checking values", r.src.Ctx)
	}
	if n > 0 {
		r.lossy = checks
	}
	return nil
}

// recordSQL is a bad row's text, from the columns of a read with checked
// columns as text: a JSON object, or the CSV fields joined by the
// separator.
func recordSQL(r *reader, cols []bookmark.Column) string {
	if r.src.Format == "json" {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = quoteIdent(c.Name)
		}
		return "to_json(struct(" + strings.Join(names, ", ") + "))"
	}
	sep := r.opts["sep"]
	if sep == "" {
		sep = ","
	}
	fields := make([]string, len(cols))
	for i, c := range cols {
		fields[i] = fmt.Sprintf("coalesce(CAST(%s AS STRING), '')", quoteIdent(c.Name))
	}
	return fmt.Sprintf("concat_ws(%s, %s)", hexString(sep), strings.Join(fields, ", "))
}

// joinLossy marks the rows of r's raw read that skipLossy found bad: the
// view r.rawLossyName() is the raw read with recordCol, the text of a bad
// row (NULL for the others). Rows are matched by their ordinal in their
// file, and each match must hold what Spark's parser reads the text as
// (every column, the checked ones converted as the parser converts them)
// unless the parser took the row for malformed: otherwise the reads did
// not number their rows alike, and the run fails on the first bad value,
// as under the fail policy, rather than leave out another row.
func (x *execution) joinLossy(ctx context.Context, r *reader) error {
	raw := "(" + numbered(r.rawName()) + ")"
	var same, col, val []string
	for _, c := range r.schema {
		q := quoteIdent(c.Name)
		if lc := r.lossy[c.Name]; lc != nil {
			same = append(same, fmt.Sprintf("t.%s <=> %s", q, lc.expect("b."+q)))
			col = append(col, fmt.Sprintf("WHEN %s THEN %s", lc.cond("b."+q), hexString(c.Name)))
			val = append(val, fmt.Sprintf("WHEN %s THEN b.%s", lc.cond("b."+q), q))
			continue
		}
		if !strings.Contains(strings.ToUpper(c.Type), "MAP") {
			same = append(same, fmt.Sprintf("t.%s <=> b.%s", q, q))
		}
	}
	on := fmt.Sprintf("t.%[1]s = b.%[1]s AND t.%[2]s = b.%[2]s", fileCol, ordCol)
	rows, err := x.queryRows(ctx, fmt.Sprintf("SELECT b.%s, CASE %s END, CASE %s END FROM %s b LEFT JOIN %s t ON %s WHERE t.%s IS NULL OR (t.%s IS NULL AND NOT (%s)) ORDER BY 1 LIMIT 1",
		fileCol, strings.Join(col, " "), strings.Join(val, " "), r.lossyName(), raw, on, ordCol, corruptCol, strings.Join(same, " AND ")))
	if err != nil {
		return x.wrap(ctx, err, "source %s: matching the rows of bad values", r.src.Ctx)
	}
	if len(rows) > 0 {
		ie := x.lossyError(ctx, r, rows[:1], r.lossy)
		ie.Msg += " (its row could not be matched in the read to be skipped)"
		return ie
	}
	return x.sql(ctx, fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s AS SELECT t.*, b.%s FROM %s t LEFT JOIN %s b ON %s",
		r.rawLossyName(), recordCol, raw, r.lossyName(), on), "source %s: creating view", r.src.Ctx)
}

// rawRows is the relation r's bad records and good rows are read from
// under skip and quarantine, and the condition a bad record meets.
func (r *reader) rawRows() (from, bad string) {
	if r.lossy != nil {
		return r.rawLossyName(), fmt.Sprintf("(%s IS NOT NULL OR %s IS NOT NULL)", corruptCol, recordCol)
	}
	return r.rawName(), "(" + corruptCol + " IS NOT NULL)"
}
