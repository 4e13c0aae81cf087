package postgres

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// TestConvertOnce: a relational schema (the format before objects, as the
// tidemark before wrote it) opened read-only is read through memory and
// left as it is; the first writable open moves it into state_objects with
// its id, runs, bookmark and file records and drops its tables; later
// opens convert nothing; and the relational code of the tidemark before
// refuses the schema as newer than it knows.
func TestConvertOnce(t *testing.T) {
	db := newDB(t)
	ctx := t.Context()
	loc := db.location("conv")
	c, err := connect(ctx, loc, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.pool.Close()
	if err := c.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	old := c.legacy()
	l, err := old.AcquireLease(ctx, "j", store.Holder{ID: "old"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r, err := old.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r1", Mode: bookmark.ModeEnable})
	if err != nil {
		t.Fatal(err)
	}
	r.Status = store.StatusSucceeded
	_, err = old.Commit(ctx, store.Commit{Job: "j", Token: l.Token, Advance: true, Run: r,
		Sources: map[string]bookmark.SourceState{"src": {Kind: "files", Fingerprint: "fp", Files: 2}},
		Added: []store.FileRecord{{Ctx: "src", File: bookmark.File{Path: "a", Size: 1, MTime: 1}},
			{Ctx: "src", File: bookmark.File{Path: "b", Size: 2, MTime: 2}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.ReleaseLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	id, err := old.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tables := func() []string {
		return db.Strings(t, `SELECT tablename FROM pg_tables WHERE schemaname = 'conv' ORDER BY tablename`)
	}
	version := func() int64 { return db.Count(t, `SELECT max(version) FROM conv.schema_migrations`) }
	check := func(what string, s *Store) {
		t.Helper()
		if got, err := s.Identity(ctx); err != nil || got.ID != id.ID {
			t.Errorf("%s: identity %+v, %v; want id %s kept", what, got, err, id.ID)
		}
		if h, err := s.Head(ctx, "j"); err != nil || h.Version != 1 || h.RunID != "r1" {
			t.Errorf("%s: head %+v, %v; want version 1 of r1", what, h, err)
		}
		var paths []string
		for f, err := range s.Files(ctx, "j", "src") {
			if err != nil {
				t.Fatal(err)
			}
			paths = append(paths, f.Path)
		}
		if !slices.Equal(paths, []string{"a", "b"}) {
			t.Errorf("%s: files %q, want [a b]", what, paths)
		}
	}
	// tidemark's own Iceberg catalog lives in the state's schema too: the
	// conversion leaves it.
	db.Exec(t, `CREATE TABLE conv.iceberg_tables (catalog_name text, table_namespace text, table_name text,
		metadata_location text, previous_metadata_location text)`)
	db.Exec(t, `INSERT INTO conv.iceberg_tables VALUES ('tidemark', 'sales', 'orders', 'file:///m.json', NULL)`)
	before := tables()

	ro, err := OpenExisting(ctx, loc, true)
	if err != nil {
		t.Fatalf("OpenExisting read-only of a relational schema: %v", err)
	}
	check("read-only", ro)
	if _, err := ro.AcquireLease(ctx, "j", store.Holder{ID: "x"}, time.Hour); err == nil {
		t.Error("a read-only open of a relational schema took a lease")
	}
	ro.Close()
	if got := tables(); !slices.Equal(got, before) || version() != int64(len(migrations)) {
		t.Errorf("after a read-only open: tables %q at version %d, want %q at %d", got, version(), before, len(migrations))
	}

	for i := range 2 {
		s, err := Open(ctx, loc)
		if err != nil {
			t.Fatalf("open %d: %v", i+1, err)
		}
		check("converted", s)
		s.Close()
		if got, want := tables(), []string{"iceberg_tables", "schema_migrations", "state_objects"}; !slices.Equal(got, want) || version() != objectsVersion {
			t.Errorf("open %d: tables %q at version %d, want %q at %d", i+1, got, version(), want, objectsVersion)
		}
	}

	if n := db.Count(t, `SELECT count(*) FROM conv.iceberg_tables`); n != 1 {
		t.Errorf("the Iceberg catalog's tables hold %d rows after the conversion, want 1 kept", n)
	}

	// The tidemark before runs its migrations on open: they refuse.
	if err := c.migrate(ctx); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("the relational code opening a converted schema: %v, want ErrSchemaTooNew", err)
	}
}
