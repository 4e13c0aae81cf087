package sqltable

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/source/sqltable/sqldb"
)

// mysqlDialect reads MySQL and MariaDB over the text protocol: every value
// arrives as the server's text and is streamed into the file row by row
// (the driver reads rows off the socket as they are asked for), converted
// where DuckDB spells a type differently (blobs, BIT, TIMESTAMP's zone).
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

// mysqlMap maps a MySQL/MariaDB column type (COLUMN_TYPE or the driver's
// type name, lower case) to DuckDB.
func mysqlMap(name, t string, isJSON bool) column {
	c := column{Name: name, DBType: t, Type: "VARCHAR"}
	unsigned := strings.Contains(t, "unsigned")
	base := strings.TrimPrefix(t, "unsigned ")
	if i := strings.IndexAny(base, "( "); i >= 0 {
		base = base[:i]
	}
	ints := map[string][2]string{
		"tinyint": {"TINYINT", "UTINYINT"}, "smallint": {"SMALLINT", "USMALLINT"},
		"mediumint": {"INTEGER", "UINTEGER"}, "int": {"INTEGER", "UINTEGER"},
		"integer": {"INTEGER", "UINTEGER"}, "bigint": {"BIGINT", "UBIGINT"},
	}
	if pair, ok := ints[base]; ok {
		c.Type, c.key, c.cast = pair[0], keyInteger, "SIGNED"
		if unsigned {
			c.Type, c.cast = pair[1], "UNSIGNED"
		}
		return c
	}
	switch base {
	case "decimal", "numeric":
		c.key = keyDecimal
		if m := mysqlDecimal.FindStringSubmatch(t); m != nil {
			p, _ := strconv.Atoi(m[1])
			s, _ := strconv.Atoi(m[2])
			c.cast = fmt.Sprintf("DECIMAL(%d,%d)", p, s)
			if d, ok := decimalType(p, s); ok {
				c.Type = d
			}
		}
	case "float":
		c.Type, c.key, c.cast = "FLOAT", keyFloat, "FLOAT"
	case "double", "real":
		c.Type, c.key, c.cast = "DOUBLE", keyFloat, "DOUBLE"
	case "date":
		c.Type, c.key, c.cast = "DATE", keyDate, "DATE"
	case "datetime":
		c.Type, c.key, c.cast = "TIMESTAMP", keyTimestamp, "DATETIME(6)"
	case "timestamp":
		c.Type, c.key, c.cast, c.format = "TIMESTAMPTZ", keyTimestampTZ, "DATETIME(6)", fmtUTC
	case "time":
		c.Type, c.cast = "TIME", "TIME(6)"
	case "year":
		c.Type, c.key, c.cast = "SMALLINT", keyInteger, "SIGNED"
	case "json":
		c.Type = "JSON"
	case "longtext":
		if isJSON {
			c.Type = "JSON"
		}
	case "binary", "varbinary", "blob", "tinyblob", "mediumblob", "longblob",
		"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection":
		c.Type, c.format = "BLOB", fmtBlob
	case "bit":
		c.Type, c.format = "UBIGINT", fmtBits
	case "uuid":
		c.Type = "UUID"
	}
	return c
}
