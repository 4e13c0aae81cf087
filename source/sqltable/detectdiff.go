package sqltable

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// differ compares the fetched ranges, in range order, with their
// delivered keys.
type differ struct {
	p                       *detectPlan
	csv                     *csvWriter
	nOut                    int
	rowFormats, textFormats []formatter
	keep                    bool // write the ranges' new key files (a run, not disable)
	gen, genTmp             string

	pending []int // the ranges still to finish, ascending
	next    int   // index into pending of the current range
	cur     int   // the current range (-1: none)
	started bool
	old     []keyEntry
	oldByID map[string]int
	seen    []bool
	out     *rangeWriter
	fig     rangeFigures
	figs    map[int]rangeFigures // the new figures of the fetched ranges

	ins, upd, del, fetched int64
	buf                    []any
}

// row takes one fetched row of range b.
func (c *differ) row(b int, vals, key []any, hash string) error {
	if !c.started || b != c.cur {
		if c.started {
			if err := c.end(); err != nil {
				return err
			}
		}
		// Ranges before b that returned no row: all their keys are gone.
		for c.next < len(c.pending) && c.pending[c.next] < b {
			if err := c.begin(c.pending[c.next]); err != nil {
				return err
			}
			if err := c.end(); err != nil {
				return err
			}
		}
		if c.next >= len(c.pending) || c.pending[c.next] != b {
			return fmt.Errorf("the database returned a row of range %d, which was not asked for", b)
		}
		if err := c.begin(b); err != nil {
			return err
		}
	}
	if hashPart(hash, 1) < 0 {
		return fmt.Errorf("row hash %q is not an MD5", hash)
	}
	e := keyEntry{Key: make([]string, len(key)), Hash: hash}
	for i, v := range key {
		e.Key[i] = text(v)
	}
	s := c.p.s.src
	outs, same := make([]string, len(s.keys)), true
	for i, k := range s.keys {
		var t []byte
		var err error
		if f := s.cols[k].format; f != nil && vals[k] != nil {
			t, err = f(nil, vals[k])
		} else {
			t, err = fmtText(nil, vals[k])
		}
		if err != nil {
			return s.valueError(&valueError{col: k, err: err}, key)
		}
		outs[i] = string(t)
		same = same && outs[i] == e.Key[i]
	}
	if !same {
		e.Out = outs
	}
	c.fig.add(hash)
	if c.out != nil {
		if err := c.out.add(e); err != nil {
			return err
		}
	}
	op := "I"
	if i, ok := c.oldByID[e.id()]; ok {
		c.seen[i] = true
		if c.old[i].Hash == hash {
			return nil // unchanged
		}
		op = "U"
	}
	row := append(append(c.buf[:0], vals...), op)
	c.buf = row
	if err := c.csv.write(row, c.rowFormats); err != nil {
		return s.valueError(err, key)
	}
	if op == "I" {
		c.ins++
	} else {
		c.upd++
	}
	return nil
}

// begin starts range b: reads its delivered keys.
func (c *differ) begin(b int) error {
	p := c.p
	c.cur, c.started = b, true
	c.next++
	c.old, c.oldByID, c.seen, c.fig = nil, map[string]int{}, nil, rangeFigures{}
	if want := p.old.figures(b); want.Rows > 0 {
		gen := p.old.generation(b)
		if gen == "" {
			return fmt.Errorf("the bookmark names no key snapshot for range %d of %d rows: run `tidemark bookmark reset %s`", b, want.Rows, p.s.job)
		}
		old, err := readKeys(p.s.dir, gen, b, want)
		if err != nil {
			return err
		}
		c.old = old
		for i, e := range old {
			c.oldByID[e.id()] = i
		}
		c.seen = make([]bool, len(old))
	}
	if c.keep {
		w, err := createRange(c.genTmp, b)
		if err != nil {
			return fmt.Errorf("writing the key snapshot: %w", err)
		}
		c.out = w
	}
	return nil
}

// end finishes the current range: the delivered keys not seen are
// deletes; its key file is closed and its figures kept.
func (c *differ) end() error {
	s := c.p.s.src
	for i, e := range c.old {
		if c.seen[i] {
			continue
		}
		row := make([]any, c.nOut+1)
		for j, k := range s.keys {
			row[k] = []byte(e.out()[j])
		}
		row[c.nOut] = "D"
		if err := c.csv.write(row, c.textFormats); err != nil {
			return err
		}
		c.del++
	}
	if c.out != nil {
		if err := c.out.close(); err != nil {
			return fmt.Errorf("writing the key snapshot: %w", err)
		}
		c.out = nil
		if c.fig.Rows == 0 {
			_ = os.Remove(filepath.Join(c.genTmp, strconv.Itoa(c.cur)+".jsonl.gz"))
		}
	}
	if c.figs == nil {
		c.figs = map[int]rangeFigures{}
	}
	if now, ok := c.p.now[c.cur]; c.p.now != nil && (!ok && c.fig.Rows > 0 || ok && now != c.fig) {
		return fmt.Errorf("range %d: the rows fetched (%d, checksums %d/%d) disagree with the figures the database computed in the same snapshot (%d, %d/%d)",
			c.cur, c.fig.Rows, c.fig.Sum1, c.fig.Sum2, now.Rows, now.Sum1, now.Sum2)
	}
	c.figs[c.cur] = c.fig
	c.started = false
	return nil
}

// finish ends the current range and every pending one after it.
func (c *differ) finish(n int) error {
	if c.started {
		if err := c.end(); err != nil {
			return err
		}
	}
	for c.next < n {
		if err := c.begin(c.pending[c.next]); err != nil {
			return err
		}
		if err := c.end(); err != nil {
			return err
		}
	}
	return nil
}

// state is the bookmark after the run: the fetched ranges' new figures
// and generation, the others' as they were.
func (c *differ) state() *DetectState {
	p := c.p
	st := &DetectState{Ranges: p.ranges, Snapshot: p.s.dir, Figures: make([][4]int64, p.ranges), CheckedAt: time.Now().UTC()}
	index := map[string]int64{}
	genOf := func(g string) int64 {
		if i, ok := index[g]; ok {
			return i
		}
		index[g] = int64(len(st.Generations))
		st.Generations = append(st.Generations, g)
		return index[g]
	}
	for i := range p.ranges {
		f, fetched := c.figs[i]
		g := c.gen
		if !fetched {
			f, g = p.old.figures(i), p.old.generation(i)
		}
		gi := int64(-1)
		if f.Rows > 0 {
			gi = genOf(g)
		}
		st.Figures[i] = [4]int64{f.Rows, f.Sum1, f.Sum2, gi}
		st.Keys += f.Rows
	}
	return st
}
