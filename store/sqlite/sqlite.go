// Package sqlite is tidemark's default state store: one SQLite file (WAL
// mode) that several tidemark processes may share. It registers itself for
// sqlite://PATH, sqlite:PATH, file://PATH and plain paths.
//
// Every write runs in a BEGIN IMMEDIATE transaction, so two processes racing
// for a job's lease serialise on SQLite's write lock (waiting up to
// busyTimeout) and the loser sees a clean store.ErrLeaseHeld, never
// "database is locked".
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

	"github.com/tidemark-etl/tidemark/store"
)

// busyTimeout is how long a statement waits for another connection's write
// lock before giving up. Write transactions are short (a 100k-file commit
// takes about a second), so this only matters under heavy contention.
const busyTimeout = 30 * time.Second

// Store is a store.Store backed by one SQLite database file.
type Store struct {
	db   *sql.DB
	path string
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.JobLister = (*Store)(nil)
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

// OpenExisting opens the state database at path, which must exist: it
// never creates a file or folder (store.ErrNoState if there is none). With
// readOnly it writes nothing at all and works on a read-only folder or
// file (see openReadOnly); the schema must then be current.
func OpenExisting(ctx context.Context, path string, readOnly bool) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("opening sqlite state store: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("opening sqlite state store %s: %w", path, err)
	}
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s does not exist", store.ErrNoState, abs)
	case err != nil:
		return nil, fmt.Errorf("opening sqlite state store %s: %w", abs, err)
	case info.IsDir():
		return nil, fmt.Errorf("opening sqlite state store %s: it is a folder, not a state file", abs)
	case info.Size() == 0:
		return nil, fmt.Errorf("%w: %s is an empty file", store.ErrNoState, abs)
	}
	if !readOnly {
		return Open(ctx, abs)
	}
	return openReadOnly(ctx, abs)
}

// openReadOnly opens an existing database with mode=ro: SQLite reads it
// with its usual locks, so a writer may be active at the same time (WAL
// mode lets readers read a consistent snapshot while it writes). In WAL
// mode a reader needs the -shm file: it creates it when the folder is
// writable, and uses an existing one (a writer is, or was, active) even
// when it cannot write it. Only when neither -wal nor -shm exists and the
// folder is not writable (no tidemark can be writing there then, unless
// another user can write the folder) is the file opened immutable=1:
// without locks, which is safe as long as nothing writes it meanwhile.
func openReadOnly(ctx context.Context, abs string) (*Store, error) {
	s, err := open(ctx, abs, dsnReadOnly(abs, false), true)
	if err != nil && isCantWrite(err) && !exists(abs+"-wal") && !exists(abs+"-shm") && notWritable(abs) != "" {
		s, err = open(ctx, abs, dsnReadOnly(abs, true), true)
	}
	if err != nil {
		if why := notWritable(abs); why != "" && isCantWrite(err) {
			return nil, fmt.Errorf("opening sqlite state store %s read-only (%s): %w", abs, why, err)
		}
		return nil, fmt.Errorf("opening sqlite state store %s read-only: %w", abs, err)
	}
	return s, nil
}

// open opens the database with dsn and checks or migrates its schema.
// Several processes creating one new file at once can see SQLITE_BUSY
// without SQLite calling the busy handler (switching a fresh file to WAL
// takes an exclusive lock that does not wait), so opening retries busy
// errors itself for as long as a statement would wait.
func open(ctx context.Context, abs, dsn string, readOnly bool) (*Store, error) {
	deadline := time.Now().Add(busyTimeout)
	for {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, err
		}
		s := &Store{db: db, path: abs}
		if readOnly {
			err = s.check(ctx)
		} else {
			err = s.init(ctx)
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

// isCantWrite reports whether err is SQLite failing for want of write
// access: SQLITE_CANTOPEN (it could not create the -shm or -wal file, or
// open the file for writing) or SQLITE_READONLY.
func isCantWrite(err error) bool {
	var se *sqlitedrv.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == 14 || code == 8
}

// notWritable says why the state at abs cannot be written ("" if it can):
// its folder, the file or its -wal/-shm files are read-only.
func notWritable(abs string) string {
	dir := filepath.Dir(abs)
	if f, err := os.CreateTemp(dir, ".tidemark-write-probe-*"); err != nil {
		return fmt.Sprintf("the folder %s is not writable: %v", dir, errors.Unwrap(err))
	} else {
		f.Close()
		os.Remove(f.Name())
	}
	return filesNotWritable(abs)
}

// filesNotWritable says which of the database file and its -wal and -shm
// files exists and cannot be written ("" if none): SQLite would open such
// a file read-only without a word and fail at the first write.
func filesNotWritable(abs string) string {
	for _, p := range []string{abs, abs + "-wal", abs + "-shm"} {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Sprintf("the file %s is not writable: %v", p, errors.Unwrap(err))
		}
		f.Close()
	}
	return ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
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

// dsnReadOnly is the DSN of a read-only connection: mode=ro, no journal
// mode or schema changes, plain BEGIN; with immutable, SQLite takes no
// locks and ignores -wal and -shm (see openReadOnly).
func dsnReadOnly(abs string, immutable bool) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("mode", "ro")
	if immutable {
		q.Set("immutable", "1")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
}

// init checks the connection settings took effect and migrates the schema.
func (s *Store) init(ctx context.Context) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal (is the file on a file system without shared memory?)", mode)
	}
	return migrate(ctx, s.db)
}

// check is init for a read-only connection: the file must be a tidemark
// state database at the current schema version (migrating needs a write).
func (s *Store) check(ctx context.Context) error {
	var appID int64
	if err := s.db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return err
	}
	if appID != applicationID {
		return fmt.Errorf("not a tidemark state database (application_id %#x)", appID)
	}
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	switch {
	case v > len(migrations):
		return fmt.Errorf("%w: the file has schema version %d, this tidemark knows up to %d; upgrade tidemark",
			ErrSchemaTooNew, v, len(migrations))
	case v < len(migrations):
		return fmt.Errorf("the file has schema version %d and needs an upgrade to %d, which takes a write: run a command that writes state (tidemark run) first", v, len(migrations))
	}
	return nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Stats reports the database size in bytes ("db_bytes", page_count *
// page_size, WAL excluded) and the row counts of the file records, runs and
// outputs tables ("files", "runs", "outputs").
func (s *Store) Stats(ctx context.Context) (map[string]int64, error) {
	var pages, pageSize, files, runs, outputs int64
	err := s.read(ctx, func(tx *sql.Tx) error {
		for _, q := range []struct {
			sql string
			dst *int64
		}{
			{"PRAGMA page_count", &pages},
			{"PRAGMA page_size", &pageSize},
			{"SELECT count(*) FROM files", &files},
			{"SELECT count(*) FROM runs", &runs},
			{"SELECT count(*) FROM outputs", &outputs},
		} {
			if err := tx.QueryRowContext(ctx, q.sql).Scan(q.dst); err != nil {
				return fmt.Errorf("%s: %w", q.sql, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading stats of %s: %w", s.path, err)
	}
	return map[string]int64{
		"db_bytes": pages * pageSize,
		"files":    files,
		"runs":     runs,
		"outputs":  outputs,
	}, nil
}
