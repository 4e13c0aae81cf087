package sqltable

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// Error is a failure while reading a source. It names what was being
// done, the table (or query), and where known the column and the key
// position; the password never appears (messages pass through the
// connection's redaction).
type Error struct {
	Source string // the source's ctx
	What   string // "table public.orders" or "query"
	Op     string // what was being done, e.g. "reading rows"
	Column string // the column at fault, when known
	Key    string // where in key order, e.g. "(updated_at, id) after (2024-05-01 10:00:00, 42)"
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "source %s: %s: %s", e.Source, e.What, e.Op)
	if e.Key != "" {
		b.WriteString(" " + e.Key)
	}
	if e.Column != "" {
		b.WriteString(": column " + e.Column)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// NullKeyError fails a run when rows have a NULL bookmark key and
// on_null_key is fail.
type NullKeyError struct {
	Source string
	What   string
	Keys   []string
	Rows   int64
}

func (e *NullKeyError) Error() string {
	return fmt.Sprintf("source %s: %s: %d rows have a NULL bookmark key (%s); they cannot be bookmarked: fix them, or set on_null_key: skip to leave them out and count them",
		e.Source, e.What, e.Rows, strings.Join(e.Keys, ", "))
}

// fail wraps err as an *Error of the source, redacted.
func (s *Source) fail(op, key string, err error) error {
	e := &Error{Source: s.cfg.Ctx, What: s.what, Op: op, Key: key, Err: err}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.ColumnName != "" {
		e.Column = pe.ColumnName
	}
	if errors.As(err, &pe) && pe.Code == "22P02" {
		// A refusal of a value (refusal): the cast of its message
		// failed, which PostgreSQL quotes.
		if i := strings.Index(pe.Message, `"`+refusalPrefix); i >= 0 {
			e.Err = errors.New(strings.TrimSuffix(pe.Message[i+1+len(refusalPrefix):], `"`))
		}
	}
	var col *columnError
	if errors.As(err, &col) {
		e.Column = col.column
		e.Err = col.err
	}
	return s.db.Redact(e)
}

// columnError is a value that could not be converted, by column.
type columnError struct {
	column string
	err    error
}

func (e *columnError) Error() string { return "column " + e.column + ": " + e.err.Error() }

// rangeDesc renders "(a, b) after (x, y) up to (z, w)" for messages.
func (s *Source) rangeDesc(after, upto []string) string {
	d := "(" + strings.Join(s.Keys(), ", ") + ")"
	if after != nil {
		d += " after (" + strings.Join(after, ", ") + ")"
	}
	return d + " up to (" + strings.Join(upto, ", ") + ")"
}

// keyDesc renders "(a, b) after (x, y)" for messages.
func (s *Source) keyDesc(rel string, vals []string) string {
	if vals == nil {
		return ""
	}
	return fmt.Sprintf("(%s) %s (%s)", strings.Join(s.Keys(), ", "), rel, strings.Join(vals, ", "))
}

// hint adds what a user can do about well-known failures.
func hint(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03":
			return fmt.Errorf("%w (the server ended the session; the run keeps its bookmark and can be retried)", err)
		case "57014":
			return fmt.Errorf("%w (the query was canceled)", err)
		case "55P03", "40P01":
			return fmt.Errorf("%w (lock timeout or deadlock)", err)
		}
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1317, 1927:
			return fmt.Errorf("%w (the query was killed; the run keeps its bookmark and can be retried)", err)
		case 1205:
			return fmt.Errorf("%w (lock wait timeout)", err)
		}
	}
	if errors.Is(err, mysql.ErrInvalidConn) || strings.Contains(err.Error(), "unexpected EOF") {
		return fmt.Errorf("%w (the connection was lost; the run keeps its bookmark and can be retried)", err)
	}
	return err
}

// refusalPrefix starts the text a PostgreSQL expression casts to an
// integer to fail a read with (refusal).
const refusalPrefix = "tidemark: "

// refusal is a PostgreSQL expression, typed as text, that fails the query
// with the text of msg, itself a text expression: it casts the text to an
// integer, which fails quoting it; fail shows the text alone.
func refusal(msg string) string {
	return "CAST(" + sqldb.Postgres.Literal(refusalPrefix) + " || " + msg + " AS integer)::text"
}

// engineFailed is the error of an engine that could not read the rows
// extracted for it (the files or the pipe this source wrote): a value the
// engine's type of its column cannot hold. The error names the table (or
// query) and the column where the engine said, not the extract file
// tidemark wrote (its name and line mean nothing to a user); nil for
// other errors, which stand as they are.
func (s *Source) engineFailed(engineErr error) error {
	var ie *engine.InputError
	if !errors.As(engineErr, &ie) || ie.Source != s.cfg.Ctx {
		return nil
	}
	err := fmt.Errorf("a value the engine could not read: %s", ie.Msg)
	if i := findColumn(s.cols, ie.Column); i >= 0 {
		err = fmt.Errorf("a value its type in the engine, %s, cannot hold: %s", s.cols[i].Type, ie.Msg)
	}
	return s.db.Redact(&Error{Source: s.cfg.Ctx, What: s.what, Op: "reading its rows in the engine", Column: ie.Column, Err: err})
}
