package objcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
)

// The catalog lives in one root object, catalog/root.json, replaced only
// with If-Match like a job's head: it names the databases and, for each
// table, its immutable version objects and its immutable partition set.
// A change (ApplyCatalog) writes the new table versions and partition
// sets, then swaps the root, checking every table's Base in that one swap:
// all or nothing, and of two writers on one table exactly one wins.
//
// A run's commit carries catalog changes (store.Commit.Catalog) whose
// commit point must be the job head's swap. So the commit reserves them
// first: a root swap that checks the Bases and records the result as
// pending, naming the job, the run, the lease token and the commit
// object. A pending change is decided by the job's state alone: committed
// once the run's record is the one that commit object holds; abandoned
// once the run finished otherwise or the job's lease token moved on (the
// holder can no longer make the swap); undecided while the holder still
// could. Readers see only committed changes, and every root swap folds
// the decided ones in. A writer touching a table with an undecided change
// waits for it to be decided, briefly, then fails with ErrConflict.

// catalogRootKey is the catalog's root object.
const catalogRootKey = "catalog/root.json"

// rootObj is the catalog's root.
type rootObj struct {
	Op        string                      `json:"op"`
	Databases map[string]catalog.Database `json:"databases,omitempty"`
	Tables    map[string]*tableRef        `json:"tables,omitempty"` // by tableID
	Pending   []catPending                `json:"pending,omitempty"`
}

// tableRef is a table's current state in the root.
type tableRef struct {
	Database string   `json:"database"`
	Name     string   `json:"name"`
	Version  int64    `json:"version"`
	Versions []string `json:"versions"`        // version objects, oldest first
	Parts    string   `json:"parts,omitempty"` // the partition set object; "" for none
	// PartitionKeys are the current version's, to check partitions.
	PartitionKeys []catalog.Column `json:"partition_keys,omitempty"`
}

// catPending is a commit's reserved catalog change.
type catPending struct {
	ID        string   `json:"id"`
	Job       string   `json:"job"`
	RunID     string   `json:"run_id"`
	Token     int64    `json:"token"`
	CommitKey string   `json:"commit_key"`
	Apply     catApply `json:"apply"`
}

// catApply is a change computed against the root: the databases to add
// and the new state of each table it touches (nil: dropped).
type catApply struct {
	Databases []catalog.Database   `json:"databases,omitempty"`
	Tables    map[string]*tableRef `json:"tables,omitempty"`
}

// tableID names a table in the root.
func tableID(db, name string) string { return esc(db) + "/" + esc(name) }

// tableFolder is the folder of a table's objects.
func tableFolder(db, name string) string { return "catalog/tables/" + tableID(db, name) + "/" }

// readRoot reads the catalog root ("" ETag and an empty root if none).
func (s *Store) readRoot(ctx context.Context) (rootObj, string, error) {
	var r rootObj
	etag, err := s.getJSON(ctx, catalogRootKey, &r)
	if errors.Is(err, ErrMissing) {
		return rootObj{}, "", nil
	}
	return r, etag, err
}

// decided tells a pending change's fate: committed, abandoned, or neither
// yet (undecided).
func (s *Store) decided(ctx context.Context, p catPending) (committed, abandoned bool, err error) {
	h, _, err := s.readHead(ctx, p.Job)
	if err != nil {
		return false, false, err
	}
	r, _, err := s.readRun(ctx, p.Job, p.RunID, &h)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, false, err
	}
	switch {
	case err == nil && r.CommitKey == p.CommitKey:
		return true, false, nil
	case err == nil && r.Run.Status != store.StatusRunning:
		return false, true, nil
	case h.Lease == nil || h.Lease.Token != p.Token:
		return false, true, nil
	}
	return false, false, nil
}

// resolve folds the decided pending changes into root and returns the
// tables that undecided ones touch.
func (s *Store) resolve(ctx context.Context, root *rootObj) (map[string]bool, error) {
	busy := map[string]bool{}
	var keep []catPending
	for _, p := range root.Pending {
		committed, abandoned, err := s.decided(ctx, p)
		if err != nil {
			return nil, err
		}
		switch {
		case committed:
			root.apply(p.Apply)
		case !abandoned:
			keep = append(keep, p)
			for k := range p.Apply.Tables {
				busy[k] = true
			}
		}
	}
	root.Pending = keep
	return busy, nil
}

