package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tidemark-etl/tidemark/store/objcore"
)

// backend is the Backend of a store in an S3 bucket under a prefix: the
// SDK's calls, S3's answers mapped to objcore.ErrPrecondition and objcore.ErrMissing, and
// the server's clock bounded from the Date header of every answer.
type backend struct {
	client *s3.Client
	bucket string
	prefix string // "" or ends with '/'
	root   string // s3://bucket/prefix/, for messages
	local  func() time.Time
	clock  *serverClock

	idMu sync.Mutex
	id   *objcore.Object // the identity object as Get last read it, for the probe
}

var _ objcore.Backend = (*backend)(nil)

// Root returns s3://bucket/prefix/.
func (b *backend) Root() string { return b.root }

// Get reads an object whole; objcore.ErrMissing if there is none.
func (b *backend) Get(ctx context.Context, key string) (objcore.Object, error) {
	start := b.local()
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(b.key(key))})
	if err != nil {
		b.observe(start, err, middleware.Metadata{})
		return objcore.Object{}, b.wrap("reading", key, err)
	}
	defer out.Body.Close()
	b.observe(start, nil, out.ResultMetadata)
	body, err := io.ReadAll(out.Body)
	if err != nil {
		return objcore.Object{}, b.wrap("reading", key, err)
	}
	obj := objcore.Object{Body: body, ETag: aws.ToString(out.ETag)}
	if key == objcore.IdentityKey {
		b.idMu.Lock()
		b.id = &obj
		b.idMu.Unlock()
	}
	return obj, nil
}

// identity returns the identity object as Get last read it (opening the
// store reads it), so that the probe need not read it again.
func (b *backend) identity() (objcore.Object, bool) {
	b.idMu.Lock()
	defer b.idMu.Unlock()
	if b.id == nil {
		return objcore.Object{}, false
	}
	return *b.id, true
}

// Open opens an object for streaming; objcore.ErrMissing if there is none.
func (b *backend) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	start := b.local()
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(b.key(key))})
	if err != nil {
		b.observe(start, err, middleware.Metadata{})
		return nil, b.wrap("reading", key, err)
	}
	b.observe(start, nil, out.ResultMetadata)
	return out.Body, nil
}

// Put writes body at key under c (If-None-Match: *, If-Match: etag) and
// returns the new ETag; objcore.ErrPrecondition on S3's 412, or the 409 it answers
// to conditional writes racing on one key.
func (b *backend) Put(ctx context.Context, key string, body []byte, c objcore.Cond) (string, error) {
	in := &s3.PutObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(b.key(key)), Body: bytes.NewReader(body)}
	if c.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	if c.IfMatch != "" {
		in.IfMatch = aws.String(c.IfMatch)
	}
	start := b.local()
	out, err := b.client.PutObject(ctx, in)
	if err != nil {
		b.observe(start, err, middleware.Metadata{})
		return "", b.wrap("writing", key, err)
	}
	b.observe(start, nil, out.ResultMetadata)
	return aws.ToString(out.ETag), nil
}

// Delete removes an object (a missing one is not an error).
func (b *backend) Delete(ctx context.Context, key string) error {
	start := b.local()
	out, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(b.key(key))})
	if err != nil {
		b.observe(start, err, middleware.Metadata{})
		if errors.Is(b.wrap("", key, err), objcore.ErrMissing) {
			return nil
		}
		return b.wrap("deleting", key, err)
	}
	b.observe(start, nil, out.ResultMetadata)
	return nil
}

// List yields the objects below prefix in byte order of their keys, from
// after startAfter: ListObjectsV2, page by page.
func (b *backend) List(ctx context.Context, prefix, startAfter string, yield func(objcore.Entry) (bool, error)) error {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(b.bucket), Prefix: aws.String(b.key(prefix))}
	if startAfter != "" {
		in.StartAfter = aws.String(b.key(startAfter))
	}
	for {
		start := b.local()
		out, err := b.client.ListObjectsV2(ctx, in)
		if err != nil {
			b.observe(start, err, middleware.Metadata{})
			return b.wrap("listing", prefix, err)
		}
		b.observe(start, nil, out.ResultMetadata)
		for _, o := range out.Contents {
			more, err := yield(objcore.Entry{Key: strings.TrimPrefix(aws.ToString(o.Key), b.prefix), Size: aws.ToInt64(o.Size)})
			if err != nil || !more {
				return err
			}
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			return nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// Folders returns the names of the "folders" right below prefix.
func (b *backend) Folders(ctx context.Context, prefix string) ([]string, error) {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(b.bucket), Prefix: aws.String(b.key(prefix)), Delimiter: aws.String("/")}
	var dirs []string
	for {
		start := b.local()
		out, err := b.client.ListObjectsV2(ctx, in)
		if err != nil {
			b.observe(start, err, middleware.Metadata{})
			return nil, b.wrap("listing", prefix, err)
		}
		b.observe(start, nil, out.ResultMetadata)
		for _, p := range out.CommonPrefixes {
			d := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(p.Prefix), b.key(prefix)), "/")
			dirs = append(dirs, d)
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			return dirs, nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// Stat asks for an object's metadata (and the server's Date); objcore.ErrMissing
// if there is none.
func (b *backend) Stat(ctx context.Context, key string) (string, error) {
	start := b.local()
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(b.key(key))})
	if err != nil {
		b.observe(start, err, middleware.Metadata{})
		return "", b.wrap("reading", key, err)
	}
	b.observe(start, nil, out.ResultMetadata)
	return aws.ToString(out.ETag), nil
}

// key maps a store key to the S3 key.
func (b *backend) key(k string) string { return b.prefix + k }

// wrap turns an SDK error into one that names the store's URL of key and
// matches objcore.ErrPrecondition or objcore.ErrMissing where it is one. The SDK's errors
// never hold the secret key.
func (b *backend) wrap(doing, key string, err error) error {
	status := 0
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		status = re.Response.StatusCode
	}
	code := ""
	var api smithy.APIError
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	switch {
	case status == http.StatusPreconditionFailed || code == "PreconditionFailed" ||
		status == http.StatusConflict || code == "ConditionalRequestConflict":
		return fmt.Errorf("%s %s: %w (%d %s)", doing, b.root+key, objcore.ErrPrecondition, status, code)
	case status == http.StatusNotFound && code != "NoSuchBucket" || code == "NoSuchKey":
		return fmt.Errorf("%s %s: %w", doing, b.root+key, objcore.ErrMissing)
	}
	return fmt.Errorf("%s %s: %w", doing, b.root+key, err)
}

// observe feeds the Date header of an answer (a success's metadata or an
// error's response) to the server clock: the request was sent at start
// on the local clock.
func (b *backend) observe(start time.Time, err error, md middleware.Metadata) {
	var resp *smithyhttp.Response
	if err != nil {
		var re *smithyhttp.ResponseError
		if errors.As(err, &re) {
			resp = re.Response
		}
	} else {
		resp, _ = awsmiddleware.GetRawResponse(md).(*smithyhttp.Response)
	}
	if resp == nil {
		return
	}
	if d, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
		b.clock.observe(start, b.local(), d)
	}
}
