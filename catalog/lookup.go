package catalog

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
)

// Reader is the read side of a Store: what a source that reads a table by
// name, and the catalog commands, need.
type Reader interface {
	Databases(ctx context.Context) ([]Database, error)
	Tables(ctx context.Context, database string) ([]Table, error)
	Table(ctx context.Context, database, name string, version int64) (Table, error)
	TableVersions(ctx context.Context, database, name string) ([]Table, error)
	Partitions(ctx context.Context, database, name string) iter.Seq2[Partition, error]
}

// ParseName splits "DB.TABLE" into its database and table names.
func ParseName(s string) (database, table string, err error) {
	database, table, ok := strings.Cut(s, ".")
	if !ok || database == "" || table == "" || strings.Contains(table, ".") {
		return "", "", fmt.Errorf("%q is not a table name: want DATABASE.TABLE (e.g. sales_db.orders_raw)", s)
	}
	if err := checkTableName(database, table); err != nil {
		return "", "", err
	}
	return database, table, nil
}

// Find reads one version of a table (0: the current one). A table, or a
// database, that is not in the catalog is an error wrapping ErrNotFound
// that names what is there instead.
func Find(ctx context.Context, r Reader, database, name string, version int64) (Table, error) {
	t, err := r.Table(ctx, database, name, version)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return t, err
	}
	if version != 0 {
		if vs, verr := r.TableVersions(ctx, database, name); verr == nil && len(vs) > 0 {
			return Table{}, fmt.Errorf("table %s.%s has no version %d (it has versions 1 to %d): %w",
				database, name, version, vs[0].Version, ErrNotFound)
		}
	}
	return Table{}, MissingError(ctx, r, database, name)
}

// MissingError is the error for a table that is not in the catalog: it
// names the tables of its database, or the databases when that is
// missing too.
func MissingError(ctx context.Context, r Reader, database, name string) error {
	dbs, err := r.Databases(ctx)
	if err != nil {
		return fmt.Errorf("table %s.%s is not in the catalog: %w", database, name, ErrNotFound)
	}
	var names []string
	found := false
	for _, d := range dbs {
		names = append(names, d.Name)
		found = found || d.Name == database
	}
	if !found {
		return fmt.Errorf("database %s is not in the catalog (%s): %w", database, listOr(names, "databases", "it has no databases"), ErrNotFound)
	}
	tables, err := r.Tables(ctx, database)
	if err != nil {
		return fmt.Errorf("table %s.%s is not in the catalog: %w", database, name, ErrNotFound)
	}
	names = names[:0]
	for _, t := range tables {
		names = append(names, t.Name)
	}
	return fmt.Errorf("table %s.%s is not in the catalog (%s): %w", database, name,
		listOr(names, "tables of "+database, database+" has no tables"), ErrNotFound)
}

// listOr is "what: a, b" or none when names is empty.
func listOr(names []string, what, none string) string {
	if len(names) == 0 {
		return none
	}
	return what + ": " + strings.Join(names, ", ")
}
