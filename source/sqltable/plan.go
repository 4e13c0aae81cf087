package sqltable

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
)

// Plan is what the next run of a source reads. It changes nothing; a Plan
// is used for one Extract.
type Plan struct {
	s    *Source
	prev *cursor
	// From is the mark the run reads after (nil: from the start) and To
	// the key tuple it reads up to, inclusive (nil: there is nothing with
	// keys to read), as key texts.
	From []string
	To   []string
	// NewRows counts the rows in (From, To] when planned (-1: not
	// counted, see PlanRun); Late counts the rows in the lookback window
	// that were not delivered yet (late commits). The run reads both.
	NewRows int64
	Late    int64
	// NullKeys counts rows with a NULL key, left out (on_null_key: skip;
	// with fail, Plan returns a *NullKeyError instead).
	NullKeys int64
	// Regressions counts rows that appeared behind the window (or behind
	// the mark, without a lookback) since the last run: rows a
	// non-monotonic key or a transaction committing later than the
	// lookback put where no run reads them. They are not read; report
	// them.
	Regressions int64
	// Bounded reports that bounded_rows cut the run short of the current
	// maximum key; the next run continues.
	Bounded bool

	hasNew      bool  // there are rows in (From, To]
	behind      int64 // rows behind the previous boundary, now
	behindKnown bool  // behind was counted (the regression check ran)
	// region holds the identities of those rows when the check keeps
	// them (nil otherwise).
	region regionSet
}

// Pending reports whether the run has rows to read: new rows or late
// rows in the lookback window.
func (p *Plan) Pending() bool { return p.hasNew || p.Late > 0 }

// Plan reads the current bounds: the maximum key tuple, fixed as the
// run's upper bound, so rows inserted during the run wait for the next
// one; the NULL-key count; the new rows' count; the late rows in the
// lookback window; and the regression check. prev is the cursor of the
// last committed run (nil on the first run). Plan may be called any number
// of times.
func (s *Source) Plan(ctx context.Context, prev []byte) (*Plan, error) {
	return s.plan(ctx, prev, true)
}

// PlanRun is Plan for a run, which reports the rows it reads instead: it
// does not count the new rows first (NewRows is -1), so the database reads
// them once, not twice.
func (s *Source) PlanRun(ctx context.Context, prev []byte) (*Plan, error) {
	return s.plan(ctx, prev, false)
}

func (s *Source) plan(ctx context.Context, prev []byte, count bool) (*Plan, error) {
	c, err := decodeCursor(prev, s.Keys(), s.cfg.order())
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", s.cfg.Ctx, err)
	}
	p := &Plan{s: s, prev: c, NewRows: -1}
	if c != nil {
		p.From = c.Mark
	}

	q := s.newQuery().w("SELECT count(*) FROM ", s.from, " WHERE ")
	if q.anyNull() {
		if p.NullKeys, err = s.count(ctx, q); err != nil {
			return nil, s.fail("counting rows with a NULL key", "", err)
		}
	}
	if p.NullKeys > 0 && s.cfg.OnNullKey != "skip" {
		return nil, &NullKeyError{Source: s.cfg.Ctx, What: s.what, Keys: s.Keys(), Rows: p.NullKeys}
	}

	q = s.newQuery().w("SELECT ").selectList(false, true, false).w(" FROM ", s.from, " WHERE ").noNull().orderBy(true).w(" LIMIT 1")
	if p.To, err = s.firstRow(ctx, q); err != nil {
		return nil, s.fail("reading the maximum key", "", err)
	}
	if p.To != nil {
		if err := s.planNew(ctx, p, count); err != nil {
			return nil, err
		}
	}
	if c == nil || c.Mark == nil {
		return p, nil
	}
	if c.Window != nil {
		if err := s.lateRows(ctx, p, c); err != nil {
			return nil, err
		}
	}
	if s.cfg.NoRegressionCheck || c.Behind == nil {
		return p, nil
	}
	if s.pkCol >= 0 && c.PKMax != nil && c.PK == s.cols[s.pkCol].Name {
		// Rows above the highest primary key the last run saw were
		// inserted since: each is a regression, whatever else left.
		q := s.newQuery().w("SELECT count(*), count(CASE WHEN ", s.db.Kind.Quote(c.PK), " > ")
		q.value(s.pkCol, *c.PKMax)
		q.w(" THEN 1 END)")
		var above int64
		if p.behind, above, err = s.count2(ctx, s.regionWhere(q, c.Floor, c.Window, c.Mark)); err != nil {
			return nil, s.fail("counting the rows behind the mark (regression check)", "", err)
		}
		p.behindKnown = true
		p.Regressions = above + max(0, p.behind-above-*c.Behind)
		return p, nil
	}
	if !s.keepsRegion() || c.Region == nil || c.RegionDepth != s.regionDepth() || !slices.Equal(c.RegionBy, s.regionBy()) {
		// Counts only (no identities kept, a cursor written before they
		// were, or they were of other columns or another depth: a primary
		// key added or dropped): the next run's baseline keeps them.
		if p.behind, err = s.count(ctx, s.regionQuery("SELECT count(*)", c.Floor, c.Window, c.Mark)); err != nil {
			return nil, s.fail("counting the rows behind the mark (regression check)", "", err)
		}
		p.behindKnown = true
		p.Regressions = max(0, p.behind-*c.Behind)
		return p, nil
	}
	kept, err := decodeRegion(c.Region)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", s.cfg.Ctx, err)
	}
	// A row near the boundary whose identity the last run did not see
	// there appeared; rows that left (updated forward, deleted) hide none
	// of them. Further back, in the rest of the region, rows are counted.
	rfloor := c.RegionFloor
	if rfloor == nil {
		rfloor = c.Floor
	}
	p.region, err = s.regionRows(ctx, nil, s.regionQuery("SELECT "+s.regionTexts(), rfloor, c.Window, c.Mark), nil)
	if err != nil {
		return nil, s.fail("reading the rows behind the mark (regression check)", "", err)
	}
	p.behind, p.behindKnown = int64(len(p.region)), true
	p.Regressions = kept.appeared(p.region)
	if sameText(rfloor, c.Floor) {
		return p, nil // the identities are the whole region's
	}
	if p.behind, err = s.count(ctx, s.regionQuery("SELECT count(*)", c.Floor, c.Window, c.Mark)); err != nil {
		return nil, s.fail("counting the rows behind the mark (regression check)", "", err)
	}
	further := (p.behind - int64(len(p.region))) - (*c.Behind - int64(len(kept.fps)))
	p.Regressions += max(0, further)
	return p, nil
}

