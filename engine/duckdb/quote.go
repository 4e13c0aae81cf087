package duckdb

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidemark-etl/tidemark/internal/sqltype"
)

// internalPrefix starts the names of every object the engine creates for
// itself (materialized sources, rejects tables); user names may not use it.
const internalPrefix = "__tidemark"

// maxNameLen bounds view and sink names; they also name folders.
const maxNameLen = 128

// ident quotes s as a DuckDB identifier: "s" with inner quotes doubled.
// Any string is safe this way; checkName decides which are allowed.
func ident(s string) string { return sqltype.DuckDB.Quote(s) }

// literal quotes s as a SQL string literal: 's' with inner quotes doubled.
// DuckDB's standard strings take backslashes literally, so doubling the
// quote is the only escaping needed; NUL cannot be represented and is
// rejected by checkText before any literal is built.
func literal(s string) string { return sqltype.Literal(s) }

// checkText rejects strings that cannot travel safely inside a literal.
func checkText(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", what)
	}
	if strings.ContainsRune(s, 0) {
		return fmt.Errorf("%s contains a NUL byte", what)
	}
	return nil
}

// checkName validates a source, transform or sink name. Names become quoted
// identifiers (so spaces, dashes, quotes and non-ASCII letters are fine) and
// folder names under Rejects (so no path separators, no "." or "..").
func checkName(kind, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s name is empty", kind)
	case len(name) > maxNameLen:
		return fmt.Errorf("%s name %q is longer than %d bytes", kind, name, maxNameLen)
	case name == "." || name == "..":
		return fmt.Errorf("%s name %q is not allowed", kind, name)
	case strings.HasPrefix(strings.ToLower(name), internalPrefix):
		return fmt.Errorf("%s name %q: the prefix %s is reserved", kind, name, internalPrefix)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("%s name %q has leading or trailing space", kind, name)
	}
	if err := checkText(kind+" name", name); err != nil {
		return err
	}
	for _, r := range name {
		if r == '/' || r == '\\' || unicode.IsControl(r) {
			return fmt.Errorf("%s name %q contains %q", kind, name, r)
		}
	}
	return nil
}
