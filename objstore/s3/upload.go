package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"golang.org/x/sync/errgroup"

	"github.com/tidemark-etl/tidemark/objstore"
)

// Put writes an object from r. A body of at most one part is sent with one
// PutObject; a larger one as a multipart upload of PartSize parts,
// Concurrency at a time, aborted if anything fails. Either way the object
// appears whole or not at all (S3 publishes an object only when its upload
// completes). Each part is buffered, so every request can be retried.
//
// The upload is tidemark's own rather than feature/s3/manager's: that
// module is deprecated and its successor is not yet v1.
func (s *Store) Put(ctx context.Context, key string, r io.Reader) error {
	partSize := s.partSizeFor(r)
	first, second, err := readHead(r, partSize)
	if err != nil {
		return fmt.Errorf("writing %s: %w", s.url(key), err)
	}
	if len(second) == 0 {
		_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(s.bucket), Key: aws.String(s.key(key)),
			Body: bytes.NewReader(first), ContentLength: aws.Int64(int64(len(first))),
		})
		return s.wrap("PutObject", s.key(key), err)
	}
	id, parts, err := s.putParts(ctx, key, r, partSize, first, second)
	if err != nil {
		return err
	}
	k := s.key(key)
	if err := s.complete(ctx, k, id, parts); err != nil {
		s.abort(k, id)
		return err
	}
	return nil
}

// Create writes a small object only if key is free (PutObject with
// If-None-Match: *, in one request: r is read whole first). A 412 answer
// (the key exists) and a 409 (another conditional write of the key is under
// way) are ErrExists.
func (s *Store) Create(ctx context.Context, key string, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("writing %s: %w", s.url(key), err)
	}
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(s.key(key)), IfNoneMatch: aws.String("*"),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	err = s.wrap("PutObject", s.key(key), err)
	var e *Error
	if errors.As(err, &e) && (e.Status == http.StatusPreconditionFailed || e.Status == http.StatusConflict) {
		return fmt.Errorf("creating %s: %w (%v)", s.url(key), objstore.ErrExists, err)
	}
	return err
}

// emptyUpload is the id PrepareUpload gives an empty body: S3 has no
// multipart upload without a part.
const emptyUpload = "empty"

// PrepareUpload sends r's bytes for key as a multipart upload of one or
// more parts and leaves it incomplete: nothing is visible at key until
// CompleteUpload, which moves no bytes. It returns the upload id. An
// upload that is never completed is removed by AbortStaleUploads.
func (s *Store) PrepareUpload(ctx context.Context, key string, r io.Reader) (string, error) {
	partSize := s.partSizeFor(r)
	first, second, err := readHead(r, partSize)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", s.url(key), err)
	}
	if len(first) == 0 {
		return emptyUpload, nil // nothing to send; CompleteUpload writes the empty object
	}
	id, _, err := s.putParts(ctx, key, r, partSize, first, second)
	if err != nil {
		return "", err
	}
	return aws.ToString(id), nil
}

