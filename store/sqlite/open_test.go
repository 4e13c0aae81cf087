package sqlite

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
		if v := schemaVersionOf(t, s.db); v != objectsVersion {
			t.Errorf("schema version after reopen = %d, want %d", v, objectsVersion)
		}
		h, err := s.Head(t.Context(), "j")
		if err != nil || h.Version != 1 {
			t.Errorf("Head after reopen = %+v, %v; want version 1", h, err)
		}
		s.Close()
	}
}

// TestConvertOnce: a relational state (the last relational version, as
// the tidemark before wrote it) moves into state_objects on the first
// open, with its id, runs, bookmark and file records; its tables are
// dropped; later opens convert nothing; and the relational code of the
// tidemark before refuses the file as newer than it knows.
func TestConvertOnce(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	id := legacyJob(t, path)

	for i := range 2 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open %d: %v", i+1, err)
		}
		if v := schemaVersionOf(t, s.db); v != objectsVersion {
			t.Errorf("open %d: schema version %d, want %d", i+1, v, objectsVersion)
		}
		var tables []string
		rows, err := s.db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			rows.Scan(&n)
			tables = append(tables, n)
		}
		rows.Close()
		if want := []string{"schema_version", "state_objects"}; !slices.Equal(tables, want) {
			t.Errorf("open %d: tables %q, want %q", i+1, tables, want)
		}
		if got, err := s.Identity(ctx); err != nil || got.ID != id {
			t.Errorf("open %d: identity %+v, %v; want id %s kept", i+1, got, err, id)
		}
		if h, err := s.Head(ctx, "j"); err != nil || h.Version != 1 || h.RunID != "r1" {
			t.Errorf("open %d: head %+v, %v; want version 1 of r1", i+1, h, err)
		}
		if got := paths(t, s, "j"); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("open %d: files %q, want [a b]", i+1, got)
		}
		if run, err := s.Run(ctx, "j", "r1"); err != nil || run.Status != store.StatusSucceeded {
			t.Errorf("open %d: run r1 %+v, %v; want succeeded", i+1, run, err)
		}
		s.Close()
	}

	// The tidemark before runs its migrations on open: they refuse.
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := migrate(ctx, db); !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), "upgrade tidemark") {
		t.Errorf("the relational code opening a converted file: %v, want ErrSchemaTooNew saying to upgrade", err)
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

// TestConvertKeepsIcebergCatalog: the conversion to objects drops the
// state's relational tables only: the tables of tidemark's own Iceberg
// catalog (the SQL catalog Iceberg sinks keep in the state's database,
// pyiceberg's and Iceberg JDBC's iceberg_tables and
// iceberg_namespace_properties) stay, rows and all.
func TestConvertKeepsIcebergCatalog(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	legacyJob(t, path)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE iceberg_tables (catalog_name TEXT, table_namespace TEXT, table_name TEXT,
			metadata_location TEXT, previous_metadata_location TEXT, PRIMARY KEY (catalog_name, table_namespace, table_name))`,
		`INSERT INTO iceberg_tables VALUES ('tidemark', 'sales', 'orders', 'file:///lake/orders/metadata/00001.json', NULL)`,
		`CREATE TABLE iceberg_namespace_properties (catalog_name TEXT, namespace TEXT, property_key TEXT,
			property_value TEXT, PRIMARY KEY (catalog_name, namespace, property_key))`,
		`INSERT INTO iceberg_namespace_properties VALUES ('tidemark', 'sales', 'exists', 'true')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var loc string
	if err := s.db.QueryRowContext(ctx, `SELECT metadata_location FROM iceberg_tables WHERE table_name = 'orders'`).Scan(&loc); err != nil ||
		loc != "file:///lake/orders/metadata/00001.json" {
		t.Errorf("the Iceberg catalog's table after the conversion: %q, %v; want it kept", loc, err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM iceberg_namespace_properties`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the Iceberg catalog's namespaces after the conversion: %d, %v; want 1 kept", n, err)
	}
}
