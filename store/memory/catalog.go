package memory

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/catalog"
)

// catalogState is the catalog: databases by name and tables by database
// and name. A change is made on a copy (next), swapped in when all of it
// succeeded, so a refused change leaves the catalog as it was.
type catalogState struct {
	dbs    map[string]catalog.Database
	tables map[tableKey]*tableState
}

type tableKey struct{ db, name string }

// tableState is one table: its versions, oldest first, and its partitions
// by catalog.ValuesKey.
type tableState struct {
	versions []catalog.Table
	parts    map[string]catalog.Partition
}

func newCatalogState() *catalogState {
	return &catalogState{dbs: map[string]catalog.Database{}, tables: map[tableKey]*tableState{}}
}

// current returns a table's current version.
func (t *tableState) current() catalog.Table { return t.versions[len(t.versions)-1] }

// next applies c to a copy of cs and returns it; cs does not change. The
// copy shares what c does not touch. now stamps what c leaves zero.
func (cs *catalogState) next(c catalog.Changes, now timeNow) (*catalogState, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	n := &catalogState{dbs: maps.Clone(cs.dbs), tables: maps.Clone(cs.tables)}
	copied := map[tableKey]bool{}
	// mut returns table k for writing, copied on first use.
	mut := func(k tableKey) *tableState {
		t := n.tables[k]
		if !copied[k] {
			t = &tableState{versions: slices.Clone(t.versions), parts: maps.Clone(t.parts)}
			n.tables[k] = t
			copied[k] = true
		}
		return t
	}
	for _, d := range c.Databases {
		if _, ok := n.dbs[d.Name]; ok {
			continue
		}
		if d.CreatedAt.IsZero() {
			d.CreatedAt = now()
		}
		d.CreatedAt = utc(d.CreatedAt)
		n.dbs[d.Name] = d
	}
	for _, tc := range c.Tables {
		tb := tc.Table
		k := tableKey{tb.Database, tb.Name}
		if _, ok := n.dbs[k.db]; !ok {
			return nil, fmt.Errorf("writing table %s.%s: database %s: %w", k.db, k.name, k.db, catalog.ErrNotFound)
		}
		var cur int64
		if t, ok := n.tables[k]; ok {
			cur = t.current().Version
		}
		if tc.Drop && cur == 0 {
			return nil, fmt.Errorf("dropping table %s.%s: %w", k.db, k.name, catalog.ErrNotFound)
		}
		if tc.Base != cur {
			return nil, fmt.Errorf("writing table %s.%s on version %d, its current version is %d: %w",
				k.db, k.name, tc.Base, cur, catalog.ErrConflict)
		}
		if tc.Drop {
			delete(n.tables, k)
			delete(copied, k)
			continue
		}
		if cur == 0 {
			n.tables[k] = &tableState{parts: map[string]catalog.Partition{}}
			copied[k] = true
		}
		tb = cloneTable(tb)
		tb.Version, tb.UpdatedAt = cur+1, now()
		t := mut(k)
		t.versions = append(t.versions, tb)
	}
	for _, p := range c.Partitions {
		k := tableKey{p.Database, p.Table}
		t, ok := n.tables[k]
		if !ok {
			return nil, fmt.Errorf("adding a partition to table %s.%s: %w", k.db, k.name, catalog.ErrNotFound)
		}
		if err := catalog.CheckPartition(t.current(), p.Values); err != nil {
			return nil, err
		}
		p.Values = slices.Clone(p.Values)
		p.UpdatedAt = now()
		mut(k).parts[string(catalog.ValuesKey(p.Values))] = p
	}
	for _, p := range c.DropPartitions {
		k := tableKey{p.Database, p.Table}
		if _, ok := n.tables[k]; ok {
			delete(mut(k).parts, string(catalog.ValuesKey(p.Values)))
		}
	}
	return n, nil
}

type timeNow func() time.Time

// cloneTable copies a table's maps and slices.
func cloneTable(t catalog.Table) catalog.Table {
	t.Options = maps.Clone(t.Options)
	t.Parameters = maps.Clone(t.Parameters)
	t.Columns = slices.Clone(t.Columns)
	t.PartitionKeys = slices.Clone(t.PartitionKeys)
	return t
}

// ApplyCatalog applies c at once, or nothing of it.
func (s *Store) ApplyCatalog(_ context.Context, c catalog.Changes) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.cat.next(c, s.clock)
	if err != nil {
		return fmt.Errorf("changing the catalog: %w", err)
	}
	s.cat = n
	return nil
}

// Databases returns every database, by name.
func (s *Store) Databases(context.Context) ([]catalog.Database, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []catalog.Database
	for _, name := range slices.Sorted(maps.Keys(s.cat.dbs)) {
		out = append(out, s.cat.dbs[name])
	}
	return out, nil
}

// Tables returns the current version of every table of database, by name.
func (s *Store) Tables(_ context.Context, database string) ([]catalog.Table, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []catalog.Table
	for k, t := range s.cat.tables {
		if k.db == database {
			out = append(out, cloneTable(t.current()))
		}
	}
	slices.SortFunc(out, func(a, b catalog.Table) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Table returns one version of a table (0: the current one).
func (s *Store) Table(_ context.Context, database, name string, version int64) (catalog.Table, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.cat.tables[tableKey{database, name}]
	switch {
	case !ok:
		return catalog.Table{}, fmt.Errorf("table %s.%s: %w", database, name, catalog.ErrNotFound)
	case version == 0:
		return cloneTable(t.current()), nil
	case version < 0 || version > int64(len(t.versions)):
		return catalog.Table{}, fmt.Errorf("table %s.%s version %d (it has 1 to %d): %w",
			database, name, version, len(t.versions), catalog.ErrNotFound)
	}
	return cloneTable(t.versions[version-1]), nil
}

// TableVersions returns every version of a table, newest first.
func (s *Store) TableVersions(_ context.Context, database, name string) ([]catalog.Table, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.cat.tables[tableKey{database, name}]
	if !ok {
		return nil, nil
	}
	out := make([]catalog.Table, 0, len(t.versions))
	for i := len(t.versions) - 1; i >= 0; i-- {
		out = append(out, cloneTable(t.versions[i]))
	}
	return out, nil
}

// Partitions yields a table's partitions in values order, from a copy
// taken at once.
func (s *Store) Partitions(_ context.Context, database, name string) iter.Seq2[catalog.Partition, error] {
	return func(yield func(catalog.Partition, error) bool) {
		s.mu.Lock()
		var parts []catalog.Partition
		if t, ok := s.cat.tables[tableKey{database, name}]; ok {
			for _, k := range slices.Sorted(maps.Keys(t.parts)) {
				p := t.parts[k]
				p.Values = slices.Clone(p.Values)
				parts = append(parts, p)
			}
		}
		s.mu.Unlock()
		for _, p := range parts {
			if !yield(p, nil) {
				return
			}
		}
	}
}