// apply makes a computed change part of the root.
func (root *rootObj) apply(a catApply) {
	if root.Databases == nil {
		root.Databases = map[string]catalog.Database{}
	}
	if root.Tables == nil {
		root.Tables = map[string]*tableRef{}
	}
	for _, d := range a.Databases {
		if _, ok := root.Databases[d.Name]; !ok {
			root.Databases[d.Name] = d
		}
	}
	for k, t := range a.Tables {
		if t == nil {
			delete(root.Tables, k)
		} else {
			root.Tables[k] = t
		}
	}
}

// errCatalogBusy means an undecided commit holds a table the change
// touches.
var errCatalogBusy = errors.New("a run's commit is changing the table")

// updateRoot changes the catalog root with one swap (If-Match), folding
// in decided pending changes first; like updateHead it starts over when
// another write came first and reads back its Op after a lost answer.
// change gets the tables undecided changes hold.
func (s *Store) updateRoot(ctx context.Context, change func(root *rootObj, busy map[string]bool) error) error {
	if err := s.writable(); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		root, etag, err := s.readRoot(ctx)
		if err != nil {
			return err
		}
		busy, err := s.resolve(ctx, &root)
		if err != nil {
			return err
		}
		if err := change(&root, busy); err != nil {
			return err
		}
		root.Op = nonce()
		_, err = s.putJSON(ctx, catalogRootKey, root, Cond{IfNoneMatch: etag == "", IfMatch: etag})
		if err == nil {
			return nil
		}
		if cur, _, rerr := s.readRoot(ctx); rerr == nil && cur.Op == root.Op {
			return nil
		}
		if !errors.Is(err, ErrPrecondition) || attempt >= maxSwaps {
			return err
		}
		time.Sleep(time.Duration(rand.IntN(1+min(attempt, 10)*5)) * time.Millisecond)
	}
}

// compute works out a change against root, writing the new table versions
// and partition sets (immutable objects, unreachable until a swap names
// them). ErrConflict on a stale Base, ErrNotFound for partitions of a
// missing table, errCatalogBusy for a table an undecided commit holds.
func (s *Store) compute(ctx context.Context, root *rootObj, busy map[string]bool, c catalog.Changes) (catApply, error) {
	if err := c.Check(); err != nil {
		return catApply{}, err
	}
	now, err := s.Now(ctx)
	if err != nil {
		return catApply{}, err
	}
	a := catApply{Tables: map[string]*tableRef{}}
	for _, d := range c.Databases {
		if _, ok := root.Databases[d.Name]; ok || slices.ContainsFunc(a.Databases, func(x catalog.Database) bool { return x.Name == d.Name }) {
			continue
		}
		if d.CreatedAt.IsZero() {
			d.CreatedAt = now
		}
		d.CreatedAt = utc(d.CreatedAt)
		a.Databases = append(a.Databases, d)
	}
	view := func(k string) (*tableRef, error) {
		if busy[k] {
			return nil, fmt.Errorf("table %s: %w", k, errCatalogBusy)
		}
		if t, ok := a.Tables[k]; ok {
			return t, nil
		}
		return root.Tables[k], nil
	}
	for _, tc := range c.Tables {
		k := tableID(tc.Table.Database, tc.Table.Name)
		cur, err := view(k)
		if err != nil {
			return catApply{}, err
		}
		db := tc.Table.Database
		if _, ok := root.Databases[db]; !ok && !slices.ContainsFunc(a.Databases, func(x catalog.Database) bool { return x.Name == db }) {
			return catApply{}, fmt.Errorf("writing table %s.%s: database %s: %w", db, tc.Table.Name, db, catalog.ErrNotFound)
		}
		var have int64
		if cur != nil {
			have = cur.Version
		}
		if tc.Drop && have == 0 {
			return catApply{}, fmt.Errorf("dropping table %s.%s: %w", db, tc.Table.Name, catalog.ErrNotFound)
		}
		if tc.Base != have {
			return catApply{}, fmt.Errorf("table %s.%s is at version %d, the change was made against %d: %w",
				tc.Table.Database, tc.Table.Name, have, tc.Base, catalog.ErrConflict)
		}
		if tc.Drop {
			a.Tables[k] = nil
			continue
		}
		t := tc.Table
		t.Version, t.UpdatedAt = tc.Base+1, now
		key := tableFolder(t.Database, t.Name) + "v-" + inv(t.Version) + "-" + nonce() + ".json"
		if err := s.createJSON(ctx, key, t); err != nil {
			return catApply{}, err
		}
		next := &tableRef{Database: t.Database, Name: t.Name, Version: t.Version, Versions: []string{key}, PartitionKeys: t.PartitionKeys}
		if cur != nil {
			next.Versions = append(slices.Clone(cur.Versions), key)
			next.Parts = cur.Parts
		}
		a.Tables[k] = next
	}
	// Partitions, per table: the table's set with the adds and drops.
	adds := map[string][]catalog.Partition{}
	drops := map[string][]catalog.PartitionRef{}
	for _, p := range c.Partitions {
		k := tableID(p.Database, p.Table)
		adds[k] = append(adds[k], p)
	}
	for _, p := range c.DropPartitions {
		k := tableID(p.Database, p.Table)
		drops[k] = append(drops[k], p)
	}
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(adds, drops))) {
		cur, err := view(k)
		if err != nil {
			return catApply{}, err
		}
		if cur == nil {
			if len(adds[k]) == 0 {
				continue // dropping partitions of a missing table changes nothing
			}
			return catApply{}, fmt.Errorf("partition of table %s.%s: %w", adds[k][0].Database, adds[k][0].Table, catalog.ErrNotFound)
		}
		parts, err := s.readParts(ctx, cur.Parts)
		if err != nil {
			return catApply{}, err
		}
		byValues := map[string]catalog.Partition{}
		for _, p := range parts {
			byValues[valuesKey(p.Values)] = p
		}
		for _, p := range adds[k] {
			if err := catalog.CheckPartition(catalog.Table{Database: cur.Database, Name: cur.Name, PartitionKeys: cur.PartitionKeys}, p.Values); err != nil {
				return catApply{}, err
			}
			p.UpdatedAt = now
			byValues[valuesKey(p.Values)] = p
		}
		for _, p := range drops[k] {
			delete(byValues, valuesKey(p.Values))
		}
		list := slices.Collect(maps.Values(byValues))
		slices.SortFunc(list, func(a, b catalog.Partition) int { return catalog.CompareValues(a.Values, b.Values) })
		next := *cur
		next.Parts = ""
		if len(list) > 0 {
			next.Parts = tableFolder(cur.Database, cur.Name) + "parts-" + nonce() + ".json"
			if err := s.createJSON(ctx, next.Parts, list); err != nil {
				return catApply{}, err
			}
		}
		a.Tables[k] = &next
	}
	return a, nil
}

