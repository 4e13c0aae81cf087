package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// TestSchemaParameter: the state goes to schema tidemark by default and to
// the schema ?schema= names otherwise; two schemas are two stores.
func TestSchemaParameter(t *testing.T) {
	db := newDB(t)
	def := db.openAt(t, db.url)
	other := db.openAt(t, db.location("sales_state"))
	if def.Schema() != DefaultSchema || other.Schema() != "sales_state" {
		t.Fatalf("schemas %q, %q; want %q, sales_state", def.Schema(), other.Schema(), DefaultSchema)
	}
	for _, schema := range []string{DefaultSchema, "sales_state"} {
		var n int
		db.SQL.QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'state_objects'`, schema).Scan(&n)
		if n != 1 {
			t.Errorf("schema %s: no state_objects table", schema)
		}
	}
	a, _ := def.Identity(t.Context())
	b, _ := other.Identity(t.Context())
	if a.ID == b.ID {
		t.Errorf("two schemas share the identity %s", a.ID)
	}
	if _, err := def.AcquireLease(t.Context(), "job", store.Holder{ID: "x"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := other.AcquireLease(t.Context(), "job", store.Holder{ID: "y"}, time.Hour); err != nil {
		t.Errorf("the lease of a job in another schema: %v, want free", err)
	}
	for _, bad := range []string{"Sales", "a-b", "1x", "x;drop", strings.Repeat("a", 64)} {
		if _, err := Open(t.Context(), db.location(bad)); err == nil || !strings.Contains(err.Error(), "schema") {
			t.Errorf("schema %q: got %v, want a refusal naming the schema", bad, err)
		}
	}
}

// TestConcurrentFirstOpens: many processes (here stores, each with its
// own connections) open one new store at once: each succeeds, the schema
// is migrated once, and they share one identity.
func TestConcurrentFirstOpens(t *testing.T) {
	db := newDB(t)
	const n = 12
	var wg sync.WaitGroup
	ids := make([]string, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			s, err := Open(context.Background(), db.location("race"))
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			id, err := s.Identity(context.Background())
			ids[i], errs[i] = id.ID, err
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
	for i := range ids {
		if ids[i] != ids[0] {
			t.Errorf("open %d: identity %q, open 0: %q", i, ids[i], ids[0])
		}
	}
	var migrated, identities int
	db.SQL.QueryRow(`SELECT count(*) FROM race.schema_migrations`).Scan(&migrated)
	db.SQL.QueryRow(`SELECT count(*) FROM race.state_objects WHERE key = 'tidemark-state.json'`).Scan(&identities)
	if migrated != objectsVersion || identities != 1 {
		t.Errorf("after %d opens at once: %d migrations recorded, %d identities; want %d, 1", n, migrated, identities, objectsVersion)
	}
}

// TestOpenExisting: a database or schema without state is store.ErrNoState
// and nothing is created; a read-only store writes nothing; a newer schema
// and a schema that holds something else are refused.
func TestOpenExisting(t *testing.T) {
	db := newDB(t)
	ctx := t.Context()
	_, err := OpenExisting(ctx, db.location("nothing_here"), true)
	if !errors.Is(err, store.ErrNoState) {
		t.Fatalf("OpenExisting of an empty schema: %v, want ErrNoState", err)
	}
	_, err = store.OpenExisting(ctx, db.location("nothing_here"), false)
	if !errors.Is(err, store.ErrNoState) {
		t.Fatalf("store.OpenExisting of an empty schema: %v, want ErrNoState", err)
	}
	var schemas int
	db.SQL.QueryRow(`SELECT count(*) FROM pg_namespace WHERE nspname = 'nothing_here'`).Scan(&schemas)
	if schemas != 0 {
		t.Errorf("OpenExisting created the schema")
	}

	w := db.openAt(t, db.location("st"))
	l, err := w.AcquireLease(ctx, "job", store.Holder{ID: "a"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := OpenExisting(ctx, db.location("st"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.BeginRun(ctx, l.Token, store.Run{Job: "job", RunID: "r1"}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("BeginRun on a read-only store: %v, want a read-only refusal", err)
	}
	if runs, err := ro.Runs(ctx, "job", store.RunQuery{}); err != nil || len(runs) != 0 {
		t.Errorf("Runs on a read-only store: %v, %v", runs, err)
	}

	db.Exec(t, `INSERT INTO st.schema_migrations (version) VALUES (999)`)
	_, err = Open(ctx, db.location("st"))
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Open of a newer schema: %v, want ErrSchemaTooNew", err)
	}
	_, err = OpenExisting(ctx, db.location("st"), true)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("OpenExisting of a newer schema: %v, want ErrSchemaTooNew", err)
	}

	db.Exec(t, `CREATE SCHEMA app;
CREATE TABLE app.customers (id int)`)
	_, err = Open(ctx, db.location("app"))
	if err == nil || !strings.Contains(err.Error(), "no tidemark state") {
		t.Errorf("Open of a schema holding another application's tables: %v, want a refusal", err)
	}
}

// TestJobs lists the jobs with state.
func TestJobs(t *testing.T) {
	db := newDB(t)
	s := db.open(t)
	for _, job := range []string{"b", "a"} {
		l, err := s.AcquireLease(t.Context(), job, store.Holder{ID: "x"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.BeginRun(t.Context(), l.Token, store.Run{Job: job, RunID: "r"}); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := s.Jobs(t.Context())
	if got := fmt.Sprint(jobs); err != nil || got != "[a b]" {
		t.Errorf("Jobs = %s, %v; want [a b]", got, err)
	}
}

// TestPremadeSchema: a role without CREATE on the database uses a schema
// an administrator made for it.
func TestPremadeSchema(t *testing.T) {
	db := newDB(t)
	role := "tm_role_" + db.Name[3:]
	db.Exec(t, `CREATE ROLE `+role+` LOGIN PASSWORD 'role-Pa55';
REVOKE CREATE ON DATABASE `+db.Name+` FROM PUBLIC;
CREATE SCHEMA etl_state AUTHORIZATION `+role)
	t.Cleanup(func() { db.SQL.Exec(`DROP OWNED BY ` + role); db.SQL.Exec(`DROP ROLE ` + role) })
	u, _ := url.Parse(db.location("etl_state"))
	u.User = url.User(role)
	t.Setenv("PGPASSWORD", "role-Pa55")
	s := db.openAt(t, u.String())
	if _, err := s.AcquireLease(t.Context(), "job", store.Holder{ID: "a"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	u2 := *u
	q := u2.Query()
	q.Set("schema", "not_made")
	u2.RawQuery = q.Encode()
	if _, err := Open(t.Context(), u2.String()); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a schema the role may not create: %v, want permission denied", err)
	}
}
