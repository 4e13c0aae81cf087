package sqltable

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// logServer is the PostgreSQL side of a changes: log source: its
// publication, its replication slot, the snapshot a first run reads and
// the changes later runs read.
//
// Later runs read the slot with pg_logical_slot_peek_binary_changes up to
// an LSN taken at the run's start: the server decodes only transactions
// that committed before it, whole, and the slot does not move. The slot
// is moved (pg_replication_slot_advance) only to a position a committed
// bookmark holds, at the next run's start, so that a run that dies
// anywhere leaves the slot where the bookmark is.
type logServer struct {
	db    *sqldb.DB
	cfg   Config
	name  sqldb.Name
	table string // the table quoted for SQL
	slot  string
	pub   string
}

// slotStatus is a replication slot as pg_replication_slots shows it,
// with the server's WAL position.
type slotStatus struct {
	Exists    bool
	Plugin    string
	Database  string
	Confirmed pglogrepl.LSN // confirmed_flush_lsn
	Restart   pglogrepl.LSN // restart_lsn: the oldest WAL the slot keeps
	WALStatus string        // reserved, extended, unreserved, lost
	Current   pglogrepl.LSN // pg_current_wal_lsn()
}

// Retained is the WAL the slot keeps the server from recycling, in bytes.
func (s slotStatus) Retained() int64 {
	if !s.Exists || s.Restart == 0 || s.Current < s.Restart {
		return 0
	}
	return int64(s.Current - s.Restart)
}

// status reads the slot and the server's WAL position.
func (l *logServer) status(ctx context.Context) (slotStatus, error) {
	var st slotStatus
	cur, err := l.flushed(ctx)
	if err != nil {
		return st, fmt.Errorf("reading the server's WAL position: %w", err)
	}
	if st.Current, err = pglogrepl.ParseLSN(cur); err != nil {
		return st, err
	}
	var plugin, database, confirmed, restart, walStatus *string
	err = l.db.QueryRowContext(ctx, `SELECT plugin, database, confirmed_flush_lsn::text, restart_lsn::text, wal_status
		FROM pg_replication_slots WHERE slot_name = $1`, l.slot).Scan(&plugin, &database, &confirmed, &restart, &walStatus)
	if errors.Is(err, errNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("reading replication slot %s: %w", l.slot, err)
	}
	st.Exists = true
	st.Plugin, st.Database, st.WALStatus = deref(plugin), deref(database), deref(walStatus)
	if confirmed != nil {
		st.Confirmed, _ = pglogrepl.ParseLSN(*confirmed)
	}
	if restart != nil {
		st.Restart, _ = pglogrepl.ParseLSN(*restart)
	}
	return st, nil
}

