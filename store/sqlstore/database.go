package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
)

// SQLConn is what *sql.DB, *sql.Conn and *sql.Tx share.
type SQLConn interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// SQL is a Querier over database/sql, for a dialect whose driver takes '?'
// placeholders (SQLite).
func SQL(c SQLConn) Querier { return sqlQuerier{c} }

type sqlQuerier struct{ c SQLConn }

func (q sqlQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.c.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q sqlQuerier) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := q.c.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (q sqlQuerier) QueryRow(ctx context.Context, query string, args ...any) Row {
	return sqlRow{q.c.QueryRowContext(ctx, query, args...)}
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }

type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNoRows
	}
	return err
}

// Numbered rewrites a query's '?' placeholders as $1, $2, ... (the core's
// queries hold no '?' inside a string literal).
func Numbered(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (q sqlQuerier) ExecEach(ctx context.Context, query string, args [][]any) ([]int64, error) {
	if len(args) == 0 {
		return nil, nil
	}
	stmt, err := q.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	n := make([]int64, len(args))
	for i, a := range args {
		res, err := stmt.ExecContext(ctx, a...)
		if err != nil {
			return nil, &RowError{Row: i, Err: err}
		}
		if n[i], err = res.RowsAffected(); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (q sqlQuerier) CopyFrom(ctx context.Context, table string, columns []string, n int, row func(i int) []any) error {
	if n == 0 {
		return nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ")
	stmt, err := q.c.PrepareContext(ctx, `INSERT INTO `+table+` (`+strings.Join(columns, ", ")+`) VALUES (`+marks+`)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i := range n {
		if _, err := stmt.ExecContext(ctx, row(i)...); err != nil {
			return &RowError{Row: i, Err: err}
		}
	}
	return nil
}

// RowError is the error of one row of ExecEach or CopyFrom, where the
// driver tells which.
type RowError struct {
	Row int
	Err error
}

func (e *RowError) Error() string { return e.Err.Error() }
func (e *RowError) Unwrap() error { return e.Err }

// SQLConnOf returns the connection or transaction under a Querier made by
// SQL, for a dialect's own statements inside the core's transaction; nil
// for another Querier.
func SQLConnOf(q Querier) SQLConn {
	if s, ok := q.(sqlQuerier); ok {
		return s.c
	}
	return nil
}
