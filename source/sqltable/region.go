package sqltable

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"slices"
)

// The regression check's region is kept as the identities of its rows, so
// that a row that appears there is seen even when another leaves it in the
// same interval (an update moving an old row forward, a delete). A row's
// identity is a 64-bit hash of its primary key and key values (the key
// values alone without a primary key); the region keeps them with
// multiplicity, so rows that share an identity count each.
//
// The cursor stores them compactly as a Golomb-coded set: each hash is
// reduced to a fingerprint in [0, n·2^regionBits) for n rows, sorted, and
// the differences are Rice-coded, about regionBits+1.5 bits a row. A row
// whose fingerprint matches one of another row of the region by chance
// (probability about 2^-regionBits) is taken for that row: a row that
// appears is missed with that probability, never made up.

// regionBits is the fingerprints' precision beyond the row count: a row
// that appears is missed with probability 2^-regionBits (1 in 65,536).
const regionBits = 16

// regionSet is a region's identities with multiplicity, as hashes.
type regionSet []uint64

// regionHash is a row's identity in the region.
func regionHash(vals []any) uint64 {
	h := rowID(vals)
	return binary.LittleEndian.Uint64(h[:8])
}

// encodeRegion writes hashes as a Golomb-coded set: the row count and the
// Rice parameter as varints, then the sorted fingerprints' differences.
// It is never empty (an empty region is a count of 0), so that a kept
// empty region differs from none in the cursor.
func encodeRegion(hashes regionSet) []byte {
	n := uint64(len(hashes))
	out := binary.AppendUvarint(nil, n)
	out = binary.AppendUvarint(out, regionBits)
	if n == 0 {
		return out
	}
	fps := make([]uint64, len(hashes))
	for i, h := range hashes {
		fps[i] = reduce(h, n<<regionBits)
	}
	slices.Sort(fps)
	w := bitWriter{buf: out}
	prev := uint64(0)
	for _, fp := range fps {
		d := fp - prev
		prev = fp
		for q := d >> regionBits; q > 0; q-- {
			w.bit(1)
		}
		w.bit(0)
		w.bits(d&(1<<regionBits-1), regionBits)
	}
	return w.done()
}

// regionFilter is a decoded region: fingerprint counts, and the range the
// fingerprints were reduced into.
type regionFilter struct {
	n      uint64
	counts map[uint64]int32
}

// decodeRegion reads what encodeRegion wrote.
func decodeRegion(b []byte) (*regionFilter, error) {
	bad := errors.New("reading the bookmark's cursor: the regression check's region is damaged")
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, bad
	}
	p, k2 := binary.Uvarint(b[k:])
	if k2 <= 0 || p != regionBits || n > 1<<40 {
		return nil, bad
	}
	f := &regionFilter{n: n << regionBits, counts: make(map[uint64]int32, n)}
	r := bitReader{buf: b[k+k2:]}
	fp := uint64(0)
	for range n {
		q := uint64(0)
		for {
			bit, ok := r.bit()
			if !ok {
				return nil, bad
			}
			if bit == 0 {
				break
			}
			q++
		}
		low, ok := r.bits(regionBits)
		if !ok {
			return nil, bad
		}
		fp += q<<regionBits | low
		f.counts[fp]++
	}
	return f, nil
}

// take reports whether the region held a row with hash h and, if so,
// uses that row up: each kept row answers for one row now.
func (f *regionFilter) take(h uint64) bool {
	if f.n == 0 {
		return false
	}
	fp := reduce(h, f.n)
	if f.counts[fp] == 0 {
		return false
	}
	f.counts[fp]--
	return true
}

// reduce maps h uniformly into [0, n).
func reduce(h, n uint64) uint64 {
	hi, _ := bits.Mul64(h, n)
	return hi
}

// bitWriter appends bits, most significant first.
type bitWriter struct {
	buf  []byte
	cur  byte
	used uint
}

func (w *bitWriter) bit(b uint64) {
	w.cur = w.cur<<1 | byte(b&1)
	if w.used++; w.used == 8 {
		w.buf, w.cur, w.used = append(w.buf, w.cur), 0, 0
	}
}

func (w *bitWriter) bits(v uint64, n uint) {
	for i := n; i > 0; i-- {
		w.bit(v >> (i - 1))
	}
}

func (w *bitWriter) done() []byte {
	if w.used > 0 {
		w.buf = append(w.buf, w.cur<<(8-w.used))
	}
	return w.buf
}

// bitReader reads what bitWriter wrote.
type bitReader struct {
	buf []byte
	pos uint64 // bits read
}

func (r *bitReader) bit() (uint64, bool) {
	i := r.pos >> 3
	if i >= uint64(len(r.buf)) {
		return 0, false
	}
	b := r.buf[i] >> (7 - r.pos&7) & 1
	r.pos++
	return uint64(b), true
}

func (r *bitReader) bits(n uint) (uint64, bool) {
	var v uint64
	for range n {
		b, ok := r.bit()
		if !ok {
			return 0, false
		}
		v = v<<1 | b
	}
	return v, true
}
