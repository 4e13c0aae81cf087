package crawler

import (
	"context"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// testState is the state store the crawler's tests use: store/memory for
// the bookmark, and a catalog kept in memory by the contract's rules
// (until store/memory keeps the catalog itself).
type testState struct {
	*memory.Store
	*memCatalog
}

func newState(t *testing.T) *testState {
	t.Helper()
	return &testState{Store: memory.New(memory.Options{}), memCatalog: &memCatalog{}}
}

// memCatalog is catalog.Store in memory.
type memCatalog struct {
	mu       sync.Mutex
	dbs      map[string]catalog.Database
	versions map[string][]catalog.Table // db.table → versions, oldest first
	parts    map[string]map[string]catalog.Partition
}

func tkey(db, name string) string { return db + "." + name }

func (m *memCatalog) ApplyCatalog(_ context.Context, c catalog.Changes) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dbs == nil {
		m.dbs, m.versions, m.parts = map[string]catalog.Database{}, map[string][]catalog.Table{}, map[string]map[string]catalog.Partition{}
	}
	for _, tc := range c.Tables {
		k := tkey(tc.Table.Database, tc.Table.Name)
		if int64(len(m.versions[k])) != tc.Base {
			return catalog.ErrConflict
		}
	}
	now := time.Now().UTC()
	for _, d := range c.Databases {
		if _, ok := m.dbs[d.Name]; !ok {
			d.CreatedAt = now
			m.dbs[d.Name] = d
		}
	}
	for _, tc := range c.Tables {
		k := tkey(tc.Table.Database, tc.Table.Name)
		if tc.Drop {
			delete(m.versions, k)
			delete(m.parts, k)
			continue
		}
		t := tc.Table
		t.Version, t.UpdatedAt = tc.Base+1, now
		m.versions[k] = append(m.versions[k], t)
	}
	for _, p := range c.Partitions {
		k := tkey(p.Database, p.Table)
		if len(m.versions[k]) == 0 {
			return catalog.ErrNotFound
		}
		if m.parts[k] == nil {
			m.parts[k] = map[string]catalog.Partition{}
		}
		p.UpdatedAt = now
		m.parts[k][strings.Join(p.Values, "\x00")] = p
	}
	for _, r := range c.DropPartitions {
		delete(m.parts[tkey(r.Database, r.Table)], strings.Join(r.Values, "\x00"))
	}
	return nil
}

func (m *memCatalog) Databases(context.Context) ([]catalog.Database, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []catalog.Database
	for _, d := range m.dbs {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b catalog.Database) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (m *memCatalog) Tables(_ context.Context, db string) ([]catalog.Table, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []catalog.Table
	for k, vs := range m.versions {
		if strings.HasPrefix(k, db+".") {
			out = append(out, vs[len(vs)-1])
		}
	}
	slices.SortFunc(out, func(a, b catalog.Table) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (m *memCatalog) Table(_ context.Context, db, name string, version int64) (catalog.Table, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.versions[tkey(db, name)]
	switch {
	case len(vs) == 0, version > int64(len(vs)), version < 0:
		return catalog.Table{}, catalog.ErrNotFound
	case version == 0:
		return vs[len(vs)-1], nil
	}
	return vs[version-1], nil
}

func (m *memCatalog) TableVersions(_ context.Context, db, name string) ([]catalog.Table, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := slices.Clone(m.versions[tkey(db, name)])
	slices.Reverse(vs)
	return vs, nil
}

func (m *memCatalog) Partitions(_ context.Context, db, name string) iter.Seq2[catalog.Partition, error] {
	m.mu.Lock()
	var out []catalog.Partition
	for _, p := range m.parts[tkey(db, name)] {
		out = append(out, p)
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b catalog.Partition) int { return slices.Compare(a.Values, b.Values) })
	return func(yield func(catalog.Partition, error) bool) {
		for _, p := range out {
			if !yield(p, nil) {
				return
			}
		}
	}
}
