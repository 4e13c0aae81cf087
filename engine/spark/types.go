package spark

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqltype"
)

// schemaDDL spells columns as Spark's DDL (name TYPE, ...).
func schemaDDL(cols []bookmark.Column) (string, error) {
	parts := make([]string, len(cols))
	for i, c := range cols {
		t, err := bookmark.ParseType(c.Type)
		if err != nil {
			return "", fmt.Errorf("column %s: %w", c.Name, err)
		}
		st, err := sparkType(t)
		if err != nil {
			return "", fmt.Errorf("column %s: %w", c.Name, err)
		}
		parts[i] = quoteIdent(c.Name) + " " + st
	}
	return strings.Join(parts, ", "), nil
}

// modelType is the engine-neutral type of a Spark type text (as DESCRIBE
// prints it: bigint, array<bigint>, struct<x:double>, decimal(10,2)).
// Integers read by inference are widened to BIGINT and FLOAT to DOUBLE,
// as the DuckDB engine infers them, so that both engines record (and
// write) the same schema.
func modelType(spark string, widen bool) (bookmark.Type, error) {
	t, err := bookmark.ParseType(strings.NewReplacer("timestamp_ntz", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP").Replace(spark))
	if err != nil {
		return t, err
	}
	// Spark's timestamp is an instant (DuckDB's TIMESTAMP WITH TIME
	// ZONE); ParseType took "timestamp" as the zoneless kind.
	return fixKinds(t, spark, widen), nil
}

// fixKinds walks t and the Spark text it came from in step.
func fixKinds(t bookmark.Type, spark string, widen bool) bookmark.Type {
	low := strings.ToLower(strings.TrimSpace(spark))
	switch t.Kind {
	case bookmark.Timestamp:
		if low == "timestamp" {
			return bookmark.Scalar(bookmark.TimestampTZ)
		}
	case bookmark.TinyInt, bookmark.SmallInt, bookmark.Integer:
		if widen {
			return bookmark.Scalar(bookmark.BigInt)
		}
	case bookmark.Float:
		if widen {
			return bookmark.Scalar(bookmark.Double)
		}
	case bookmark.List:
		inner := strings.TrimSuffix(strings.TrimPrefix(low, "array<"), ">")
		e := fixKinds(*t.Elem, inner, widen)
		return bookmark.ListOf(e)
	case bookmark.Map:
		k, v := splitTop(strings.TrimSuffix(strings.TrimPrefix(low, "map<"), ">"))
		return bookmark.MapOf(fixKinds(*t.Key, k, widen), fixKinds(*t.Elem, v, widen))
	case bookmark.Struct:
		parts := splitAll(strings.TrimSuffix(strings.TrimPrefix(low, "struct<"), ">"))
		out := make([]bookmark.Field, len(t.Fields))
		for i, f := range t.Fields {
			ft := ""
			if i < len(parts) {
				if j := topColon(parts[i]); j >= 0 {
					ft = parts[i][j+1:]
				}
			}
			out[i] = bookmark.Field{Name: f.Name, Type: fixKinds(f.Type, ft, widen)}
		}
		return bookmark.StructOf(out...)
	}
	return t
}

// splitAll splits s at its top-level commas.
func splitAll(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

func splitTop(s string) (string, string) {
	p := splitAll(s)
	if len(p) != 2 {
		return s, s
	}
	return p[0], p[1]
}

// topColon is the index of the colon after a struct field's name.
func topColon(s string) int {
	if strings.HasPrefix(s, "`") {
		if j := strings.Index(s[1:], "`"); j >= 0 {
			if k := strings.Index(s[j+2:], ":"); k >= 0 {
				return j + 2 + k
			}
		}
	}
	return strings.Index(s, ":")
}

// quoteIdent quotes a Spark identifier with backticks.
func quoteIdent(name string) string { return sqltype.Spark.Quote(name) }

// sparkType spells t in Spark's DDL (see sqltype.Spark).
func sparkType(t bookmark.Type) (string, error) { return sqltype.Spark.Type(t) }
