// Package postgres is a tidemark state store in a PostgreSQL database, for
// jobs run from many hosts (Kubernetes CronJobs, Airflow workers, two cron
// boxes): every host reaches the same state. It registers itself for
// postgres:// and postgresql:// state URLs:
//
//	state: postgres://etl@db.internal:5432/tidemark
//	state: postgres://etl@db.internal:5432/shared?schema=tidemark_sales&sslmode=verify-full
//
// The password follows libpq's conventions and never travels in the URL:
// PGPASSWORD, ~/.pgpass (PGPASSFILE), or a service of pg_service.conf
// (PGSERVICE, ?service=NAME). A URL holding a password is refused, and every
// message names the store by its URL without secrets.
//
// The state lives in a schema of its own, tidemark unless the URL's schema
// parameter names another (a lower-case SQL identifier), so that several
// independent stores can share one database. The schema is versioned: a
// first open creates it and later opens migrate it, under a transaction-
// scoped advisory lock, so that many processes opening a new store at once
// migrate it once.
//
// The state is objcore's objects in the schema's state_objects table
// (store/sqlobj): every write is one statement, a conditional INSERT or
// UPDATE of one row, so the writes of one job are serialised on its head
// row and different jobs never wait for each other. Lease expiry is judged
// by the database's clock (clock_timestamp()), never the client's. A host
// that stops in the middle of a write frees its row within 30 s (the
// sessions' idle_in_transaction_session_timeout and TCP keepalives). A
// schema in the relational format before objects is converted once, on
// open (legacy.go).
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/objcore"
	"github.com/tidemark-etl/tidemark/store/sqlobj"
)

// DefaultSchema is the schema the state lives in when the URL names none.
const DefaultSchema = "tidemark"

// sessionDefaults are the server settings of every session, unless the URL
// sets them: a write transaction left idle is ended (its row locks freed)
// after 30 s, and a client that stops answering is found within a minute.
var sessionDefaults = map[string]string{
	"idle_in_transaction_session_timeout": "30s",
	"tcp_keepalives_idle":                 "30",
	"tcp_keepalives_interval":             "10",
	"tcp_keepalives_count":                "3",
}

// Store is a store.Store and a catalog.Store in a PostgreSQL schema: the
// object-state core (store/objcore) over the schema's state_objects table.
type Store struct {
	*objcore.Store
	*conn
	db *sql.DB // over the pool, for the objects table
}

// conn is a connection to the database of one state schema.
type conn struct {
	pool *pgxpool.Pool
	// where is the location for messages, without secrets.
	where string
	// schema is the schema the tables live in.
	schema string
	// password is what libpq's conventions gave, masked in every error.
	password string
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.JobLister   = (*Store)(nil)
	_ store.LeaseReader = (*Store)(nil)
	_ store.Importer    = (*Store)(nil)
	_ catalog.Store     = (*Store)(nil)
)

func init() {
	for _, scheme := range []string{"postgres", "postgresql"} {
		store.Register(scheme, func(ctx context.Context, location string) (store.Store, error) {
			return Open(ctx, location)
		})
		store.RegisterExisting(scheme, func(ctx context.Context, location string, readOnly bool) (store.Store, error) {
			return OpenExisting(ctx, location, readOnly)
		})
	}
}

// Open connects to the database of location, creates the state schema if
// it is missing, or converts a relational one (the format before objects),
// and opens the objects. A schema written by a newer tidemark is refused
// (ErrSchemaTooNew).
func Open(ctx context.Context, location string) (*Store, error) {
	c, err := connect(ctx, location, false)
	if err != nil {
		return nil, err
	}
	if err := c.upgrade(ctx); err != nil {
		c.pool.Close()
		return nil, c.fail("opening postgres state store", err)
	}
	return c.open(ctx, false)
}

// OpenExisting opens a state schema that must exist: store.ErrNoState if
// the database or the schema's tables do not, and nothing is created. With
// readOnly every session is read-only (default_transaction_read_only): a
// relational schema is then read into memory, not converted.
func OpenExisting(ctx context.Context, location string, readOnly bool) (*Store, error) {
	c, err := connect(ctx, location, readOnly)
	if err != nil {
		if isCode(err, "3D000") { // invalid_catalog_name: no such database
			return nil, fmt.Errorf("%w: %s: the database does not exist", store.ErrNoState, store.Redact(location))
		}
		return nil, err
	}
	v, err := c.schemaVersion(ctx, c.pool)
	if err != nil {
		c.pool.Close()
		return nil, c.fail("opening postgres state store", err)
	}
	switch {
	case v < 0:
		c.pool.Close()
		return nil, fmt.Errorf("%w: %s has no tidemark state in schema %q", store.ErrNoState, c.where, c.schema)
	case v > objectsVersion:
		c.pool.Close()
		return nil, c.fail("opening postgres state store", tooNew(v))
	case v < objectsVersion && readOnly:
		return c.openLegacy(ctx, v)
	case v < objectsVersion:
		if err := c.upgrade(ctx); err != nil {
			c.pool.Close()
			return nil, c.fail("opening postgres state store", err)
		}
	}
	return c.open(ctx, readOnly)
}

// objects is the dialect of the objects table, its errors redacted.
func (c *conn) objects() sqlobj.Dialect {
	d := sqlobj.Postgres
	d.Fail = func(err error) error { return &redacted{msg: redactText(err.Error(), c.password), err: err} }
	return d
}

