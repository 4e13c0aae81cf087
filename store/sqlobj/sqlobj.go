// Package sqlobj is an objcore.Backend in one SQL table, so that a SQLite
// file or a PostgreSQL schema holds the same objects, under the same rules,
// as an S3 prefix:
//
//	state_objects(key text primary key, body blob, etag text, modified)
//
// A create-only write is an INSERT that does nothing on a conflict, an
// If-Match write an UPDATE ... WHERE etag = the one given: the rows it
// affected decide, and the database's row locks make either atomic. Keys
// sort in byte order (SQLite's BINARY collation, PostgreSQL's "C"). The
// SQL is one text for both databases; a Dialect gives what differs: the
// placeholders, the blob type and the clock.
package sqlobj

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tidemark-etl/tidemark/store/objcore"
)

// Table is the table that holds the objects.
const Table = "state_objects"

// Dialect is what differs between the databases.
type Dialect struct {
	// Name names the database in messages ("sqlite", "postgres").
	Name string
	// Dollar numbers placeholders $1, $2, ... (PostgreSQL); otherwise they
	// are ?.
	Dollar bool
	// Blob is the type of the body column (BLOB, bytea).
	Blob string
	// KeyType is the type of the key column, with a byte-order collation
	// where the default is not one (text COLLATE "C").
	KeyType string
	// NowNS is the SQL expression of the clock in Unix ns, which stamps
	// the modified column.
	NowNS string
	// Clock is the query that reads the database's clock as a timestamp
	// (SELECT clock_timestamp()); "" means this host's clock judges (one
	// host's database file: no other host's clock to disagree with).
	Clock string
	// Fail wraps an error of the driver (to mask secrets it may echo);
	// nil: as it is.
	Fail func(error) error
}

// Querier is what the backend runs its statements on: a *sql.DB, or a
// *sql.Tx for writes that must land together with others (an import).
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Backend is the objects of one table.
type Backend struct {
	q      Querier
	d      Dialect
	root   string
	serial *sync.Mutex // over a transaction: one statement at a time

	clockMu sync.Mutex
	last    time.Time // the latest time Now returned: it never goes back
}

var _ objcore.Backend = (*Backend)(nil)

// New returns the backend over the table in q, named root in messages
// (sqlite:///path/state.db/, postgres://host/db?schema=s/). Create makes
// the table first.
func New(q Querier, d Dialect, root string) *Backend {
	b := &Backend{q: q, d: d, root: root}
	if _, ok := q.(*sql.Tx); ok {
		// A transaction is one connection: the store's concurrent reads
		// take turns on it (a driver refuses a query while another's rows
		// are open).
		b.serial = &sync.Mutex{}
	}
	return b
}

// lock serialises statements over a transaction.
func (b *Backend) lock() func() {
	if b.serial == nil {
		return func() {}
	}
	b.serial.Lock()
	return b.serial.Unlock
}

// Create makes the table if it is missing.
func Create(ctx context.Context, q Querier, d Dialect) error {
	_, err := q.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+Table+` (
	key      `+d.KeyType+` PRIMARY KEY,
	body     `+d.Blob+` NOT NULL,
	etag     text NOT NULL,
	modified bigint NOT NULL -- Unix ns on the backend's clock
)`)
	if err != nil {
		return fmt.Errorf("creating table %s: %w", Table, wrap(d, err))
	}
	return nil
}

