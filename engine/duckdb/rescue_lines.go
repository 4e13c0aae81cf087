package duckdb

import "fmt"

// Rescue on a JSON source read as lines (on_bad_record skip or
// quarantine, jsonlines.go). A line is rejected only when it is not a JSON
// object, or when a column that is not rescued (VARCHAR, nested) does not
// convert; a rescuable column's value is extracted from the line and
// converted as the chunk projection does (rescue.go), and what does not
// fit, with the keys the schema lacks, goes to the rescued column.

// lineRescued reports whether column name is converted by the rescue
// projection rather than by json_transform.
func (r *reader) lineRescued(name string) bool {
	if !r.rescuing() {
		return false
	}
	for _, c := range r.data {
		if c.Name == name {
			return r.rescuable(c)
		}
	}
	return false
}

// lineValue is the JSON value of top-level key name in the line.
func lineValue(name string) string {
	return fmt.Sprintf("json_extract(line, %s)", literal(jsonPointer(name)))
}

// lineRescueFields are, for the table of a rescuing JSON source's good
// lines, the rescued columns' expressions by name and the rescued column.
func (r *reader) lineRescueFields() (map[string]string, string) {
	fields := map[string]string{}
	var entries, conds []string
	for _, c := range r.data {
		if !r.lineRescued(c.Name) {
			continue
		}
		v := lineValue(c.Name)
		t := jsonTextSQL(v)
		present := fmt.Sprintf("(%[1]s IS NOT NULL AND json_type(%[1]s) <> 'NULL')", v)
		fit := fmt.Sprintf("(NOT %s OR (%s IS NOT NULL AND coalesce(%s, false)))", present, t, r.fitsText(t, c.Type))
		fields[c.Name] = fmt.Sprintf("CASE WHEN %s THEN %s END AS %s", fit, r.convertText(t, c.Type), ident(c.Name))
		entries = append(entries, rescueEntry(c.Name, fmt.Sprintf("CASE WHEN NOT %s THEN coalesce(%s, %s::VARCHAR) END", fit, t, v)))
		conds = append(conds, "NOT "+fit)
	}
	for _, c := range r.extra {
		v := lineValue(c.Name)
		present := fmt.Sprintf("(%[1]s IS NOT NULL AND json_type(%[1]s) <> 'NULL')", v)
		entries = append(entries, rescueEntry(c.Name, fmt.Sprintf("CASE WHEN %s THEN coalesce(%s, %s::VARCHAR) END", present, jsonTextSQL(v), v)))
		conds = append(conds, present)
	}
	all := readChunk{paths: r.in.paths}
	return fields, r.rescuedSQL(&all, entries, conds)
}

// linesFields is the select list of the table of a JSON source's good
// lines: each file column from the converted row (or, rescued, from the
// line), the partition columns, and under rescue the rescued column.
func (r *reader) linesFields(row string) []string {
	rescued, column := map[string]string{}, ""
	if r.rescuing() {
		rescued, column = r.lineRescueFields()
	}
	fields := make([]string, 0, len(r.data)+len(r.hive)+1)
	for _, c := range r.data {
		if f, ok := rescued[c.Name]; ok {
			fields = append(fields, f)
			continue
		}
		fields = append(fields, fmt.Sprintf("%s.%s AS %s", ident(row), ident(c.Name), ident(c.Name)))
	}
	for _, h := range r.hive {
		fields = append(fields, ident(h.Name))
	}
	if column != "" {
		fields = append(fields, column)
	}
	return fields
}
