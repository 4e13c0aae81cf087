package objstoretest

import (
	"context"
	"errors"
	"testing"

	"github.com/tidemark-etl/tidemark/objstore"
)

// testReadRange: a range inside the object, one past its end (short), one
// starting at or past the end (nothing), an empty object and a missing
// one; with the store's RangeReader when it has one (each store under
// test should), else objstore.ReadRange's fallback.
func testReadRange(t *testing.T, s objstore.Store) {
	if _, ok := s.(objstore.RangeReader); !ok {
		t.Logf("%T has no RangeReader: testing objstore.ReadRange's fallback", s)
	}
	ctx := context.Background()
	put(t, s, "r/a", "0123456789")
	put(t, s, "r/empty", "")
	for _, tc := range []struct {
		key    string
		off, n int64
		want   string
	}{
		{"r/a", 0, 4, "0123"},
		{"r/a", 6, 4, "6789"},
		{"r/a", 8, 10, "89"},
		{"r/a", 10, 4, ""},
		{"r/a", 20, 4, ""},
		{"r/empty", 0, 4, ""},
	} {
		got, err := objstore.ReadRange(ctx, s, tc.key, tc.off, tc.n)
		if err != nil {
			t.Errorf("ReadRange(%s, %d, %d): %v", tc.key, tc.off, tc.n, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("ReadRange(%s, %d, %d): got %q, want %q", tc.key, tc.off, tc.n, got, tc.want)
		}
	}
	if _, err := objstore.ReadRange(ctx, s, "r/missing", 0, 4); !errors.Is(err, objstore.ErrNotExist) {
		t.Errorf("ReadRange of a missing object: got %v, want ErrNotExist", err)
	}
}
