package sqlite

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// FuzzPathOrder checks that the store orders any two paths as Go does
// (byte order), whatever bytes they hold: non-ASCII, invalid UTF-8, '/'.
func FuzzPathOrder(f *testing.F) {
	for _, seed := range [][2]string{
		{"a/b", "a-b"}, {"a.b", "a/b"}, {"é", "z"}, {"\ufffd", "😀"}, {"A", "a"}, {"\xff", "\xc3\xa9"}, {"a", "a\x01"},
	} {
		f.Add(seed[0], seed[1])
	}
	s, err := Open(f.Context(), filepath.Join(f.TempDir(), "state.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	l, err := s.AcquireLease(f.Context(), "j", store.Holder{ID: "fuzz"}, leaseTTL)
	if err != nil {
		f.Fatal(err)
	}
	n := 0
	f.Fuzz(func(t *testing.T, a, b string) {
		if a == b {
			t.Skip("equal paths")
		}
		n++
		h, err := s.Head(t.Context(), "j")
		if err != nil {
			t.Fatal(err)
		}
		srcCtx := fmt.Sprint("src-", n) // a fresh ctx per input
		r, err := s.BeginRun(t.Context(), l.Token, store.Run{Job: "j", RunID: fmt.Sprint("r", n)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Commit(t.Context(), store.Commit{
			Job: "j", Token: l.Token, BaseVersion: h.Version, Advance: true, Run: r,
			Added: []store.FileRecord{{Ctx: srcCtx, File: bookmark.File{Path: a}}, {Ctx: srcCtx, File: bookmark.File{Path: b}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for f, err := range s.Files(t.Context(), "j", srcCtx) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, f.Path)
		}
		want := []string{a, b}
		if b < a {
			want = []string{b, a}
		}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("Files = %q, want %q", got, want)
		}
	})
}