// flushed is the server's flushed WAL position, once every transaction
// that committed before the call is flushed: logical decoding reads only
// flushed WAL, and a commit with synchronous_commit off is flushed by the
// WAL writer a moment later (wal_writer_delay). It waits for the flush to
// reach the insert position taken first, at most 3 wal_writer_delay (at
// least a second); what is not flushed by then waits for the next run.
func (l *logServer) flushed(ctx context.Context) (string, error) {
	var insert, delay string
	if err := l.db.QueryRowContext(ctx, "SELECT pg_current_wal_insert_lsn()::text, current_setting('wal_writer_delay')").Scan(&insert, &delay); err != nil {
		return "", err
	}
	want, err := pglogrepl.ParseLSN(insert)
	if err != nil {
		return "", err
	}
	wait := time.Second
	if d, err := time.ParseDuration(delay); err == nil && 3*d > wait {
		wait = 3 * d
	}
	deadline := time.Now().Add(wait)
	for {
		var flush string
		if err := l.db.QueryRowContext(ctx, "SELECT pg_current_wal_flush_lsn()::text").Scan(&flush); err != nil {
			return "", err
		}
		got, err := pglogrepl.ParseLSN(flush)
		if err != nil {
			return "", err
		}
		if got >= want {
			return want.String(), nil
		}
		if time.Now().After(deadline) {
			return flush, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ensurePublication creates the publication FOR TABLE when it is missing
// and checks that it publishes the table.
func (l *logServer) ensurePublication(ctx context.Context) error {
	var n int
	if err := l.db.QueryRowContext(ctx, "SELECT count(*) FROM pg_publication WHERE pubname = $1", l.pub).Scan(&n); err != nil {
		return fmt.Errorf("looking up publication %s: %w", l.pub, err)
	}
	if n == 0 {
		if _, err := l.db.ExecContext(ctx, "CREATE PUBLICATION "+sqldb.Postgres.Quote(l.pub)+" FOR TABLE "+l.table); err != nil {
			return fmt.Errorf("creating publication %s for the table: %w", l.pub, err)
		}
		return nil
	}
	err := l.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid
		WHERE p.pubname = $1 AND r.prrelid = to_regclass($2)`, l.pub, pgNameArg(l.name)).Scan(&n)
	if err != nil {
		return fmt.Errorf("reading publication %s: %w", l.pub, err)
	}
	var all bool
	if err := l.db.QueryRowContext(ctx, "SELECT puballtables FROM pg_publication WHERE pubname = $1", l.pub).Scan(&all); err != nil {
		return fmt.Errorf("reading publication %s: %w", l.pub, err)
	}
	if n == 0 && !all {
		return fmt.Errorf("publication %s does not publish the table: ALTER PUBLICATION %s ADD TABLE %s, or name another with the publication key",
			l.pub, l.pub, l.name)
	}
	return nil
}

// checkIdentity refuses a table whose updates and deletes the publication
// would make fail on the server (no primary key, replica identity
// default or nothing): the source's own writers would break.
func (l *logServer) checkIdentity(ctx context.Context) error {
	var ident string
	var hasPK bool
	err := l.db.QueryRowContext(ctx, `SELECT c.relreplident::text,
			EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)
		FROM pg_class c WHERE c.oid = to_regclass($1)`, pgNameArg(l.name)).Scan(&ident, &hasPK)
	if err != nil {
		return fmt.Errorf("reading the table's replica identity: %w", err)
	}
	if ident == "n" || (ident == "d" && !hasPK) {
		return fmt.Errorf("the table has no primary key and no replica identity, so PostgreSQL would refuse its updates and deletes once published: " +
			"add a primary key, or ALTER TABLE ... REPLICA IDENTITY FULL (or USING INDEX)")
	}
	return nil
}

// replConn opens a replication connection (replication=database).
func (l *logServer) replConn(ctx context.Context) (*pgconn.PgConn, error) {
	pc, err := pgconn.ParseConfig(l.cfg.Connection)
	if err != nil {
		return nil, fmt.Errorf("connection %s: %w", l.db.Where, err)
	}
	if l.cfg.PasswordEnv != "" {
		pc.Password = os.Getenv(l.cfg.PasswordEnv)
	}
	pc.RuntimeParams["replication"] = "database"
	pc.RuntimeParams["application_name"] = "tidemark " + l.cfg.Ctx
	conn, err := pgconn.ConnectConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("opening a replication connection to %s: %w", l.db.Where, err)
	}
	return conn, nil
}

// dropSlot drops the slot if it exists, waiting while another session
// holds it.
func (l *logServer) dropSlot(ctx context.Context) error {
	err := l.whileBusy(ctx, func() error {
		_, err := l.db.ExecContext(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", l.slot)
		return err
	})
	if err != nil {
		return fmt.Errorf("dropping replication slot %s: %w", l.slot, err)
	}
	return nil
}

// snapshot creates the slot with an exported snapshot and writes every
// row of the table under that snapshot to w as CSV (cols, then the change
// columns: I, the slot's consistent point, 0, NULL). It returns the
// consistent point, from which the slot's changes start, and the rows.
func (l *logServer) snapshot(ctx context.Context, cols []column, w io.Writer) (pglogrepl.LSN, int64, error) {
	repl, err := l.replConn(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer repl.Close(context.WithoutCancel(ctx))
	res, err := pglogrepl.CreateReplicationSlot(ctx, repl, l.slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		return 0, 0, fmt.Errorf("creating replication slot %s: %w", l.slot, err)
	}
	start, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return 0, 0, fmt.Errorf("replication slot %s: consistent point %q: %w", l.slot, res.ConsistentPoint, err)
	}
	rows, err := l.copyRows(ctx, cols, sqldb.Postgres.Literal(lsnText(start)), res.SnapshotName, w)
	if err != nil {
		return 0, 0, err
	}
	return start, rows, nil
}

// current writes every row of the table as it is now to w, as snapshot
// does but without a slot (_lsn NULL): the bookmark disabled.
func (l *logServer) current(ctx context.Context, cols []column, w io.Writer, rows *int64) error {
	n, err := l.copyRows(ctx, cols, "NULL", "", w)
	*rows = n
	return err
}

// copyRows writes the table's rows as inserts (_op I, _lsn lsn, _seq 0,
// _commit_time NULL) to w, in one REPEATABLE READ transaction under the
// exported snapshot snap when given.
func (l *logServer) copyRows(ctx context.Context, cols []column, lsn, snap string, w io.Writer) (int64, error) {
	exprs := make([]string, 0, len(cols)+4)
	for _, c := range cols {
		if c.out != "" {
			exprs = append(exprs, c.out)
		} else {
			exprs = append(exprs, sqldb.Postgres.Quote(c.Name))
		}
	}
	exprs = append(exprs, "'I'", lsn, "0", "NULL")
	var rows int64
	err := withPg(ctx, l.db, func(pc *pgconn.PgConn) error {
		if err := pc.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").Close(); err != nil {
			return fmt.Errorf("beginning the snapshot: %w", err)
		}
		defer func() { _ = pc.Exec(context.WithoutCancel(ctx), "ROLLBACK").Close() }()
		if snap != "" {
			if err := pc.Exec(ctx, "SET TRANSACTION SNAPSHOT "+sqldb.Postgres.Literal(snap)).Close(); err != nil {
				return fmt.Errorf("taking the slot's snapshot: %w", err)
			}
		}
		bw := bufio.NewWriterSize(w, 1<<20)
		tag, err := pc.CopyTo(ctx, bw, "COPY (SELECT "+strings.Join(exprs, ", ")+" FROM "+l.table+") TO STDOUT (FORMAT csv)")
		if err != nil {
			return fmt.Errorf("reading the table's rows: %w", err)
		}
		rows = tag.RowsAffected()
		return bw.Flush()
	})
	return rows, err
}

// slotBusyWait is how long a call on the slot waits while another
// session holds it (a `tidemark plan` of the job peeking it, a run of it
// from another host with the lease just handed over, a replication client).
var slotBusyWait = 30 * time.Second

// slotActive is PostgreSQL's object_in_use: the slot is held by another
// session ("replication slot ... is active for PID n").
const slotActive = "55006"

// whileBusy calls fn, again while it fails because another session holds
// the slot, for at most slotBusyWait; fn must do nothing before it holds
// the slot. It then says who held it.
func (l *logServer) whileBusy(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(slotBusyWait)
	for {
		err := fn()
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != slotActive {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("replication slot %s stayed in use by another session for %s (a `tidemark plan` of this job, "+
				"or another reader of the slot: see active_pid in pg_replication_slots): %w", l.slot, slotBusyWait, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// advance moves the slot's confirmed position to lsn, a position a
// committed bookmark holds; a slot already there or past it is left. It
// waits while another session holds the slot.
func (l *logServer) advance(ctx context.Context, lsn pglogrepl.LSN) error {
	err := l.whileBusy(ctx, func() error {
		_, err := l.db.ExecContext(ctx, "SELECT pg_replication_slot_advance($1, $2::pg_lsn)", l.slot, lsn.String())
		return err
	})
	if err != nil {
		return fmt.Errorf("moving replication slot %s to the bookmark %s: %w", l.slot, lsn, err)
	}
	return nil
}

// peek decodes the slot's changes of transactions that committed before
// upto and hands fn each pgoutput message, in commit order. It moves
// nothing. It waits while another session holds the slot (the server
// refuses a peek then, before decoding anything, so fn has seen nothing).
func (l *logServer) peek(ctx context.Context, upto pglogrepl.LSN, fn func(data []byte) error) error {
	return l.whileBusy(ctx, func() error {
		return withPg(ctx, l.db, func(pc *pgconn.PgConn) error {
			q := "SELECT data FROM pg_logical_slot_peek_binary_changes($1, $2::pg_lsn, NULL, 'proto_version', '1', 'publication_names', $3)"
			rr := pc.ExecParams(ctx, q, [][]byte{[]byte(l.slot), []byte(upto.String()), []byte(l.pub)}, nil, nil, []int16{1})
			seen := false
			for rr.NextRow() {
				seen = true
				if err := fn(rr.Values()[0]); err != nil {
					_, _ = rr.Close()
					return err
				}
			}
			_, err := rr.Close()
			if err != nil && seen {
				// Not a busy slot: the decoding failed part way.
				return fmt.Errorf("decoding the slot's changes: %w", err)
			}
			return err
		})
	})
}

// lsnText is an LSN as _lsn holds it: both halves zero-padded, so that
// the text sorts as the LSN does, and PostgreSQL still casts it to pg_lsn.
func lsnText(l pglogrepl.LSN) string {
	return fmt.Sprintf("%08X/%08X", uint32(l>>32), uint32(l))
}
