package sqltable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// ChangesDetect is the value of changes: that finds a table's inserts,
// updates and deletes by comparing it with what earlier runs delivered.
const ChangesDetect = "detect"

// Ranges of a first run: about rowsPerRange rows each, a power of two
// between minRanges and maxRanges, fixed for the source's life.
const (
	rowsPerRange = 1000
	minRanges    = 16
	maxRanges    = 1024
)

// detectStatement, when set (by tests), sees every statement a changes:
// detect source sends to the database.
var detectStatement func(q string)

// DetectSource is a SQL table source with changes: detect (source.Source):
// a table with a primary key, compared each run with what the committed
// runs delivered. Its keys are hashed into a fixed number of ranges; one
// aggregate query gives every range's rows and hash sums, computed in the
// database, which the run compares with the figures its bookmark holds.
// Only the ranges that differ are fetched (key, row hash and the row) and
// compared with the delivered keys of those ranges, kept in the key
// snapshot (detectsnap.go): a key not delivered is an insert (I), one
// whose hash changed an update (U), a delivered key no longer there a
// delete (D, the key columns set, the others NULL). An unchanged table
// costs the aggregate query and no row.
type DetectSource struct {
	ctx, job string
	cfg      Config
	dir      string // the key snapshot's folder
	src      *Source
	sql      detectSQL
	tmp      string // the folder of planned change files
}

var _ source.Source = (*DetectSource)(nil)

// OpenDetect opens a job's changes: detect source; it connects on Plan.
func OpenDetect(spec *job.Spec, src job.Source) *DetectSource {
	cfg := jobConfig(spec, src)
	return &DetectSource{ctx: src.Ctx, job: spec.Job, cfg: cfg, dir: snapshotDir(spec, src.Ctx, cfg.Connection, cfg.Table)}
}

// Ctx is the source's ctx.
func (s *DetectSource) Ctx() string { return s.ctx }

// CheckDefinition passes; Plan checks the definition once connected.
func (s *DetectSource) CheckDefinition(context.Context, bookmark.SourceState) error { return nil }

// Close closes the connection and deletes planned change files.
func (s *DetectSource) Close() error {
	if s.tmp != "" {
		_ = os.RemoveAll(s.tmp)
		s.tmp = ""
	}
	if s.src == nil {
		return nil
	}
	err := s.src.Close()
	s.src = nil
	return err
}

// fail wraps err as the source's *Error, redacted.
func (s *DetectSource) fail(op string, err error) error {
	what := "table " + s.cfg.Table
	if s.src != nil {
		err = s.src.db.Redact(err)
		what = s.src.what
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Source: s.ctx, What: what, Op: op, Err: err}
}

