package sqlstore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// FuzzDecodeState feeds damaged source_states blobs to decodeState: it
// must not panic, an error must name the row, and what decodes must survive
// a round trip.
func FuzzDecodeState(f *testing.F) {
	good, err := EncodeState(bookmark.SourceState{
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
		once, err := EncodeState(st)
		if err != nil {
			t.Fatalf("encoding a decoded state: %v", err)
		}
		again, err := decodeState("job-x", "ctx-y", 7, once)
		if err != nil {
			t.Fatalf("decoding a re-encoded state %s: %v", once, err)
		}
		twice, _ := EncodeState(again)
		if !bytes.Equal(once, twice) {
			t.Fatalf("round trip changed the state:\n%s\n%s", once, twice)
		}
	})
}