// Exists reports whether q has the table.
func Exists(ctx context.Context, q Querier, d Dialect) (bool, error) {
	var n int
	query := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	if d.Dollar {
		query = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1`
	}
	if err := q.QueryRowContext(ctx, query, Table).Scan(&n); err != nil {
		return false, fmt.Errorf("looking for table %s: %w", Table, wrap(d, err))
	}
	return n > 0, nil
}

// Root returns the name the backend was made with.
func (b *Backend) Root() string { return b.root }

// sql rewrites the ? placeholders of query for the dialect.
func (b *Backend) sql(query string) string {
	if !b.d.Dollar {
		return query
	}
	var sb strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			fmt.Fprintf(&sb, "$%d", n)
			continue
		}
		sb.WriteRune(c)
	}
	return sb.String()
}

// fail says what was being done to which object.
func (b *Backend) fail(doing, key string, err error) error {
	return fmt.Errorf("%s %s: %w", doing, b.root+key, wrap(b.d, err))
}

func wrap(d Dialect, err error) error {
	if d.Fail != nil {
		return d.Fail(err)
	}
	return err
}

// Get reads the object at key.
func (b *Backend) Get(ctx context.Context, key string) (objcore.Object, error) {
	var o objcore.Object
	unlock := b.lock()
	err := b.q.QueryRowContext(ctx, b.sql(`SELECT body, etag FROM `+Table+` WHERE key = ?`), key).Scan(&o.Body, &o.ETag)
	unlock()
	if errors.Is(err, sql.ErrNoRows) {
		return objcore.Object{}, fmt.Errorf("reading %s: %w", b.root+key, objcore.ErrMissing)
	}
	if err != nil {
		return objcore.Object{}, b.fail("reading", key, err)
	}
	if o.Body == nil {
		o.Body = []byte{}
	}
	return o, nil
}

// Open reads the object at key whole and streams it from memory: state
// objects are small (a segment is at most a few MB).
func (b *Backend) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	o, err := b.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(o.Body)), nil
}

// Stat returns the ETag of the object at key.
func (b *Backend) Stat(ctx context.Context, key string) (string, error) {
	var etag string
	unlock := b.lock()
	err := b.q.QueryRowContext(ctx, b.sql(`SELECT etag FROM `+Table+` WHERE key = ?`), key).Scan(&etag)
	unlock()
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("reading %s: %w", b.root+key, objcore.ErrMissing)
	}
	if err != nil {
		return "", b.fail("reading", key, err)
	}
	return etag, nil
}

// Put writes body at key under c: INSERT ... ON CONFLICT DO NOTHING for a
// create, UPDATE ... WHERE etag for a swap, an upsert otherwise. Every
// write gets a random ETag, so no two writes share one.
func (b *Backend) Put(ctx context.Context, key string, body []byte, c objcore.Cond) (string, error) {
	if body == nil {
		body = []byte{} // NULL is no object's body
	}
	etag, now := newETag(), b.d.NowNS
	var (
		res sql.Result
		err error
	)
	defer b.lock()()
	switch {
	case c.IfNoneMatch:
		res, err = b.q.ExecContext(ctx, b.sql(`INSERT INTO `+Table+` (key, body, etag, modified) VALUES (?, ?, ?, `+now+`)
			ON CONFLICT (key) DO NOTHING`), key, body, etag)
	case c.IfMatch != "":
		res, err = b.q.ExecContext(ctx, b.sql(`UPDATE `+Table+` SET body = ?, etag = ?, modified = `+now+` WHERE key = ? AND etag = ?`),
			body, etag, key, c.IfMatch)
	default:
		res, err = b.q.ExecContext(ctx, b.sql(`INSERT INTO `+Table+` (key, body, etag, modified) VALUES (?, ?, ?, `+now+`)
			ON CONFLICT (key) DO UPDATE SET body = excluded.body, etag = excluded.etag, modified = excluded.modified`),
			key, body, etag)
	}
	if err != nil {
		return "", b.fail("writing", key, err)
	}
	if c.IfNoneMatch || c.IfMatch != "" {
		n, err := res.RowsAffected()
		if err != nil {
			return "", b.fail("writing", key, err)
		}
		if n == 0 {
			return "", fmt.Errorf("writing %s: %w", b.root+key, objcore.ErrPrecondition)
		}
	}
	return etag, nil
}

// newETag returns 16 random bytes in hex, quoted as HTTP ETags are.
func newETag() string {
	p := make([]byte, 16)
	rand.Read(p)
	return `"` + hex.EncodeToString(p) + `"`
}

// Delete removes the object at key.
func (b *Backend) Delete(ctx context.Context, key string) error {
	defer b.lock()()
	if _, err := b.q.ExecContext(ctx, b.sql(`DELETE FROM `+Table+` WHERE key = ?`), key); err != nil {
		return b.fail("deleting", key, err)
	}
	return nil
}

// firstPage and listPage are how many keys the first and the later
// queries of List read: the rows are read whole before yield runs (yield
// may write through the backend, and a SQLite reader must not hold its
// snapshot meanwhile). The first page is small, as most listings stop
// early (the newest runs), and the pages grow to listPage.
const (
	firstPage = 32
	listPage  = 1024
)

// List yields the objects below prefix after startAfter, a page of keys
// per query, in byte order.
func (b *Backend) List(ctx context.Context, prefix, startAfter string, yield func(objcore.Entry) (bool, error)) error {
	after := max(startAfter, prefix)
	first := startAfter < prefix // prefix itself may be a key
	for n := firstPage; ; n = min(4*n, listPage) {
		es, err := b.page(ctx, prefix, after, first, n)
		if err != nil {
			return fmt.Errorf("listing %s: %w", b.root+prefix, wrap(b.d, err))
		}
		for _, e := range es {
			if more, err := yield(e); err != nil || !more {
				return err
			}
		}
		if len(es) < n {
			return nil
		}
		after, first = es[len(es)-1].Key, false
	}
}

// page reads up to n keys below prefix from after on (after itself too
// when inclusive).
func (b *Backend) page(ctx context.Context, prefix, after string, inclusive bool, n int) ([]objcore.Entry, error) {
	query, args := b.listQuery(prefix, after, inclusive, n)
	defer b.lock()()
	rows, err := b.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var es []objcore.Entry
	for rows.Next() {
		var e objcore.Entry
		if err := rows.Scan(&e.Key, &e.Size); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(e.Key, prefix) {
			break
		}
		es = append(es, e)
	}
	return es, rows.Err()
}

// listQuery is the query of a page of List: a range of the primary key,
// read in its order.
func (b *Backend) listQuery(prefix, after string, inclusive bool, n int) (string, []any) {
	op := ">"
	if inclusive {
		op = ">="
	}
	query := `SELECT key, length(body) FROM ` + Table + ` WHERE key ` + op + ` ?`
	args := []any{after}
	if end, ok := prefixEnd(prefix); ok {
		query += ` AND key < ?`
		args = append(args, end)
	}
	return b.sql(query + fmt.Sprintf(` ORDER BY key LIMIT %d`, n)), args
}

// prefixEnd returns the least string above every string that has prefix,
// when it is valid text: prefix with its last byte raised by one, if that
// byte is ASCII below DEL (key prefixes end in '/'). Otherwise List stops
// at the first key without the prefix.
func prefixEnd(prefix string) (string, bool) {
	if prefix == "" || prefix[len(prefix)-1] >= 0x7e {
		return "", false
	}
	return prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1), true
}

// Folders returns the folders right below prefix: one query per folder,
// each skipping past the folder before it.
func (b *Backend) Folders(ctx context.Context, prefix string) ([]string, error) {
	var dirs []string
	from, inclusive := prefix, true
	for {
		op := ">"
		if inclusive {
			op = ">="
		}
		var key string
		unlock := b.lock()
		err := b.q.QueryRowContext(ctx, b.sql(`SELECT key FROM `+Table+` WHERE key `+op+` ? ORDER BY key LIMIT 1`), from).Scan(&key)
		unlock()
		if errors.Is(err, sql.ErrNoRows) || err == nil && !strings.HasPrefix(key, prefix) {
			return dirs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", b.root+prefix, wrap(b.d, err))
		}
		d, _, ok := strings.Cut(key[len(prefix):], "/")
		if !ok {
			from, inclusive = key, false // an object right below prefix
			continue
		}
		dirs = append(dirs, d)
		from, inclusive = prefix+d+"0", true // '0' follows '/'
	}
}

// Now returns the database's clock (or this host's where the dialect says
// so), never earlier than a time it returned before.
func (b *Backend) Now(ctx context.Context) (time.Time, error) {
	t := time.Now()
	if b.d.Clock != "" {
		unlock := b.lock()
		err := b.q.QueryRowContext(ctx, b.d.Clock).Scan(&t)
		unlock()
		if err != nil {
			return time.Time{}, fmt.Errorf("reading the clock of %s: %w", b.root, wrap(b.d, err))
		}
	}
	t = time.Unix(0, t.UnixNano()).UTC()
	b.clockMu.Lock()
	defer b.clockMu.Unlock()
	if t.Before(b.last) {
		t = b.last
	}
	b.last = t
	return t, nil
}

// Expired reports whether the clock Now reads has reached t.
func (b *Backend) Expired(ctx context.Context, t time.Time) (bool, error) {
	now, err := b.Now(ctx)
	if err != nil {
		return false, err
	}
	return !t.After(now), nil
}

// SQLite is the dialect of a SQLite file: its clock is this host's, the
// one host that writes the file.
var SQLite = Dialect{
	Name:    "sqlite",
	Blob:    "BLOB",
	KeyType: "TEXT",
	NowNS:   "CAST(unixepoch('subsec') * 1000000000 AS INTEGER)",
}

// Postgres is the dialect of a PostgreSQL schema: its clock is the
// database's, which every host shares, so no host's clock judges a lease.
var Postgres = Dialect{
	Name:    "postgres",
	Dollar:  true,
	Blob:    "bytea",
	KeyType: `text COLLATE "C"`,
	NowNS:   "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint * 1000",
	Clock:   "SELECT clock_timestamp()",
}