// sameText reports whether a and b are both nil or equal.
func sameText(a, b *string) bool {
	return a == b || a != nil && b != nil && *a == *b
}

// identityRows is how many rows nearest the boundary the regression
// check keeps the identities of, up to twice as many (about 2.2 bytes a
// row in the cursor), when there is no integer primary key to count by; a
// region of at most twice as many keeps all of its rows'.
const identityRows = 500

// keepsRegion reports whether the regression check keeps the identities
// of rows of its region: when the region is bounded and there is no
// integer primary key to count by.
func (s *Source) keepsRegion() bool {
	return !s.cfg.NoRegressionCheck && s.cfg.regressionRows() > 0 && s.pkCol < 0
}

// regionDepth is the depth of the rows whose identities the check keeps:
// the region's, or identityRows of a deeper one.
func (s *Source) regionDepth() int64 {
	if d := s.cfg.regressionRows(); d <= 2*identityRows {
		return d
	}
	return identityRows
}

// regionBy names the columns of a row's identity in the region.
func (s *Source) regionBy() []string {
	out := make([]string, len(s.regionIdent))
	for i, c := range s.regionIdent {
		out[i] = s.cols[c].Name
	}
	return out
}

func (s *Source) regionTexts() string {
	return s.newQuery().texts(s.regionIdent).String()
}

// planNew finds what the run reads after the mark: whether there is
// anything, the new rows' count when count is set, and where bounded_rows
// ends the run.
func (s *Source) planNew(ctx context.Context, p *Plan, count bool) error {
	var err error
	n := s.cfg.BoundedRows
	if count {
		if p.NewRows, err = s.count(ctx, s.rangeQuery("SELECT count(*)", p.From, p.To)); err != nil {
			return s.fail("counting new rows", s.keyDesc("after", p.From), err)
		}
		p.hasNew = p.NewRows > 0
		if n <= 0 || p.NewRows <= n {
			return nil
		}
	} else if n <= 0 {
		return s.anyNew(ctx, p)
	}
	// The n-th new row in key order ends the run, on its whole key tuple.
	q := s.rangeQuery("SELECT "+s.keyTexts(), p.From, p.To).orderBy(false).w(" LIMIT 1 OFFSET " + strconv.FormatInt(n-1, 10))
	end, err := s.firstRow(ctx, q)
	if err != nil {
		return s.fail("finding where bounded_rows ends the run", s.keyDesc("after", p.From), err)
	}
	if end == nil { // fewer than n new rows (only without a count)
		return s.anyNew(ctx, p)
	}
	p.hasNew, p.Bounded = true, !slices.Equal(end, p.To)
	p.To = end
	if count {
		if p.NewRows, err = s.count(ctx, s.rangeQuery("SELECT count(*)", p.From, p.To)); err != nil {
			return s.fail("counting new rows", s.keyDesc("after", p.From), err)
		}
		p.Bounded = true
	}
	return nil
}