// mergeKeys returns the set of keys of two maps.
func mergeKeys[A, B any](a map[string]A, b map[string]B) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// valuesKey makes partition values a map key.
func valuesKey(vs []string) string { return string(catalog.ValuesKey(vs)) }

// readParts reads a partition set ("" is none).
func (s *Store) readParts(ctx context.Context, key string) ([]catalog.Partition, error) {
	if key == "" {
		return nil, nil
	}
	var ps []catalog.Partition
	_, err := s.getJSON(ctx, key, &ps)
	return ps, err
}

// catalogWait bounds how long a catalog write waits for a run's commit
// holding one of its tables to be decided.
const catalogWait = 10 * time.Second

// ApplyCatalog makes c durable atomically, in one swap of the catalog
// root that checks every table's Base.
func (s *Store) ApplyCatalog(ctx context.Context, c catalog.Changes) error {
	deadline := time.Now().Add(catalogWait)
	for {
		err := s.updateRoot(ctx, func(root *rootObj, busy map[string]bool) error {
			a, err := s.compute(ctx, root, busy, c)
			if err != nil {
				return err
			}
			root.apply(a)
			return nil
		})
		if errors.Is(err, errCatalogBusy) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if errors.Is(err, errCatalogBusy) {
			err = fmt.Errorf("%w: %w", catalog.ErrConflict, err)
		}
		if err != nil {
			return fmt.Errorf("changing the catalog in %s: %w", s.root, err)
		}
		return nil
	}
}

// reserveCatalog records a commit's catalog change as pending (see
// above): ErrConflict on a stale Base, nothing visible until the commit's
// swap.
func (s *Store) reserveCatalog(ctx context.Context, c catalog.Changes, p catPending) error {
	deadline := time.Now().Add(catalogWait)
	for {
		// The tables undecided changes hold are counted again here, without
		// this commit's own earlier reservation.
		err := s.updateRoot(ctx, func(root *rootObj, _ map[string]bool) error {
			// An earlier attempt of this commit (built again) can no
			// longer commit: its reservation goes.
			root.Pending = slices.DeleteFunc(root.Pending, func(q catPending) bool {
				return q.Job == p.Job && q.RunID == p.RunID && q.Token == p.Token
			})
			busy := map[string]bool{}
			for _, q := range root.Pending {
				for k := range q.Apply.Tables {
					busy[k] = true
				}
			}
			a, err := s.compute(ctx, root, busy, c)
			if err != nil {
				return err
			}
			p.Apply = a
			root.Pending = append(root.Pending, p)
			return nil
		})
		if errors.Is(err, errCatalogBusy) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if errors.Is(err, errCatalogBusy) {
			err = fmt.Errorf("%w: %w", catalog.ErrConflict, err)
		}
		return err
	}
}

