package local

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/tidemark-etl/tidemark/objstore"
)

var _ objstore.RangeReader = (*Store)(nil)

// ReadRange reads at most n bytes of key from off (fewer at the end).
func (s *Store) ReadRange(_ context.Context, key string, off, n int64) ([]byte, error) {
	f, err := os.Open(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, objstore.ErrNotExist
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	got, err := f.ReadAt(b, off)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return b[:got], nil
}
