package sqltable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// Source is an opened SQL table source. It is used by one run at a time;
// Close releases its connections.
type Source struct {
	cfg  Config
	db   *sqldb.DB
	d    dialect
	what string // "table public.orders" or "query", for messages
	from string // the relation in SQL
	cols []column
	keys []int // bookmark key columns, indexes into cols
	// ident are the columns that identify a row in a lookback window:
	// primary key and keys, or every column when there is no primary key.
	ident []int
	// regionIdent identify a row in the regression check's region: keys
	// and primary key, or the keys alone without one (an update that
	// keeps them is the same row).
	regionIdent []int
	// pkCol is the primary key's column when it is one integer column
	// that is not the first key (updates can move rows past others): the
	// regression check then counts rows by primary key range too. -1
	// otherwise.
	pkCol int
	lb    lookback
	notes []string
}

// Open connects, describes the table or query, settles the bookmark keys
// (default: the primary key) and checks that the lookback suits the first
// key. Problems that do not stop a run (no index on the keys, columns read
// as text) are returned by Notes.
func Open(ctx context.Context, cfg Config) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("source %s: %w", cfg.Ctx, err)
	}
	lb, _ := parseLookback(cfg.Lookback)
	db, err := sqldb.Open(ctx, cfg.Connection, cfg.PasswordEnv, sqldb.Options{AppName: "tidemark " + cfg.Ctx, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", cfg.Ctx, err)
	}
	s := &Source{cfg: cfg, db: db, d: dialectFor(db.Kind), lb: lb}
	if err := s.describe(ctx); err != nil {
		db.Close()
		return nil, db.Redact(fmt.Errorf("source %s: %s: %w", cfg.Ctx, s.what, err))
	}
	return s, nil
}

// Close closes the source's connections.
func (s *Source) Close() error { return s.db.Close() }

// Notes are warnings found while opening: keys without a usable index,
// columns read as text, keys of a query that could not be checked.
func (s *Source) Notes() []string { return s.notes }

// Keys are the bookmark key columns in comparison order.
func (s *Source) Keys() []string {
	out := make([]string, len(s.keys))
	for i, k := range s.keys {
		out[i] = s.cols[k].Name
	}
	return out
}

// Schema is what Extract writes, in engine types.
func (s *Source) Schema() []bookmark.Column { return schema(s.cols) }

// Describe says what the source reads, without a password: for the
// runner's source fingerprint and messages.
func (s *Source) Describe() string {
	return fmt.Sprintf("%s %s keys (%s) %s", s.db.Where, s.what, strings.Join(s.Keys(), ", "), s.cfg.order())
}

