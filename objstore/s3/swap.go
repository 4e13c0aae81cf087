package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidemark-etl/tidemark/objstore"
)

var (
	_ objstore.Swapper      = (*Store)(nil)
	_ objstore.FolderLister = (*Store)(nil)
)

// ReadVersion reads an object whole; its version is the ETag of the GET.
func (s *Store) ReadVersion(ctx context.Context, key string) ([]byte, string, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(key))})
	if err != nil {
		return nil, "", s.wrap("GetObject", s.key(key), err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", s.url(key), err)
	}
	return data, etag(out.ETag), nil
}

// Swap replaces an object with a PutObject with If-Match: the version's
// ETag. A 412 (it changed), a 409 (another conditional write of the key is
// under way) and a 404 (it is gone) are ErrStale.
func (s *Store) Swap(ctx context.Context, key string, data []byte, version string) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(s.key(key)), IfMatch: aws.String(`"` + version + `"`),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	err = s.wrap("PutObject", s.key(key), err)
	var e *Error
	if errors.As(err, &e) && (e.Status == http.StatusPreconditionFailed || e.Status == http.StatusConflict || notFound(e)) {
		return fmt.Errorf("replacing %s: %w (%v)", s.url(key), objstore.ErrStale, err)
	}
	return err
}

// Folders yields the folders right under prefix: the common prefixes of a
// listing with the delimiter '/', which name folder markers too.
func (s *Store) Folders(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		p := s.key(prefix)
		in := &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(p), Delimiter: aws.String("/")}
		for {
			out, err := s.client.ListObjectsV2(ctx, in)
			if err != nil {
				yield("", s.wrap("ListObjectsV2", p, err))
				return
			}
			for _, cp := range out.CommonPrefixes {
				name := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), p), "/")
				if name != "" && !yield(name, nil) {
					return
				}
			}
			if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
				return
			}
			in.ContinuationToken = out.NextContinuationToken
		}
	}
}
