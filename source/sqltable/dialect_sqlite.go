package sqltable

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// sqliteDialect reads SQLite files. SQLite's values carry their own types
// whatever the column declares, so the engine's type comes from the declared
// type's name (SQLite's affinity rules, refined for DATE, TIMESTAMP,
// BOOLEAN, JSON, UUID and DECIMAL(p,s)), and key values are kept as SQL
// literals from quote(), which preserve the stored type exactly.
type sqliteDialect struct{}

func (sqliteDialect) kind() sqldb.Kind { return sqldb.SQLite }
func (sqliteDialect) rowCompare() bool { return false }

func (sqliteDialect) keyText(c column) string { return "quote(" + sqldb.SQLite.Quote(c.Name) + ")" }

var (
	sqliteInt  = regexp.MustCompile(`^-?[0-9]+$`)
	sqliteReal = regexp.MustCompile(`^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$|^-?Inf$`)
	sqliteBlob = regexp.MustCompile(`^[xX]'([0-9a-fA-F]*)'$`)
)

// keyValue binds a quote() literal as a value of the same SQLite type.
func (sqliteDialect) keyValue(b *args, _ column, text string) (string, error) {
	v, err := sqliteLiteral(text)
	if err != nil {
		return "", err
	}
	return b.add(v), nil
}

// sqliteLiteral parses a literal written by SQLite's quote().
func sqliteLiteral(s string) (any, error) {
	switch {
	case sqliteInt.MatchString(s):
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		return strconv.ParseFloat(s, 64)
	case sqliteReal.MatchString(s):
		return strconv.ParseFloat(s, 64)
	case len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'':
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	}
	if m := sqliteBlob.FindStringSubmatch(s); m != nil {
		return hex.DecodeString(m[1])
	}
	return nil, fmt.Errorf("key value %q is not a SQLite literal", s)
}

func (sqliteDialect) session(ctx context.Context, db *sqldb.DB, fn func(s session) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// A deferred transaction takes its snapshot at the first read and
	// keeps it to the end (WAL), or holds a shared lock (rollback journal).
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("beginning snapshot: %w", err)
	}
	if err := fn(sqlSession{conn: conn}); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("ending snapshot: %w", err)
	}
	return nil
}

func sqliteSchema(n sqldb.Name) string {
	if n.Schema == "" {
		return "main"
	}
	return n.Schema
}

func (sqliteDialect) exists(ctx context.Context, db *sqldb.DB, n sqldb.Name) (bool, error) {
	var c int
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+sqldb.SQLite.Quote(sqliteSchema(n))+
		".sqlite_master WHERE type IN ('table', 'view') AND name = ?", n.Table).Scan(&c)
	return c > 0, err
}

func (sqliteDialect) primaryKey(ctx context.Context, db *sqldb.DB, n sqldb.Name) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?, ?) WHERE pk > 0 ORDER BY pk",
		n.Table, sqliteSchema(n))
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