// open opens the objects of the schema, which is at objectsVersion.
func (c *conn) open(ctx context.Context, readOnly bool) (*Store, error) {
	db := stdlib.OpenDBFromPool(c.pool)
	b := sqlobj.New(db, c.objects(), c.where+"#")
	core, err := objcore.Open(ctx, b, objcore.Options{Kind: "postgres", MustExist: readOnly, ReadOnly: readOnly})
	if err != nil {
		db.Close()
		c.pool.Close()
		return nil, c.fail("opening postgres state store", err)
	}
	return &Store{Store: core, conn: c, db: db}, nil
}

// identRE is the schema names accepted: plain lower-case identifiers, so
// that the name means the same quoted or not.
var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// connect parses location, refuses a password in it, connects and checks
// that the server answers.
func connect(ctx context.Context, location string, readOnly bool) (*conn, error) {
	where := store.Redact(location)
	u, err := url.Parse(location)
	if err != nil {
		return nil, fmt.Errorf("opening postgres state store %s: not a valid URL (postgres://user@host:port/database)", where)
	}
	if _, has := u.User.Password(); has {
		return nil, fmt.Errorf("opening postgres state store %s: the URL holds a password; give it in PGPASSWORD or ~/.pgpass "+
			"(or a pg_service.conf service), never in the URL", where)
	}
	if found, _ := secret.Find(location); len(found) > 0 {
		return nil, fmt.Errorf("opening postgres state store %s: the URL holds a secret (%s); give the password in PGPASSWORD or ~/.pgpass, never in the URL",
			where, secret.Describe(found))
	}
	q := u.Query()
	schema := DefaultSchema
	if q.Has("schema") {
		schema = q.Get("schema")
		q.Del("schema")
	}
	if !identRE.MatchString(schema) {
		return nil, fmt.Errorf("opening postgres state store %s: schema %q: want a lower-case name of letters, digits and _ (at most 63)", where, schema)
	}
	// pgconn does not read '+' as a space (options=-c%20x=y).
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("opening postgres state store %s: %s", where, redactText(err.Error(), ""))
	}
	s := &conn{where: where, schema: schema, password: cfg.ConnConfig.Password}
	rp := cfg.ConnConfig.RuntimeParams
	rp["search_path"] = pgx.Identifier{schema}.Sanitize()
	rp["TimeZone"] = "UTC"
	if rp["application_name"] == "" {
		rp["application_name"] = "tidemark"
	}
	if readOnly {
		rp["default_transaction_read_only"] = "on"
	}
	// A host that stops mid-transaction (partitioned, paused, hung) must
	// not keep its job's lease row locked past its lease: the server ends
	// a transaction left idle, and probes a silent client, within about a
	// lease's TTL. The URL may set each (?idle_in_transaction_session_timeout=10s).
	for k, v := range sessionDefaults {
		if _, set := rp[k]; !set {
			rp[k] = v
		}
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 30 * time.Second
	}
	// Streams hold a connection while the caller reads them; a few beside
	// one another and a commit must not wait for each other.
	if !strings.Contains(location, "pool_max_conns") && cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, s.fail("opening postgres state store", err)
	}
	if err := s.pool.Ping(ctx); err != nil {
		s.pool.Close()
		return nil, s.fail("connecting to postgres state store", err)
	}
	var enc string
	if err := s.pool.QueryRow(ctx, `SHOW server_encoding`).Scan(&enc); err != nil {
		s.pool.Close()
		return nil, s.fail("connecting to postgres state store", err)
	}
	if enc != "UTF8" {
		s.pool.Close()
		return nil, s.fail("opening postgres state store",
			fmt.Errorf("the database's encoding is %s; tidemark keeps paths as UTF-8 text and needs a UTF8 database (CREATE DATABASE ... ENCODING 'UTF8')", enc))
	}
	return s, nil
}

// Schema returns the schema the state lives in.
func (s *conn) Schema() string { return s.schema }

// Close closes the connections.
func (s *Store) Close() error {
	s.db.Close()
	s.pool.Close()
	return nil
}

// Identity returns the id made when the state was created (kept when a
// relational state was converted) and the URL without secrets.
func (s *Store) Identity(ctx context.Context) (store.Identity, error) {
	id, err := s.Store.Identity(ctx)
	return store.Identity{ID: id.ID, Location: s.where}, err
}

// Stats reports the core's counts of objects, segments and jobs, and
// db_bytes, the size of every table of the schema together (heap,
// indexes and TOAST).
func (s *Store) Stats(ctx context.Context) (map[string]int64, error) {
	st, err := s.Store.Stats(ctx)
	if err != nil {
		return nil, err
	}
	var total int64
	err = s.pool.QueryRow(ctx, `
		SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'm')`, s.schema).Scan(&total)
	if err != nil {
		return nil, s.fail("reading stats", err)
	}
	st["db_bytes"] = total
	return st, nil
}

// fail wraps err with what was being done and where, with the password
// masked wherever a driver might have echoed it.
func (s *conn) fail(what string, err error) error {
	if err == nil {
		return nil
	}
	// pgx lists each address it tried on a line of its own: one line here.
	msg := strings.Join(strings.Fields(fmt.Sprintf("%s in %s: %v", what, s.where, err)), " ")
	return &redacted{msg: redactText(msg, s.password), err: err}
}

// redacted is an error whose text has its secrets masked; errors.Is and
// errors.As still see the error it wraps.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// redactText masks password (when set) in text.
func redactText(text, password string) string {
	if password != "" {
		text = strings.ReplaceAll(text, password, secret.Mask)
	}
	return text
}

// isCode reports whether err is a PostgreSQL error with SQLSTATE code.
func isCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}
