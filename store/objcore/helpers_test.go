package objcore

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"
	"testing"
)

// openMem opens a store on a new MemBackend (behind counting, if given).
func openMem(t testing.TB, counting *countingBackend) *Store {
	t.Helper()
	var b Backend = NewMemBackend("memory://"+t.Name(), nil)
	if counting != nil {
		counting.Backend = b
		b = counting
	}
	s, err := Open(t.Context(), b, Options{Kind: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// countingBackend counts the reads of object bodies (Get and Open).
type countingBackend struct {
	Backend
	reads atomic.Int64
}

func (c *countingBackend) Get(ctx context.Context, key string) (Object, error) {
	c.reads.Add(1)
	return c.Backend.Get(ctx, key)
}

func (c *countingBackend) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	c.reads.Add(1)
	return c.Backend.Open(ctx, key)
}

// nopCloser adds Close to a reader.
type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

// bytesReader reads b.
func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
