package sqltable

import (
	"crypto/md5"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"modernc.org/sqlite"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// The SQL of changes: detect: every row's hash is the MD5 of its
// canonical text, computed in the database; a row's range (bucket) is the
// first 32 bits of the MD5 of its key's text modulo the number of ranges,
// so a key stays in its range for good whatever its type; a range's
// figures are its rows and two sums, of the first and of the second 32
// bits of its rows' hashes (a changed row set that keeps both sums and
// the count is a 2^-64 chance).

// SQLite has no MD5: tidemark registers one with the driver, so that the
// hashes are computed inside the database engine as with the others.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("tidemark_md5", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		var b []byte
		switch x := args[0].(type) {
		case nil:
			return nil, nil
		case []byte:
			b = x
		case string:
			b = []byte(x)
		default:
			b = fmt.Append(nil, x)
		}
		h := md5.Sum(b)
		return hex.EncodeToString(h[:]), nil
	})
	sqlite.MustRegisterDeterministicScalarFunction("tidemark_hexint", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		h, _ := args[0].(string)
		p, _ := args[1].(int64)
		return hashPart(h, int(p)), nil
	})
}

// hashPart is the p-th 32 bits (p 0 or 1) of a hex MD5 as a number, as
// the database's hexInt computes it; -1 for a malformed hash.
func hashPart(h string, p int) int64 {
	if len(h) < 8*(p+1) {
		return -1
	}
	n, err := strconv.ParseUint(h[8*p:8*p+8], 16, 32)
	if err != nil {
		return -1
	}
	return int64(n)
}

// detectSQL writes the hash expressions of one database kind.
type detectSQL struct{ k sqldb.Kind }

// md5 is the hex MD5 of a text expression.
func (d detectSQL) md5(x string) string {
	switch d.k {
	case sqldb.Postgres:
		return "md5(" + x + ")"
	case sqldb.MySQL:
		return "MD5(" + x + ")"
	}
	return "tidemark_md5(" + x + ")"
}

// hexInt is the p-th 32 bits of the hex MD5 h as a non-negative integer.
func (d detectSQL) hexInt(h string, p int) string {
	from := strconv.Itoa(1 + 8*p)
	switch d.k {
	case sqldb.Postgres:
		return "('x' || lpad(substr(" + h + ", " + from + ", 8), 16, '0'))::bit(64)::bigint"
	case sqldb.MySQL:
		return "CAST(CONV(SUBSTR(" + h + ", " + from + ", 8), 16, 10) AS UNSIGNED)"
	}
	return "tidemark_hexint(" + h + ", " + strconv.Itoa(p) + ")"
}

// text is a column's value as text that tells values apart (NULL too):
// PostgreSQL's text output inside a row literal, MySQL's and SQLite's
// quote().
func (d detectSQL) text(col string) string {
	q := d.k.Quote(col)
	switch d.k {
	case sqldb.Postgres:
		return q + "::text"
	case sqldb.MySQL:
		return "QUOTE(" + q + ")"
	}
	return "quote(" + q + ")"
}

// joined is texts joined by commas (PostgreSQL's concat_ws leaves NULLs
// out, which the row text's own NULL marking covers).
func (d detectSQL) joined(texts []string) string {
	if len(texts) == 1 {
		return texts[0]
	}
	switch d.k {
	case sqldb.Postgres:
		return "concat_ws(','," + strings.Join(texts, ", ") + ")"
	case sqldb.MySQL:
		return "CONCAT_WS(','," + strings.Join(texts, ", ") + ")"
	}
	return strings.Join(texts, " || ',' || ")
}

// rowText is the canonical text of a row of the table aliased alias:
// PostgreSQL's row literal, else the quoted columns joined.
func (d detectSQL) rowText(alias string, cols []column) string {
	if d.k == sqldb.Postgres {
		return alias + "::text"
	}
	texts := make([]string, len(cols))
	for i, c := range cols {
		texts[i] = d.text(c.Name)
	}
	return d.joined(texts)
}

// bucket is the range of a row: the first 32 bits of its key text's MD5
// modulo n.
func (d detectSQL) bucket(keys []column, n int) string {
	texts := make([]string, len(keys))
	for i, c := range keys {
		texts[i] = d.text(c.Name)
	}
	return "(" + d.hexInt(d.md5(d.joined(texts)), 0) + ") % " + strconv.Itoa(n)
}
