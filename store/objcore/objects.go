package objcore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// url names a store key for messages.
func (s *Store) url(k string) string { return s.root + k }

// putJSON writes v as JSON at key under c.
func (s *Store) putJSON(ctx context.Context, key string, v any, c Cond) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding %s: %w", s.url(key), err)
	}
	return s.b.Put(ctx, key, b, c)
}

// getJSON reads the JSON object at key into v and returns its ETag.
func (s *Store) getJSON(ctx context.Context, key string, v any) (string, error) {
	o, err := s.b.Get(ctx, key)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(o.Body, v); err != nil {
		return "", fmt.Errorf("decoding %s: %w", s.url(key), err)
	}
	return o.ETag, nil
}

// utc returns t in UTC without a monotonic reading; the zero time stays
// zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, t.UnixNano()).UTC()
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

// create writes body at key only if no object is there (If-None-Match:
// *). After an error it reads the object to see what happened: a refusal
// (ErrPrecondition) can be the answer to a backend's retry of a write of
// ours whose first answer was lost (S3's SDK retries), and a lost answer may hide
// a write that applied. The same bytes there are ours (success), none
// means try again, other bytes mean ErrPrecondition.
func (s *Store) create(ctx context.Context, key string, body []byte) error {
	for attempt := 0; ; attempt++ {
		_, err := s.b.Put(ctx, key, body, Cond{IfNoneMatch: true})
		if err == nil || ctx.Err() != nil {
			return err
		}
		o, gerr := s.b.Get(ctx, key)
		switch {
		case gerr == nil && bytes.Equal(o.Body, body):
			return nil
		case gerr == nil:
			return err
		case !errors.Is(gerr, ErrMissing) || attempt >= 3:
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