// connect opens the database, describes the table and settles its key:
// the primary key, whose columns must hash to the same text every run.
func (s *DetectSource) connect(ctx context.Context) error {
	if s.src != nil {
		return nil
	}
	n, err := sqldb.ParseName(s.cfg.Table)
	if err != nil {
		return fmt.Errorf("source %s: %w", s.ctx, err)
	}
	db, err := sqldb.Open(ctx, s.cfg.Connection, s.cfg.PasswordEnv, sqldb.Options{AppName: "tidemark " + s.ctx, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("source %s: %w", s.ctx, err)
	}
	ts := &Source{cfg: s.cfg, db: db, d: dialectFor(db.Kind), what: "table " + n.String(), from: db.Kind.Quoted(n), pkCol: -1}
	s.src, s.sql = ts, detectSQL{db.Kind}
	ok, err := ts.d.exists(ctx, db, n)
	if err != nil {
		return s.fail("looking the table up", err)
	}
	if !ok {
		return s.fail("looking the table up", fmt.Errorf("no such table in %s", db.Where))
	}
	if ts.cols, err = ts.d.columns(ctx, db, ts.from, &n); err != nil {
		return s.fail("reading its columns", err)
	}
	for _, c := range ts.cols {
		if c.Name == OpColumn {
			return s.fail("reading its columns", fmt.Errorf("column %s has the name of the change column; read the table by keys, or rename it", c.Name))
		}
	}
	pk, err := ts.d.primaryKey(ctx, db, n)
	if err != nil {
		return s.fail("reading its primary key", err)
	}
	if len(pk) == 0 {
		return s.fail("reading its primary key", errors.New("the table has no primary key: changes: detect tells rows apart by it; add one, or read the table by bookmark_keys"))
	}
	for _, k := range pk {
		i := findColumn(ts.cols, k)
		if i < 0 {
			return s.fail("reading its primary key", fmt.Errorf("primary key column %s is not among the columns read", k))
		}
		if c := ts.cols[i]; !c.orderable() || c.key == keyFloat {
			return s.fail("reading its primary key", fmt.Errorf("primary key column %s has type %s, whose values changes: detect cannot hash into key ranges exactly; read the table by bookmark_keys", k, c.DBType))
		}
		ts.keys = append(ts.keys, i)
	}
	return nil
}

// describe is the source's definition, for its fingerprint.
func (s *DetectSource) describe() string {
	return fmt.Sprintf("%s %s changes detect keys (%s)", s.src.db.Where, s.src.what, strings.Join(s.src.Keys(), ", "))
}

// schema is what the source hands the engine: the table's columns, then
// _op.
func (s *DetectSource) schema() []bookmark.Column {
	return append(schema(s.src.cols), bookmark.Column{Name: OpColumn, Type: varchar.String()})
}

// Plan connects and compares the table's range figures with the
// bookmark's in one snapshot of the database. `tidemark plan` stops
// there (it fetches no row and writes nothing); a run fetches the ranges
// that differ, writes the change rows to a file and the ranges' new keys
// to a new generation of the key snapshot, which its commit makes the
// delivered one.
func (s *DetectSource) Plan(ctx context.Context, in source.Request) (source.Plan, error) {
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	p := &detectPlan{s: s, prev: in.Prev, count: DetectCount{}}
	p.fpDoc = s.describe()
	h := sha256.Sum256([]byte(p.fpDoc))
	p.fp = hex.EncodeToString(h[:12])
	if in.HasPrev && p.prev.Fingerprint != p.fp && in.Mode != bookmark.ModeDisable && !in.AllowChange {
		return nil, &source.ChangedError{Ctx: s.ctx, Was: p.prev.Describe, Now: p.fpDoc}
	}
	if in.RangeRuns != nil {
		return nil, s.fail("planning", errors.New("a changes: detect source cannot read what earlier runs read again (pause with from/to): "+
			"it keeps only the keys delivered last"))
	}
	p.full = in.Mode == bookmark.ModeDisable
	if !p.full && in.HasPrev {
		p.old = StateDetailOf(in.Prev).Detect
	}
	if p.old != nil {
		if ch := schemaChanges(schemaTable(p.prev.Schema), schema(s.src.cols)); len(ch) > 0 {
			return nil, s.fail("checking its columns", fmt.Errorf("the table changed its columns (%s): changes: detect compares rows of the columns its bookmark was written for; "+
				"run `tidemark bookmark reset %s --purge-output` to deliver the table again with the new columns", strings.Join(ch, ", "), s.job))
		}
	}
	err := s.src.d.session(ctx, s.src.db, func(ses session) error {
		if err := p.compare(ctx, ses); err != nil {
			return err
		}
		if in.Count || len(p.differ) == 0 {
			return nil
		}
		return p.fetch(ctx, ses)
	})
	if err != nil {
		return nil, s.fail("comparing it with what was delivered", hint(err))
	}
	return p, nil
}

// query runs q in ses, shown to detectStatement.
func (s *DetectSource) query(ctx context.Context, ses session, q string, fn func(row []any) error) error {
	if detectStatement != nil {
		detectStatement(q)
	}
	return ses.query(ctx, q, nil, fn)
}

// detectPlan is a changes: detect source's part of a run.
type detectPlan struct {
	s         *DetectSource
	prev      bookmark.SourceState
	fp, fpDoc string
	full      bool         // disable: every row an insert, nothing kept
	old       *DetectState // the bookmark's figures (nil: a first run)
	ranges    int
	now       map[int]rangeFigures // the database's figures (not on a first run)
	differ    []int                // the ranges to fetch, ascending
	toFetch   int64                // their rows now
	next      *DetectState         // the state after the run (nil: nothing fetched)
	file      string               // the change rows (CSV)
	rows      int64
	bytes     int64
	count     DetectCount
}

var _ source.Plan = (*detectPlan)(nil)

// first is true when there is nothing delivered to compare with.
func (p *detectPlan) first() bool { return p.old == nil }

// compare finds the ranges that differ from the bookmark's figures: on a
// first run (or with the bookmark disabled) every range, sized by the
// table's rows; otherwise by one GROUP BY over the ranges.
func (p *detectPlan) compare(ctx context.Context, ses session) error {
	s := p.s
	if p.first() {
		var rows int64
		err := s.query(ctx, ses, "SELECT count(*) FROM "+s.src.from, func(row []any) error {
			var err error
			rows, err = strconv.ParseInt(text(row[0]), 10, 64)
			return err
		})
		if err != nil {
			return fmt.Errorf("counting its rows: %w", err)
		}
		p.ranges = minRanges
		for p.ranges < maxRanges && int64(p.ranges)*rowsPerRange < rows {
			p.ranges *= 2
		}
		if rows > 0 {
			p.differ = []int{-1} // every range
		}
		p.toFetch = rows
		p.count = DetectCount{Ranges: int64(p.ranges), RangesChanged: int64(p.ranges), First: !p.full}
		return nil
	}
	p.ranges = p.old.Ranges
	if p.ranges < 1 || len(p.old.Figures) != p.ranges {
		return fmt.Errorf("the bookmark's range figures are malformed (%d ranges, %d figures): run `tidemark bookmark reset %s`", p.ranges, len(p.old.Figures), s.job)
	}
	keys := make([]column, len(s.src.keys))
	for i, k := range s.src.keys {
		keys[i] = s.src.cols[k]
	}
	d := s.sql
	const alias = "_tidemark_t"
	q := "SELECT b, count(*), sum(" + d.hexInt("h", 0) + "), sum(" + d.hexInt("h", 1) + ") FROM (SELECT " + d.bucket(keys, p.ranges) + " AS b, " +
		d.md5(d.rowText(alias, s.src.cols)) + " AS h FROM " + s.src.from + " AS " + alias + ") x GROUP BY b"
	p.now = map[int]rangeFigures{}
	err := s.query(ctx, ses, q, func(row []any) error {
		var v [4]int64
		for i := range v {
			n, err := strconv.ParseInt(text(row[i]), 10, 64)
			if err != nil {
				return fmt.Errorf("range figures %v: %w", row, err)
			}
			v[i] = n
		}
		if v[0] < 0 || v[0] >= int64(p.ranges) {
			return fmt.Errorf("range %d out of 0..%d", v[0], p.ranges-1)
		}
		p.now[int(v[0])] = rangeFigures{Rows: v[1], Sum1: v[2], Sum2: v[3]}
		return nil
	})
	if err != nil {
		return fmt.Errorf("computing its range checksums: %w", err)
	}
	for i := range p.ranges {
		if p.now[i] != p.old.figures(i) {
			p.differ = append(p.differ, i)
			p.toFetch += p.now[i].Rows
		}
	}
	p.count = DetectCount{Ranges: int64(p.ranges), RangesChanged: int64(len(p.differ))}
	return nil
}

// fetch reads key, row hash and row of the ranges that differ, range by
// range, compares them with the delivered keys of each range and writes
// the change rows and (for a run) the ranges' new key files.
func (p *detectPlan) fetch(ctx context.Context, ses session) error {
	s := p.s
	if s.tmp == "" {
		d, err := os.MkdirTemp("", "tidemark-detect-*")
		if err != nil {
			return err
		}
		s.tmp = d
	}
	f, err := os.CreateTemp(s.tmp, s.ctx+"-*.csv")
	if err != nil {
		return err
	}
	defer f.Close()
	d := s.sql
	keys := make([]column, len(s.src.keys))
	for i, k := range s.src.keys {
		keys[i] = s.src.cols[k]
	}
	const alias = "_tidemark_t"
	q := s.src.newQuery().w("SELECT ").selectList(true, true, false)
	nOut, nKey := len(s.src.cols), len(keys)
	q.w(", ", d.bucket(keys, p.ranges), ", ", d.md5(d.rowText(alias, s.src.cols)), " FROM ", s.src.from, " AS ", alias)
	all := len(p.differ) == 1 && p.differ[0] == -1
	if !all {
		ids := make([]string, len(p.differ))
		for i, b := range p.differ {
			ids[i] = strconv.Itoa(b)
		}
		q.w(" WHERE ", d.bucket(keys, p.ranges), " IN (", strings.Join(ids, ", "), ")")
	}
	q.w(" ORDER BY ", strconv.Itoa(nOut+nKey+1))

	c := &differ{p: p, csv: newCSVWriter(f), nOut: nOut, keep: !p.full}
	c.rowFormats = make([]formatter, nOut+1)
	for i, col := range s.src.cols {
		c.rowFormats[i] = col.format
	}
	c.textFormats = make([]formatter, nOut+1)
	if c.keep {
		c.gen = newGeneration()
		c.genTmp = filepath.Join(s.dir, c.gen+".tmp")
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			return fmt.Errorf("preparing the key snapshot: %w", err)
		}
		// Generations no bookmark names: left by runs that died before
		// their commit, or superseded long ago.
		if err := cleanGenerations(s.dir, p.old.gens()); err != nil {
			return fmt.Errorf("cleaning the key snapshot: %w", err)
		}
		if err := os.MkdirAll(c.genTmp, 0o755); err != nil {
			return fmt.Errorf("preparing the key snapshot: %w", err)
		}
	}
	pending := p.differ
	if all {
		pending = nil
		for i := range p.ranges {
			pending = append(pending, i)
		}
	}
	c.pending = pending
	if detectStatement != nil {
		detectStatement(q.String())
	}
	err = s.src.stream(ctx, ses, q, func(row []any) error {
		b, err := strconv.Atoi(text(row[nOut+nKey]))
		if err != nil {
			return fmt.Errorf("range of a row: %w", err)
		}
		c.fetched++
		return c.row(b, row[:nOut], row[nOut:nOut+nKey], text(row[nOut+nKey+1]))
	})
	if err != nil {
		return fmt.Errorf("fetching the rows of %d ranges: %w", len(p.differ), err)
	}
	if err := c.finish(len(pending)); err != nil {
		return err
	}
	if err := c.csv.flush(); err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	p.file, p.rows, p.bytes = f.Name(), c.csv.rows, info.Size()
	p.count.Inserts, p.count.Updates, p.count.Deletes, p.count.Fetched = c.ins, c.upd, c.del, c.fetched
	if !c.keep {
		return nil
	}
	if err := syncDir(c.genTmp); err != nil {
		return err
	}
	if err := os.Rename(c.genTmp, filepath.Join(s.dir, c.gen)); err != nil {
		return fmt.Errorf("keeping the key snapshot: %w", err)
	}
	p.next = c.state()
	return nil
}

