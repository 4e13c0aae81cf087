package sqltable

import (
	"strings"
)

// query builds one statement over the source. Parts are appended in the
// order they appear in the SQL, because MySQL and SQLite bind arguments
// by position.
type query struct {
	s    *Source
	a    args
	sql  strings.Builder
	err  error
	nCol int // columns selected
}

func (s *Source) newQuery() *query { return &query{s: s} }

func (q *query) w(parts ...string) *query {
	for _, p := range parts {
		q.sql.WriteString(p)
	}
	return q
}

// value appends key column i's value given as key text.
func (q *query) value(col int, text string) {
	v, err := q.s.d.keyValue(&q.a, q.s.cols[col], text)
	if err != nil && q.err == nil {
		q.err = err
	}
	q.sql.WriteString(v)
}

func (q *query) quote(col int) string { return q.s.db.Kind.Quote(q.s.cols[col].Name) }

// selectList writes the select list: the output columns (rendered for the
// engine), then the key texts, then the identity texts, as asked.
func (q *query) selectList(outputs, keys, ident bool) *query {
	var parts []string
	if outputs {
		for _, c := range q.s.cols {
			if c.out != "" {
				parts = append(parts, c.out)
			} else {
				parts = append(parts, q.s.db.Kind.Quote(c.Name))
			}
		}
	}
	if keys {
		for _, k := range q.s.keys {
			parts = append(parts, q.s.d.keyText(q.s.cols[k]))
		}
	}
	if ident {
		for _, k := range q.s.ident {
			parts = append(parts, q.s.d.keyText(q.s.cols[k]))
		}
	}
	q.nCol = len(parts)
	return q.w(strings.Join(parts, ", "))
}

// texts writes the key texts of columns cols, comma-separated.
func (q *query) texts(cols []int) *query {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = q.s.d.keyText(q.s.cols[c])
	}
	q.nCol = len(parts)
	return q.w(strings.Join(parts, ", "))
}

// tuple writes a comparison of the key tuple with vals: after (strictly
// past the mark in key order) or upto (not past it). Where the database
// has no indexable row comparison it is expanded, with a leading range on
// the first key for the index:
//
//	a >= x AND (a > x OR (a = x AND b > y))
func (q *query) tuple(after bool, vals []string) *query {
	strict := ">"
	if q.s.cfg.desc() {
		strict = "<"
	}
	if !after {
		strict = map[string]string{">": "<", "<": ">"}[strict]
	}
	last := strict
	if !after {
		last += "="
	}
	n := len(q.s.keys)
	if n == 1 {
		q.w(q.quote(q.s.keys[0]), " ", last, " ")
		q.value(q.s.keys[0], vals[0])
		return q
	}
	if q.s.d.rowCompare() {
		names := make([]string, n)
		for i, k := range q.s.keys {
			names[i] = q.quote(k)
		}
		q.w("(", strings.Join(names, ", "), ") ", last, " (")
		for i, k := range q.s.keys {
			if i > 0 {
				q.w(", ")
			}
			q.value(k, vals[i])
		}
		return q.w(")")
	}
	q.w("(", q.quote(q.s.keys[0]), " ", strict, "= ")
	q.value(q.s.keys[0], vals[0])
	q.w(" AND ")
	var nest func(i int)
	nest = func(i int) {
		k := q.s.keys[i]
		if i == n-1 {
			q.w(q.quote(k), " ", last, " ")
			q.value(k, vals[i])
			return
		}
		q.w("(", q.quote(k), " ", strict, " ")
		q.value(k, vals[i])
		q.w(" OR (", q.quote(k), " = ")
		q.value(k, vals[i])
		q.w(" AND ")
		nest(i + 1)
		q.w("))")
	}
	nest(0)
	return q.w(")")
}

// inWindow writes "first key is within the window starting at l":
// k >= l (asc) or k <= l (desc); behind writes the opposite, strictly.
func (q *query) inWindow(l string) *query {
	op := ">="
	if q.s.cfg.desc() {
		op = "<="
	}
	q.w(q.quote(q.s.keys[0]), " ", op, " ")
	q.value(q.s.keys[0], l)
	return q
}

func (q *query) behind(l string) *query {
	op := "<"
	if q.s.cfg.desc() {
		op = ">"
	}
	q.w(q.quote(q.s.keys[0]), " ", op, " ")
	q.value(q.s.keys[0], l)
	return q
}

// anyNull writes "some key is NULL"; ok is false when every key is
// declared NOT NULL (nothing to count).
func (q *query) anyNull() (ok bool) {
	var parts []string
	for _, k := range q.s.keys {
		if !q.s.cols[k].notNull {
			parts = append(parts, q.quote(k)+" IS NULL")
		}
	}
	q.w("(", strings.Join(parts, " OR "), ")")
	return len(parts) > 0
}

// noNull writes "no key is NULL".
func (q *query) noNull() *query {
	parts := make([]string, len(q.s.keys))
	for i, k := range q.s.keys {
		parts[i] = q.quote(k) + " IS NOT NULL"
	}
	return q.w(strings.Join(parts, " AND "))
}

// orderBy writes the key order; newestFirst reverses it.
func (q *query) orderBy(newestFirst bool) *query {
	dir := " ASC"
	if q.s.cfg.desc() != newestFirst {
		dir = " DESC"
	}
	parts := make([]string, len(q.s.keys))
	for i, k := range q.s.keys {
		parts[i] = q.quote(k) + dir
	}
	return q.w(" ORDER BY ", strings.Join(parts, ", "))
}

func (q *query) String() string { return q.sql.String() }
