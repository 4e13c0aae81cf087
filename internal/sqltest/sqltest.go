// Package sqltest gives tests a fresh database on the PostgreSQL and
// MariaDB servers that scripts/test.sh starts (TIDEMARK_TEST_PG,
// TIDEMARK_TEST_MYSQL), or in a SQLite file, and the tools to misbehave
// against it: a transaction held open, a session killed.
//
// A test that finds no server fails and says to run scripts/test.sh;
// TIDEMARK_SKIP_SQL=1 turns that into a skip (CI never sets it).
package sqltest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// The environment variables the helpers read, and the ones they set so
// that code under test gets passwords the way a job does (password_env).
const (
	EnvPG         = "TIDEMARK_TEST_PG"
	EnvMySQL      = "TIDEMARK_TEST_MYSQL"
	EnvSkip       = "TIDEMARK_SKIP_SQL"
	PasswordPG    = "TIDEMARK_TEST_PG_PASSWORD"
	PasswordMySQL = "TIDEMARK_TEST_MYSQL_PASSWORD"
)

// DB is one fresh database for one test, dropped when the test ends.
type DB struct {
	Kind sqldb.Kind
	// Connection is the database's connection string without a password,
	// as a job file would spell it; PasswordEnv names the variable that
	// holds the password ("" for SQLite).
	Connection  string
	PasswordEnv string
	// Name is the database's name (the SQLite file's path for SQLite).
	Name string
	// SQL is an administrative handle on the database for setting up and
	// checking data.
	SQL *sql.DB
	// Password is the server's password, for tests that check it never
	// appears in messages.
	Password string
}

// Kinds are the three database families, in the order tests run them.
var Kinds = []sqldb.Kind{sqldb.Postgres, sqldb.MySQL, sqldb.SQLite}

// Each runs fn as a subtest against a fresh database of each kind.
func Each(t *testing.T, fn func(t *testing.T, db *DB)) {
	t.Helper()
	EachOf(t, Kinds, fn)
}

// EachOf runs fn as a subtest against a fresh database of each given kind.
func EachOf(t *testing.T, kinds []sqldb.Kind, fn func(t *testing.T, db *DB)) {
	t.Helper()
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) {
			fn(t, New(t, k))
		})
	}
}

// New returns a fresh database of kind k.
func New(tb testing.TB, k sqldb.Kind) *DB {
	tb.Helper()
	switch k {
	case sqldb.Postgres:
		return newServerDB(tb, k, EnvPG, PasswordPG)
	case sqldb.MySQL:
		return newServerDB(tb, k, EnvMySQL, PasswordMySQL)
	case sqldb.SQLite:
		return newSQLite(tb)
	}
	tb.Fatalf("sqltest: unknown kind %v", k)
	return nil
}

// Server returns the URL of the test server of kind k (with its password),
// failing the test when there is none.
func Server(tb testing.TB, k sqldb.Kind) *url.URL {
	tb.Helper()
	env := EnvPG
	if k == sqldb.MySQL {
		env = EnvMySQL
	}
	raw := os.Getenv(env)
	if raw == "" {
		if os.Getenv(EnvSkip) == "1" {
			tb.Skipf("%s is not set and %s=1: skipping SQL test", env, EnvSkip)
		}
		tb.Fatalf("%s is not set: run the tests through scripts/test.sh, which starts PostgreSQL and MariaDB "+
			"(or set %s=1 to skip the SQL tests)", env, EnvSkip)
	}
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("%s: not a URL", env)
	}
	return u
}

func randomName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "tm_" + hex.EncodeToString(b[:])
}

func newServerDB(tb testing.TB, k sqldb.Kind, env, pwEnv string) *DB {
	tb.Helper()
	u := Server(tb, k)
	password, _ := u.User.Password()
	if err := os.Setenv(pwEnv, password); err != nil {
		tb.Fatal(err)
	}
	admin := *u
	admin.User = url.User(u.User.Username())
	name := randomName()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := sqldb.Open(ctx, admin.String(), pwEnv, sqldb.Options{AppName: "tidemark-test"})
	if err != nil {
		tb.Fatalf("sqltest: connecting to the %s test server: %v", k, err)
	}
	defer root.Close()
	create := "CREATE DATABASE " + k.Quote(name)
	if k == sqldb.MySQL {
		create += " CHARACTER SET utf8mb4"
	}
	if _, err := root.ExecContext(ctx, create); err != nil {
		tb.Fatalf("sqltest: creating database %s: %v", name, err)
	}
	dbURL := admin
	dbURL.Path = "/" + name
	d := &DB{Kind: k, Connection: dbURL.String(), PasswordEnv: pwEnv, Name: name, Password: password}
	h, err := sqldb.Open(ctx, d.Connection, pwEnv, sqldb.Options{AppName: "tidemark-test"})
	if err != nil {
		tb.Fatalf("sqltest: connecting to %s: %v", name, err)
	}
	d.SQL = h.DB
	tb.Cleanup(func() {
		h.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		r, err := sqldb.Open(ctx, admin.String(), pwEnv, sqldb.Options{AppName: "tidemark-test"})
		if err != nil {
			tb.Errorf("sqltest: dropping %s: %v", name, err)
			return
		}
		defer r.Close()
		drop := "DROP DATABASE IF EXISTS " + k.Quote(name)
		if k == sqldb.Postgres {
			drop += " WITH (FORCE)"
		}
		if _, err := r.ExecContext(ctx, drop); err != nil {
			tb.Errorf("sqltest: dropping %s: %v", name, err)
		}
	})
	return d
}

func newSQLite(tb testing.TB) *DB {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "test.db")
	h, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(wal)")
	if err != nil {
		tb.Fatal(err)
	}
	if err := h.Ping(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close() })
	return &DB{Kind: sqldb.SQLite, Connection: "sqlite:" + path, Name: path, SQL: h}
}

// Exec runs statements (separated by ";\n") and fails the test on error.
func (d *DB) Exec(tb testing.TB, stmts string, args ...any) {
	tb.Helper()
	for _, s := range strings.Split(stmts, ";\n") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if _, err := d.SQL.Exec(s, args...); err != nil {
			tb.Fatalf("%s: %v\nstatement: %s", d.Kind, err, s)
		}
	}
}

// Count returns the result of a single-integer query.
func (d *DB) Count(tb testing.TB, query string, args ...any) int64 {
	tb.Helper()
	var n int64
	if err := d.SQL.QueryRow(query, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v\nquery: %s", d.Kind, err, query)
	}
	return n
}

// Strings returns the first column of every row of query, as text.
func (d *DB) Strings(tb testing.TB, query string, args ...any) []string {
	tb.Helper()
	rows, err := d.SQL.Query(query, args...)
	if err != nil {
		tb.Fatalf("%s: %v\nquery: %s", d.Kind, err, query)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			tb.Fatal(err)
		}
		if s.Valid {
			out = append(out, s.String)
		} else {
			out = append(out, "NULL")
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// Q quotes an identifier for d's database.
func (d *DB) Q(ident string) string { return d.Kind.Quote(ident) }
