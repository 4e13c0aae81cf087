package sqltable

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// pgDialect reads PostgreSQL. Values travel as the server's text output
// (pinned by sqldb's session settings); the new rows of a run are written
// to the file by COPY (SELECT ...) TO STDOUT (FORMAT csv), which converts
// bytea and arrays with SQL expressions into the text the engine parses.
type pgDialect struct{}

func (pgDialect) kind() sqldb.Kind { return sqldb.Postgres }
func (pgDialect) rowCompare() bool { return true }

func (pgDialect) keyText(c column) string { return sqldb.Postgres.Quote(c.Name) }

func (pgDialect) keyValue(_ *args, c column, text string) (string, error) {
	return "CAST(" + sqldb.Postgres.Literal(text) + " AS " + c.cast + ")", nil
}

// withPg runs fn on the pgx connection under one pooled connection.
func withPg(ctx context.Context, db *sqldb.DB, fn func(pc *pgconn.PgConn) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres: unexpected driver connection %T", dc)
		}
		return fn(c.Conn().PgConn())
	})
}

func (d pgDialect) session(ctx context.Context, db *sqldb.DB, fn func(s session) error) error {
	return withPg(ctx, db, func(pc *pgconn.PgConn) error {
		if err := pc.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").Close(); err != nil {
			return fmt.Errorf("beginning snapshot: %w", err)
		}
		err := fn(pgSession{pc})
		if err != nil {
			_ = pc.Exec(context.WithoutCancel(ctx), "ROLLBACK").Close()
			return err
		}
		if err := pc.Exec(ctx, "COMMIT").Close(); err != nil {
			return fmt.Errorf("ending snapshot: %w", err)
		}
		return nil
	})
}

// pgSession streams text-format rows and COPY output.
type pgSession struct{ pc *pgconn.PgConn }

func (s pgSession) query(ctx context.Context, q string, a []any, fn func(row []any) error) error {
	params := make([][]byte, len(a))
	for i, v := range a {
		params[i] = []byte(fmt.Sprint(v))
	}
	rr := s.pc.ExecParams(ctx, q, params, nil, nil, nil)
	var row []any
	for rr.NextRow() {
		vals := rr.Values()
		if row == nil {
			row = make([]any, len(vals))
		}
		for i, v := range vals {
			if v == nil {
				row[i] = nil
			} else {
				row[i] = v
			}
		}
		if err := fn(row); err != nil {
			_, _ = rr.Close()
			return err
		}
	}
	_, err := rr.Close()
	return err
}

func (s pgSession) copyTo(ctx context.Context, q string, w io.Writer) (int64, error) {
	// COPY sends a message per row: buffer the writes.
	bw := bufio.NewWriterSize(w, 1<<20)
	tag, err := s.pc.CopyTo(ctx, bw, "COPY ("+q+") TO STDOUT (FORMAT csv)")
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), bw.Flush()
}

// pgNameArg renders a table name for to_regclass.
func pgNameArg(n sqldb.Name) string { return sqldb.Postgres.Quoted(n) }

func (pgDialect) exists(ctx context.Context, db *sqldb.DB, n sqldb.Name) (bool, error) {
	var ok bool
	err := db.QueryRowContext(ctx, "SELECT to_regclass($1) IS NOT NULL", pgNameArg(n)).Scan(&ok)
	return ok, err
}

func (pgDialect) primaryKey(ctx context.Context, db *sqldb.DB, n sqldb.Name) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		WHERE i.indrelid = to_regclass($1) AND i.indisprimary
		ORDER BY array_position(i.indkey::int2[], a.attnum)`, pgNameArg(n))
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

func (pgDialect) notNull(ctx context.Context, db *sqldb.DB, n sqldb.Name) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT attname FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attnum > 0 AND attnotnull AND NOT attisdropped`, pgNameArg(n))
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

func (pgDialect) indexes(ctx context.Context, db *sqldb.DB, n sqldb.Name) ([][]string, error) {
	// Expression columns have attnum 0 and come out as "", which no key
	// matches. Partial indexes are left out: they do not cover the table.
	rows, err := db.QueryContext(ctx, `SELECT (SELECT string_agg(coalesce(a.attname, ''), chr(1) ORDER BY k.n)
			FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
			LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum)
		FROM pg_index i WHERE i.indrelid = to_regclass($1) AND i.indpred IS NULL`, pgNameArg(n))
	if err != nil {
		return nil, err
	}
	list, err := scanStrings(rows)
	if err != nil {
		return nil, err
	}
	out := make([][]string, len(list))
	for i, s := range list {
		out[i] = strings.Split(s, "\x01")
	}
	return out, nil
}

func (d pgDialect) columns(ctx context.Context, db *sqldb.DB, from string, _ *sqldb.Name) ([]column, error) {
	var fields []pgconn.FieldDescription
	err := withPg(ctx, db, func(pc *pgconn.PgConn) error {
		rr := pc.ExecParams(ctx, "SELECT * FROM "+from+" LIMIT 0", nil, nil, nil, nil)
		for rr.NextRow() {
		}
		fields = append(fields, rr.FieldDescriptions()...)
		_, err := rr.Close()
		return err
	})
	if err != nil {
		return nil, err
	}
	cols := make([]column, len(fields))
	for i, f := range fields {
		c, err := d.mapType(ctx, db, f.Name, f.DataTypeOID, f.TypeModifier)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return cols, nil
}

// pgType is a row of pg_type, resolved through domains.
type pgType struct {
	format   string // format_type of the column's declared type
	base     string // format_type of the base type (domains resolved)
	typtype  string
	category string
	elem     string // format_type of the element type, arrays only
	elemCat  string
}

func (pgDialect) lookupType(ctx context.Context, db *sqldb.DB, oid uint32, mod int32) (pgType, error) {
	var t pgType
	var baseOid uint32
	var baseMod int32
	err := db.QueryRowContext(ctx, `SELECT format_type(t.oid, $2), t.typtype, t.typbasetype, t.typtypmod
		FROM pg_type t WHERE t.oid = $1`, oid, mod).Scan(&t.format, &t.typtype, &baseOid, &baseMod)
	if err != nil {
		return t, err
	}
	if t.typtype == "d" { // domain: map its base type, cast to the domain
		oid, mod = baseOid, baseMod
	}
	var elemOid uint32
	err = db.QueryRowContext(ctx, `SELECT format_type(t.oid, $2), t.typtype, t.typcategory, t.typelem,
			coalesce(format_type(t.typelem, $2), ''), coalesce(e.typcategory, '')
		FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem WHERE t.oid = $1`, oid, mod).
		Scan(&t.base, &t.typtype, &t.category, &elemOid, &t.elem, &t.elemCat)
	if t.category != "A" {
		t.elem = ""
	}
	return t, err
}

var pgNumeric = regexp.MustCompile(`^numeric\((\d+),(\d+)\)$`)

// pgModel maps a PostgreSQL type (format_type of the base type, with
// pg_type's typtype and, for arrays, the element's format_type) to the
// type model. A type the model has no counterpart for is read as the
// server's text (VARCHAR).
func pgModel(t pgType) bookmark.Type {
	if t.elem == "" {
		return pgScalar(t.base, t.typtype)
	}
	elem := pgScalar(t.elem, "")
	if elem.Kind == bookmark.Blob {
		elem = varchar // bytea elements keep their \x hex text
	}
	return bookmark.ListOf(elem)
}

// pgScalars are the non-array types read as a type of their own.
var pgScalars = map[string]bookmark.Kind{
	"smallint": bookmark.SmallInt, "integer": bookmark.Integer, "bigint": bookmark.BigInt,
	"oid": bookmark.UInteger, "real": bookmark.Float, "double precision": bookmark.Double,
	"boolean": bookmark.Boolean, "date": bookmark.Date, "json": bookmark.JSON, "jsonb": bookmark.JSON,
	"bytea": bookmark.Blob, "uuid": bookmark.UUID,
	"text": bookmark.Varchar, "name": bookmark.Varchar, `"char"`: bookmark.Varchar, "citext": bookmark.Varchar,
	"character": bookmark.Varchar,
}

// pgScalar maps a non-array type.
func pgScalar(t, typtype string) bookmark.Type {
	if k, ok := pgScalars[t]; ok && typtype != "e" {
		return bookmark.Scalar(k)
	}
	switch {
	case typtype == "e": // enum
		return varchar
	case strings.HasPrefix(t, "timestamp") && strings.HasSuffix(t, "without time zone"):
		return bookmark.Scalar(bookmark.Timestamp)
	case strings.HasPrefix(t, "timestamp") && strings.HasSuffix(t, "with time zone"):
		return bookmark.Scalar(bookmark.TimestampTZ)
	case strings.HasPrefix(t, "time") && strings.HasSuffix(t, "without time zone"):
		return bookmark.Scalar(bookmark.Time)
	case strings.HasPrefix(t, "interval"):
		return bookmark.Scalar(bookmark.Interval)
	case strings.HasPrefix(t, "character varying"), strings.HasPrefix(t, "character("):
		return varchar
	}
	if m := pgNumeric.FindStringSubmatch(t); m != nil {
		p, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		if d, ok := decimalType(p, s); ok {
			return d
		}
	}
	return varchar
}

func (d pgDialect) mapType(ctx context.Context, db *sqldb.DB, name string, oid uint32, mod int32) (column, error) {
	t, err := d.lookupType(ctx, db, oid, mod)
	if err != nil {
		return column{}, fmt.Errorf("column %s: looking up its type: %w", name, err)
	}
	return pgColumn(name, t), nil
}

// pgColumn describes a column of type t (as pgModel reads it): how its
// values are rendered, compared and moved by a lookback.
func pgColumn(name string, t pgType) column {
	typ := pgModel(t)
	c := column{Name: name, DBType: t.format, Type: typ, key: keyKindOf(typ), cast: t.format}
	q, lit := sqldb.Postgres.Quote(name), sqldb.Postgres.Literal
	switch {
	case typ.Kind == bookmark.Varchar && t.elem == "" && t.typtype != "e" && strings.HasPrefix(t.base, "numeric"):
		c.key = keyDecimal // compared in the database; lookback works on the text
	case typ.Kind == bookmark.Decimal:
		// numeric's NaN and infinities have no DECIMAL value.
		c.out = `CASE WHEN ` + q + `::text IN ('NaN', 'Infinity', '-Infinity') THEN ` +
			refusal(lit("column "+name+" holds ")+" || "+q+"::text || "+lit(", which "+typ.String()+" cannot hold; "+
				"read it as text with a query source (CAST("+name+" AS text)) or leave the row out")) +
			` ELSE ` + q + `::text END`
	case typ.Kind == bookmark.Blob:
		c.out = `regexp_replace(encode(` + q + `, 'hex'), '(..)', '\\x\1', 'g')`
	case typ.Kind == bookmark.List:
		// The engine parses lists as [a, "b", NULL]: every element is
		// quoted with backslash escapes, NULL stays bare. A
		// multidimensional array fails the read with a message naming the
		// column (the cast cannot succeed).
		c.out = `CASE WHEN ` + q + ` IS NULL THEN NULL WHEN array_ndims(` + q + `) > 1 THEN ` +
			refusal(lit("column "+name+" holds a multidimensional array, which is not supported; dimensions: ")+" || array_ndims("+q+")") +
			` ELSE '[' || array_to_string(ARRAY(SELECT CASE WHEN e IS NULL THEN 'NULL' ELSE '"' || ` +
			`replace(replace(e::text, '\', '\\'), '"', '\"') || '"' END FROM unnest(` + q + `) AS u(e)), ',') || ']' END`
	}
	return c
}

// scanStrings reads one text column of every row.
func scanStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s.String)
	}
	return out, rows.Err()
}
