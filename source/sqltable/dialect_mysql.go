package sqltable

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// mysqlDialect reads MySQL and MariaDB over the text protocol: every value
// arrives as the server's text and is streamed into the file row by row
// (the driver reads rows off the socket as they are asked for), converted
// where the engine's text differs (blobs, BIT, TIMESTAMP's zone).
type mysqlDialect struct{}

func (mysqlDialect) kind() sqldb.Kind { return sqldb.MySQL }

// rowCompare is false: MariaDB does not use an index for (a, b) > (x, y),
// so comparisons are expanded.
func (mysqlDialect) rowCompare() bool { return false }

func (mysqlDialect) keyText(c column) string { return sqldb.MySQL.Quote(c.Name) }

func (mysqlDialect) keyValue(b *args, c column, text string) (string, error) {
	ph := b.add(text)
	if c.cast == "" {
		return ph, nil
	}
	return "CAST(" + ph + " AS " + c.cast + ")", nil
}

func (mysqlDialect) session(ctx context.Context, db *sqldb.DB, fn func(s session) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, q := range []string{"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("beginning snapshot: %w", err)
		}
	}
	if err := fn(sqlSession{conn: conn, raw: true}); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("ending snapshot: %w", err)
	}
	return nil
}

// schemaArg is the schema for information_schema queries: nil means the
// connection's database.
func schemaArg(n sqldb.Name) any {
	if n.Schema == "" {
		return nil
	}
	return n.Schema
}

func (mysqlDialect) exists(ctx context.Context, db *sqldb.DB, n sqldb.Name) (bool, error) {
	var c int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?`, schemaArg(n), n.Table).Scan(&c)
	return c > 0, err
}

func (mysqlDialect) primaryKey(ctx context.Context, db *sqldb.DB, n sqldb.Name) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND INDEX_NAME = 'PRIMARY'
		ORDER BY SEQ_IN_INDEX`, schemaArg(n), n.Table)
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

func (mysqlDialect) notNull(ctx context.Context, db *sqldb.DB, n sqldb.Name) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND IS_NULLABLE = 'NO'`, schemaArg(n), n.Table)
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

func (mysqlDialect) indexes(ctx context.Context, db *sqldb.DB, n sqldb.Name) ([][]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT INDEX_NAME, COALESCE(COLUMN_NAME, '') FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX`,
		schemaArg(n), n.Table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	last := ""
	for rows.Next() {
		var idx, col string
		if err := rows.Scan(&idx, &col); err != nil {
			return nil, err
		}
		if idx != last || len(out) == 0 {
			out = append(out, nil)
			last = idx
		}
		out[len(out)-1] = append(out[len(out)-1], col)
	}
	return out, rows.Err()
}

func (d mysqlDialect) columns(ctx context.Context, db *sqldb.DB, from string, name *sqldb.Name) ([]column, error) {
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+from+" LIMIT 0")
	if err != nil {
		return nil, err
	}
	types, err := rows.ColumnTypes()
	rows.Close()
	if err != nil {
		return nil, err
	}
	var catalog map[string]string // column -> COLUMN_TYPE, tables only
	var jsonCols map[string]bool
	if name != nil {
		if catalog, jsonCols, err = d.catalogTypes(ctx, db, *name); err != nil {
			return nil, err
		}
	}
	cols := make([]column, len(types))
	for i, ct := range types {
		dbType := strings.ToLower(ct.DatabaseTypeName())
		if p, s, ok := ct.DecimalSize(); ok && dbType == "decimal" {
			dbType = fmt.Sprintf("decimal(%d,%d)", p, s)
		}
		if t, ok := catalog[ct.Name()]; ok {
			dbType = strings.ToLower(t)
		}
		cols[i] = mysqlMap(ct.Name(), dbType, jsonCols[ct.Name()])
	}
	return cols, nil
}

