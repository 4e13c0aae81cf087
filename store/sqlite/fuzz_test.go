package sqlite

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// FuzzDecodeState feeds damaged source_states blobs to decodeState: it
// must not panic, an error must name the row, and what decodes must survive
// a round trip.
func FuzzDecodeState(f *testing.F) {
	good, err := encodeState(bookmark.SourceState{
		Kind: "files", Fingerprint: "fp", Tracking: bookmark.TrackTimestamp, HighWater: 42,
		Schema: []bookmark.Column{{Name: "a", Type: "BIGINT"}},
		Band:   []bookmark.File{{Path: "x", Size: 1, MTime: 2, ETag: "e"}},
		Files:  3, Bytes: 4,
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][]byte{good, good[:len(good)/2], nil, []byte("null"), []byte("[]"), []byte(`{"files":"x"}`),
		[]byte(`{"cursor":"!!"}`), []byte(`{"kind":"table","cursor":{"k":1}}`), []byte(`{"band":[{"size":1e400}]}`), []byte(" {} "), []byte("\xff{")} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeState("job-x", "ctx-y", 7, data)
		if err != nil {
			for _, want := range []string{"job-x", "ctx-y", "version 7"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q does not name %s", err, want)
				}
			}
			return
		}
		once, err := encodeState(st)
		if err != nil {
			t.Fatalf("encoding a decoded state: %v", err)
		}
		again, err := decodeState("job-x", "ctx-y", 7, once)
		if err != nil {
			t.Fatalf("decoding a re-encoded state %s: %v", once, err)
		}
		twice, _ := encodeState(again)
		if !bytes.Equal(once, twice) {
			t.Fatalf("round trip changed the state:\n%s\n%s", once, twice)
		}
	})
}

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
