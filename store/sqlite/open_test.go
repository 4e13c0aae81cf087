package sqlite

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/store"
)

func TestPathFromLocation(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"sqlite:///var/lib/tidemark/state.db", "/var/lib/tidemark/state.db"},
		{"sqlite://.tidemark/state.db", ".tidemark/state.db"},
		{"sqlite:state.db", "state.db"},
		{"sqlite:/abs/state.db", "/abs/state.db"},
		{"file:///abs/state.db", "/abs/state.db"},
		{"file://rel/state.db", "rel/state.db"},
		{"file:rel/state.db", "rel/state.db"},
		{".tidemark/state.db", ".tidemark/state.db"},
		{"/abs/state.db", "/abs/state.db"},
	} {
		if got := pathFromLocation(tc.in); got != tc.want {
			t.Errorf("pathFromLocation(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestOpenLocations opens through store.Open with every accepted spelling
// and checks each reaches the same file (parent directories created).
func TestOpenLocations(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	abs := filepath.Join(dir, "a", "b", "state.db")
	for _, loc := range []string{
		abs,
		"sqlite://" + abs,
		"sqlite:" + abs,
		"file://" + abs,
		"a/b/state.db",
		"sqlite://a/b/state.db",
		"sqlite:a/b/state.db",
	} {
		s, err := store.Open(t.Context(), loc)
		if err != nil {
			t.Fatalf("store.Open(%q): %v", loc, err)
		}
		ss, ok := s.(*Store)
		if !ok {
			t.Fatalf("store.Open(%q) returned %T, want *sqlite.Store", loc, s)
		}
		if ss.Path() != abs {
			t.Errorf("store.Open(%q) opened %s, want %s", loc, ss.Path(), abs)
		}
		s.Close()
	}
	if _, err := os.Stat(abs); err != nil {
		t.Errorf("database file: %v", err)
	}
}

// TestOpenOddPath checks that characters special in URIs reach the file
// name unchanged.
func TestOpenOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir #1")
	path := filepath.Join(dir, "state?x=1&y=%41.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		found = found || e.Name() == filepath.Base(path)
	}
	if !found {
		t.Errorf("no file %q in %s", filepath.Base(path), dir)
	}
}

// TestConnectionSettings checks the pragmas the DSN sets on pooled
// connections.
func TestConnectionSettings(t *testing.T) {
	s := openTemp(t)
	for _, tc := range []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"busy_timeout", "30000"},
		{"synchronous", "2"},
		{"application_id", "1413762379"},
	} {
		var got string
		if err := s.db.QueryRowContext(t.Context(), "PRAGMA "+tc.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("PRAGMA %s = %s, want %s", tc.pragma, got, tc.want)
		}
	}
}

// TestReopenKeepsState checks that reopening does not migrate again and
// keeps what was committed.
func TestReopenKeepsState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.AcquireLease(t.Context(), "j", store.Holder{ID: "r1"}, leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	commitFiles(t, s, l, "r1", 0, "a", "b")
	s.Close()

	for range 3 {
		s, err = Open(t.Context(), path)
		if err != nil {
			t.Fatalf("reopening: %v", err)
		}
		if v := schemaVersionOf(t, s.db); v != len(migrations) {
			t.Errorf("schema version after reopen = %d, want %d", v, len(migrations))
		}
		h, err := s.Head(t.Context(), "j")
		if err != nil || h.Version != 1 {
			t.Errorf("Head after reopen = %+v, %v; want version 1", h, err)
		}
		s.Close()
	}
}

// TestMigrateIncrementally adds a migration and checks that an existing
// database gets exactly that one applied.
func TestMigrateIncrementally(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	saved := migrations
	t.Cleanup(func() { migrations = saved })
	migrations = append(migrations[:len(migrations):len(migrations)],
		`CREATE TABLE extra (x INTEGER) STRICT; INSERT INTO extra VALUES (42);`)
	for range 2 { // the second open must not apply it again
		s, err = Open(t.Context(), path)
		if err != nil {
			t.Fatalf("opening with a new migration: %v", err)
		}
		if v := schemaVersionOf(t, s.db); v != len(saved)+1 {
			t.Errorf("schema version = %d, want %d", v, len(saved)+1)
		}
		var n int
		if err := s.db.QueryRow(`SELECT count(*) FROM extra`).Scan(&n); err != nil || n != 1 {
			t.Errorf("rows in the migrated table = %d, %v; want 1", n, err)
		}
		s.Close()
	}
}

func TestRefuseNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	s.Close()

	_, err = Open(t.Context(), path)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open of a newer database: %v, want ErrSchemaTooNew", err)
	}
	for _, want := range []string{path, "99", "upgrade tidemark"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestRefuseForeignDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE customers (id INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	_, err = Open(t.Context(), path)
	if err == nil || !strings.Contains(err.Error(), "not a tidemark state database") {
		t.Fatalf("Open of another application's database: %v, want a refusal", err)
	}
	db, _ = sql.Open("sqlite", path)
	defer db.Close()
	var n int
	db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table'`).Scan(&n)
	if n != 1 {
		t.Errorf("the refused database has %d tables, want its 1 untouched", n)
	}
}

// schemaVersionOf reads the schema_version table.
func schemaVersionOf(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestIdentityKept: reopening keeps the store's identity; a database made
// by a tidemark before identities existed gets one on its first open.
func TestIdentityKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	saved := migrations
	migrations = migrations[:1]
	s, err := Open(t.Context(), path)
	migrations = saved
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	var first string
	for range 2 {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		id, err := s.Identity(t.Context())
		s.Close()
		if err != nil || len(id.ID) != 32 || id.Location != path {
			t.Fatalf("Identity() = %+v, %v; want a 32-hex id at %s", id, err, path)
		}
		if first == "" {
			first = id.ID
		} else if id.ID != first {
			t.Errorf("Identity after reopen = %s, want %s", id.ID, first)
		}
	}
}
