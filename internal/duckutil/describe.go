// Package duckutil holds small DuckDB helpers shared by the engine and the
// SQL table sink, which must not import each other.
package duckutil

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// Querier is a *sql.DB or *sql.Conn.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Describe returns the columns (name, DuckDB type) of a query, by DuckDB's
// DESCRIBE.
func Describe(ctx context.Context, q Querier, query string) ([]bookmark.Column, error) {
	rows, err := q.QueryContext(ctx, "DESCRIBE "+query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []bookmark.Column
	for rows.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, bookmark.Column{Name: fmt.Sprint(vals[0]), Type: fmt.Sprint(vals[1])})
	}
	return out, rows.Err()
}
