package s3

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tidemark-etl/tidemark/store/objcore"
)

// serverClock estimates the S3 server's clock from the Date headers of its
// answers, the way NTP bounds an offset: an answer stamped D (whole
// seconds) to a request sent at local time a and answered at local time b
// says the server's clock read somewhere in [D, D+1s) at a moment between
// a and b, so offset = server - local lies in [D-b, D+1s-a]. Every answer
// narrows the interval; it is as wide as one second plus a round trip at
// first, and shrinks to a round trip once two answers straddle a tick of
// the server's seconds.
//
// Only differences of the local clock are used (its monotonic reading,
// from base), never its absolute value: a host whose clock is set a year
// wrong estimates the server's clock exactly as well as one set right.
type serverClock struct {
	base time.Time // a local reading (with its monotonic clock) that times are measured from

	mu     sync.Mutex
	known  bool
	lo, hi time.Time // bounds of the server's clock at base
	last   time.Time // the latest time estimate returned, so it never goes back
}

// observe narrows the bounds with one answer.
func (c *serverClock) observe(sent, received, date time.Time) {
	lo := date.Add(-received.Sub(c.base))
	hi := date.Add(time.Second).Add(-sent.Sub(c.base))
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known || lo.After(c.hi) || hi.Before(c.lo) {
		// First answer, or one that contradicts the bounds (the server's
		// clock was set): start again from it.
		c.lo, c.hi, c.known = lo, hi, true
		return
	}
	if lo.After(c.lo) {
		c.lo = lo
	}
	if hi.Before(c.hi) {
		c.hi = hi
	}
}

// bounds returns the earliest and latest the server's clock can read at
// local time now, and whether any answer was seen.
func (c *serverClock) bounds(now time.Time) (lo, hi time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known {
		return time.Time{}, time.Time{}, false
	}
	el := now.Sub(c.base)
	return c.lo.Add(el), c.hi.Add(el), true
}

// estimate returns the middle of the bounds at local time now, never
// earlier than a time estimate returned before.
func (c *serverClock) estimate(now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := now.Sub(c.base)
	t := c.lo.Add(c.hi.Sub(c.lo) / 2).Add(el)
	if t.Before(c.last) {
		t = c.last
	}
	c.last = t
	return t
}

// Now returns the time on the store's clock: the S3 server's, estimated
// from the Date headers of its answers (see serverClock). With no answer
// seen yet it asks the server (a HEAD of the store's identity object).
func (b *backend) Now(ctx context.Context) (time.Time, error) {
	if _, _, ok := b.clock.bounds(b.local()); !ok {
		if err := b.ping(ctx); err != nil {
			return time.Time{}, err
		}
	}
	return utc(b.clock.estimate(b.local())), nil
}

// Expired tells whether a lease that expires at exp has expired on the
// server's clock: yes once the earliest the server's clock can read is
// past exp, no while the latest it can read is not. In between, it asks
// the server again, so that the bounds narrow, until one of the two
// holds (at most a few seconds: the bounds shrink to a round trip once
// two answers straddle a tick of the server's seconds).
func (b *backend) Expired(ctx context.Context, exp time.Time) (bool, error) {
	for i := 0; ; i++ {
		lo, hi, ok := b.clock.bounds(b.local())
		switch {
		case ok && lo.After(exp):
			return true, nil
		case ok && !hi.After(exp):
			return false, nil
		case ok && i >= 100:
			// The bounds stay wide (answers that take seconds): the
			// lease is not known to have expired.
			return false, nil
		}
		if ok {
			// Wait a little: a later answer lands on a later tick.
			wait := min(hi.Sub(exp), 50*time.Millisecond)
			select {
			case <-ctx.Done():
				return false, ctx.Err()
			case <-time.After(wait):
			}
		}
		if err := b.ping(ctx); err != nil {
			return false, err
		}
	}
}

// ping sends one cheap request to read the server's clock.
func (b *backend) ping(ctx context.Context) error {
	_, err := b.Stat(ctx, objcore.IdentityKey)
	if errors.Is(err, objcore.ErrMissing) {
		return nil // an answer all the same
	}
	return err
}

// utc returns t in UTC without a monotonic reading; the zero time stays
// zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, t.UnixNano()).UTC()
}
