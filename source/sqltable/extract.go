package sqltable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// Extract is what one read of a source wrote: local files for the engine
// and, for a run, the cursor to commit and the range to record.
type Extract struct {
	// Files are local CSV files (no header) in Schema's column order; read
	// them with Format and Options and the explicit Schema.
	Files   []string
	Format  string
	Options map[string]any
	Schema  []bookmark.Column
	// Rows counts the rows written; Late those of them that came from the
	// lookback window (late commits). Bytes is the size of what was
	// written.
	Rows  int64
	Late  int64
	Bytes int64
	// Parts counts the parts that had rows (late rows, new rows, a
	// range): the files Extract writes, the pieces of ExtractTo's stream.
	Parts int
	// Cursor is the source's next cursor (bookmark.SourceState.Cursor),
	// to commit with the run; nil from ReadRanges.
	Cursor []byte
	// Range describes what was read (JSON), for the run's input manifest;
	// ReadRanges reads it again. Nil from ReadRanges.
	Range []byte
}

// Extract reads what p planned into files under dir (which must exist):
// the rows of the lookback window not delivered yet, then the rows in
// (From, To]. Everything, including the next cursor, comes from one
// snapshot of the database, so a row is either in the files and in the
// cursor's delivered set, or in neither. On error nothing is to be
// committed; files written so far are left in dir for the caller to
// remove with it.
func (p *Plan) Extract(ctx context.Context, dir string) (*Extract, error) {
	ex := &Extract{Format: "csv", Options: csvOptions(), Schema: p.s.Schema()}
	return p.extract(ctx, ex, &fileSink{s: p.s, dir: dir, ex: ex})
}

// ExtractTo is Extract writing every row, late rows first, into w as one
// CSV stream (for a pipe the engine reads while the rows arrive); the
// Extract has no Files. On error w may hold part of the rows.
func (p *Plan) ExtractTo(ctx context.Context, w io.Writer) (*Extract, error) {
	ex := &Extract{Format: "csv", Options: csvOptions(), Schema: p.s.Schema()}
	return p.extract(ctx, ex, streamSink{w})
}

