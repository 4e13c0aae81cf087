package sqltable

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/jackc/pglogrepl"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// errNoRows is sql.ErrNoRows, for the log files' checks.
var errNoRows = sql.ErrNoRows

// releaseWAL is how far the server's WAL must have moved past a changes:
// log source's position, with no change of its table, for a run to move
// the position anyway (so that the slot lets the server recycle it).
const releaseWAL = 16 << 20

// LogSource is a SQL table source with changes: log (source.Source): a
// PostgreSQL table read by logical replication (pgoutput). The first run
// creates the publication and the replication slot and reads the table
// under the slot's exported snapshot, every row as an insert (I); later
// runs read the changes of the transactions that committed after the
// bookmark's position and before the server's WAL position at the run's
// start, whole, in commit order, as rows with _op I, U or D. The bookmark
// is that position; the slot is moved to a position only once a bookmark
// holding it is committed (at the next run's start), so a run that dies
// anywhere is read again by the next, and nothing twice.
type LogSource struct {
	ctx       string
	job       string
	cfg       Config
	slot, pub string
	db        *sqldb.DB
	srv       *logServer
	cols      []column
	what      string
	database  string // current_database()
	tmp       string // the folder of planned change files
}

var _ source.Source = (*LogSource)(nil)

// OpenLog opens a job's changes: log source; it connects on Plan.
func OpenLog(spec *job.Spec, src job.Source) *LogSource {
	c := src.Config.(*JobConfig)
	database := ""
	if u, err := url.Parse(c.Connection); err == nil {
		database = strings.TrimPrefix(u.Path, "/")
	}
	slot, pub := LogNames(spec.Job, src.Ctx, database, c.Slot, c.Publication)
	return &LogSource{ctx: src.Ctx, job: spec.Job, cfg: jobConfig(spec, src), slot: slot, pub: pub}
}

// Ctx is the source's ctx.
func (s *LogSource) Ctx() string { return s.ctx }

// Slot and Publication are the source's replication slot and publication.
func (s *LogSource) Slot() string        { return s.slot }
func (s *LogSource) Publication() string { return s.pub }

// CheckDefinition passes; Plan checks the definition once connected.
func (s *LogSource) CheckDefinition(context.Context, bookmark.SourceState) error { return nil }

// Close closes the connection and deletes planned change files.
func (s *LogSource) Close() error {
	if s.tmp != "" {
		_ = os.RemoveAll(s.tmp)
		s.tmp = ""
	}
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db = nil
	return err
}

// fail wraps err as the source's *Error, redacted.
func (s *LogSource) fail(op string, err error) error {
	if s.db != nil {
		err = s.db.Redact(err)
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Source: s.ctx, What: s.what, Op: op, Err: err}
}

// connect opens the database and describes the table.
func (s *LogSource) connect(ctx context.Context) error {
	if s.db != nil {
		return nil
	}
	n, err := sqldb.ParseName(s.cfg.Table)
	if err != nil {
		return fmt.Errorf("source %s: %w", s.ctx, err)
	}
	s.what = "table " + n.String()
	db, err := sqldb.Open(ctx, s.cfg.Connection, s.cfg.PasswordEnv, sqldb.Options{AppName: "tidemark " + s.ctx})
	if err != nil {
		return fmt.Errorf("source %s: %w", s.ctx, err)
	}
	s.db = db
	d := pgDialect{}
	ok, err := d.exists(ctx, db, n)
	if err != nil {
		return s.fail("looking the table up", err)
	}
	if !ok {
		return s.fail("looking the table up", fmt.Errorf("no such table in %s", db.Where))
	}
	from := sqldb.Postgres.Quoted(n)
	if s.cols, err = d.columns(ctx, db, from, &n); err != nil {
		return s.fail("reading its columns", err)
	}
	// pgoutput sends no generated column: the snapshot leaves them out too.
	rows, err := db.QueryContext(ctx, "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND attgenerated <> ''", pgNameArg(n))
	if err != nil {
		return s.fail("reading its columns", err)
	}
	generated, err := scanStrings(rows)
	if err != nil {
		return s.fail("reading its columns", err)
	}
	s.cols = slices.DeleteFunc(s.cols, func(c column) bool { return slices.Contains(generated, c.Name) })
	for _, c := range s.cols {
		if slices.Contains([]string{OpColumn, LSNColumn, SeqColumn, CommitTimeColumn}, c.Name) {
			return s.fail("reading its columns", fmt.Errorf("column %s has the name of a change column; read the table by keys, or rename it", c.Name))
		}
	}
	if err := db.QueryRowContext(ctx, "SELECT current_database()").Scan(&s.database); err != nil {
		return s.fail("connecting", err)
	}
	s.srv = &logServer{db: db, cfg: s.cfg, name: n, table: from, slot: s.slot, pub: s.pub}
	return nil
}