// CompleteUpload publishes the upload PrepareUpload started for key, with
// the parts the service lists for it. Completing again is harmless: when
// the upload is gone and the object exists, an earlier call completed it
// (keys written this way are never reused).
func (s *Store) CompleteUpload(ctx context.Context, key, id string) error {
	if id == emptyUpload {
		return s.Put(ctx, key, bytes.NewReader(nil))
	}
	k := s.key(key)
	var parts []types.CompletedPart
	in := &s3.ListPartsInput{Bucket: aws.String(s.bucket), Key: aws.String(k), UploadId: aws.String(id)}
	for {
		out, err := s.client.ListParts(ctx, in)
		if err = s.wrap("ListParts", k, err); err != nil {
			var e *Error
			if errors.As(err, &e) && e.Code == "NoSuchUpload" {
				if _, serr := s.Stat(ctx, key); serr == nil {
					return nil
				}
				return fmt.Errorf("publishing %s: %w (%v)", s.url(key), objstore.ErrUploadGone, err)
			}
			return err
		}
		for _, p := range out.Parts {
			parts = append(parts, types.CompletedPart{PartNumber: p.PartNumber, ETag: p.ETag, ChecksumCRC32: p.ChecksumCRC32})
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		in.PartNumberMarker = out.NextPartNumberMarker
	}
	if len(parts) == 0 {
		return fmt.Errorf("publishing %s: upload %s has no parts", s.url(key), id)
	}
	return s.complete(ctx, k, aws.String(id), parts)
}

// partSizeFor grows the part size for a body whose size is known (a file)
// and would need more than S3's 10,000 parts. An unknown-size body stays at
// PartSize and fails past PartSize*10,000 bytes.
func (s *Store) partSizeFor(r io.Reader) int64 {
	part := s.cfg.PartSize
	if size, ok := remaining(r); ok {
		if need := (size + maxParts - 1) / maxParts; need > part {
			part = need
		}
	}
	return part
}

// readHead reads a body's first two parts; the second is empty when the
// first is also the last.
func readHead(r io.Reader, partSize int64) (first, second []byte, err error) {
	if first, err = readPart(r, partSize); err != nil || int64(len(first)) < partSize {
		return first, nil, err
	}
	second, err = readPart(r, partSize)
	return first, second, err
}

// readPart reads up to n bytes; fewer only at the end of r. The buffer is
// allocated once, at most as large as what is left of a body whose size is
// known.
func readPart(r io.Reader, n int64) ([]byte, error) {
	if left, ok := remaining(r); ok && left < n {
		n = left
	}
	b := make([]byte, n)
	m, err := io.ReadFull(r, b)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return b[:m], err
}

// remaining is how many bytes are left of r, when that is known.
func remaining(r io.Reader) (int64, bool) {
	switch v := r.(type) {
	case *os.File:
		fi, err := v.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return 0, false
		}
		off, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false
		}
		return max(fi.Size()-off, 0), true
	case interface{ Len() int }:
		return int64(v.Len()), true
	}
	return 0, false
}

// putParts starts a multipart upload and sends every part, the first two
// already read (second may be empty), without completing it. It returns
// the upload id and the parts in order; on error the upload is aborted.
func (s *Store) putParts(ctx context.Context, key string, r io.Reader, partSize int64, first, second []byte) (_ *string, _ []types.CompletedPart, err error) {
	k := s.key(key)
	create := &s3.CreateMultipartUploadInput{Bucket: aws.String(s.bucket), Key: aws.String(k)}
	checksums := s.client.Options().RequestChecksumCalculation != aws.RequestChecksumCalculationWhenRequired
	if checksums { // as the SDK's uploader does: CRC32 per part, checked on completion
		create.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
	}
	up, err := s.client.CreateMultipartUpload(ctx, create)
	if err != nil {
		return nil, nil, s.wrap("CreateMultipartUpload", k, err)
	}
	id := up.UploadId
	defer func() {
		if err != nil {
			s.abort(k, id)
		}
	}()

	var (
		mu    sync.Mutex
		parts []types.CompletedPart
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Concurrency)
	send := func(num int32, body []byte) {
		g.Go(func() error {
			in := &s3.UploadPartInput{Bucket: aws.String(s.bucket), Key: aws.String(k), UploadId: id,
				PartNumber: aws.Int32(num), Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))}
			if checksums {
				in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
			}
			out, err := s.client.UploadPart(gctx, in)
			if err != nil {
				return s.wrap("UploadPart", k, err)
			}
			mu.Lock()
			parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(num), ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32})
			mu.Unlock()
			return nil
		})
	}
	send(1, first)
	if len(second) > 0 {
		send(2, second)
	}
	var readErr error
	for num := int32(3); gctx.Err() == nil; num++ {
		body, err := readPart(r, partSize)
		if err != nil {
			readErr = fmt.Errorf("reading the body: %w", err)
			break
		}
		if len(body) == 0 {
			break
		}
		if num > maxParts {
			readErr = fmt.Errorf("body is larger than %d parts of %d bytes: raise part_size", maxParts, partSize)
			break
		}
		send(num, body)
	}
	if err := g.Wait(); err != nil {
		return nil, nil, fmt.Errorf("writing %s: %w", s.url(key), err)
	}
	if readErr != nil {
		return nil, nil, fmt.Errorf("writing %s: %w", s.url(key), readErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(parts, func(a, b types.CompletedPart) int { return int(*a.PartNumber - *b.PartNumber) })
	return id, parts, nil
}

// complete completes a multipart upload. If an earlier attempt completed
// it but its answer was lost, the retry finds no upload (NoSuchUpload);
// the object is then checked against the parts' ETags instead.
func (s *Store) complete(ctx context.Context, k string, id *string, parts []types.CompletedPart) error {
	_, err := s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: aws.String(s.bucket), Key: aws.String(k), UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	err = s.wrap("CompleteMultipartUpload", k, err)
	var e *Error
	if !errors.As(err, &e) || e.Code != "NoSuchUpload" {
		return err
	}
	want, ok := multipartETag(parts)
	if !ok {
		return err
	}
	head, herr := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k)})
	if herr == nil && etag(head.ETag) == want {
		return nil
	}
	return err
}

