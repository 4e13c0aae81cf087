package spark

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// extractRead is how Spark reads a SQL table's extract (an exact CSV
// source, in the text forms the DuckDB engine parses): the schema of the
// read, in which a column Spark's CSV reader cannot parse as its type is
// text, and the expression of each column in the source's view. Spark's
// CSV reader took a BINARY field's text as its bytes (the blob 00FF41
// became the 12 characters \x00\xFF\x41), took only true/false for a
// BOOLEAN (PostgreSQL's COPY writes t/f: every run of a table with a
// boolean failed) and refuses arrays.
func extractRead(cols []bookmark.Column) (read []bookmark.Column, exprs []string, err error) {
	read = make([]bookmark.Column, len(cols))
	exprs = make([]string, len(cols))
	for i, c := range cols {
		t, err := bookmark.ParseType(c.Type)
		if err != nil {
			return nil, nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		read[i], exprs[i] = c, quoteIdent(c.Name)
		q := quoteIdent(c.Name)
		switch {
		case t.Kind == bookmark.Blob:
			// Every byte is \xHH.
			exprs[i] = fmt.Sprintf("unhex(replace(%s, %s, ''))", q, stringLit(`\x`))
		case t.Kind == bookmark.Boolean:
			exprs[i] = boolText(q, c.Name)
		case t.Kind == bookmark.List:
			st, err := sparkType(t)
			if err != nil {
				return nil, nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
			exprs[i] = fmt.Sprintf("CAST(%s AS %s)", listText(q), st)
		default:
			continue
		}
		read[i].Type = bookmark.Scalar(bookmark.Varchar).String()
		exprs[i] += " AS " + q
	}
	return read, exprs, nil
}

// boolText converts a boolean's text (true/false, t/f) and fails on any
// other, naming the column.
func boolText(q, name string) string {
	return fmt.Sprintf("CASE WHEN %[1]s IS NULL THEN CAST(NULL AS BOOLEAN) WHEN lower(%[1]s) IN ('true', 't') THEN true "+
		"WHEN lower(%[1]s) IN ('false', 'f') THEN false ELSE raise_error(concat(%[2]s, %[1]s)) END",
		q, stringLit("column "+name+": not a boolean: "))
}

// listText parses a list's text, [a, "b", NULL] (elements quoted with
// backslash escapes, NULL bare), into an array of texts: the tokens are
// taken left to right, a quoted one whole, so that a NULL inside quotes
// stays text.
func listText(q string) string {
	token := stringLit(`(?s)(NULL|"(?:[^"\\]|\\.)*")`)
	return fmt.Sprintf("transform(regexp_extract_all(%s, %s, 1), e -> CASE WHEN e = 'NULL' THEN CAST(NULL AS STRING) "+
		"ELSE regexp_replace(substr(e, 2, length(e) - 2), %s, '$1') END)", q, token, stringLit(`(?s)\\(.)`))
}

// stringLit is s as a Spark SQL string literal.
func stringLit(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
