package sqltable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// ReadRanges reads again what earlier runs read, given their Extract.Range
// values (pause from/to): the rows whose keys are in each range's key
// span (After, Upto], and the late rows each run delivered from its
// lookback window, by identity; a row is written once even when two
// ranges name it. Rows are read as they are now: a row deleted since is
// gone, a row updated in place is read in its new version, a row whose
// keys changed has left the span (with an [updated_at, id] cursor its new
// version belongs to the later run that read it), and a row that
// committed late into a span after its run is read with that span. Nothing
// about the bookmark changes; the Extract has no Cursor or Range. All
// ranges are read in one snapshot.
func (s *Source) ReadRanges(ctx context.Context, ranges [][]byte, dir string) (*Extract, error) {
	ex := &Extract{Format: "csv", Options: csvOptions(), Schema: s.Schema()}
	list := make([]readRange, len(ranges))
	for i, b := range ranges {
		if err := json.Unmarshal(b, &list[i]); err != nil {
			return nil, fmt.Errorf("source %s: reading range %d: %w", s.cfg.Ctx, i+1, err)
		}
		r := list[i]
		if r.V != cursorVersion || !slices.Equal(r.Keys, s.Keys()) || r.Order != s.cfg.order() {
			return nil, fmt.Errorf("source %s: range %d was read with keys %v %s, the source now has %v %s",
				s.cfg.Ctx, i+1, r.Keys, r.Order, s.Keys(), s.cfg.order())
		}
	}
	out := &fileSink{s: s, dir: dir, ex: ex}
	err := s.d.session(ctx, s.db, func(ses session) error {
		for i, r := range list {
			if r.Upto == nil {
				continue
			}
			n, err := s.writePart(out, ex, fmt.Sprintf("range%d-rows", i+1), func(w io.Writer) (int64, error) {
				return s.writeRange(ctx, ses, w, r.After, r.Upto)
			})
			if err != nil {
				return s.fail("reading again rows of an earlier run", s.rangeDesc(r.After, r.Upto), err)
			}
			ex.Rows += n
		}
		for i, r := range list {
			if r.Window == nil || len(r.Late) == 0 {
				continue
			}
			// A late row inside one of the key ranges was just read.
			late := decodeIDs(r.Late)
			q := s.newQuery().w("SELECT ").selectList(true, true, true).w(" FROM ", s.from, " WHERE ").
				inWindow(*r.Window).w(" AND ").tuple(false, r.WindowTo)
			for _, o := range list {
				if o.Upto == nil {
					continue
				}
				q.w(" AND NOT (")
				if o.After != nil {
					q.tuple(true, o.After).w(" AND ")
				}
				q.tuple(false, o.Upto).w(")")
			}
			n, err := s.writePart(out, ex, fmt.Sprintf("range%d-late", i+1), func(w io.Writer) (int64, error) {
				return s.writeRows(ctx, ses, w, q, func(row []any) bool {
					_, ok := late[rowID(row[len(s.cols)+len(s.keys):])]
					return ok
				})
			})
			if err != nil {
				return s.fail("reading again late rows of an earlier run", s.keyDesc("from", []string{*r.Window}), err)
			}
			ex.Rows += n
		}
		return nil
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, s.fail("reading ranges in a snapshot", "", hint(err))
	}
	return ex, nil
}
