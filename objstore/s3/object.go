package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/tidemark-etl/tidemark/objstore"
)

// Stat returns one object's metadata (HeadObject); ErrNotExist if missing.
// A HEAD answer has no body, so a missing bucket also reads as ErrNotExist
// here; List, Open and Put name it.
func (s *Store) Stat(ctx context.Context, key string) (objstore.Object, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(key))})
	if err != nil {
		return objstore.Object{}, s.wrap("HeadObject", s.key(key), err)
	}
	return objstore.Object{Key: key, Size: aws.ToInt64(out.ContentLength), ModTime: modTime(out.LastModified), ETag: etag(out.ETag)}, nil
}

// Open streams one object (GetObject); ErrNotExist if missing. A
// connection that breaks mid-body is resumed with a ranged GET pinned to
// the object's ETag, so a long read survives a reset; if the object changed
// meanwhile, Read fails instead of mixing two versions.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	r, _, err := s.OpenVersion(ctx, key)
	return r, err
}

// OpenVersion is Open, and returns the version of the object that the
// reader reads (from the GET's headers): a read that would continue on
// another version fails with objstore.ErrChanged.
func (s *Store) OpenVersion(ctx context.Context, key string) (io.ReadCloser, objstore.Object, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(key))})
	if err != nil {
		return nil, objstore.Object{}, s.wrap("GetObject", s.key(key), err)
	}
	o := objstore.Object{Key: key, Size: aws.ToInt64(out.ContentLength), ModTime: modTime(out.LastModified), ETag: etag(out.ETag)}
	return &objectReader{s: s, ctx: ctx, key: key, etag: aws.ToString(out.ETag),
		size: aws.ToInt64(out.ContentLength), body: out.Body}, o, nil
}

// objectReader is an object's body that resumes after connection errors.
type objectReader struct {
	s       *Store
	ctx     context.Context // the caller's, for the life of the reader (like the SDK's body)
	key     string
	etag    string // quoted, as S3 sends it
	off     int64
	size    int64
	body    io.ReadCloser
	resumes int
}

func (r *objectReader) Read(p []byte) (int, error) {
	for {
		n, err := r.body.Read(p)
		r.off += int64(n)
		if err == io.EOF && r.off < r.size {
			err = io.ErrUnexpectedEOF
		}
		if err == nil || err == io.EOF || n > 0 {
			if err != nil && err != io.EOF {
				err = nil // hand out the bytes; the error recurs on the next Read
			}
			return n, err
		}
		if rerr := r.resume(err); rerr != nil {
			return 0, rerr
		}
	}
}

// resume reopens the object at the current offset after a read error.
func (r *objectReader) resume(cause error) error {
	r.body.Close()
	r.body = io.NopCloser(strings.NewReader("")) // until reopened
	if r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	r.resumes++
	if r.resumes >= r.s.cfg.MaxAttempts {
		return fmt.Errorf("reading %s at byte %d: %w (gave up after %d attempts)", r.s.url(r.key), r.off, cause, r.resumes)
	}
	select {
	case <-time.After(time.Duration(r.resumes) * 100 * time.Millisecond):
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
	out, err := r.s.client.GetObject(r.ctx, &s3.GetObjectInput{
		Bucket:  aws.String(r.s.bucket),
		Key:     aws.String(r.s.key(r.key)),
		Range:   aws.String(fmt.Sprintf("bytes=%d-", r.off)),
		IfMatch: aws.String(r.etag),
	})
	if err != nil {
		err = r.s.wrap("GetObject", r.s.key(r.key), err)
		var e *Error
		if errors.As(err, &e) && e.Status == 412 {
			return fmt.Errorf("reading %s: %w (%w)", r.s.url(r.key), objstore.ErrChanged, err)
		}
		return fmt.Errorf("resuming %s at byte %d after %v: %w", r.s.url(r.key), r.off, cause, err)
	}
	r.body = out.Body
	return nil
}

func (r *objectReader) Close() error { return r.body.Close() }

// Delete removes one object; a missing one is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(key))})
	if err = s.wrap("DeleteObject", s.key(key), err); err != nil && !errors.Is(err, objstore.ErrNotExist) {
		return err
	}
	return nil
}