// gens are the generations a state names.
func (d *DetectState) gens() []string {
	if d == nil {
		return nil
	}
	return d.Generations
}

// syncDir flushes a folder's entries to disk.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Pending is 1 when a range differs from what was delivered.
func (p *detectPlan) Pending() int64 {
	if len(p.differ) > 0 {
		return 1
	}
	return 0
}

func (p *detectPlan) Downloads() int64           { return 0 }
func (p *detectPlan) Size() (files, bytes int64) { return 0, 0 }
func (p *detectPlan) BadRecords() string         { return engine.BadFail }

// Report logs the plan.
func (p *detectPlan) Report(log *slog.Logger) {
	log.Info("planned", "source", p.s.ctx, "changes", "detect", "ranges", p.ranges, "ranges_changed", p.count.RangesChanged,
		"rows_fetched", p.count.Fetched, "inserts", p.count.Inserts, "updates", p.count.Updates, "deletes", p.count.Deletes)
}

// Preview is the plan as `tidemark plan` shows it: what detection would
// cost the next run.
func (p *detectPlan) Preview() source.Preview {
	dp := &DetectPreview{Ranges: int64(p.ranges), RangesChanged: p.count.RangesChanged, RowsToFetch: p.toFetch, First: p.first()}
	if len(p.differ) == 0 {
		dp.RangesChanged = 0
	}
	return source.Preview{New: []string{}, Detail: PreviewDetail{Rows: p.toFetch, Detect: dp}}
}

