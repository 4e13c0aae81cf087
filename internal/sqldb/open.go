// Package sqldb connects tidemark to the SQL databases it reads and writes:
// PostgreSQL (postgres://, through pgx), MySQL and MariaDB (mysql://, through
// go-sql-driver/mysql) and SQLite (sqlite:PATH, through modernc.org/sqlite).
// It is shared by source/sqltable and sink/sqltable, which must not import
// each other.
//
// Passwords never travel in a connection string: they come from the
// environment variable a job names (password_env), and every error that
// leaves a DB passes through Redact, which replaces the password wherever a
// driver might have echoed it.
//
// Sessions are pinned so that values read as text are the same on every
// run: PostgreSQL gets DateStyle ISO, TimeZone UTC, IntervalStyle postgres,
// bytea_output hex and extra_float_digits 3; MySQL gets time_zone +00:00
// and the text protocol (parameters interpolated client side), so every
// value arrives as the server's text.
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // driver "sqlite"

	"github.com/tidemark-etl/tidemark/internal/secret"
)

func init() {
	// The MySQL driver logs lost connections on its own; tidemark reports
	// them as errors.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
}

// Kind is a database family.
type Kind int

// The database families.
const (
	Postgres Kind = iota + 1
	MySQL         // MySQL and MariaDB
	SQLite
)

func (k Kind) String() string {
	switch k {
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	case SQLite:
		return "sqlite"
	}
	return "unknown"
}

// DB is an open database handle. Its errors should pass through Redact
// before they reach a message.
type DB struct {
	*sql.DB
	Kind Kind
	// Where describes the database for messages, without a password:
	// postgres://etl@127.0.0.1:5432/shop.
	Where  string
	secret string
}

// Options tune Open.
type Options struct {
	// AppName is reported to the server (PostgreSQL application_name), so
	// that an operator can see which job a session belongs to.
	AppName string
	// ReadOnly opens SQLite files read-only.
	ReadOnly bool
}