// settleCatalog folds decided pending changes into the root (after a
// commit's swap, or its failure). Best effort: any later swap does it.
func (s *Store) settleCatalog(ctx context.Context) {
	_ = s.updateRoot(ctx, func(*rootObj, map[string]bool) error { return nil })
}

// catalogView reads the root with the committed pending changes applied.
func (s *Store) catalogView(ctx context.Context) (rootObj, error) {
	root, _, err := s.readRoot(ctx)
	if err != nil {
		return rootObj{}, fmt.Errorf("reading the catalog in %s: %w", s.root, err)
	}
	if _, err := s.resolve(ctx, &root); err != nil {
		return rootObj{}, fmt.Errorf("reading the catalog in %s: %w", s.root, err)
	}
	return root, nil
}

// Databases returns every database, by name.
func (s *Store) Databases(ctx context.Context) ([]catalog.Database, error) {
	root, err := s.catalogView(ctx)
	if err != nil {
		return nil, err
	}
	dbs := slices.Collect(maps.Values(root.Databases))
	slices.SortFunc(dbs, func(a, b catalog.Database) int { return cmp.Compare(a.Name, b.Name) })
	return dbs, nil
}

// Tables returns the current version of every table of a database, by
// name.
func (s *Store) Tables(ctx context.Context, database string) ([]catalog.Table, error) {
	root, err := s.catalogView(ctx)
	if err != nil {
		return nil, err
	}
	var ts []catalog.Table
	for _, ref := range root.Tables {
		if ref.Database != database {
			continue
		}
		t, err := s.readTable(ctx, ref.Versions[len(ref.Versions)-1])
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b catalog.Table) int { return cmp.Compare(a.Name, b.Name) })
	return ts, nil
}

// readTable reads one table version object.
func (s *Store) readTable(ctx context.Context, key string) (catalog.Table, error) {
	var t catalog.Table
	if _, err := s.getJSON(ctx, key, &t); err != nil {
		return catalog.Table{}, fmt.Errorf("reading the catalog in %s: %w", s.root, err)
	}
	return t, nil
}

// Table returns one version of a table (0: the current one).
func (s *Store) Table(ctx context.Context, database, name string, version int64) (catalog.Table, error) {
	root, err := s.catalogView(ctx)
	if err != nil {
		return catalog.Table{}, err
	}
	ref := root.Tables[tableID(database, name)]
	switch {
	case ref == nil:
		return catalog.Table{}, fmt.Errorf("table %s.%s: %w", database, name, catalog.ErrNotFound)
	case version == 0:
		version = ref.Version
	case version < 0 || version > int64(len(ref.Versions)):
		return catalog.Table{}, fmt.Errorf("table %s.%s version %d: %w", database, name, version, catalog.ErrNotFound)
	}
	return s.readTable(ctx, ref.Versions[version-1])
}

// TableVersions returns every version of a table, newest first.
func (s *Store) TableVersions(ctx context.Context, database, name string) ([]catalog.Table, error) {
	root, err := s.catalogView(ctx)
	if err != nil {
		return nil, err
	}
	ref := root.Tables[tableID(database, name)]
	if ref == nil {
		return nil, nil
	}
	var ts []catalog.Table
	for i := len(ref.Versions) - 1; i >= 0; i-- {
		t, err := s.readTable(ctx, ref.Versions[i])
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// Partitions yields a table's partitions ordered by Values, from one
// partition set object.
func (s *Store) Partitions(ctx context.Context, database, name string) iter.Seq2[catalog.Partition, error] {
	return func(yield func(catalog.Partition, error) bool) {
		root, err := s.catalogView(ctx)
		if err != nil {
			yield(catalog.Partition{}, err)
			return
		}
		ref := root.Tables[tableID(database, name)]
		if ref == nil {
			return
		}
		ps, err := s.readParts(ctx, ref.Parts)
		if err != nil {
			yield(catalog.Partition{}, fmt.Errorf("reading partitions of %s.%s in %s: %w", database, name, s.root, err))
			return
		}
		for _, p := range ps {
			if !yield(p, nil) {
				return
			}
		}
	}
}

var _ catalog.Store = (*Store)(nil)