// Open hands the planned change rows to the engine.
func (p *detectPlan) Open(context.Context, source.Env) (source.Reading, error) {
	es := engine.Source{Ctx: p.s.ctx, Format: "csv", Options: csvOptions(), Schema: p.s.schema(), Exact: true}
	if p.file != "" {
		es.Files = []engine.Input{{Location: p.file, Key: filepath.Base(p.file), Size: p.bytes}}
	}
	return logReading{in: es}, nil
}

// Count is the source's run summary.
func (p *detectPlan) Count(*engine.SourceResult) store.Count {
	count := p.count
	c := store.Count{Rows: p.rows, Bytes: p.bytes, Detail: CountDetail{Detect: &count}}
	if p.file != "" {
		c.Files = 1
	}
	return c
}

// Advance is the bookmark after the run: the new range figures, naming
// the key snapshot generation the run wrote.
func (p *detectPlan) Advance(runID string, _ engine.SourceResult) (source.Advance, bool) {
	if p.full || p.next == nil {
		return source.Advance{}, false
	}
	st := p.prev
	st.Kind = bookmark.KindTable
	st.Fingerprint, st.Describe = p.fp, p.fpDoc
	st.Schema = p.s.schema()
	d := StateDetailOf(p.prev)
	d.Runs++
	d.Rows += p.rows
	d.Cursor, d.Log = nil, nil
	d.Detect = p.next
	st.Detail = d
	rng, _ := json.Marshal(map[string]any{"changes": "detect", "inserts": p.count.Inserts, "updates": p.count.Updates,
		"deletes": p.count.Deletes, "ranges_changed": p.count.RangesChanged})
	rec := store.RangeRecord{Ctx: p.s.ctx, RunID: runID, Range: rng, Rows: p.rows}
	return source.Advance{State: st, Ranges: []store.RangeRecord{rec}}, true
}
