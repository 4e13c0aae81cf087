package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"github.com/tidemark-etl/tidemark/objstore"
)

// Download copies one object to localPath with ranged GETs of partSize
// bytes, concurrency at a time, each pinned to the object's ETag so the
// parts cannot come from two versions. The file appears at localPath only
// when complete (it is written to a temporary name beside it and renamed).
// A part whose body breaks off is fetched again. It returns the object as
// it was downloaded; ErrNotExist if missing.
func (s *Store) Download(ctx context.Context, key, localPath string, concurrency int, partSize int64) (objstore.Object, error) {
	if concurrency < 1 {
		concurrency = 1
	}
	if partSize < 1 {
		partSize = s.cfg.PartSize
	}
	obj, err := s.Stat(ctx, key)
	if err != nil {
		return obj, err
	}
	if err := os.MkdirAll(filepath.Dir(localPath), 0o755); err != nil {
		return obj, err
	}
	f, err := os.CreateTemp(filepath.Dir(localPath), "."+filepath.Base(localPath)+".part-*")
	if err != nil {
		return obj, err
	}
	defer os.Remove(f.Name()) // after a successful rename this fails harmlessly
	if err := f.Truncate(obj.Size); err != nil {
		f.Close()
		return obj, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for off := int64(0); off < obj.Size; off += partSize {
		end := min(off+partSize, obj.Size)
		g.Go(func() error { return s.getRange(gctx, key, obj.ETag, f, off, end) })
	}
	if err := g.Wait(); err != nil {
		f.Close()
		return obj, fmt.Errorf("downloading %s: %w", s.url(key), err)
	}
	if err := f.Close(); err != nil {
		return obj, err
	}
	if err := os.Rename(f.Name(), localPath); err != nil {
		return obj, err
	}
	return obj, nil
}

// getRange writes bytes [off, end) of the object into f, retrying a body
// that breaks off (the SDK retries failed requests, not failed reads).
func (s *Store) getRange(ctx context.Context, key, etag string, f *os.File, off, end int64) error {
	var lastErr error
	for attempt := 0; attempt < s.cfg.MaxAttempts; attempt++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
			Bucket:  aws.String(s.bucket),
			Key:     aws.String(s.key(key)),
			Range:   aws.String(fmt.Sprintf("bytes=%d-%d", off, end-1)),
			IfMatch: aws.String(`"` + etag + `"`),
		})
		if err != nil {
			err = s.wrap("GetObject", s.key(key), err)
			var e *Error
			if errors.As(err, &e) && e.Status == 412 {
				return fmt.Errorf("%w (%w)", objstore.ErrChanged, err)
			}
			return err // the SDK has retried what can be retried
		}
		w := &fileWriter{w: io.NewOffsetWriter(f, off)}
		n, err := io.Copy(w, io.LimitReader(out.Body, end-off))
		out.Body.Close()
		if w.err != nil {
			return w.err // the disk's fault: retrying will not help
		}
		if err == nil && n == end-off {
			return nil
		}
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		lastErr = err
		off += n // keep what arrived
	}
	return fmt.Errorf("reading bytes from %d: %w (gave up after %d attempts)", off, lastErr, s.cfg.MaxAttempts)
}

// fileWriter remembers a write error, to tell it from a read error.
type fileWriter struct {
	w   io.Writer
	err error
}

func (w *fileWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}
