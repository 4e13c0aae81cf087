// Package faultproxy is a TCP proxy that tests put in front of a real
// server (PostgreSQL, versitygw, any TCP protocol: it looks at no bytes)
// to make the network misbehave on demand: stall all traffic for a while
// or until released, cut every connection, drop connections once a number
// of bytes went through in one direction, add latency, refuse new
// connections. Point the client at Addr instead of the server.
//
// Faults act on the bytes as they are forwarded, chunk by chunk: a stall
// holds each chunk read from either side until it ends (the peers see no
// answer, as across a partition); a cut resets both sides of every open
// connection; a drop forwards exactly the remaining budget of bytes and
// then resets the connection that reached it (an answer lost after the
// server sent it, a request cut in the middle).
package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Dir is the direction of traffic a fault counts.
type Dir int

const (
	// Up is client to server (requests).
	Up Dir = iota
	// Down is server to client (answers).
	Down
)

func (d Dir) String() string {
	if d == Up {
		return "up"
	}
	return "down"
}

// Proxy forwards TCP connections from Addr to a target address.
type Proxy struct {
	// Addr is where clients connect: 127.0.0.1:PORT.
	Addr   string
	target string
	ln     net.Listener

	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever a fault changes
	conns   map[*conn]struct{}
	until   time.Time // stalled until then
	held    bool      // stalled until Release
	delay   time.Duration
	refuse  bool
	budget  [2]int64 // bytes left before a drop, per Dir; -1: no drop armed
	stats   Stats
	closed  bool
	wg      sync.WaitGroup
}

// Stats counts what went through the proxy.
type Stats struct {
	Accepted int      // connections accepted (refused ones included)
	Refused  int      // connections refused
	Cut      int      // connections reset by Cut or a drop
	Bytes    [2]int64 // bytes forwarded per Dir
}

// Start listens on a free loopback port and forwards every connection to
// target (host:port). Close stops it.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, changed: make(chan struct{}),
		conns: map[*conn]struct{}{}, budget: [2]int64{-1, -1}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Close stops listening and resets every open connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.Cut()
	p.Release()
	p.wg.Wait()
	return err
}

// Stall holds all traffic, on open and new connections, for d from now.
func (p *Proxy) Stall(d time.Duration) {
	p.change(func() { p.until = time.Now().Add(d) })
}

// Hold holds all traffic until Release.
func (p *Proxy) Hold() { p.change(func() { p.held = true }) }

// Release ends a Hold and a Stall: held traffic flows again.
func (p *Proxy) Release() { p.change(func() { p.held, p.until = false, time.Time{} }) }

// Delay adds d of latency to every chunk forwarded (0 removes it).
func (p *Proxy) Delay(d time.Duration) { p.change(func() { p.delay = d }) }

// Refuse makes the proxy accept new connections and reset them at once
// (on), as a server that is down would; open connections are not touched.
func (p *Proxy) Refuse(on bool) { p.change(func() { p.refuse = on }) }

// DropAfter arms a drop: once n more bytes went through in direction d
// (on all connections together), the connection that carried the n-th
// byte is reset after forwarding up to it and nothing after. The drop
// fires once; DropAfter again re-arms it. The reset may discard what the
// kernel had not sent yet: at most n bytes reach the peer.
func (p *Proxy) DropAfter(d Dir, n int64) {
	p.change(func() { p.budget[d] = max(n, 0) })
}

// Cut resets every open connection, both sides.
func (p *Proxy) Cut() {
	p.mu.Lock()
	cs := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.stats.Cut += len(cs)
	p.mu.Unlock()
	for _, c := range cs {
		c.reset()
	}
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Conns returns the number of open connections.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// change applies fn under the lock and wakes the forwarders.
func (p *Proxy) change(fn func()) {
	p.mu.Lock()
	fn()
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.stats.Accepted++
		refuse := p.refuse || p.closed
		if refuse {
			p.stats.Refused++
		}
		p.mu.Unlock()
		if refuse {
			resetConn(client)
			continue
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

// conn is one proxied connection: the client's side and the server's.
type conn struct {
	client, server net.Conn
	once           sync.Once
}

func (c *conn) reset() {
	c.once.Do(func() {
		resetConn(c.client)
		resetConn(c.server)
	})
}

// resetConn closes a connection with a reset instead of an orderly close.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		resetConn(client)
		return
	}
	c := &conn{client: client, server: server}
	p.mu.Lock()
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	var both sync.WaitGroup
	both.Add(2)
	go func() { defer both.Done(); p.pump(c, Up, server, client) }()
	go func() { defer both.Done(); p.pump(c, Down, client, server) }()
	both.Wait()
	c.reset()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// pump forwards one direction of c until either side ends; an orderly
// end (EOF) is passed on as a half close.
func (p *Proxy) pump(c *conn, d Dir, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.forward(c, d, dst, buf[:n]) {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
					return
				}
			}
			c.reset()
			return
		}
	}
}

// forward writes one chunk after the faults in force let it: it waits out
// a stall, sleeps the delay and spends the drop budget. It reports whether
// the connection goes on.
func (p *Proxy) forward(c *conn, d Dir, dst net.Conn, b []byte) bool {
	for {
		p.mu.Lock()
		wait := p.changed
		held, until, delay, closed := p.held, p.until, p.delay, p.closed
		p.mu.Unlock()
		if closed {
			c.reset()
			return false
		}
		if held {
			<-wait
			continue
		}
		if left := time.Until(until); left > 0 {
			select {
			case <-wait:
			case <-time.After(left):
			}
			continue
		}
		if delay > 0 {
			time.Sleep(delay)
		}
		break
	}
	p.mu.Lock()
	send, drop := b, false
	if left := p.budget[d]; left >= 0 && int64(len(b)) >= left {
		send, drop = b[:left], true
		p.budget[d] = -1
		p.stats.Cut++
	} else if left >= 0 {
		p.budget[d] -= int64(len(b))
	}
	p.stats.Bytes[d] += int64(len(send))
	p.mu.Unlock()
	if len(send) > 0 {
		if _, err := dst.Write(send); err != nil {
			c.reset()
			return false
		}
	}
	if drop {
		c.reset()
		return false
	}
	return true
}
