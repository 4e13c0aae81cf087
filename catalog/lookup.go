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
			return Table{}, missing(fmt.Sprintf("table %s.%s has no version %d (it has versions 1 to %d)",
				database, name, version, vs[0].Version))
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
		return missing(fmt.Sprintf("table %s.%s is not in the catalog", database, name))
	}
	var names []string
	found := false
	for _, d := range dbs {
		names = append(names, d.Name)
		found = found || d.Name == database
	}
	if !found {
		return missing(fmt.Sprintf("database %s is not in the catalog (%s)", database, listOr(names, "databases", "it has no databases")))
	}
	tables, err := r.Tables(ctx, database)
	if err != nil {
		return missing(fmt.Sprintf("table %s.%s is not in the catalog", database, name))
	}
	names = names[:0]
	for _, t := range tables {
		names = append(names, t.Name)
	}
	return missing(fmt.Sprintf("table %s.%s is not in the catalog (%s)", database, name,
		listOr(names, "tables of "+database, database+" has no tables")))
}

// listOr is "what: a, b" or none when names is empty.
func listOr(names []string, what, none string) string {
	if len(names) == 0 {
		return none
	}
	return what + ": " + strings.Join(names, ", ")
}

// missing is a lookup's error: its text says what is missing and what is
// there, once, and it is ErrNotFound.
type missing string

func (e missing) Error() string { return string(e) }

// Is makes a missing error ErrNotFound.
func (e missing) Is(target error) bool { return target == ErrNotFound }
