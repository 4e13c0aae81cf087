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

// regionHasher computes rows' identities in the region.
type regionHasher struct{ buf []byte }

func (r *regionHasher) hash(vals []any) uint64 {
	var h id
	h, r.buf = appendRowID(r.buf, vals)
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
	fps := fingerprints(hashes, n<<regionBits)
	w := bitWriter{buf: out}
	prev := uint64(0)
	for _, fp := range fps {
		d := fp - prev
		prev = fp
		for q := d >> regionBits; q > 0; q -= min(q, 32) {
			w.bits(1<<min(q, 32)-1, uint(min(q, 32)))
		}
		w.bits(d&(1<<regionBits-1), regionBits+1) // a 0 ends the unary part
	}
	return w.done()
}

// fingerprints reduces hashes into [0, n), sorted. They are spread
// evenly, so they are sorted by bucket (as many as hashes) in linear
// time, then within each bucket.
func fingerprints(hashes regionSet, n uint64) []uint64 {
	buckets := uint64(len(hashes))
	start := make([]int, buckets+1)
	for _, h := range hashes {
		start[reduce(h, buckets)+1]++
	}
	for i := range buckets {
		start[i+1] += start[i]
	}
	fps := make([]uint64, len(hashes))
	for _, h := range hashes {
		b := reduce(h, buckets)
		fps[start[b]] = reduce(h, n)
		start[b]++
	}
	for i := len(start) - 1; i > 0; i-- {
		start[i] = start[i-1]
	}
	start[0] = 0
	for i := range buckets {
		if b := fps[start[i]:start[i+1]]; len(b) > 1 {
			slices.Sort(b)
		}
	}
	return fps
}

// regionFilter is a decoded region: its fingerprints, sorted, and the
// range they were reduced into.
type regionFilter struct {
	n   uint64
	fps []uint64
}

// decodeRegion reads what encodeRegion wrote.
func decodeRegion(b []byte) (*regionFilter, error) {
	bad := errors.New("reading the bookmark's cursor: the regression check's region is damaged")
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, bad
	}
	p, k2 := binary.Uvarint(b[k:])
	if k2 <= 0 || p != regionBits || n > uint64(len(b))*8/(regionBits+1) {
		return nil, bad
	}
	f := &regionFilter{n: n << regionBits, fps: make([]uint64, 0, n)}
	r := bitReader{buf: b[k+k2:]}
	fp := uint64(0)
	for range n {
		q := uint64(0)
		for {
			bit, ok := r.bits(1)
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
		f.fps = append(f.fps, fp)
	}
	return f, nil
}

// appeared counts the rows of hashes the region did not hold: each kept
// row answers for one row now.
func (f *regionFilter) appeared(hashes regionSet) int64 {
	if f.n == 0 {
		return int64(len(hashes))
	}
	var n int64
	kept := f.fps
	for _, fp := range fingerprints(hashes, f.n) {
		for len(kept) > 0 && kept[0] < fp {
			kept = kept[1:]
		}
		if len(kept) > 0 && kept[0] == fp {
			kept = kept[1:]
			continue
		}
		n++
	}
	return n
}

// reduce maps h uniformly into [0, n).
func reduce(h, n uint64) uint64 {
	hi, _ := bits.Mul64(h, n)
	return hi
}

// bitWriter appends bits, most significant first.
type bitWriter struct {
	buf []byte
	acc uint64 // the last n bits are pending
	n   uint
}

// bits writes the k (at most 32) low bits of v.
func (w *bitWriter) bits(v uint64, k uint) {
	w.acc = w.acc<<k | v&(1<<k-1)
	for w.n += k; w.n >= 8; w.n -= 8 {
		w.buf = append(w.buf, byte(w.acc>>(w.n-8)))
	}
}

func (w *bitWriter) done() []byte {
	if w.n > 0 {
		w.buf = append(w.buf, byte(w.acc<<(8-w.n)))
	}
	return w.buf
}

// bitReader reads what bitWriter wrote.
type bitReader struct {
	buf []byte
	acc uint64 // the last n bits are unread
	n   uint
}

// bits reads k (at most 32) bits; ok is false past the end.
func (r *bitReader) bits(k uint) (uint64, bool) {
	for r.n < k {
		if len(r.buf) == 0 {
			return 0, false
		}
		r.acc = r.acc<<8 | uint64(r.buf[0])
		r.buf, r.n = r.buf[1:], r.n+8
	}
	r.n -= k
	return r.acc >> r.n & (1<<k - 1), true
}