func (s *Source) describe(ctx context.Context) error {
	var name *sqldb.Name
	if s.cfg.Table != "" {
		n, err := sqldb.ParseName(s.cfg.Table)
		if err != nil {
			return err
		}
		name = &n
		s.what = "table " + n.String()
		ok, err := s.d.exists(ctx, s.db, n)
		if err != nil {
			return fmt.Errorf("looking the table up: %w", err)
		}
		if !ok {
			return fmt.Errorf("no such table in %s", s.db.Where)
		}
		s.from = s.db.Kind.Quoted(n)
	} else {
		s.what = "query"
		s.from = "(" + strings.TrimRight(strings.TrimSpace(s.cfg.Query), ";") + ") AS _tidemark_q"
	}
	cols, err := s.d.columns(ctx, s.db, s.from, name)
	if err != nil {
		return fmt.Errorf("reading its columns: %w", err)
	}
	s.cols = cols
	var pk []string
	if name != nil {
		if pk, err = s.d.primaryKey(ctx, s.db, *name); err != nil {
			return fmt.Errorf("reading its primary key: %w", err)
		}
	}
	keys := s.cfg.BookmarkKeys
	if len(keys) == 0 {
		if len(pk) == 0 {
			if name == nil {
				return errors.New("a query source needs bookmark_keys")
			}
			return errors.New("the table has no primary key: name the columns to bookmark by in bookmark_keys")
		}
		keys = pk
	}
	for _, k := range keys {
		i := findColumn(cols, k)
		if i < 0 {
			return fmt.Errorf("bookmark key %s is not a column (columns: %s)", k, columnNames(cols))
		}
		if !cols[i].orderable() {
			return fmt.Errorf("bookmark key %s has type %s, which cannot be a key (it does not order)", k, cols[i].DBType)
		}
		s.keys = append(s.keys, i)
	}
	if err := s.lb.fits(cols[s.keys[0]].key, keys[0]); err != nil {
		return err
	}
	// Identity in the lookback window: primary key and keys.
	if len(pk) > 0 {
		for _, k := range append(slices.Clone(pk), keys...) {
			if i := findColumn(cols, k); i >= 0 && !slices.Contains(s.ident, i) {
				s.ident = append(s.ident, i)
			}
		}
	} else {
		for i := range cols {
			s.ident = append(s.ident, i)
		}
	}
	s.regionIdent = slices.Clone(s.keys)
	for _, k := range pk {
		if i := findColumn(cols, k); i >= 0 && !slices.Contains(s.regionIdent, i) {
			s.regionIdent = append(s.regionIdent, i)
		}
	}
	s.pkCol = -1
	if len(pk) == 1 {
		if i := findColumn(cols, pk[0]); i >= 0 && i != s.keys[0] && cols[i].key == keyInteger {
			s.pkCol = i
		}
	}
	if n := s.regressionNote(); n != "" {
		s.notes = append(s.notes, n)
	}
	for _, c := range cols {
		if c.Type.Kind == bookmark.Varchar && s.db.Kind != sqldb.SQLite && !textual(c.DBType) {
			s.notes = append(s.notes, fmt.Sprintf("column %s (%s) is read as text (VARCHAR)", c.Name, c.DBType))
		}
	}
	if name == nil {
		s.notes = append(s.notes, "the keys of a query cannot be checked for an index: make sure the tables under it have one on ("+strings.Join(keys, ", ")+")")
		return nil
	}
	nn, err := s.d.notNull(ctx, s.db, *name)
	if err != nil {
		return fmt.Errorf("reading its NOT NULL columns: %w", err)
	}
	for i := range s.cols {
		s.cols[i].notNull = slices.Contains(nn, s.cols[i].Name)
	}
	idx, err := s.d.indexes(ctx, s.db, *name)
	if err != nil {
		return fmt.Errorf("reading its indexes: %w", err)
	}
	if !covered(idx, keys) {
		s.notes = append(s.notes, fmt.Sprintf("no index starts with the bookmark keys (%s): every run scans the whole table; create one",
			strings.Join(keys, ", ")))
	}
	return nil
}

// covered reports whether some index starts with keys, in order.
func covered(indexes [][]string, keys []string) bool {
	for _, idx := range indexes {
		if len(idx) >= len(keys) && slices.Equal(idx[:len(keys)], keys) {
			return true
		}
	}
	return false
}

// textual reports whether a database type is text anyway (no note needed
// when it is read as VARCHAR).
func textual(dbType string) bool {
	t := strings.ToLower(dbType)
	for _, p := range []string{"text", "char", "varchar", "character", "name", "citext", "enum", "set", "tinytext", "mediumtext", "longtext"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

func columnNames(cols []column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// regressionNote says, when the regression check counts every row (and
// so keeps no identities) without an integer primary key to count by,
// what it cannot see.
func (s *Source) regressionNote() string {
	if s.cfg.NoRegressionCheck || s.pkCol >= 0 || s.cfg.regressionRows() != 0 {
		return ""
	}
	return "regression_check_rows: 0 counts every row behind the window but keeps no row identities: " +
		"a row that appears there while another leaves (an update moving it forward, a delete) is not reported; " +
		"a bounded regression_check_rows tells them apart"
}
