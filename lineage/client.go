package lineage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Config says where events go.
type Config struct {
	// URL is the endpoint: a base URL (events go to URL/api/v1/lineage)
	// or one with a path, used as it is.
	URL string
	// APIKey, if set, is sent as a bearer token. It never appears in a
	// log line or an error.
	APIKey string
	// Timeout bounds each POST (default 2s).
	Timeout time.Duration
	// Queue is how many events wait at most; more are dropped, logged
	// (default 64).
	Queue int
}

// Client posts events to an OpenLineage HTTP endpoint from a bounded
// queue, one at a time, in order. Send never blocks; a failed POST is
// logged (the endpoint, the status or the error; never the key) and not
// retried: lineage is best effort and never holds a run up.
type Client struct {
	endpoint string // redacted form for messages: safeEndpoint
	target   string
	apiKey   string
	http     *http.Client
	log      *slog.Logger
	queue    chan []byte
	done     chan struct{}
	ctx      context.Context
	cancel   context.CancelFunc

	mu     sync.Mutex
	closed bool
}

// NewClient starts a client; Close stops it.
func NewClient(cfg Config, log *slog.Logger) (*Client, error) {
	target, err := endpointOf(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 64
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{endpoint: safeEndpoint(target), target: target, apiKey: cfg.APIKey,
		http: &http.Client{Timeout: cfg.Timeout}, log: log,
		queue: make(chan []byte, cfg.Queue), done: make(chan struct{}), ctx: ctx, cancel: cancel}
	go c.work()
	return c, nil
}

// endpointOf is the URL events are POSTed to.
func endpointOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("lineage url %q: must be an http:// or https:// URL", safeEndpoint(raw))
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/api/v1/lineage"
	}
	return u.String(), nil
}

// safeEndpoint is the endpoint without user info or query (which could
// hold a credential), for messages.
func safeEndpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// Send queues ev; when the queue is full or the client closed, ev is
// dropped and logged. It never blocks.
func (c *Client) Send(ev RunEvent) {
	body, err := json.Marshal(ev)
	if err != nil {
		c.log.Warn("lineage: encoding event", "type", ev.EventType, "err", err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		c.log.Warn("lineage: client closed, event dropped", "type", ev.EventType)
		return
	}
	select {
	case c.queue <- body:
	default:
		c.log.Warn("lineage: queue full, event dropped", "type", ev.EventType, "endpoint", c.endpoint)
	}
}

// Close stops taking events and waits at most wait for the queued ones
// to be sent; what is still queued then is dropped, logged. Idempotent.
func (c *Client) Close(wait time.Duration) {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.queue)
	}
	c.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.cancel()
		c.log.Warn("lineage: endpoint too slow, events not sent", "endpoint", c.endpoint, "events", len(c.queue)+1)
	}
}

func (c *Client) work() {
	defer close(c.done)
	defer c.cancel()
	for body := range c.queue {
		if c.ctx.Err() != nil {
			continue
		}
		if err := c.post(body); err != nil {
			c.log.Warn("lineage: sending event", "endpoint", c.endpoint, "err", err)
		}
	}
}

// post sends one event. Its error names no URL (which Go's would) and
// holds no response body: nothing of it can carry the key.
func (c *Client) post(body []byte) error {
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.target, bytes.NewReader(body))
	if err != nil {
		return errors.New("making the request")
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return errors.New(c.scrub(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return errors.New(c.scrub("endpoint answered " + resp.Status))
	}
	return nil
}

// scrub removes the key from a message, should a transport ever echo it.
func (c *Client) scrub(msg string) string {
	if c.apiKey == "" {
		return msg
	}
	return strings.ReplaceAll(msg, c.apiKey, "[REDACTED]")
}
