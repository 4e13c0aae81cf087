package sqldb

import (
	"errors"
	"fmt"
	"strings"
)

// Quote quotes one identifier for the database: "name" for PostgreSQL and
// SQLite, `name` for MySQL. Names are used exactly as written (PostgreSQL
// does not fold a quoted name to lower case).
func (k Kind) Quote(ident string) string {
	if k == MySQL {
		return "`" + strings.ReplaceAll(ident, "`", "``") + "`"
	}
	return `"` + strings.ReplaceAll(ident, `"`, `""`) + `"`
}

// Name is a table name: an optional schema (PostgreSQL schema, MySQL
// database, SQLite attached database) and the table.
type Name struct {
	Schema string
	Table  string
}

// ParseName splits "schema.table" or "table". Quotes are not interpreted:
// a name with a dot in it cannot be written.
func ParseName(s string) (Name, error) {
	parts := strings.Split(s, ".")
	for _, p := range parts {
		if p == "" {
			return Name{}, fmt.Errorf("table %q: want table or schema.table", s)
		}
		if strings.ContainsRune(p, 0) {
			return Name{}, errors.New("table: contains a NUL character")
		}
	}
	switch len(parts) {
	case 1:
		return Name{Table: parts[0]}, nil
	case 2:
		return Name{Schema: parts[0], Table: parts[1]}, nil
	}
	return Name{}, fmt.Errorf("table %q: want table or schema.table", s)
}

func (n Name) String() string {
	if n.Schema == "" {
		return n.Table
	}
	return n.Schema + "." + n.Table
}

// Sibling is a table named name in the same schema as n.
func (n Name) Sibling(name string) Name { return Name{Schema: n.Schema, Table: name} }

// Quoted renders n for k.
func (k Kind) Quoted(n Name) string {
	if n.Schema == "" {
		return k.Quote(n.Table)
	}
	return k.Quote(n.Schema) + "." + k.Quote(n.Table)
}

// Literal quotes s as a SQL string literal for k. It is used only where a
// statement cannot take parameters (DDL, PostgreSQL COPY).
func (k Kind) Literal(s string) string {
	s = strings.ReplaceAll(s, "'", "''")
	if k == MySQL {
		s = strings.ReplaceAll(s, `\`, `\\`)
	}
	return "'" + s + "'"
}