// anyNew sets whether there is a row in (From, To].
func (s *Source) anyNew(ctx context.Context, p *Plan) error {
	if p.From == nil {
		p.hasNew = true // the maximum key is a row
		return nil
	}
	q := s.rangeQuery("SELECT "+s.keyTexts(), p.From, p.To).w(" LIMIT 1")
	row, err := s.firstRow(ctx, q)
	if err != nil {
		return s.fail("looking for new rows", s.keyDesc("after", p.From), err)
	}
	p.hasNew = row != nil
	return nil
}

// regionQuery is "<head> FROM src WHERE" the rows of the regression
// check's region: behind the window starting at window or, without one,
// not past mark; with a floor, only rows whose first key is at or past it.
func (s *Source) regionQuery(head string, floor, window *string, mark []string) *query {
	return s.regionWhere(s.newQuery().w(head), floor, window, mark)
}

// regionWhere appends " FROM src WHERE" the region's rows to q.
func (s *Source) regionWhere(q *query, floor, window *string, mark []string) *query {
	q.w(" FROM ", s.from, " WHERE ")
	if floor != nil {
		q.inWindow(*floor).w(" AND ")
	}
	if window != nil {
		return q.behind(*window)
	}
	return q.tuple(false, mark)
}

// lateRows counts the rows of the lookback window that were not delivered.
func (s *Source) lateRows(ctx context.Context, p *Plan, c *cursor) error {
	delivered := decodeIDs(c.Delivered)
	q := s.newQuery().w("SELECT ").selectList(false, false, true).w(" FROM ", s.from, " WHERE ").
		inWindow(*c.Window).w(" AND ").tuple(false, c.Mark)
	err := s.stream(ctx, nil, q, func(row []any) error {
		if _, ok := delivered[rowID(row)]; !ok {
			p.Late++
		}
		return nil
	})
	if err != nil {
		return s.fail("looking for late rows in the lookback window", s.keyDesc("from", []string{*c.Window}), err)
	}
	return nil
}

// rangeQuery is "<head> FROM src WHERE key tuple in (after, upto]".
func (s *Source) rangeQuery(head string, after, upto []string) *query {
	q := s.newQuery().w(head, " FROM ", s.from, " WHERE ")
	if after != nil {
		q.tuple(true, after).w(" AND ")
	}
	return q.tuple(false, upto)
}

func (s *Source) keyTexts() string {
	q := s.newQuery()
	q.selectList(false, true, false)
	return q.String()
}

// count runs a count query outside any snapshot.
func (s *Source) count(ctx context.Context, q *query) (int64, error) {
	if q.err != nil {
		return 0, q.err
	}
	var n int64
	err := s.db.QueryRowContext(ctx, q.String(), q.a.list...).Scan(&n)
	return n, hint(err)
}

// count2 runs a query of two counts outside any snapshot.
func (s *Source) count2(ctx context.Context, q *query) (int64, int64, error) {
	if q.err != nil {
		return 0, 0, q.err
	}
	var n, m sql.NullInt64
	err := s.db.QueryRowContext(ctx, q.String(), q.a.list...).Scan(&n, &m)
	return n.Int64, m.Int64, hint(err)
}

// firstRow returns the first row of q as text, or nil without rows.
func (s *Source) firstRow(ctx context.Context, q *query) ([]string, error) {
	var out []string
	err := s.stream(ctx, nil, q, func(row []any) error {
		if out == nil {
			out = make([]string, len(row))
			for i, v := range row {
				out[i] = text(v)
			}
		}
		return nil
	})
	return out, err
}

// stream runs q in ses, or in a session of its own when ses is nil.
func (s *Source) stream(ctx context.Context, ses session, q *query, fn func(row []any) error) error {
	if q.err != nil {
		return q.err
	}
	if ses != nil {
		return hint(ses.query(ctx, q.String(), q.a.list, fn))
	}
	return hint(s.d.session(ctx, s.db, func(ses session) error {
		return ses.query(ctx, q.String(), q.a.list, fn)
	}))
}

// text renders a key text value (the driver may have parsed numbers).
func text(v any) string {
	if v == nil {
		return ""
	}
	b, _ := fmtText(nil, v)
	return string(b)
}