// DeletePrefix removes every object under prefix, hidden names included,
// with DeleteObjects in batches of 1,000 keys. Like a folder on disk, a
// prefix without a trailing '/' means the key itself and the keys under
// prefix+"/" ("a/b" does not touch "a/bc"). The empty prefix (the whole
// store) is refused.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) error {
	if strings.Trim(prefix, "/") == "" {
		return fmt.Errorf("refusing to delete the whole store root %s", s.Root())
	}
	dir := prefix
	if !strings.HasSuffix(dir, "/") {
		if err := s.Delete(ctx, prefix); err != nil {
			return err
		}
		dir += "/"
	}
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(s.key(dir)), MaxKeys: aws.Int32(int32(s.cfg.ListPageSize))}
	var batch []types.ObjectIdentifier
	for {
		out, err := s.client.ListObjectsV2(ctx, in)
		if err != nil {
			return s.wrap("ListObjectsV2", s.key(dir), err)
		}
		for _, o := range out.Contents {
			batch = append(batch, types.ObjectIdentifier{Key: o.Key})
			if len(batch) == 1000 {
				if err := s.deleteBatch(ctx, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		in.ContinuationToken = out.NextContinuationToken
	}
	return s.deleteBatch(ctx, batch)
}

// deleteBatch deletes up to 1,000 keys in one request.
func (s *Store) deleteBatch(ctx context.Context, keys []types.ObjectIdentifier) error {
	if len(keys) == 0 {
		return nil
	}
	out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: aws.String(s.bucket),
		Delete: &types.Delete{Objects: keys, Quiet: aws.Bool(true)},
	})
	if err != nil {
		return s.wrap("DeleteObjects", aws.ToString(keys[0].Key), err)
	}
	for _, e := range out.Errors {
		if aws.ToString(e.Code) == "NoSuchKey" {
			continue
		}
		return &Error{Op: "DeleteObjects", Bucket: s.bucket, Key: aws.ToString(e.Key), Code: aws.ToString(e.Code),
			Message: aws.ToString(e.Message), Err: errors.New(aws.ToString(e.Message))}
	}
	return nil
}

// Move renames from to to with a server-side copy and a delete of from
// (S3 has no rename). Readers may briefly see both; never neither. Objects
// over 5 GiB are copied in parts (UploadPartCopy). Idempotent for
// roll-forward: if from is gone and to exists, the move already happened.
func (s *Store) Move(ctx context.Context, from, to string) error {
	src, err := s.Stat(ctx, from)
	if errors.Is(err, objstore.ErrNotExist) {
		if _, derr := s.Stat(ctx, to); derr == nil {
			return nil
		} else if !errors.Is(derr, objstore.ErrNotExist) {
			return fmt.Errorf("moving %s to %s: %w", s.url(from), to, derr)
		}
		return fmt.Errorf("moving %s: %w", s.url(from), err)
	}
	if err != nil {
		return fmt.Errorf("moving %s: %w", s.url(from), err)
	}
	if src.Size > s.copyThreshold {
		err = s.copyParts(ctx, from, to, src)
	} else {
		_, err = s.client.CopyObject(ctx, &s3.CopyObjectInput{
			Bucket:            aws.String(s.bucket),
			Key:               aws.String(s.key(to)),
			CopySource:        aws.String(s.copySource(from)),
			CopySourceIfMatch: aws.String(`"` + src.ETag + `"`),
		})
		err = s.wrap("CopyObject", s.key(to), err)
	}
	if err != nil {
		return fmt.Errorf("moving %s to %s: %w", s.url(from), to, err)
	}
	if err := s.Delete(ctx, from); err != nil {
		return fmt.Errorf("moving %s to %s: %w", s.url(from), to, err)
	}
	return nil
}

// copySource is the x-amz-copy-source value: bucket/key, URL-escaped.
func (s *Store) copySource(key string) string {
	segs := strings.Split(s.bucket+"/"+s.key(key), "/")
	for i, seg := range segs {
		segs[i] = escapeSegment(seg)
	}
	return strings.Join(segs, "/")
}

// escapeSegment percent-encodes all but S3's unreserved characters.
func escapeSegment(seg string) string {
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
