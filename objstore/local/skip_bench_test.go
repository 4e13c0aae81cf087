package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/objstore"
)

// BenchmarkListSkipping compares List with ListSkipping over the bench's
// no-op tree: 100,000 tiny files in 100 folders.
//
//	go test ./objstore/local -run '^$' -bench ListSkipping -count 5
func BenchmarkListSkipping(b *testing.B) {
	dir := b.TempDir()
	const dirs, perDir = 100, 1000
	for d := range dirs {
		sub := filepath.Join(dir, fmt.Sprintf("d%04d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range perDir {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%04d.csv", f)), []byte("order_id\n1\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	s, err := New(dir)
	if err != nil {
		b.Fatal(err)
	}
	count := func(seq func(func(objstore.Object, error) bool)) {
		got := 0
		for _, err := range seq {
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		if got != dirs*perDir {
			b.Fatalf("listed %d files, want %d", got, dirs*perDir)
		}
	}
	b.Run("List", func(b *testing.B) {
		for b.Loop() {
			count(s.List(context.Background(), ""))
		}
	})
	b.Run("ListSkipping", func(b *testing.B) {
		for b.Loop() {
			count(s.ListSkipping(context.Background(), "_tidemark", nil))
		}
	})
}