// catalogTypes reads COLUMN_TYPE (which keeps unsigned, precision and
// MariaDB's uuid) and finds MariaDB's JSON columns (LONGTEXT with a
// json_valid check).
func (mysqlDialect) catalogTypes(ctx context.Context, db *sqldb.DB, n sqldb.Name) (map[string]string, map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?`, schemaArg(n), n.Table)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	types := map[string]string{}
	for rows.Next() {
		var c, t string
		if err := rows.Scan(&c, &t); err != nil {
			return nil, nil, err
		}
		types[c] = t
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	jsonCols := map[string]bool{}
	// MariaDB only (MySQL has a real JSON type and no TABLE_NAME here).
	crows, err := db.QueryContext(ctx, `SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
		WHERE CONSTRAINT_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?`, schemaArg(n), n.Table)
	if err == nil {
		clauses, err := scanStrings(crows)
		if err != nil {
			return nil, nil, err
		}
		for _, cl := range clauses {
			if m := jsonValid.FindStringSubmatch(cl); m != nil {
				jsonCols[m[1]] = true
			}
		}
	}
	return types, jsonCols, nil
}

var (
	jsonValid    = regexp.MustCompile("^json_valid\\(`([^`]+)`\\)$")
	mysqlDecimal = regexp.MustCompile(`^decimal\((\d+),(\d+)\)`)
)

// mysqlInts are the integer types, signed and unsigned.
var mysqlInts = map[string][2]bookmark.Kind{
	"tinyint": {bookmark.TinyInt, bookmark.UTinyInt}, "smallint": {bookmark.SmallInt, bookmark.USmallInt},
	"mediumint": {bookmark.Integer, bookmark.UInteger}, "int": {bookmark.Integer, bookmark.UInteger},
	"integer": {bookmark.Integer, bookmark.UInteger}, "bigint": {bookmark.BigInt, bookmark.UBigInt},
}

// mysqlKinds are the other types read as a type of their own.
var mysqlKinds = map[string]bookmark.Kind{
	"float": bookmark.Float, "double": bookmark.Double, "real": bookmark.Double,
	"date": bookmark.Date, "datetime": bookmark.Timestamp, "timestamp": bookmark.TimestampTZ,
	"time": bookmark.Time, "year": bookmark.SmallInt, "json": bookmark.JSON,
	"binary": bookmark.Blob, "varbinary": bookmark.Blob, "blob": bookmark.Blob, "tinyblob": bookmark.Blob,
	"mediumblob": bookmark.Blob, "longblob": bookmark.Blob, "geometry": bookmark.Blob, "point": bookmark.Blob,
	"linestring": bookmark.Blob, "polygon": bookmark.Blob, "multipoint": bookmark.Blob,
	"multilinestring": bookmark.Blob, "multipolygon": bookmark.Blob, "geometrycollection": bookmark.Blob,
	"bit": bookmark.UBigInt, "uuid": bookmark.UUID,
}

// mysqlBase returns a MySQL/MariaDB column type's name without
// arguments and attributes, and whether it is unsigned.
func mysqlBase(t string) (base string, unsigned bool) {
	base = strings.TrimPrefix(t, "unsigned ")
	if i := strings.IndexAny(base, "( "); i >= 0 {
		base = base[:i]
	}
	return base, strings.Contains(t, "unsigned")
}

// mysqlModel maps a MySQL/MariaDB column type (COLUMN_TYPE or the
// driver's type name, lower case) to the type model; isJSON marks
// MariaDB's JSON columns (LONGTEXT with a json_valid check). A type the
// model has no counterpart for (text, enum, set, a decimal wider than 38
// digits) is read as text (VARCHAR).
func mysqlModel(t string, isJSON bool) bookmark.Type {
	base, unsigned := mysqlBase(t)
	if pair, ok := mysqlInts[base]; ok {
		if unsigned {
			return bookmark.Scalar(pair[1])
		}
		return bookmark.Scalar(pair[0])
	}
	if k, ok := mysqlKinds[base]; ok {
		return bookmark.Scalar(k)
	}
	switch base {
	case "decimal", "numeric":
		if p, s, ok := mysqlDecimalArgs(t); ok {
			if d, ok := decimalType(p, s); ok {
				return d
			}
		}
	case "longtext":
		if isJSON {
			return bookmark.Scalar(bookmark.JSON)
		}
	}
	return varchar
}

// mysqlDecimalArgs reads the precision and scale of decimal(p,s).
func mysqlDecimalArgs(t string) (p, s int, ok bool) {
	m := mysqlDecimal.FindStringSubmatch(t)
	if m == nil {
		return 0, 0, false
	}
	p, _ = strconv.Atoi(m[1])
	s, _ = strconv.Atoi(m[2])
	return p, s, true
}

// mysqlCasts are the types a key value given as text is cast to, by the
// kind it is read as.
var mysqlCasts = map[bookmark.Kind]string{
	bookmark.Float: "FLOAT", bookmark.Double: "DOUBLE", bookmark.Date: "DATE",
	bookmark.Timestamp: "DATETIME(6)", bookmark.TimestampTZ: "DATETIME(6)", bookmark.Time: "TIME(6)",
}

// mysqlMap describes a MySQL/MariaDB column of type t (as mysqlModel
// reads it): how its values are fetched, compared and moved by a lookback.
func mysqlMap(name, t string, isJSON bool) column {
	typ := mysqlModel(t, isJSON)
	c := column{Name: name, DBType: t, Type: typ, key: keyKindOf(typ), cast: mysqlCasts[typ.Kind]}
	base, unsigned := mysqlBase(t)
	switch {
	case base == "bit":
		// BIT(n) arrives as big-endian bytes; no key arithmetic on it.
		c.key, c.format = keyOther, fmtBits
	case base == "decimal" || base == "numeric":
		c.key = keyDecimal // a wide decimal too: compared in the database
		if p, s, ok := mysqlDecimalArgs(t); ok {
			c.cast = fmt.Sprintf("DECIMAL(%d,%d)", p, s)
		}
	case typ.Integral() && unsigned:
		c.cast = "UNSIGNED"
	case typ.Integral():
		c.cast = "SIGNED"
	case typ.Kind == bookmark.TimestampTZ:
		c.format = fmtUTC
	case typ.Kind == bookmark.Blob:
		c.format = fmtBlob
	case typ.Kind == bookmark.Time:
		c.format = fmtTimeOfDay
	}
	return c
}

// fmtTimeOfDay writes a MySQL TIME value, which is a duration
// (-838:59:59 to 838:59:59), as the time of day the engines read: one
// outside 00:00:00 to 23:59:59 is refused, naming the column and the row
// (the DuckDB engine refused it naming neither; Spark, which reads TIME as
// text, kept it).
func fmtTimeOfDay(dst []byte, v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return fmtText(dst, v)
	}
	h, _, found := strings.Cut(string(b), ":")
	if n, err := strconv.Atoi(h); !found || err != nil || n < 0 || n > 23 || strings.HasPrefix(h, "-") {
		return dst, fmt.Errorf("%s is no time of day (MySQL TIME holds durations; TIME holds 00:00:00 to 23:59:59): "+
			"read it as text with a query source (CAST(... AS CHAR))", b)
	}
	return append(dst, b...), nil
}