// describe is the source's definition, for its fingerprint.
func (s *LogSource) describe() string {
	return fmt.Sprintf("%s %s changes log slot %s publication %s", s.db.Where, s.what, s.slot, s.pub)
}

// schema is what the source hands the engine: the table's columns, then
// the change columns.
func (s *LogSource) schema() []bookmark.Column {
	return append(schema(s.cols),
		bookmark.Column{Name: OpColumn, Type: varchar.String()},
		bookmark.Column{Name: LSNColumn, Type: varchar.String()},
		bookmark.Column{Name: SeqColumn, Type: bookmark.Scalar(bookmark.BigInt).String()},
		bookmark.Column{Name: CommitTimeColumn, Type: bookmark.Scalar(bookmark.TimestampTZ).String()})
}

// Plan connects, checks the definition, the slot and the table's columns,
// and, for a run after the first, reads the changes up to the server's
// position now into a file (peeking: the slot does not move). Before
// that, a run (not `tidemark plan`) moves the slot to the committed
// bookmark's position.
func (s *LogSource) Plan(ctx context.Context, in source.Request) (source.Plan, error) {
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	p := &logPlan{s: s, prev: in.Prev, mode: in.Mode}
	p.fpDoc = s.describe()
	h := sha256.Sum256([]byte(p.fpDoc))
	p.fp = hex.EncodeToString(h[:12])
	if in.HasPrev && p.prev.Fingerprint != p.fp && in.Mode != bookmark.ModeDisable && !in.AllowChange {
		return nil, &source.ChangedError{Ctx: s.ctx, Was: p.prev.Describe, Now: p.fpDoc}
	}
	if in.RangeRuns != nil {
		return nil, s.fail("planning", errors.New("a changes: log source cannot read what earlier runs read again (pause with from/to): "+
			"the slot released those changes once the runs committed"))
	}
	if in.Mode == bookmark.ModeDisable {
		p.full = true // the table as it is now, every row an insert
		return p, nil
	}
	st, err := s.srv.status(ctx)
	if err != nil {
		return nil, s.fail("reading its replication slot", err)
	}
	p.status = st
	if err := s.srv.checkIdentity(ctx); err != nil {
		return nil, s.fail("checking its replica identity", err)
	}
	prevLog := StateDetailOf(p.prev).Log
	if prevLog == nil {
		if st.Exists && st.Database != s.database {
			return nil, s.fail("reading its replication slot", fmt.Errorf("replication slot %s belongs to database %s, not %s: name another with the slot key", s.slot, st.Database, s.database))
		}
		p.first = true
		if in.Count {
			if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM "+s.srv.table).Scan(&p.rows); err != nil {
				return nil, s.fail("counting its rows", err)
			}
		}
		return p, nil
	}
	if ch := schemaChanges(schemaTable(p.prev.Schema), schema(s.cols)); len(ch) > 0 {
		return nil, s.fail("checking its columns", &SchemaChangeError{Job: s.job, Table: s.srv.name.String(), Changes: ch})
	}
	if p.after, err = pglogrepl.ParseLSN(prevLog.LSN); err != nil {
		return nil, s.fail("reading its bookmark", fmt.Errorf("position %q: %w", prevLog.LSN, err))
	}
	if err := s.checkSlot(st, p.after); err != nil {
		return nil, err
	}
	if !in.Count && st.Confirmed < p.after {
		// The bookmark holding p.after is committed: the slot may let go
		// of what is before it.
		if err := s.srv.advance(ctx, p.after); err != nil {
			return nil, s.fail("moving its replication slot", err)
		}
	}
	p.upto = st.Current
	if p.upto <= p.after {
		return p, nil
	}
	if err := p.peek(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// checkSlot fails when the slot cannot deliver what follows the bookmark's
// position: gone, invalidated, another plugin, or moved past it.
func (s *LogSource) checkSlot(st slotStatus, after pglogrepl.LSN) error {
	reset := fmt.Sprintf("run `tidemark bookmark reset %s` to read a new snapshot (the next run recreates the slot)", s.job)
	switch {
	case !st.Exists:
		return s.fail("reading its replication slot", fmt.Errorf("replication slot %s is gone (dropped, or removed by the server), "+
			"so the changes after %s cannot be read: %s", s.slot, lsnText(after), reset))
	case st.WALStatus == "lost":
		return s.fail("reading its replication slot", fmt.Errorf("replication slot %s was invalidated by the server (it held more WAL than max_slot_wal_keep_size allows), "+
			"so the changes after %s are lost to it: %s, and raise max_slot_wal_keep_size or run the job more often", s.slot, lsnText(after), reset))
	case st.Database != s.database:
		return s.fail("reading its replication slot", fmt.Errorf("replication slot %s belongs to database %s, not %s: name another with the slot key", s.slot, st.Database, s.database))
	case st.Plugin != "pgoutput":
		return s.fail("reading its replication slot", fmt.Errorf("replication slot %s uses the plugin %s, not pgoutput: name another with the slot key", s.slot, st.Plugin))
	case st.Confirmed > after:
		return s.fail("reading its replication slot", fmt.Errorf("replication slot %s has moved past the bookmark's position (%s > %s; a bookmark reset --to-run, "+
			"or another reader of the slot), so the changes in between cannot be read again: %s", s.slot, lsnText(st.Confirmed), lsnText(after), reset))
	}
	return nil
}

// schemaTable is a recorded schema without the change columns.
func schemaTable(cols []bookmark.Column) []bookmark.Column {
	return slices.DeleteFunc(slices.Clone(cols), func(c bookmark.Column) bool {
		return slices.Contains([]string{OpColumn, LSNColumn, SeqColumn, CommitTimeColumn}, c.Name)
	})
}

// logPlan is a changes: log source's part of a run.
type logPlan struct {
	s         *LogSource
	prev      bookmark.SourceState
	mode      bookmark.Mode
	fp, fpDoc string
	status    slotStatus
	first     bool // no bookmark: read the snapshot
	full      bool // disable: read the table now, no slot
	after     pglogrepl.LSN
	upto      pglogrepl.LSN
	file      string // the planned changes (CSV)
	rows      int64
	bytes     int64
	count     LogCount
	next      pglogrepl.LSN // the position after the run
	read      bool          // Open read the input
}

var _ source.Plan = (*logPlan)(nil)

// peek reads the changes in (after, upto) into a file of the plan.
func (p *logPlan) peek(ctx context.Context) error {
	s := p.s
	if s.tmp == "" {
		d, err := os.MkdirTemp("", "tidemark-log-*")
		if err != nil {
			return s.fail("reading its changes", err)
		}
		s.tmp = d
	}
	f, err := os.CreateTemp(s.tmp, s.ctx+"-*.csv")
	if err != nil {
		return s.fail("reading its changes", err)
	}
	defer f.Close()
	w := &changeWriter{ctx: ctx, job: s.job, src: s.ctx, db: s.db, table: s.srv.name, cols: s.cols, after: p.after,
		csv: newCSVWriter(f), rels: map[uint32]*relation{}, types: map[[2]int64]column{}}
	if err := s.srv.peek(ctx, p.upto, w.message); err != nil {
		return s.fail(fmt.Sprintf("reading its changes after %s up to %s from slot %s", lsnText(p.after), lsnText(p.upto), s.slot), err)
	}
	if err := w.csv.flush(); err != nil {
		return s.fail("reading its changes", err)
	}
	info, err := f.Stat()
	if err != nil {
		return s.fail("reading its changes", err)
	}
	p.file, p.rows, p.bytes = f.Name(), w.csv.rows, info.Size()
	p.count = LogCount{Inserts: w.Inserts, Updates: w.Updates, Deletes: w.Deletes, LSNAfter: lsnText(p.after)}
	p.next = max(p.upto, w.LastEnd)
	p.count.LSNUpTo = lsnText(p.next)
	return nil
}

// Pending is 1 when the run has a snapshot or changes to read, or when
// the server's WAL moved far past the position with no change of the
// table (the run then moves the position so the slot releases WAL).
func (p *logPlan) Pending() int64 {
	if p.first || p.full || p.rows > 0 || (p.upto > p.after && p.upto-p.after >= releaseWAL) {
		return 1
	}
	return 0
}

func (p *logPlan) Downloads() int64           { return 0 }
func (p *logPlan) Size() (files, bytes int64) { return 0, 0 }
func (p *logPlan) BadRecords() string         { return engine.BadFail }

// Report logs the plan and what an operator must hear of.
func (p *logPlan) Report(log *slog.Logger) {
	s := p.s
	switch {
	case p.full:
		log.Info("planned", "source", s.ctx, "changes", "log", "read", "the whole table (bookmark disabled)")
	case p.first:
		log.Info("planned", "source", s.ctx, "changes", "log", "read", "a snapshot", "slot", s.slot, "publication", s.pub)
		if p.status.Exists {
			log.Warn("the replication slot exists but the bookmark has none (a bookmark reset, or a first run that never committed): "+
				"the run drops the slot and creates it again with a new snapshot", "source", s.ctx, "slot", s.slot)
		}
	default:
		log.Info("planned", "source", s.ctx, "changes", "log", "rows", p.rows, "inserts", p.count.Inserts,
			"updates", p.count.Updates, "deletes", p.count.Deletes, "after", lsnText(p.after), "up_to", lsnText(p.upto),
			"slot_retained_wal", p.status.Retained())
	}
	if w := p.slotWarning(); w != "" {
		log.Warn(w, "source", s.ctx, "slot", s.slot, "retained_wal_bytes", p.status.Retained())
	}
}

// slotWarning says when the slot holds more WAL than the server means to
// keep (wal_status extended: past max_wal_size; unreserved: the next
// checkpoint may invalidate it), "" otherwise.
func (p *logPlan) slotWarning() string {
	switch p.status.WALStatus {
	case "extended":
		return fmt.Sprintf("replication slot %s holds %s of WAL, more than max_wal_size: the server keeps it for this job until a run moves the slot; run the job, or drop the slot if the job is gone",
			p.s.slot, humanize.IBytes(uint64(p.status.Retained())))
	case "unreserved":
		return fmt.Sprintf("replication slot %s holds %s of WAL, past max_slot_wal_keep_size: the server will invalidate it at its next checkpoint unless a run moves it now",
			p.s.slot, humanize.IBytes(uint64(p.status.Retained())))
	}
	return ""
}

// Preview is the plan as `tidemark plan` shows it, with the slot's
// retained WAL and lag now.
func (p *logPlan) Preview() source.Preview {
	s := p.s
	lp := &LogPreview{Slot: s.slot, Publication: s.pub, Snapshot: p.first, SlotExists: p.status.Exists,
		RetainedWAL: p.status.Retained()}
	if !p.first && !p.full {
		lp.LSN = lsnText(p.after)
		if p.status.Current > p.after {
			lp.Lag = int64(p.status.Current - p.after)
		}
	}
	pv := source.Preview{New: []string{}, Detail: PreviewDetail{Rows: p.rows, LogPreview: lp}}
	if w := p.slotWarning(); w != "" {
		pv.Warnings = append(pv.Warnings, w)
	}
	return pv
}

// Open readies the input: the planned changes, or on a first run the
// snapshot (creating the publication and the slot), or with the bookmark
// disabled the table as it is. It reads once per run.
func (p *logPlan) Open(ctx context.Context, env source.Env) (source.Reading, error) {
	s := p.s
	if !p.read && (p.first || p.full) {
		dir, err := env.TempDir()
		if err != nil {
			return nil, err
		}
		if err := p.readTable(ctx, dir); err != nil {
			return nil, err
		}
	}
	p.read = true
	es := engine.Source{Ctx: s.ctx, Format: "csv", Options: csvOptions(), Schema: s.schema(), Exact: true}
	if p.file != "" {
		es.Files = []engine.Input{{Location: p.file, Key: filepath.Base(p.file), Size: p.bytes}}
	}
	return logReading{in: es}, nil
}

// readTable reads the snapshot of a first run (dropping a slot left
// without a bookmark first), or the table as it is.
func (p *logPlan) readTable(ctx context.Context, dir string) error {
	s := p.s
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, s.ctx+"-snapshot.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	if p.full {
		err = s.srv.current(ctx, s.cols, f, &p.rows)
	} else {
		err = p.snapshot(ctx, f)
	}
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	p.file, p.bytes = f.Name(), info.Size()
	p.count = LogCount{Inserts: p.rows, Snapshot: true, LSNUpTo: lsnText(p.next)}
	return nil
}

