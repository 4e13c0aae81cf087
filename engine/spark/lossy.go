package spark

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// fractionDigits is how many fractional second digits a timestamp column
// keeps, by its recorded type: Spark's timestamps keep microseconds, and
// the second and millisecond kinds keep fewer, as the DuckDB engine checks
// them.
var fractionDigits = map[bookmark.Kind]int{
	bookmark.Timestamp: 6, bookmark.TimestampTZ: 6, bookmark.TimestampNS: 6,
	bookmark.TimestampMS: 3, bookmark.TimestampS: 0,
}

// lossCheck is how the values of one column that its type holds only
// with loss are found in the column's text.
type lossCheck struct {
	gate string              // a regex a line with such a value matches ("": any line may hold one)
	cond func(string) string // a SQL condition on the value's text: it loses something
	why  string              // what it loses, for the message
	// expect is what Spark's parser reads the value's text v as, in SQL
	// (the skip path checks that it took the right row: see skipLossy).
	expect func(v string) string
}

// lossCheckOf is the check of a column of type t in a source of format,
// nil for a type Spark's parser converts without loss or refuses.
func lossCheckOf(t bookmark.Type, format string) *lossCheck {
	st, err := sparkType(t)
	if err != nil {
		return nil
	}
	cast := func(v string) string { return fmt.Sprintf("try_cast(%s AS %s)", v, st) }
	if n, ok := fractionDigits[t.Kind]; ok {
		re := cutRE(n)
		return &lossCheck{gate: re, cond: func(v string) string { return v + " RLIKE " + hexString(re) },
			why:    fmt.Sprintf("it has fractional second digits past the %d the type keeps, which would be cut", n),
			expect: cast}
	}
	switch {
	case t.Kind == bookmark.Decimal:
		// Spark rounds 1.234 to 1.23 in DECIMAL(5,2); exponent forms
		// are checked by their value.
		places := fmt.Sprintf(`[.][0-9]{%d}[0-9]*[1-9]`, t.Scale)
		return &lossCheck{gate: `[0-9]` + places + `|[0-9][eE][+-]?[0-9]`,
			cond: func(v string) string {
				return fmt.Sprintf("(CASE WHEN %[1]s RLIKE '[eE]' THEN try_cast(%[1]s AS DOUBLE) IS DISTINCT FROM try_cast(try_cast(%[1]s AS DECIMAL(%[2]d,%[3]d)) AS DOUBLE) "+
					"ELSE %[1]s RLIKE %[4]s END)", v, t.Precision, t.Scale, hexString(places))
			},
			why:    fmt.Sprintf("more than %d decimal places would be rounded", t.Scale),
			expect: cast}
	case t.Kind == bookmark.TinyInt && format == "json":
		// Spark's JSON parser reads 128 to 255 into a TINYINT as -128
		// to -1 (Jackson takes them for unsigned bytes).
		return &lossCheck{cond: func(v string) string { return fmt.Sprintf("try_cast(%s AS INT) BETWEEN 128 AND 255", v) },
			why: "it is out of the type's range",
			expect: func(v string) string {
				return fmt.Sprintf("CAST(try_cast(%s AS INT) - 256 AS TINYINT)", v)
			}}
	case t.Kind == bookmark.Double || t.Kind == bookmark.Float:
		return floatCheck(st)
	}
	return nil
}