// multipartETag is the ETag S3 gives a completed upload: the MD5 of the
// parts' binary MD5s, then "-" and the part count. ok is false when a part's
// ETag is not an MD5 (encrypted or checksum-derived ETags).
func multipartETag(parts []types.CompletedPart) (string, bool) {
	h := md5.New()
	for _, p := range parts {
		b, err := hex.DecodeString(etag(p.ETag))
		if err != nil || len(b) != md5.Size {
			return "", false
		}
		h.Write(b)
	}
	return fmt.Sprintf("%x-%d", h.Sum(nil), len(parts)), true
}

// abort cancels a multipart upload, best effort and even when the caller's
// context is done: its parts would otherwise be stored (and billed) until
// AbortStaleUploads finds them.
func (s *Store) abort(k string, id *string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(s.bucket), Key: aws.String(k), UploadId: id})
}

// copyParts copies a large object with UploadPartCopy (server side: no
// bytes pass through tidemark).
func (s *Store) copyParts(ctx context.Context, from, to string, src objstore.Object) (err error) {
	k := s.key(to)
	up, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(s.bucket), Key: aws.String(k)})
	if err != nil {
		return s.wrap("CreateMultipartUpload", k, err)
	}
	id := up.UploadId
	defer func() {
		if err != nil {
			s.abort(k, id)
		}
	}()
	partSize := max(s.copyPartSize, (src.Size+maxParts-1)/maxParts)
	n := int((src.Size + partSize - 1) / partSize)
	parts := make([]types.CompletedPart, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Concurrency)
	for i := range n {
		g.Go(func() error {
			start := int64(i) * partSize
			end := min(start+partSize, src.Size) - 1
			out, err := s.client.UploadPartCopy(gctx, &s3.UploadPartCopyInput{
				Bucket: aws.String(s.bucket), Key: aws.String(k), UploadId: id, PartNumber: aws.Int32(int32(i + 1)),
				CopySource:        aws.String(s.copySource(from)),
				CopySourceRange:   aws.String(fmt.Sprintf("bytes=%d-%d", start, end)),
				CopySourceIfMatch: aws.String(`"` + src.ETag + `"`),
			})
			if err != nil {
				return s.wrap("UploadPartCopy", k, err)
			}
			if out.CopyPartResult == nil {
				return &Error{Op: "UploadPartCopy", Bucket: s.bucket, Key: k, Err: errors.New("no part in the answer")}
			}
			parts[i] = types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.CopyPartResult.ETag}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return s.complete(ctx, k, id, parts)
}

// AbortStaleUploads aborts the incomplete multipart uploads under prefix
// whose key (relative to the store) match accepts (nil: all) and that were
// started more than olderThan ago — the leftovers of runs that
// died mid-upload, which S3 keeps (and bills) until aborted. It returns
// how many it aborted. Uploads of live runs are younger than any sensible
// olderThan; pass at least the longest an upload can take.
func (s *Store) AbortStaleUploads(ctx context.Context, prefix string, olderThan time.Duration, match func(key string) bool) (int, error) {
	cutoff := time.Now().Add(-olderThan)
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(s.bucket), Prefix: aws.String(s.key(prefix))}
	aborted := 0
	for {
		out, err := s.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return aborted, s.wrap("ListMultipartUploads", s.key(prefix), err)
		}
		for _, u := range out.Uploads {
			if u.Initiated != nil && u.Initiated.After(cutoff) {
				continue
			}
			if rel, ok := strings.CutPrefix(aws.ToString(u.Key), s.prefix); !ok || (match != nil && !match(rel)) {
				continue
			}
			_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(s.bucket), Key: u.Key, UploadId: u.UploadId})
			if err := s.wrap("AbortMultipartUpload", aws.ToString(u.Key), err); err != nil {
				var e *Error
				if errors.As(err, &e) && e.Code == "NoSuchUpload" {
					continue // finished or aborted meanwhile
				}
				return aborted, err
			}
			aborted++
		}
		if !aws.ToBool(out.IsTruncated) {
			return aborted, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}
