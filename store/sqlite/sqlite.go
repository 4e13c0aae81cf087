// Package sqlite is tidemark's default state store: one SQLite file (WAL
// mode) that several tidemark processes may share. It registers itself for
// sqlite://PATH, sqlite:PATH, file://PATH and plain paths.
//
// The state is objcore's objects in the file's state_objects table
// (store/sqlobj): every write is one statement, and SQLite's write lock
// (waited for up to busyTimeout) serialises them, so two processes racing
// for a job's lease see a clean store.ErrLeaseHeld, never "database is
// locked". A file in the relational format before objects is converted
// once, on open (legacy.go).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	sqlitedrv "modernc.org/sqlite" // also registers the "sqlite" database/sql driver

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/objcore"
	"github.com/tidemark-etl/tidemark/store/sqlobj"
)

// busyTimeout is how long a statement waits for another connection's write
// lock before giving up. Write transactions are short (a 100k-file commit
// takes about a second), so this only matters under heavy contention.
const busyTimeout = 30 * time.Second

// Store is a store.Store backed by one SQLite database file: the
// object-state core (store/objcore) over the file's state_objects table.
type Store struct {
	*objcore.Store
	db   *sql.DB // nil when an old file is read through memory (readonly.go)
	path string
	// cleanup, when set, deletes the upgraded copy a read-only open of an
	// older file reads (openUpgradedCopy).
	cleanup func()
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.JobLister   = (*Store)(nil)
	_ store.LeaseReader = (*Store)(nil)
	_ store.Importer    = (*Store)(nil)
	_ catalog.Store     = (*Store)(nil)
)

func init() {
	store.Register("sqlite", func(ctx context.Context, location string) (store.Store, error) {
		return Open(ctx, pathFromLocation(location))
	})
	store.RegisterExisting("sqlite", func(ctx context.Context, location string, readOnly bool) (store.Store, error) {
		return OpenExisting(ctx, pathFromLocation(location), readOnly)
	})
}

// pathFromLocation turns a state location (sqlite://PATH, sqlite:PATH,
// file://PATH, file:PATH or a plain path) into a file path. sqlite:///abs
// and file:///abs name the absolute path /abs.
func pathFromLocation(location string) string {
	for _, prefix := range []string{"sqlite://", "sqlite:", "file://", "file:"} {
		if strings.HasPrefix(location, prefix) {
			return location[len(prefix):]
		}
	}
	return location
}

// Open opens (creating it and its parent directories if needed) the SQLite
// state database at path and brings its schema up to date. It refuses a
// database written by a newer tidemark (ErrSchemaTooNew). A state that
// cannot be written (a read-only folder or file) is an error that says so
// and names the path.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("opening sqlite state store: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("opening sqlite state store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
			return nil, fmt.Errorf("opening sqlite state store %s: cannot create its folder, which lies in a read-only place: %w", abs, err)
		}
		return nil, fmt.Errorf("opening sqlite state store %s: %w", path, err)
	}
	if info, err := os.Stat(abs); err == nil && info.IsDir() {
		return nil, fmt.Errorf("opening sqlite state store %s: it is a folder, not a state file", abs)
	}
	if why := filesNotWritable(abs); why != "" {
		return nil, fmt.Errorf("opening sqlite state store %s: the state is read-only (%s); commands that change state need to write it (runs, bookmark show and plan only read it)",
			abs, why)
	}
	s, err := open(ctx, abs, dsn(abs), false)
	if err != nil {
		if why := notWritable(abs); why != "" && isCantWrite(err) {
			return nil, fmt.Errorf("opening sqlite state store %s: the state is read-only (%s); commands that change state need to write it and its -wal and -shm files there (runs, bookmark show and plan only read it): %w",
				abs, why, err)
		}
		return nil, fmt.Errorf("opening sqlite state store %s: %w", path, err)
	}
	return s, nil
}

// open opens the database with dsn and the state it holds: an old
// (relational) state is converted first, unless readOnly (then
// errSchemaOld). Several processes creating one new file at once can see
// SQLITE_BUSY without SQLite calling the busy handler (switching a fresh
// file to WAL takes an exclusive lock that does not wait), so opening
// retries busy errors itself for as long as a statement would wait.
func open(ctx context.Context, abs, dsn string, readOnly bool) (*Store, error) {
	deadline := time.Now().Add(busyTimeout)
	for {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, err
		}
		var s *Store
		if readOnly {
			err = check(ctx, db)
		} else {
			err = initDB(ctx, db, abs)
		}
		if err == nil {
			s, err = openObjects(ctx, db, abs, readOnly)
		}
		if err == nil {
			return s, nil
		}
		db.Close()
		if !isBusy(err) || time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(5+rand.IntN(45)) * time.Millisecond):
		}
	}
}

// objects is the dialect of the objects table.
var objects = sqlobj.SQLite

// openObjects opens the object store in db's state_objects table.
func openObjects(ctx context.Context, db *sql.DB, abs string, readOnly bool) (*Store, error) {
	b := sqlobj.New(db, objects, abs+"#")
	core, err := objcore.Open(ctx, b, objcore.Options{Kind: "sqlite", MustExist: readOnly, ReadOnly: readOnly})
	if err != nil {
		return nil, err
	}
	return &Store{Store: core, db: db, path: abs}, nil
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var se *sqlitedrv.Error
	return errors.As(err, &se) && se.Code()&0xff == 5
}

// dsn builds a modernc.org/sqlite DSN: a file: URI (so that '?', '#' and '%'
// in the path are escaped) whose underscore parameters the driver applies to
// every new connection, busy_timeout first.
func dsn(abs string) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	// FULL, not NORMAL: a commit is followed by publishing output, so a
	// commit lost to a power cut after publishing would duplicate output.
	q.Set("_synchronous", "FULL")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
}

// initDB checks the connection settings took effect and brings the file
// to the objects format: creating it, or converting an old state.
func initDB(ctx context.Context, db *sql.DB, abs string) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal (is the file on a file system without shared memory?)", mode)
	}
	return upgrade(ctx, db, abs)
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	var err error
	if s.db != nil {
		err = s.db.Close()
	}
	if s.cleanup != nil {
		s.cleanup()
	}
	return err
}

// Identity returns the id made when the state was created (kept when an
// old state was converted) and the file's absolute path.
func (s *Store) Identity(ctx context.Context) (store.Identity, error) {
	id, err := s.Store.Identity(ctx)
	return store.Identity{ID: id.ID, Location: s.path}, err
}

// Stats reports the core's counts of objects, segments and jobs, and the
// database size in bytes ("db_bytes", page_count * page_size, WAL
// excluded).
func (s *Store) Stats(ctx context.Context) (map[string]int64, error) {
	st, err := s.Store.Stats(ctx)
	if err != nil || s.db == nil {
		return st, err
	}
	var pages, pageSize int64
	if err := s.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		return nil, fmt.Errorf("reading stats of %s: %w", s.path, err)
	}
	if err := s.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil {
		return nil, fmt.Errorf("reading stats of %s: %w", s.path, err)
	}
	st["db_bytes"] = pages * pageSize
	return st, nil
}