func (p *Plan) extract(ctx context.Context, ex *Extract, out rowSink) (*Extract, error) {
	s := p.s
	next := &cursor{V: cursorVersion, Keys: s.Keys(), Order: s.cfg.order()}
	rng := &readRange{V: cursorVersion, Keys: next.Keys, Order: next.Order, After: p.From}
	if p.prev != nil {
		*next = *p.prev
		next.Delivered = nil
	}
	err := s.d.session(ctx, s.db, func(ses session) error {
		c := p.prev
		if c != nil && c.Window != nil && c.Mark != nil {
			delivered := decodeIDs(c.Delivered)
			late := idSet{}
			q := s.newQuery().w("SELECT ").selectList(true, true, true).w(" FROM ", s.from, " WHERE ").
				inWindow(*c.Window).w(" AND ").tuple(false, c.Mark)
			n, err := s.writePart(out, ex, "late", func(w io.Writer) (int64, error) {
				return s.writeRows(ctx, ses, w, q, func(row []any) bool {
					id := rowID(row[len(s.cols)+len(s.keys):])
					if _, ok := delivered[id]; ok {
						return false
					}
					late[id] = struct{}{}
					return true
				})
			})
			if err != nil {
				return s.fail("reading late rows in the lookback window", s.keyDesc("from", []string{*c.Window}), err)
			}
			if n > 0 {
				rng.Window, rng.WindowTo, rng.Late = c.Window, c.Mark, late.encode()
			}
			ex.Rows += n
			ex.Late = n
		}
		var newRows int64
		if p.To != nil {
			n, err := s.writePart(out, ex, "rows", func(w io.Writer) (int64, error) {
				return s.writeRange(ctx, ses, w, p.From, p.To)
			})
			if err != nil {
				return s.fail("reading rows", s.rangeDesc(p.From, p.To), err)
			}
			if n > 0 {
				next.Mark, rng.Upto = p.To, p.To
			}
			newRows = n
			ex.Rows += n
		}
		return s.advance(ctx, ses, p, next, newRows)
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, s.fail("reading in a snapshot", "", hint(err))
	}
	rng.Rows = ex.Rows
	ex.Cursor = next.encode()
	ex.Range, _ = json.Marshal(rng)
	return ex, nil
}

// advance fills the next cursor's window, delivered set and regression
// baseline, inside the extract's snapshot.
func (s *Source) advance(ctx context.Context, ses session, p *Plan, next *cursor, newRows int64) error {
	next.Window, next.Delivered, next.Lookback, next.Behind, next.Floor, next.Region, next.RegionBy = nil, nil, "", nil, nil, nil, nil
	next.PKMax, next.PK, next.RegionFloor, next.RegionDepth = nil, "", nil, 0
	if next.Mark == nil {
		return nil
	}
	if s.lb.set() {
		w, err := windowStart(s.db.Kind, s.cols[s.keys[0]].key, next.Mark[0], s.lb, s.cfg.desc())
		if err != nil {
			return s.fail("computing the lookback window", "", &columnError{column: s.cols[s.keys[0]].Name, err: err})
		}
		next.Window, next.Lookback = &w, s.lb.String()
		delivered := idSet{}
		q := s.newQuery().w("SELECT ").selectList(false, false, true).w(" FROM ", s.from, " WHERE ").
			inWindow(w).w(" AND ").tuple(false, next.Mark)
		err = s.stream(ctx, ses, q, func(row []any) error {
			delivered[rowID(row)] = struct{}{}
			return nil
		})
		if err != nil {
			return s.fail("recording the rows delivered in the lookback window", s.keyDesc("from", []string{w}), err)
		}
		next.Delivered = delivered.encode()
	}
	if s.cfg.NoRegressionCheck {
		return nil // no baseline: a later run that checks starts one
	}
	c := p.prev
	outer := regionArgs{depth: s.cfg.regressionRows(), known: p.behindKnown, behind: p.behind}
	if c != nil {
		outer.floor = c.Floor
	}
	n, floor, _, err := s.baseline(ctx, ses, p, next, newRows, outer)
	if err != nil {
		return s.fail("counting the rows behind the mark (regression check)", "", err)
	}
	next.Behind, next.Floor = &n, floor
	if s.keepsRegion() {
		// The identities of the rows nearest the boundary, at or past
		// the region's floor.
		inner := regionArgs{depth: s.regionDepth(), keep: true, min: floor, known: p.region != nil,
			behind: int64(len(p.region)), region: p.region}
		if c != nil {
			inner.floor = c.RegionFloor
		}
		_, rfloor, region, err := s.baseline(ctx, ses, p, next, newRows, inner)
		if err != nil {
			return s.fail("reading the rows behind the mark (regression check)", "", err)
		}
		next.Region, next.RegionBy, next.RegionFloor, next.RegionDepth = encodeRegion(region), s.regionBy(), rfloor, inner.depth
		if sameText(rfloor, floor) {
			n = int64(len(region)) // the same rows, as Plan found them
			next.Behind = &n
		}
	}
	if s.pkCol >= 0 {
		pk := s.db.Kind.Quote(s.cols[s.pkCol].Name)
		row, err := queryRow(ctx, ses, "SELECT max("+pk+") FROM "+s.from, nil)
		if err != nil {
			return s.fail("reading the highest primary key (regression check)", "", hint(err))
		}
		if row != nil && row[0] != nil {
			m := text(row[0])
			next.PKMax, next.PK = &m, s.cols[s.pkCol].Name
		}
	}
	return nil
}

// regionArgs is what baseline carries one region with: the outer one,
// counted, or the identities of the rows nearest the boundary.
type regionArgs struct {
	depth int64
	keep  bool    // identities
	min   *string // the floor a new region starts at, at the least (nil: none)
	// floor is the previous region's floor; known says Plan read it under
	// the same rules, finding behind rows (with identities region).
	floor  *string
	known  bool
	behind int64
	region regionSet
}

// baseline counts the regression check's region behind the new window (or
// mark) for the next run to compare with, and collects its rows'
// identities when the check keeps them (region is then not nil). The
// region only moves forward: when Plan read the old region under the same
// rules, the rows between the old and the new boundary are added to what
// it found, so that a row appearing in the old region during this run is
// still reported by the next. Past twice the check's depth, the region's
// floor moves up to keep the depth's rows nearest the boundary: the rows
// it leaves behind are subtracted, or, with identities, the region is read
// again from the new floor, keeping of the old region's rows only those
// Plan found. Without such a count (the first run, the check just turned
// on, a cursor that kept no identities, other rules) a new region starts
// at the depth's rows nearest the boundary: it reads the index that far,
// not the whole table.
func (s *Source) baseline(ctx context.Context, ses session, p *Plan, next *cursor, newRows int64, r regionArgs) (int64, *string, regionSet, error) {
	c := p.prev
	depth, keep := r.depth, r.keep
	carried := c != nil && c.Mark != nil && r.known && (c.Window != nil) == s.lb.set() && c.Lookback == next.Lookback &&
		!(depth == 0 && r.floor != nil) && // every row now, a bounded region before
		(!keep || r.region != nil)
	if !carried {
		floor := r.min
		first := (c == nil || c.Mark == nil) && !s.lb.set() && (depth == 0 || newRows <= 2*depth)
		switch {
		case first && !keep:
			return newRows, nil, nil, nil // the first read took every row up to the mark
		case !first && depth > 0:
			f, err := s.floorFor(ctx, ses, r.min, next, depth)
			if err != nil {
				return 0, nil, nil, err
			}
			if f != nil {
				floor = f // nil: fewer rows than the depth, all of them
			}
		}
		if keep {
			region, err := s.regionRows(ctx, ses, s.regionQuery("SELECT "+s.regionTexts(), floor, next.Window, next.Mark), nil)
			return int64(len(region)), floor, region, err
		}
		n, err := s.countIn(ctx, ses, s.regionQuery("SELECT count(*)", floor, next.Window, next.Mark))
		return n, floor, nil, err
	}
	floor, n := r.floor, r.behind+newRows
	var region regionSet
	if keep {
		// The rows between the old boundary and the new one join those
		// Plan found.
		region = slices.Clone(r.region)
		var q *query
		if s.lb.set() {
			q = s.betweenWindows("SELECT "+s.regionTexts(), c, next)
		} else if newRows > 0 {
			q = s.rangeQuery("SELECT "+s.regionTexts(), c.Mark, next.Mark)
		}
		if q != nil {
			more, err := s.regionRows(ctx, ses, q, nil)
			if err != nil {
				return 0, nil, nil, err
			}
			region = append(region, more...)
		}
		n = int64(len(region))
	} else if s.lb.set() {
		between, err := s.countIn(ctx, ses, s.betweenWindows("SELECT count(*)", c, next))
		if err != nil {
			return 0, nil, nil, err
		}
		n = r.behind + between
	}
	if depth == 0 || n <= 2*depth {
		return n, floor, region, nil
	}
	to, err := s.floorFor(ctx, ses, floor, next, depth)
	if err != nil || to == nil {
		return n, floor, region, err
	}
	if keep {
		region, err = s.rereadRegion(ctx, ses, p, next, to, r.region)
		return int64(len(region)), to, region, err
	}
	if floor == nil {
		n, err = s.countIn(ctx, ses, s.regionQuery("SELECT count(*)", to, next.Window, next.Mark))
		return n, to, nil, err
	}
	q := s.newQuery().w("SELECT count(*) FROM ", s.from, " WHERE ").inWindow(*floor).w(" AND ").behind(*to)
	left, err := s.countIn(ctx, ses, q)
	return n - left, to, nil, err
}

// betweenWindows is "<head> FROM src WHERE" the rows between the old
// window c's and the new one's.
func (s *Source) betweenWindows(head string, c, next *cursor) *query {
	return s.newQuery().w(head, " FROM ", s.from, " WHERE ").inWindow(*c.Window).w(" AND ").behind(*next.Window)
}

// rereadRegion reads the identities of the region behind next's boundary
// from the new floor to; of the rows behind the old boundary it keeps
// those Plan found there, so that one that appeared since is still to be
// reported.
func (s *Source) rereadRegion(ctx context.Context, ses session, p *Plan, next *cursor, to *string, planned regionSet) (regionSet, error) {
	c := p.prev
	found := map[uint64]int32{}
	for _, h := range planned {
		found[h]++
	}
	q := s.newQuery().w("SELECT ").texts(s.regionIdent).w(", CASE WHEN ")
	if c.Window != nil {
		q.behind(*c.Window)
	} else {
		q.tuple(false, c.Mark)
	}
	q.w(" THEN 1 ELSE 0 END FROM ", s.from, " WHERE ").inWindow(*to).w(" AND ")
	if next.Window != nil {
		q.behind(*next.Window)
	} else {
		q.tuple(false, next.Mark)
	}
	return s.regionRows(ctx, ses, q, func(h uint64, old string) bool {
		if old != "1" {
			return true // between the old boundary and the new one
		}
		if found[h] == 0 {
			return false
		}
		found[h]--
		return true
	})
}

// regionRows reads the region identities q selects (the region's key
// texts, then optionally one more column handed to keep as text, which
// picks the rows to take), in session ses (nil: one of its own). The
// result is never nil.
func (s *Source) regionRows(ctx context.Context, ses session, q *query, keep func(h uint64, flag string) bool) (regionSet, error) {
	out := regionSet{}
	n := len(s.regionIdent)
	var rh regionHasher
	err := s.stream(ctx, ses, q, func(row []any) error {
		h := rh.hash(row[:n])
		if keep == nil || keep(h, text(row[n])) {
			out = append(out, h)
		}
		return nil
	})
	return out, err
}

// floorFor finds the first key of the depth-th row behind next's boundary
// (at or past floor, when set): the floor of a region that holds the depth
// rows nearest the boundary. It is nil when there are fewer rows.
func (s *Source) floorFor(ctx context.Context, ses session, floor *string, next *cursor, depth int64) (*string, error) {
	q := s.newQuery().w("SELECT ", s.d.keyText(s.cols[s.keys[0]]), " FROM ", s.from, " WHERE ")
	if floor != nil {
		q.inWindow(*floor).w(" AND ")
	}
	if next.Window != nil {
		q.behind(*next.Window)
	} else {
		q.tuple(false, next.Mark)
	}
	q.orderBy(true).w(" LIMIT 1 OFFSET " + strconv.FormatInt(depth-1, 10))
	row, err := queryRow(ctx, ses, q.String(), q.a.list)
	if err = firstErr(q.err, err); err != nil || row == nil {
		return nil, hint(err)
	}
	f := text(row[0])
	return &f, nil
}

// countIn runs a count query in the session.
func (s *Source) countIn(ctx context.Context, ses session, q *query) (int64, error) {
	row, err := queryRow(ctx, ses, q.String(), q.a.list)
	if err != nil || q.err != nil {
		return 0, hint(firstErr(q.err, err))
	}
	var n int64
	_, err = fmt.Sscan(text(row[0]), &n)
	return n, err
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// rowSink is where an extract's rows go: a file per part (Extract) or
// one stream for all (ExtractTo).
type rowSink interface {
	open(part string) (io.Writer, error)
	// close ends a part that got rows rows.
	close(part string, rows int64) error
}

// writePart writes one part of ex into out.
func (s *Source) writePart(out rowSink, ex *Extract, part string, write func(w io.Writer) (int64, error)) (int64, error) {
	w, err := out.open(part)
	if err != nil {
		return 0, err
	}
	cw := &countingWriter{w: w}
	n, err := write(cw)
	if cerr := out.close(part, n); err == nil {
		err = cerr
	}
	ex.Bytes += cw.n
	if n > 0 {
		ex.Parts++
	}
	return n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// fileSink writes each part to a file of its own in dir; a part without
// rows leaves no file.
type fileSink struct {
	s   *Source
	dir string
	ex  *Extract
	f   *os.File
}

func (fs *fileSink) open(part string) (io.Writer, error) {
	f, err := os.Create(fs.s.fileName(fs.dir, part))
	fs.f = f
	return f, err
}

func (fs *fileSink) close(part string, rows int64) error {
	err := fs.f.Close()
	if rows == 0 {
		_ = os.Remove(fs.f.Name())
		return err
	}
	fs.ex.Files = append(fs.ex.Files, fs.f.Name())
	return err
}

// streamSink writes every part to one writer.
type streamSink struct{ w io.Writer }

func (ss streamSink) open(string) (io.Writer, error) { return ss.w, nil }
func (streamSink) close(string, int64) error         { return nil }

// writeRange writes the rows with keys in (after, upto] to w: by COPY
// where the database has it, else streamed row by row.
func (s *Source) writeRange(ctx context.Context, ses session, w io.Writer, after, upto []string) (int64, error) {
	// COPY writes the output columns only; a streamed read also carries
	// the key texts, which name the row in a conversion error.
	q := s.newQuery().w("SELECT ").selectList(true, s.db.Kind != sqldb.Postgres, false)
	q.w(" FROM ", s.from, " WHERE ")
	if after != nil {
		q.tuple(true, after).w(" AND ")
	}
	q.tuple(false, upto)
	if q.err != nil {
		return 0, q.err
	}
	if s.db.Kind == sqldb.Postgres {
		n, err := ses.copyTo(ctx, q.String(), w)
		return n, hint(err)
	}
	return s.writeRows(ctx, ses, w, q, nil)
}

// writeRows streams q (outputs, then key texts, then anything else) into
// w as CSV; keep, when set, picks the rows to write.
func (s *Source) writeRows(ctx context.Context, ses session, out io.Writer, q *query, keep func(row []any) bool) (int64, error) {
	w := newCSVWriter(out)
	formats := make([]formatter, len(s.cols))
	for i, c := range s.cols {
		formats[i] = c.format
	}
	n := len(s.cols)
	err := s.stream(ctx, ses, q, func(row []any) error {
		if keep != nil && !keep(row) {
			return nil
		}
		if err := w.write(row[:n], formats); err != nil {
			return s.valueError(err, row[n:])
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return w.rows, w.flush()
}

// valueError names the column and the row's key of a conversion error;
// rest holds the key texts after the output columns.
func (s *Source) valueError(err error, rest []any) error {
	ve, ok := err.(*valueError)
	if !ok || len(rest) < len(s.keys) {
		return err
	}
	texts := make([]string, len(s.keys))
	for j := range s.keys {
		texts[j] = text(rest[j])
	}
	return &columnError{column: s.cols[ve.col].Name,
		err: fmt.Errorf("row with key (%s) = (%s): %w", strings.Join(s.Keys(), ", "), joinTexts(texts), ve.err)}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func (s *Source) fileName(dir, part string) string {
	name := unsafeName.ReplaceAllString(s.cfg.Ctx, "_")
	if name == "" {
		name = "source"
	}
	return filepath.Join(dir, name+"-"+part+".csv")
}

func joinTexts(v []string) string { return strings.Join(v, ", ") }