// lossyValue finds the values of r's CSV or JSON files that Spark's
// parser would change without a word where the DuckDB engine takes them for
// bad records (lossCheckOf: a fraction of a second past the microseconds,
// more decimal places than a DECIMAL keeps, a JSON TINYINT past 127, a
// number past a DOUBLE's or FLOAT's range). Under the fail policy it
// returns the first as an *engine.InputError naming file, line and column
// (nil when there is none); under skip and quarantine their rows are bad
// records (skipLossy). Unless a column may hold one on any line, one pass
// over the files as text finds whether a line may hold one; only then are
// the files read with those columns as text, so that a text column that
// looks like one fails nothing.
func (x *execution) lossyValue(ctx context.Context, r *reader) (*engine.InputError, error) {
	if r.src.Format == "parquet" || r.src.Exact || len(r.paths) == 0 {
		return nil, nil
	}
	_, tsFormat := r.opts["timestampFormat"] // the job's pattern: Spark parses it strictly
	hive := hiveNames(r.src)
	checks := map[string]*lossCheck{}
	var gates []string
	always := false
	textSchema := make([]bookmark.Column, len(r.schema))
	for i, c := range r.schema {
		textSchema[i] = c
		t, err := bookmark.ParseType(c.Type)
		if err != nil || hive[strings.ToLower(c.Name)] {
			continue
		}
		if _, ts := fractionDigits[t.Kind]; ts && tsFormat {
			continue
		}
		if lc := lossCheckOf(t, r.src.Format); lc != nil {
			checks[c.Name] = lc
			textSchema[i].Type = "VARCHAR"
			gates = append(gates, lc.gate)
			always = always || lc.gate == ""
		}
	}
	if len(checks) == 0 {
		return nil, nil
	}
	if !always {
		rows, ie, err := x.scanLines(ctx, r, "checking values", func(lines string) string {
			return fmt.Sprintf("SELECT %s FROM %s WHERE value RLIKE %s LIMIT 1", fileCol, lines, hexString(strings.Join(gates, "|")))
		})
		if ie != nil || err != nil || len(rows) == 0 {
			return ie, err
		}
	}
	ddl, err := schemaDDL(textSchema)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", r.src.Ctx, err)
	}
	name := fmt.Sprintf("_tidemark_values_%d", r.n)
	opts := copyOpts(r.opts)
	opts["mode"] = "PERMISSIVE" // a malformed record is the main read's to report
	if err := x.createRead(ctx, name, r.src.Format, ddl, opts, r.paths, true); err != nil {
		return nil, x.e.wrapErr(ctx, err, "source %s: checking values", r.src.Ctx)
	}
	if r.rejects {
		return nil, x.skipLossy(ctx, r, name, textSchema, checks)
	}
	var parts []string
	for _, c := range r.schema {
		if lc, ok := checks[c.Name]; ok {
			parts = append(parts, fmt.Sprintf("SELECT %s AS f, %s AS c, %s AS v FROM %s WHERE %s",
				fileCol, hexString(c.Name), quoteIdent(c.Name), quoteIdent(name), lc.cond(quoteIdent(c.Name))))
		}
	}
	// The first file's bad values, a few of them: which row a query
	// returns first is not fixed (on a cluster, nor across the columns'
	// parts), so the error names the first line among them.
	rows, err := x.queryRows(ctx, "SELECT DISTINCT f, c, v FROM ("+strings.Join(parts, " UNION ALL ")+
		fmt.Sprintf(") WHERE f = (SELECT min(f) FROM (%s)) LIMIT %d", strings.Join(parts, " UNION ALL "), maxLossyCandidates))
	if err != nil {
		return nil, x.e.wrapErr(ctx, err, "source %s: checking values", r.src.Ctx)
	}
	if err := x.sql(ctx, "DROP VIEW IF EXISTS "+quoteIdent(name), "source %s: checking values", r.src.Ctx); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return x.lossyError(ctx, r, rows, checks), nil
}

// maxLossyCandidates is how many of a file's bad values lossyError looks
// up the lines of.
const maxLossyCandidates = 16

// lossyError is the *engine.InputError of the first of one file's bad
// values (file, column, value rows): the one on the lowest line, ties
// going to the column that comes first.
func (x *execution) lossyError(ctx context.Context, r *reader, rows [][]any, checks map[string]*lossCheck) *engine.InputError {
	var best *engine.InputError
	bestPos := 0
	for _, row := range rows {
		file, _ := row[0].(string)
		col, _ := row[1].(string)
		v, _ := row[2].(string)
		line := x.lineWith(ctx, file, v)
		pos := slices.IndexFunc(r.schema, func(c bookmark.Column) bool { return c.Name == col })
		if best != nil && (line == 0 || (best.Line != 0 && line > best.Line) || (line == best.Line && pos >= bestPos)) {
			continue
		}
		best, bestPos = &engine.InputError{Source: r.src.Ctx, File: r.key(file), Line: line, Column: col,
			Msg: fmt.Sprintf("value %q does not convert to the column's type %s without loss: %s", clip(v), typeOf(r.schema, col), checks[col].why)}, pos
	}
	return best
}

// cutRE matches a time of day with a non-zero fractional second digit
// past the first n.
func cutRE(n int) string {
	return fmt.Sprintf(`[0-9]:[0-9]{2}[.,][0-9]{%d}[0-9]*[1-9]`, n)
}

func typeOf(cols []bookmark.Column, name string) string {
	for _, c := range cols {
		if c.Name == name {
			return c.Type
		}
	}
	return ""
}

// lineWith finds the first line of file that holds the text v (1-based, 0
// when none does).
func (x *execution) lineWith(ctx context.Context, file, v string) int64 {
	q := fmt.Sprintf("SELECT min(n) FROM (SELECT value, row_number() OVER (ORDER BY monotonically_increasing_id()) AS n FROM text.%s) WHERE instr(value, %s) > 0",
		quoteIdent(escapeGlob(file)), hexString(v))
	n, err := x.count(ctx, q)
	if err != nil {
		return 0
	}
	return n
}
