package postgres

import (
	"context"
	"iter"

	"github.com/jackc/pgx/v5"
)

// stream yields the rows of query ($n placeholders), each read by scan,
// through a cursor (Store.cursor). An error is yielded once, last, with
// what it was doing.
func stream[T any](ctx context.Context, s *Store, what, query string, args []any, scan func(pgx.Rows) (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		stopped := false
		err := s.cursor(ctx, query, args, func(rows pgx.Rows) (bool, error) {
			v, err := scan(rows)
			if err != nil {
				return false, err
			}
			if !yield(v, nil) {
				stopped = true
				return false, nil
			}
			return true, nil
		})
		if err != nil && !stopped {
			var zero T
			yield(zero, s.fail(what, err))
		}
	}
}