func (p *logPlan) snapshot(ctx context.Context, f *os.File) error {
	s := p.s
	if p.status.Exists {
		if err := s.srv.dropSlot(ctx); err != nil {
			return s.fail("recreating its replication slot", err)
		}
	}
	if err := s.srv.ensurePublication(ctx); err != nil {
		return s.fail("preparing its publication", err)
	}
	start, rows, err := s.srv.snapshot(ctx, s.cols, f)
	if err != nil {
		return s.fail("reading its snapshot", err)
	}
	p.next, p.rows = start, rows
	return nil
}

// Count is the source's run summary.
func (p *logPlan) Count(*engine.SourceResult) store.Count {
	c := store.Count{Detail: CountDetail{Log: &p.count}}
	if p.read {
		c.Rows, c.Bytes = p.rows, p.bytes
		if p.file != "" {
			c.Files = 1
		}
	}
	return c
}

// Advance is the bookmark after the run: the position it read up to.
func (p *logPlan) Advance(runID string, _ engine.SourceResult) (source.Advance, bool) {
	if p.full || p.next == 0 {
		return source.Advance{}, false
	}
	s := p.s
	st := p.prev
	st.Kind = bookmark.KindTable
	st.Fingerprint, st.Describe = p.fp, p.fpDoc
	st.Schema = s.schema()
	d := StateDetailOf(p.prev)
	d.Runs++
	d.Rows += p.rows
	d.Log = &LogState{Slot: s.slot, Publication: s.pub, LSN: lsnText(p.next), RetainedWAL: p.status.Retained(), CheckedAt: time.Now().UTC()}
	if p.status.Current > p.next {
		d.Log.Lag = int64(p.status.Current - p.next)
	}
	st.Detail = d
	rng, _ := json.Marshal(map[string]any{"changes": "log", "slot": s.slot, "lsn_after": p.count.LSNAfter, "lsn_up_to": lsnText(p.next)})
	rec := store.RangeRecord{Ctx: s.ctx, RunID: runID, Range: rng, Rows: p.rows}
	return source.Advance{State: st, Ranges: []store.RangeRecord{rec}}, true
}

// logReading is the planned file, readied for the engine.
type logReading struct{ in engine.Source }

func (r logReading) Input() engine.Source { return r.in }
func (r logReading) Done(context.Context, error, engine.SourceResult, bool) (bool, error) {
	return false, nil
}