// Open connects to connection (postgres://..., mysql://..., sqlite:PATH)
// with the password from the environment variable passwordEnv (none when
// empty), and checks that the server answers. A connection string that
// carries a password itself is refused: passwords come from the
// environment only.
func Open(ctx context.Context, connection, passwordEnv string, opts Options) (*DB, error) {
	var password string
	if passwordEnv != "" {
		v, ok := os.LookupEnv(passwordEnv)
		if !ok {
			return nil, fmt.Errorf("password_env: environment variable %s is not set", passwordEnv)
		}
		password = v
	}
	kind, err := KindOf(connection)
	if err != nil {
		return nil, err
	}
	db := &DB{Kind: kind, secret: password}
	switch kind {
	case Postgres:
		err = db.openPostgres(connection, password, opts)
	case MySQL:
		err = db.openMySQL(connection, password)
	case SQLite:
		err = db.openSQLite(connection, opts)
	}
	if err != nil {
		return nil, db.Redact(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, db.Redact(fmt.Errorf("connecting to %s: %w", db.Where, err))
	}
	return db, nil
}

// Schemes are the forms a connection string takes, as the job file's
// check lists them.
var Schemes = []string{"postgres://", "postgresql://", "mysql://", "mariadb://", "sqlite:"}

// KindOf tells the database family of a connection string by its scheme.
func KindOf(connection string) (Kind, error) {
	switch {
	case strings.HasPrefix(connection, "postgres://"), strings.HasPrefix(connection, "postgresql://"):
		return Postgres, nil
	case strings.HasPrefix(connection, "mysql://"), strings.HasPrefix(connection, "mariadb://"):
		return MySQL, nil
	case strings.HasPrefix(connection, "sqlite:"):
		return SQLite, nil
	}
	// The string is not quoted: one of another form (host=... password=...)
	// may hold a password.
	if scheme, _, ok := strings.Cut(connection, "://"); ok && schemeRE.MatchString(scheme) {
		return 0, fmt.Errorf("connection: scheme %q is not one of postgres://, mysql:// or sqlite:PATH", scheme)
	}
	return 0, errors.New("connection: not a URL: want postgres://, mysql:// or sqlite:PATH")
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// parseURL parses a postgres:// or mysql:// connection and refuses an
// inline password. Its errors never quote the string.
func parseURL(connection string) (*url.URL, error) {
	u, err := url.Parse(connection)
	if err != nil {
		return nil, errors.New("connection: not a valid URL (scheme://user@host:port/database)")
	}
	if _, has := u.User.Password(); has {
		return nil, errors.New("connection: must not contain a password; name an environment variable in password_env")
	}
	if found, _ := secret.Find(connection); len(found) > 0 {
		return nil, fmt.Errorf("connection: must not contain a secret (%s); name an environment variable in password_env", secret.Describe(found))
	}
	return u, nil
}

// where renders a URL for messages: no password, no query.
func where(u *url.URL) string {
	c := *u
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}

// pgSession pins the settings that make text output stable.
var pgSession = map[string]string{
	"DateStyle":          "ISO, YMD",
	"TimeZone":           "UTC",
	"IntervalStyle":      "postgres",
	"bytea_output":       "hex",
	"extra_float_digits": "3",
	"client_encoding":    "UTF8",
}

func (db *DB) openPostgres(connection, password string, opts Options) error {
	u, err := parseURL(connection)
	if err != nil {
		return err
	}
	db.Where = where(u)
	cfg, err := pgx.ParseConfig(connection)
	if err != nil {
		return fmt.Errorf("connection %s: %w", db.Where, err)
	}
	if password != "" {
		cfg.Password = password
	}
	for k, v := range pgSession {
		cfg.RuntimeParams[k] = v
	}
	if opts.AppName != "" {
		cfg.RuntimeParams["application_name"] = opts.AppName
	}
	db.DB = stdlib.OpenDB(*cfg)
	return nil
}

func (db *DB) openMySQL(connection, password string) error {
	u, err := parseURL(connection)
	if err != nil {
		return err
	}
	db.Where = where(u)
	host := u.Host
	if u.Port() == "" {
		host += ":3306"
	}
	dsn := "tcp(" + host + ")/" + strings.TrimPrefix(u.Path, "/")
	if u.RawQuery != "" {
		dsn += "?" + u.RawQuery
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("connection %s: %w", db.Where, err)
	}
	cfg.User = u.User.Username()
	cfg.Passwd = password
	cfg.InterpolateParams = true // text protocol: every value arrives as text
	cfg.ParseTime = false
	cfg.MultiStatements = false
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	cfg.Collation = "utf8mb4_general_ci"
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("connection %s: %w", db.Where, err)
	}
	db.DB = sql.OpenDB(connector)
	return nil
}

func (db *DB) openSQLite(connection string, opts Options) error {
	path := strings.TrimPrefix(strings.TrimPrefix(connection, "sqlite:"), "//")
	if path == "" {
		return errors.New("connection: sqlite: needs a file path (sqlite:PATH)")
	}
	db.Where = "sqlite:" + path
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("connection %s: %w", db.Where, err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	if opts.ReadOnly {
		q.Add("mode", "ro")
	}
	d, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("connection %s: %w", db.Where, err)
	}
	db.DB = d
	return nil
}

// Redact returns err with the password replaced by "xxxxx" wherever it
// appears in the message; errors.Is and errors.As still see the original.
func (db *DB) Redact(err error) error {
	if err == nil || db == nil || db.secret == "" {
		return err
	}
	msg := err.Error()
	out := msg
	// As given, and as a driver may have escaped it into a DSN or URL.
	for _, form := range []string{db.secret, url.QueryEscape(db.secret), url.PathEscape(db.secret), url.UserPassword("", db.secret).String()[1:]} {
		if form != "" {
			out = strings.ReplaceAll(out, form, "xxxxx")
		}
	}
	if out == msg {
		return err
	}
	return &redacted{msg: out, err: err}
}

// Errorf formats an error like fmt.Errorf and redacts it.
func (db *DB) Errorf(format string, args ...any) error {
	return db.Redact(fmt.Errorf(format, args...))
}

type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }
