package sqltable

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// dialect is what differs between the databases a source reads.
type dialect interface {
	kind() sqldb.Kind
	// columns describes the relation from (a quoted table or a
	// parenthesized query with an alias); name is the table (nil for a
	// query), which lets the catalog refine types.
	columns(ctx context.Context, db *sqldb.DB, from string, name *sqldb.Name) ([]column, error)
	// exists reports whether the table exists.
	exists(ctx context.Context, db *sqldb.DB, name sqldb.Name) (bool, error)
	// primaryKey returns the table's primary key columns in order (nil
	// when it has none).
	primaryKey(ctx context.Context, db *sqldb.DB, name sqldb.Name) ([]string, error)
	// notNull returns the table's columns declared NOT NULL (a rowid is
	// one too).
	notNull(ctx context.Context, db *sqldb.DB, name sqldb.Name) ([]string, error)
	// indexes returns the column lists of the table's indexes, each in
	// index order.
	indexes(ctx context.Context, db *sqldb.DB, name sqldb.Name) ([][]string, error)
	// keyText is the SQL expression whose text value identifies c's value
	// exactly and is read back by keyValue (mark values, identities).
	keyText(c column) string
	// keyValue renders a key text (from keyText) as a SQL value of c's
	// type: an inline literal or a placeholder with its argument.
	keyValue(b *args, c column, text string) (string, error)
	// rowCompare reports whether (a, b) > (x, y) is supported and uses
	// an index on (a, b).
	rowCompare() bool
	// session runs fn on one connection, inside a read-only transaction
	// that sees one snapshot of the database.
	session(ctx context.Context, db *sqldb.DB, fn func(s session) error) error
}

// session is one connection inside a snapshot.
type session interface {
	// query streams the rows of q; every value is nil (NULL), []byte
	// (text), or a Go value the driver chose (SQLite).
	query(ctx context.Context, q string, a []any, fn func(row []any) error) error
	// copyTo writes the CSV output of COPY (q) TO STDOUT to w and returns
	// the rows (PostgreSQL only).
	copyTo(ctx context.Context, q string, w io.Writer) (rows int64, err error)
}

// args collects the arguments of one statement.
type args struct {
	list []any
}

// add appends an argument and returns its placeholder.
func (a *args) add(v any) string {
	a.list = append(a.list, v)
	return "?"
}

func dialectFor(k sqldb.Kind) dialect {
	switch k {
	case sqldb.Postgres:
		return pgDialect{}
	case sqldb.MySQL:
		return mysqlDialect{}
	default:
		return sqliteDialect{}
	}
}

// sqlSession is a session over database/sql (MySQL, SQLite).
type sqlSession struct {
	conn *sql.Conn
	// raw reads values straight from the driver (MySQL's text protocol:
	// every value is text); otherwise through database/sql with the
	// driver's Go types (SQLite).
	raw bool
}

func (s sqlSession) query(ctx context.Context, q string, a []any, fn func(row []any) error) error {
	if s.raw {
		return s.rawQuery(ctx, q, a, fn)
	}
	rows, err := s.conn.QueryContext(ctx, q, a...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range ptrs {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

// rawQuery reads rows from the driver itself, below database/sql: the
// MySQL driver hands out each value as a slice of its read buffer, valid
// until the next row, which is all a row needs here (half the time of
// Scan over a million rows).
func (s sqlSession) rawQuery(ctx context.Context, q string, a []any, fn func(row []any) error) error {
	named := make([]driver.NamedValue, len(a))
	for i, v := range a {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return s.conn.Raw(func(dc any) error {
		qc, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot query", dc)
		}
		rows, err := qc.QueryContext(ctx, q, named)
		if err != nil {
			return err
		}
		defer rows.Close()
		dest := make([]driver.Value, len(rows.Columns()))
		row := make([]any, len(dest))
		for {
			if err := rows.Next(dest); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			for i, v := range dest {
				row[i] = v
			}
			if err := fn(row); err != nil {
				return err
			}
		}
	})
}

func (s sqlSession) copyTo(context.Context, string, io.Writer) (int64, error) {
	return 0, errors.New("COPY is PostgreSQL's")
}

// queryRow runs q and returns a copy of its first row, or nil when there
// is no row.
func queryRow(ctx context.Context, s session, q string, a []any) ([]any, error) {
	var out []any
	err := s.query(ctx, q, a, func(row []any) error {
		if out == nil {
			out = append([]any(nil), row...)
			for i, v := range out {
				if b, ok := v.([]byte); ok {
					out[i] = append([]byte(nil), b...)
				}
			}
		}
		return nil
	})
	return out, err
}
