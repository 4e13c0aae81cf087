package postgres

import (
	"context"
	"iter"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// stream yields the rows of query ($n placeholders), each read by scan,
// through a cursor (Store.cursor). An error is yielded once, last, with
// what it was doing.
func stream[T any](ctx context.Context, s *legacy, what, query string, args []any, scan func(pgx.Rows) (T, error)) iter.Seq2[T, error] {
	return sqlstore.Stream(func(each func(pgx.Rows) (bool, error)) error { return s.cursor(ctx, query, args, each) },
		scan, func(err error) error { return s.fail(what, err) })
}
