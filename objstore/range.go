package objstore

import (
	"context"
	"io"
)

// RangeReader is implemented by stores that read part of an object
// without sending the rest (S3: a ranged GET), for callers that look at
// the start or the end of many large objects (a crawler's sample, a
// Parquet footer).
type RangeReader interface {
	// ReadRange returns the bytes of key from off, at most n (fewer at the
	// end of the object, none past it); ErrNotExist if missing. A read:
	// retry freely.
	ReadRange(ctx context.Context, key string, off, n int64) ([]byte, error)
}

// ReadRange reads at most n bytes of key from off: with the store's
// RangeReader where it has one, else by reading from the start and
// dropping the first off bytes.
func ReadRange(ctx context.Context, s Store, key string, off, n int64) ([]byte, error) {
	if r, ok := s.(RangeReader); ok {
		return r.ReadRange(ctx, key, off, n)
	}
	rc, err := s.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if _, err := io.CopyN(io.Discard, rc, off); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, err
	}
	return io.ReadAll(io.LimitReader(rc, n))
}
