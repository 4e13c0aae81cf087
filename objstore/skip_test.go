package objstore

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestMarkFilter checks MarkFilter against an oracle that knows the whole
// listing first, on random trees whose names sort before and after the
// marker, fed one key at a time in order.
func TestMarkFilter(t *testing.T) {
	names := []string{"0", "9", "A", "a", "z", "_tidemark", "_x", "_tidemarks", "p=1"}
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 1))
		set := map[string]bool{}
		for range 1 + r.IntN(40) {
			var segs []string
			for range 1 + r.IntN(4) {
				segs = append(segs, names[r.IntN(len(names))])
			}
			set[strings.Join(segs, "/")+"/f"] = true
		}
		var keys []string
		for k := range set {
			keys = append(keys, k)
		}
		slices.Sort(keys)

		marked := map[string]bool{}
		for _, k := range keys {
			segs := strings.Split(k, "/")
			for i := 1; i < len(segs); i++ {
				if segs[i] == "_tidemark" {
					marked[strings.Join(segs[:i], "/")] = true
				}
			}
		}
		visible := func(k string) bool {
			for _, s := range strings.Split(k, "/") {
				if strings.HasPrefix(s, "_") {
					return false
				}
			}
			return true
		}
		var want, wantSkipped []string
		for _, k := range keys {
			if !visible(k) {
				continue
			}
			if dir, ok := MarkedFolder(k, marked); ok {
				wantSkipped = append(wantSkipped, dir+" "+k)
			} else {
				want = append(want, k)
			}
		}

		var got, skipped []string
		m := &MarkFilter{Marker: "_tidemark", Skipped: func(dir string, o Object) { skipped = append(skipped, dir+" "+o.Key) }}
		if seed%2 == 1 { // a store that can probe, holding few objects
			m.MaxHeld = int(seed % 5)
			m.Probe = func(dir string) (bool, error) { return marked[dir], nil }
		}
		yield := func(o Object, err error) bool { got = append(got, o.Key); return true }
		for _, k := range keys {
			m.See(k)
			if visible(k) {
				m.Add(Object{Key: k})
				m.Release(yield)
			}
		}
		m.Flush(yield)
		if !slices.Equal(got, want) || !slices.Equal(skipped, wantSkipped) {
			t.Fatalf("seed %d, keys %q:\n got %q skipped %q\nwant %q skipped %q", seed, keys, got, skipped, want, wantSkipped)
		}
	}
}

func TestAtLeast(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{{"a/_tidemark0", true}, {"a/_tidemark/x", false}, {"a/_tidemark", false}, {"a/b", true}, {"a/", false}, {"b", true}, {"a/_u", true}} {
		if got := atLeast(c.s, "a", "/", "_tidemark", "0"); got != c.want {
			t.Errorf("atLeast(%q, a/_tidemark0) = %v, want %v", c.s, got, c.want)
		}
	}
}
