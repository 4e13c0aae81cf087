package postgres

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/store"
)

// wantNoSecret fails the test if err is nil or its text holds any of the
// secrets, or does not name where.
func wantNoSecret(t *testing.T, what string, err error, where string, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: got no error", what)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("%s: the error shows a password: %v", what, err)
		}
	}
	if where != "" && !strings.Contains(err.Error(), where) {
		t.Errorf("%s: error %q does not name the store %s", what, err, where)
	}
}

// TestPasswordInURLRefused: a URL that carries a password is refused
// before anything connects, with a message that says where the password
// goes and does not show it.
func TestPasswordInURLRefused(t *testing.T) {
	const pw = "s3cr3t-Pa55"
	for _, loc := range []string{
		"postgres://etl:" + pw + "@127.0.0.1:1/tidemark",
		"postgresql://etl:" + url.QueryEscape(pw) + "@127.0.0.1:1/tidemark?schema=x",
		"postgres://etl@127.0.0.1:1/tidemark?password=" + pw,
	} {
		for _, open := range []func() error{
			func() error { _, err := Open(t.Context(), loc); return err },
			func() error { _, err := OpenExisting(t.Context(), loc, true); return err },
			func() error { _, err := store.Open(t.Context(), loc); return err },
		} {
			err := open()
			wantNoSecret(t, "opening "+store.Redact(loc), err, "127.0.0.1:1", pw)
			if !strings.Contains(err.Error(), "PGPASSWORD") || !strings.Contains(err.Error(), ".pgpass") {
				t.Errorf("opening a URL with a password: %q does not say to use PGPASSWORD or ~/.pgpass", err)
			}
		}
	}
}

// TestPasswordNeverInErrors: a wrong password, an unreachable host and a
// database that does not exist each fail with a message that names the
// store and shows neither the password given nor the server's.
func TestPasswordNeverInErrors(t *testing.T) {
	db := newDB(t)
	u, _ := url.Parse(db.url)
	const wrong = "wrong-Pa55word-xyz"

	t.Run("wrong password", func(t *testing.T) {
		t.Setenv("PGPASSWORD", wrong)
		_, err := Open(t.Context(), db.url)
		wantNoSecret(t, "Open with a wrong PGPASSWORD", err, store.Redact(db.url), wrong, db.password)
	})
	t.Run("unreachable host", func(t *testing.T) {
		t.Setenv("PGPASSWORD", db.password)
		loc := "postgres://" + u.User.Username() + "@127.0.0.1:1/" + db.Name + "?connect_timeout=5"
		_, err := Open(t.Context(), loc)
		wantNoSecret(t, "Open of an unreachable host", err, "127.0.0.1:1", db.password)
	})
	t.Run("no such database", func(t *testing.T) {
		t.Setenv("PGPASSWORD", db.password)
		bad := *u
		bad.Path = "/tm_no_such_database"
		_, err := Open(t.Context(), bad.String())
		wantNoSecret(t, "Open of a database that does not exist", err, bad.String(), db.password)
		_, err = OpenExisting(t.Context(), bad.String(), true)
		wantNoSecret(t, "OpenExisting of a database that does not exist", err, bad.String(), db.password)
		if !errors.Is(err, store.ErrNoState) {
			t.Errorf("OpenExisting of a database that does not exist: got %v, want ErrNoState", err)
		}
	})
	t.Run("lost connection", func(t *testing.T) {
		t.Setenv("PGPASSWORD", db.password)
		s := db.open(t)
		l, err := s.AcquireLease(t.Context(), "job", store.Holder{ID: "a"}, 3600e9)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		_, err = s.RenewLease(context.Background(), l, 3600e9)
		wantNoSecret(t, "RenewLease on a closed store", err, store.Redact(db.url), db.password)
	})
}

// TestPasswordFromPgpass: with no PGPASSWORD the password comes from the
// password file (PGPASSFILE, ~/.pgpass by default), as libpq reads it.
func TestPasswordFromPgpass(t *testing.T) {
	db := newDB(t)
	u, _ := url.Parse(db.url)
	os.Unsetenv("PGPASSWORD") // t.Setenv in newDB restores it
	pass := filepath.Join(t.TempDir(), "pgpass")
	line := u.Hostname() + ":" + u.Port() + ":*:" + u.User.Username() + ":" + db.password + "\n"
	if err := os.WriteFile(pass, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSFILE", pass)
	s := db.openAt(t, db.url)
	if _, err := s.Identity(t.Context()); err != nil {
		t.Fatal(err)
	}

	// And from a service of pg_service.conf.
	svc := filepath.Join(t.TempDir(), "pg_service.conf")
	conf := "[tidemark-test]\nhost=" + u.Hostname() + "\nport=" + u.Port() + "\nuser=" + u.User.Username() +
		"\ndbname=" + db.Name + "\n"
	if err := os.WriteFile(svc, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGSERVICEFILE", svc)
	s2 := db.openAt(t, "postgres:///?service=tidemark-test&schema=via_service")
	id, err := s2.Identity(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if id.Location != "postgres:///?service=tidemark-test&schema=via_service" {
		t.Errorf("Identity().Location = %q, want the URL as given", id.Location)
	}
}
