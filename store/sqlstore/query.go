package sqlstore

import "context"

// queryAll runs query and reads every row with scan.
func queryAll[T any](ctx context.Context, q Querier, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var all []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		all = append(all, v)
	}
	return all, rows.Err()
}

// newestFirst completes a query of one job's rows (its one parameter so
// far, job) to a page ordered by column descending: below before (0:
// from the newest), at most limit rows (0: all).
func newestFirst(query, column, job string, before int64, limit int) (string, []any) {
	args := []any{job}
	if before > 0 {
		query += ` AND ` + column + ` < ?`
		args = append(args, before)
	}
	query += ` ORDER BY ` + column + ` DESC`
	if limit > 0 {
		query += ` LIMIT ?`
		args = append(args, limit)
	}
	return query, args
}
