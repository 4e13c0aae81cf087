package sqltable

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRegionCoding: a region's identities come back with their
// multiplicity; other hashes are rarely taken for them; damage is an error.
func TestRegionCoding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 1000, 100_000} {
		set := make(regionSet, n)
		for i := range set {
			set[i] = r.Uint64()
		}
		if n > 1 {
			set[1] = set[0] // two rows with one identity
		}
		b := encodeRegion(set)
		if len(b) == 0 {
			t.Fatalf("%d rows: empty encoding", n)
		}
		if n >= 1000 && float64(len(b)*8)/float64(n) > regionBits+2.5 {
			t.Errorf("%d rows: %d bytes, %.1f bits a row", n, len(b), float64(len(b)*8)/float64(n))
		}
		f, err := decodeRegion(b)
		if err != nil {
			t.Fatalf("%d rows: %v", n, err)
		}
		if got := f.appeared(set); got != 0 {
			t.Fatalf("%d rows: %d of the kept rows not found", n, got)
		}
		if n > 1 && f.appeared(append(slices.Clone(set), set[0])) != 1 {
			t.Fatalf("%d rows: a row was found more often than it was kept", n)
		}
		others := make(regionSet, 100_000)
		for i := range others {
			others[i] = r.Uint64()
		}
		if wrong := 100_000 - f.appeared(others); wrong > 10 {
			t.Errorf("%d rows: %d of 100,000 other rows taken for kept ones", n, wrong)
		}
		if n > 0 {
			if _, err := decodeRegion(b[:len(b)-1-n/8]); err == nil {
				t.Errorf("%d rows: a cut encoding was read", n)
			}
		}
	}
	if _, err := decodeRegion([]byte{5, 3}); err == nil {
		t.Error("a wrong parameter was read")
	}
}

// TestDescribeCursor: bookmark show gives the sets' sizes, not their bytes.
func TestDescribeCursor(t *testing.T) {
	n := int64(3)
	c := cursor{V: cursorVersion, Keys: []string{"id"}, Order: "asc", Mark: []string{"9"}, Behind: &n,
		Delivered: make([]byte, 2*idSize), Region: encodeRegion(regionSet{1, 2, 3})}
	got := DescribeCursor(c.encode())
	want := `{"v":1,"keys":["id"],"order":"asc","mark":["9"],"behind":3,"delivered":2,"region":3}`
	if got != want {
		t.Fatalf("DescribeCursor = %s, want %s", got, want)
	}
	if got := DescribeCursor([]byte("not json")); got != "not json" {
		t.Fatalf("DescribeCursor of a damaged cursor = %q", got)
	}
}

// FuzzDecodeRegion feeds damaged regions to decodeRegion: it returns an
// error or a region, never panics, and what encodeRegion wrote comes back.
func FuzzDecodeRegion(f *testing.F) {
	f.Add(encodeRegion(regionSet{1, 2, 3, 1 << 63}))
	f.Add(encodeRegion(regionSet{}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 16})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRegion(b)
		if err != nil {
			return
		}
		r.appeared(regionSet{1, 2, 3})
		set := make(regionSet, len(b))
		for i, c := range b {
			set[i] = uint64(c) * 0x9e3779b97f4a7c15
		}
		if got, err := decodeRegion(encodeRegion(set)); err != nil || got.appeared(set) != 0 {
			t.Fatalf("a region of %d rows does not come back: %v", len(set), err)
		}
	})
}
