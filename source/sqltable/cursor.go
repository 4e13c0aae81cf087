package sqltable

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/zeebo/xxh3"
)

// cursor is what a source's bookmark remembers between runs: the JSON in
// bookmark.SourceState.Cursor. A runner stores it opaquely.
type cursor struct {
	V     int      `json:"v"`
	Keys  []string `json:"keys"`
	Order string   `json:"order"`
	// Mark is the key tuple read up to (inclusive), as key texts; nil
	// until a run has read a row.
	Mark []string `json:"mark,omitempty"`
	// Window is the first key's value from which on Delivered lists what
	// was delivered (mark − lookback); nil without a lookback. Lookback
	// is the lookback it was computed with.
	Window   *string `json:"window,omitempty"`
	Lookback string  `json:"lookback,omitempty"`
	// Delivered holds the identities (128-bit hashes of primary key and
	// key values) of the rows in [Window, Mark], sorted.
	Delivered []byte `json:"delivered,omitempty"`
	// Behind counts the rows of the regression check's region as the last
	// run saw them: the rows behind the window (first key < Window) or,
	// without a window, up to the mark, whose first key is at or past
	// Floor (nil: from the start). It is the check's baseline; nil when
	// not checked.
	Behind *int64  `json:"behind,omitempty"`
	Floor  *string `json:"floor,omitempty"`
	// Region holds the identities of those rows (encodeRegion) when the
	// check keeps them (a bounded region); nil when it only counts, and
	// in cursors written before it kept them. RegionBy names the columns
	// hashed (keys, then primary key columns not among them).
	Region   []byte   `json:"region,omitempty"`
	RegionBy []string `json:"region_by,omitempty"`
	// RegionFloor is the floor of the rows Region holds (at or past
	// Floor: the rows nearest the boundary, RegionDepth to twice as many;
	// nil: from Floor) and RegionDepth the depth it was kept with.
	RegionFloor *string `json:"region_floor,omitempty"`
	RegionDepth int64   `json:"region_depth,omitempty"`
	// PKMax is the highest value of primary key column PK in the run's
	// snapshot, when it is one integer column (not the first key): the
	// next run's rows above it in the region were inserted since.
	PKMax *string `json:"pk_max,omitempty"`
	PK    string  `json:"pk,omitempty"`
}

const cursorVersion = 1

// decodeCursor reads a cursor and checks it belongs to these keys.
func decodeCursor(b []byte, keys []string, order string) (*cursor, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("reading the bookmark's cursor: %w", err)
	}
	if c.V != cursorVersion {
		return nil, fmt.Errorf("reading the bookmark's cursor: version %d, want %d", c.V, cursorVersion)
	}
	if !slices.Equal(c.Keys, keys) || c.Order != order {
		return nil, fmt.Errorf("the bookmark was kept for keys %v %s, the source now has %v %s: reset the bookmark to read with new keys",
			c.Keys, c.Order, keys, order)
	}
	if c.Mark != nil && len(c.Mark) != len(keys) {
		return nil, fmt.Errorf("reading the bookmark's cursor: mark has %d values for %d keys", len(c.Mark), len(keys))
	}
	if len(c.Delivered)%idSize != 0 {
		return nil, fmt.Errorf("reading the bookmark's cursor: delivered set is %d bytes", len(c.Delivered))
	}
	return &c, nil
}

func (c *cursor) encode() []byte {
	b, _ := json.Marshal(c)
	return b
}

// id is a row's identity in a lookback window: a 128-bit hash of its
// primary key and key values (all values when there is no primary key).
type id [16]byte

const idSize = 16

// rowID hashes the identity values (key texts, or numbers the driver
// parsed; nil is NULL): each value's text, length first.
func rowID(vals []any) id {
	h, _ := appendRowID(nil, vals)
	return h
}

// appendRowID is rowID hashing through buf (for reuse), which it returns.
func appendRowID(buf []byte, vals []any) (id, []byte) {
	buf = buf[:0]
	for _, v := range vals {
		if v == nil {
			buf = append(buf, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		buf, _ = fmtText(buf, v)
		binary.LittleEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	h := xxh3.Hash128(buf).Bytes()
	return id(h), buf
}

// idSet is a set of row identities.
type idSet map[id]struct{}

func decodeIDs(b []byte) idSet {
	s := make(idSet, len(b)/idSize)
	for i := 0; i+idSize <= len(b); i += idSize {
		s[id(b[i:i+idSize])] = struct{}{}
	}
	return s
}

// encode returns the set's identities sorted, concatenated.
func (s idSet) encode() []byte {
	list := make([]id, 0, len(s))
	for k := range s {
		list = append(list, k)
	}
	slices.SortFunc(list, func(a, b id) int { return bytes.Compare(a[:], b[:]) })
	out := make([]byte, 0, len(list)*idSize)
	for _, k := range list {
		out = append(out, k[:]...)
	}
	return out
}

// readRange is what one run read, for the run's input manifest; ReadRanges
// reads it again.
type readRange struct {
	V     int      `json:"v"`
	Keys  []string `json:"keys"`
	Order string   `json:"order"`
	// After (exclusive, nil: from the start) and Upto (inclusive) bound
	// the new rows; Upto is nil when the run read none.
	After []string `json:"after,omitempty"`
	Upto  []string `json:"upto,omitempty"`
	// Window and WindowTo bound the lookback window the run re-read;
	// Late lists the identities of the late rows it delivered from there.
	Window   *string  `json:"window,omitempty"`
	WindowTo []string `json:"window_to,omitempty"`
	Late     []byte   `json:"late,omitempty"`
	// Rows is how many rows the run delivered.
	Rows int64 `json:"rows"`
}

// DescribeCursor renders a bookmark's cursor (bookmark.SourceState.Cursor)
// for people: its JSON with the lookback window's delivered set and the
// regression check's region given as their numbers of rows instead of
// their bytes. A cursor it cannot read is returned as it is.
func DescribeCursor(b []byte) string {
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil {
		return string(b)
	}
	v := struct {
		cursor
		Delivered int    `json:"delivered,omitempty"`
		Region    uint64 `json:"region,omitempty"`
	}{cursor: c, Delivered: len(c.Delivered) / idSize}
	v.RegionBy = nil
	if len(c.Region) > 0 {
		v.Region, _ = binary.Uvarint(c.Region)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