func (sqliteDialect) notNull(ctx context.Context, db *sqldb.DB, n sqldb.Name) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?1, ?2) WHERE "notnull"
		OR (pk = 1 AND upper(type) = 'INTEGER' AND (SELECT count(*) FROM pragma_table_info(?1, ?2) WHERE pk > 0) = 1)`,
		n.Table, sqliteSchema(n))
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

func (d sqliteDialect) indexes(ctx context.Context, db *sqldb.DB, n sqldb.Name) ([][]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_index_list(?, ?) WHERE partial = 0", n.Table, sqliteSchema(n))
	if err != nil {
		return nil, err
	}
	names, err := scanStrings(rows)
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, idx := range names {
		rows, err := db.QueryContext(ctx, "SELECT coalesce(name, '') FROM pragma_index_info(?, ?) ORDER BY seqno", idx, sqliteSchema(n))
		if err != nil {
			return nil, err
		}
		cols, err := scanStrings(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, cols)
	}
	// An INTEGER PRIMARY KEY is the rowid: the table is ordered by it.
	var pk string
	err = db.QueryRowContext(ctx, `SELECT name FROM pragma_table_info(?, ?) WHERE pk = 1
		AND upper(type) = 'INTEGER' AND (SELECT count(*) FROM pragma_table_info(?, ?) WHERE pk > 0) = 1`,
		n.Table, sqliteSchema(n), n.Table, sqliteSchema(n)).Scan(&pk)
	if err == nil {
		out = append(out, []string{pk})
	}
	return out, nil
}

func (sqliteDialect) columns(ctx context.Context, db *sqldb.DB, from string, _ *sqldb.Name) ([]column, error) {
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+from+" LIMIT 0")
	if err != nil {
		return nil, err
	}
	types, err := rows.ColumnTypes()
	rows.Close()
	if err != nil {
		return nil, err
	}
	cols := make([]column, len(types))
	for i, ct := range types {
		cols[i] = sqliteMap(ct.Name(), ct.DatabaseTypeName())
	}
	return cols, nil
}

var sqliteDecimal = regexp.MustCompile(`^(DECIMAL|NUMERIC)\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$`)

// sqliteModel maps a declared type (as PRAGMA table_info and the driver
// report it; any case) to the type model, by SQLite's affinity rules
// refined for the names that say more.
func sqliteModel(decl string) bookmark.Type {
	t := strings.ToUpper(strings.TrimSpace(decl))
	switch {
	case t == "":
	case strings.Contains(t, "BOOL"):
		return bookmark.Scalar(bookmark.Boolean)
	case strings.Contains(t, "INT"):
		return bookmark.Scalar(bookmark.BigInt)
	case sqliteDecimal.MatchString(t):
		m := sqliteDecimal.FindStringSubmatch(t)
		p, _ := strconv.Atoi(m[2])
		s, _ := strconv.Atoi(m[3])
		if d, ok := decimalType(p, s); ok {
			return d
		}
	case strings.Contains(t, "REAL"), strings.Contains(t, "FLOA"), strings.Contains(t, "DOUB"):
		return bookmark.Scalar(bookmark.Double)
	case strings.HasPrefix(t, "TIMESTAMP") || strings.HasPrefix(t, "DATETIME"):
		if strings.Contains(t, "TZ") || strings.Contains(t, "TIME ZONE") {
			return bookmark.Scalar(bookmark.TimestampTZ)
		}
		return bookmark.Scalar(bookmark.Timestamp)
	case t == "DATE":
		return bookmark.Scalar(bookmark.Date)
	case strings.HasPrefix(t, "TIME"):
		return bookmark.Scalar(bookmark.Time)
	case strings.Contains(t, "JSON"):
		return bookmark.Scalar(bookmark.JSON)
	case strings.Contains(t, "UUID"):
		return bookmark.Scalar(bookmark.UUID)
	case strings.Contains(t, "BLOB"), strings.Contains(t, "BINARY"):
		return bookmark.Scalar(bookmark.Blob)
	}
	return varchar
}

// sqliteMap describes a column of declared type decl: the values the
// driver hands out are written in the text form of the type sqliteModel
// reads it as.
func sqliteMap(name, decl string) column {
	typ := sqliteModel(decl)
	c := column{Name: name, DBType: decl, Type: typ, key: keyKindOf(typ), format: fmtText}
	switch typ.Kind {
	case bookmark.Boolean:
		c.format = fmtBool
	case bookmark.Date, bookmark.Time, bookmark.Timestamp, bookmark.TimestampTZ:
		c.format = fmtTime(typ.Kind)
	case bookmark.UUID:
		c.format = fmtUUID
	case bookmark.Blob:
		c.format = fmtBlob
	default:
		if typ.Integral() || typ.Kind == bookmark.Decimal || typ.Kind == bookmark.Float || typ.Kind == bookmark.Double {
			c.format = fmtNumber(typ)
		}
	}
	return c
}

// sqliteNumber is a number's text the engines read as an integer or a
// decimal.
var sqliteNumber = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// fmtNumber writes a value of a numeric column of type t. SQLite keeps
// any value in any column: a text that is no number of the type (abc in
// a NUMERIC(10,2) column; NaN or an infinity where the type has none) is
// refused here, naming the column and the row, rather than by the engine
// reading the extract, which names neither.
func fmtNumber(t bookmark.Type) formatter {
	float := t.Kind == bookmark.Float || t.Kind == bookmark.Double
	return func(dst []byte, v any) ([]byte, error) {
		var text string
		switch x := v.(type) {
		case string:
			text = x
		case []byte:
			text = string(x)
		case float64:
			if !float && (math.IsNaN(x) || math.IsInf(x, 0)) {
				return dst, fmt.Errorf("%v is no value of %s", x, t)
			}
			return fmtText(dst, v)
		default:
			return fmtText(dst, v)
		}
		if float {
			// Written as a float value is (appendFloat): SQLite's own
			// spellings of NaN and infinities differ from the engines'.
			if f, err := strconv.ParseFloat(strings.TrimSpace(text), 64); err == nil {
				return appendFloat(dst, f), nil
			}
		} else if sqliteNumber.MatchString(strings.TrimSpace(text)) {
			return append(dst, strings.TrimSpace(text)...), nil
		}
		return dst, fmt.Errorf("the text %q is no value of %s", clipText(text), t)
	}
}

// clipText shortens a value for a message.
func clipText(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// fmtUUID writes a UUID stored as 16 bytes or as text.
func fmtUUID(dst []byte, v any) ([]byte, error) {
	if b, ok := v.([]byte); ok && len(b) == 16 {
		h := hex.EncodeToString(b)
		return append(dst, h[0:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:]...), nil
	}
	return fmtText(dst, v)
}
