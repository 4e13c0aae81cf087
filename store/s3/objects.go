package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// errPrecondition means a conditional write lost: the object exists
// (If-None-Match: *) or changed (If-Match), an S3 412, or a 409 that S3
// answers to conditional writes racing on one key.
var errPrecondition = errors.New("conditional write refused")

// errMissing means the object does not exist.
var errMissing = errors.New("no such object")

// object is one object read whole.
type object struct {
	body []byte
	etag string // with its quotes, as If-Match wants it
}

// getObject reads an object whole; errMissing if there is none.
func (s *Store) getObject(ctx context.Context, key string) (object, error) {
	start := s.local()
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(key))})
	if err != nil {
		s.observe(start, err, middleware.Metadata{})
		return object{}, s.wrap("reading", key, err)
	}
	defer out.Body.Close()
	s.observe(start, nil, out.ResultMetadata)
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return object{}, s.wrap("reading", key, err)
	}
	return object{body: b, etag: aws.ToString(out.ETag)}, nil
}

// openObject opens an object for streaming; errMissing if there is none.
func (s *Store) openObject(ctx context.Context, key string) (io.ReadCloser, error) {
	start := s.local()
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(key))})
	if err != nil {
		s.observe(start, err, middleware.Metadata{})
		return nil, s.wrap("reading", key, err)
	}
	s.observe(start, nil, out.ResultMetadata)
	return out.Body, nil
}

// cond is the condition of a write.
type cond struct {
	ifNoneMatch bool   // create only: If-None-Match: *
	ifMatch     string // replace only this version: If-Match: etag
}

// putObject writes body at key under c and returns the new ETag.
// errPrecondition when the condition does not hold.
func (s *Store) putObject(ctx context.Context, key string, body []byte, c cond) (string, error) {
	in := &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(key)), Body: bytes.NewReader(body)}
	if c.ifNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	if c.ifMatch != "" {
		in.IfMatch = aws.String(c.ifMatch)
	}
	start := s.local()
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		s.observe(start, err, middleware.Metadata{})
		return "", s.wrap("writing", key, err)
	}
	s.observe(start, nil, out.ResultMetadata)
	return aws.ToString(out.ETag), nil
}

// putJSON writes v as JSON at key under c.
func (s *Store) putJSON(ctx context.Context, key string, v any, c cond) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding %s: %w", s.url(key), err)
	}
	return s.putObject(ctx, key, b, c)
}

// getJSON reads the JSON object at key into v and returns its ETag.
func (s *Store) getJSON(ctx context.Context, key string, v any) (string, error) {
	o, err := s.getObject(ctx, key)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(o.body, v); err != nil {
		return "", fmt.Errorf("decoding %s: %w", s.url(key), err)
	}
	return o.etag, nil
}

// deleteObject removes an object (a missing one is not an error).
func (s *Store) deleteObject(ctx context.Context, key string) error {
	start := s.local()
	out, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(key))})
	if err != nil {
		s.observe(start, err, middleware.Metadata{})
		if errors.Is(s.wrap("", key, err), errMissing) {
			return nil
		}
		return s.wrap("deleting", key, err)
	}
	s.observe(start, nil, out.ResultMetadata)
	return nil
}

// listKeys yields the keys below prefix (store keys, without s.prefix) in
// byte order, from after startAfter.
func (s *Store) listKeys(ctx context.Context, prefix, startAfter string, yield func(key string) (bool, error)) error {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(s.key(prefix))}
	if startAfter != "" {
		in.StartAfter = aws.String(s.key(startAfter))
	}
	for {
		start := s.local()
		out, err := s.client.ListObjectsV2(ctx, in)
		if err != nil {
			s.observe(start, err, middleware.Metadata{})
			return s.wrap("listing", prefix, err)
		}
		s.observe(start, nil, out.ResultMetadata)
		for _, o := range out.Contents {
			more, err := yield(strings.TrimPrefix(aws.ToString(o.Key), s.prefix))
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

// listDirs returns the names of the "folders" right below prefix.
func (s *Store) listDirs(ctx context.Context, prefix string) ([]string, error) {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(s.key(prefix)), Delimiter: aws.String("/")}
	var dirs []string
	for {
		start := s.local()
		out, err := s.client.ListObjectsV2(ctx, in)
		if err != nil {
			s.observe(start, err, middleware.Metadata{})
			return nil, s.wrap("listing", prefix, err)
		}
		s.observe(start, nil, out.ResultMetadata)
		for _, p := range out.CommonPrefixes {
			d := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(p.Prefix), s.key(prefix)), "/")
			dirs = append(dirs, d)
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			return dirs, nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// wrap turns an SDK error into one that names the store's URL of key and
// matches errPrecondition or errMissing where it is one. The SDK's errors
// never hold the secret key.
func (s *Store) wrap(doing, key string, err error) error {
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
		return fmt.Errorf("%s %s: %w (%d %s)", doing, s.url(key), errPrecondition, status, code)
	case status == http.StatusNotFound && code != "NoSuchBucket" || code == "NoSuchKey":
		return fmt.Errorf("%s %s: %w", doing, s.url(key), errMissing)
	}
	return fmt.Errorf("%s %s: %w", doing, s.url(key), err)
}

// observe feeds the Date header of an answer (a success's metadata or an
// error's response) to the server clock: the request was sent at start
// on the local clock.
func (s *Store) observe(start time.Time, err error, md middleware.Metadata) {
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
		s.clock.observe(start, s.local(), d)
	}
}

// nonce returns 8 random bytes in hex: unique names and write ids.
func nonce() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// esc makes a job name or run id one key segment.
func esc(name string) string { return url.PathEscape(name) }

// unesc undoes esc.
func unesc(seg string) (string, error) { return url.PathUnescape(seg) }

// headObject asks for an object's metadata (and the server's Date);
// errMissing if there is none.
func (s *Store) headObject(ctx context.Context, key string) (string, error) {
	start := s.local()
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(key))})
	if err != nil {
		s.observe(start, err, middleware.Metadata{})
		return "", s.wrap("reading", key, err)
	}
	s.observe(start, nil, out.ResultMetadata)
	return aws.ToString(out.ETag), nil
}

// create writes body at key only if no object is there (If-None-Match:
// *). After an error it reads the object to see what happened: a refusal
// (412, or 409 for racing writes) can be the answer to the SDK's retry of
// a write of ours whose first answer was lost, and a lost answer may hide
// a write that applied. The same bytes there are ours (success), none
// means try again, other bytes mean errPrecondition.
func (s *Store) create(ctx context.Context, key string, body []byte) error {
	for attempt := 0; ; attempt++ {
		_, err := s.putObject(ctx, key, body, cond{ifNoneMatch: true})
		if err == nil || ctx.Err() != nil {
			return err
		}
		o, gerr := s.getObject(ctx, key)
		switch {
		case gerr == nil && bytes.Equal(o.body, body):
			return nil
		case gerr == nil:
			return err
		case !errors.Is(gerr, errMissing) || attempt >= 3:
			return err
		}
	}
}

// createJSON is create of v as JSON.
func (s *Store) createJSON(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", s.url(key), err)
	}
	return s.create(ctx, key, b)
}
