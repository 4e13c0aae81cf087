package sqlite

// Opening existing state, and read-only: for the commands that only read
// state (runs, bookmark show, plan) and must work on a read-only folder or
// file, and for messages that say a state is read-only.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	sqlitedrv "modernc.org/sqlite"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/objcore"
	"github.com/tidemark-etl/tidemark/store/sqlobj"
)

// OpenExisting opens the state database at path, which must exist: it
// never creates a file or folder (store.ErrNoState if there is none). With
// readOnly it writes nothing at all and works on a read-only folder or
// file (see openReadOnly); a file an older tidemark wrote is then read
// through an upgraded copy (see openUpgradedCopy), the file left as it is.
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
	immutable := false
	s, err := open(ctx, abs, dsnReadOnly(abs, false), true)
	if err != nil && isCantWrite(err) && !exists(abs+"-wal") && !exists(abs+"-shm") && notWritable(abs) != "" {
		immutable = true
		s, err = open(ctx, abs, dsnReadOnly(abs, true), true)
	}
	if errors.Is(err, errLegacy) {
		s, err = openLegacy(ctx, abs, dsnReadOnly(abs, immutable))
	}
	if errors.Is(err, errSchemaOld) {
		s, err = openUpgradedCopy(ctx, abs, immutable)
	}
	if err != nil {
		if why := notWritable(abs); why != "" && isCantWrite(err) {
			return nil, fmt.Errorf("opening sqlite state store %s read-only (%s): %w", abs, why, err)
		}
		return nil, fmt.Errorf("opening sqlite state store %s read-only: %w", abs, err)
	}
	return s, nil
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
	f, err := os.CreateTemp(dir, ".tidemark-write-probe-*")
	if err != nil {
		return fmt.Sprintf("the folder %s is not writable: %v", dir, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
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

// check is initDB for a read-only connection: the file must be a
// tidemark state database in the objects format (errLegacy at the last
// relational version, errSchemaOld before it: migrating needs a write).
func check(ctx context.Context, db *sql.DB) error {
	var appID int64
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return err
	}
	if appID != applicationID {
		return fmt.Errorf("not a tidemark state database (application_id %#x)", appID)
	}
	var v int
	if err := db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	switch {
	case v > objectsVersion:
		return fmt.Errorf("%w: the file has schema version %d, this tidemark knows up to %d; upgrade tidemark",
			ErrSchemaTooNew, v, objectsVersion)
	case v == len(migrations):
		return errLegacy
	case v < len(migrations):
		return fmt.Errorf("%w: the file has schema version %d and needs an upgrade to %d, which takes a write", errSchemaOld, v, len(migrations))
	}
	return nil
}

// errLegacy marks a relational state at the last relational version: a
// read-only open reads it into memory (openLegacy).
var errLegacy = errors.New("state database is in the relational format")

// openLegacy reads a relational state without writing it: every job and
// the catalog are copied into an object store in memory, which the store
// reads (read-only); the file is left as it is.
func openLegacy(ctx context.Context, abs, dsn string) (*Store, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	core, err := sqlobj.CopyState(ctx, newLegacy(db, abs), objcore.NewMemBackend(abs+"#", nil), "sqlite", true)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("reading the relational state into memory: %w", err)
	}
	return &Store{Store: core, db: db, path: abs}, nil
}

// errSchemaOld marks a database an older tidemark wrote, whose schema a
// read-only open cannot upgrade in place.
var errSchemaOld = errors.New("state database schema is older than this tidemark's")

// openUpgradedCopy reads a database an older tidemark wrote without
// writing it: a consistent copy (VACUUM INTO, which a read-only connection
// may run) is made in a temporary folder and upgraded there, and the store
// reads the copy; Close deletes it. Messages name the original file.
func openUpgradedCopy(ctx context.Context, abs string, immutable bool) (*Store, error) {
	dir, err := os.MkdirTemp("", "tidemark-state-view-")
	if err != nil {
		return nil, fmt.Errorf("opening sqlite state store %s read-only: making a folder for an upgraded copy: %w", abs, err)
	}
	cp := filepath.Join(dir, "state.db")
	src, err := sql.Open("sqlite", dsnReadOnly(abs, immutable))
	if err == nil {
		_, err = src.ExecContext(ctx, "VACUUM INTO ?", cp)
		src.Close()
	}
	var s *Store
	if err == nil {
		s, err = Open(ctx, cp)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("opening sqlite state store %s read-only: reading it through an upgraded copy: %w", abs, err)
	}
	s.path, s.cleanup = abs, func() { os.RemoveAll(dir) }
	return s, nil
}
