// Package faultproxy is a TCP proxy to put in front of a real server in
// tests, to make the network misbehave: cut every connection at once or
// after a number of bytes, stall traffic, or delay it. It only injects
// faults; the server behind it is the real one.
package faultproxy

import (
	"net"
	"sync"
	"time"
)

// Proxy forwards connections on a loopback port to a target address.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   map[net.Conn]bool
	cutAt   int64 // bytes sent towards the target before every connection is cut; <0: never
	stallAt int64 // bytes sent towards the target before all traffic stalls; <0: never
	sent    int64 // bytes sent towards the target since Arm
	stall   chan struct{}
	delay   time.Duration
	closed  bool
	wg      sync.WaitGroup
}

// New starts a proxy to target (host:port) on 127.0.0.1 and a free port.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}, cutAt: -1, stallAt: -1}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Cut closes every open connection now; new ones are still accepted.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLocked()
}

func (p *Proxy) cutLocked() {
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// CutAfter cuts every connection as soon as n more bytes have gone
// towards the target (counted over all connections from this call): the
// chunk that reaches n is forwarded up to n, then every connection is
// closed, so the target may act on what it got while its answer is lost.
// n < 0 disarms it.
func (p *Proxy) CutAfter(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutAt, p.sent = n, 0
}

// StallAfter stalls all traffic (as Stall) as soon as n more bytes have
// gone towards the target, counted like CutAfter's: a client caught
// halfway through a conversation, as by a network partition. Resume lets
// it go. n < 0 disarms it.
func (p *Proxy) StallAfter(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stallAt, p.sent = n, 0
}

// Sent returns the bytes sent towards the target since the last CutAfter.
func (p *Proxy) Sent() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent
}

// Stall holds all traffic, both ways, until Resume.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stall == nil {
		p.stall = make(chan struct{})
	}
}

// Resume lets stalled traffic go.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stall != nil {
		close(p.stall)
		p.stall = nil
	}
}

// Delay makes every chunk of traffic wait d before it is forwarded.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.cutLocked()
	if p.stall != nil {
		close(p.stall)
		p.stall = nil
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		p.conns[c], p.conns[s] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(s, c, true)
		go p.pipe(c, s, false)
	}
}

// pipe copies from src to dst; toTarget counts the bytes for CutAfter.
func (p *Proxy) pipe(dst, src net.Conn, toTarget bool) {
	defer p.wg.Done()
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			stall, delay := p.stall, p.delay
			p.mu.Unlock()
			if stall != nil {
				<-stall
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			chunk, rest, cut := buf[:n], []byte(nil), false
			if toTarget {
				p.mu.Lock()
				switch {
				case p.cutAt >= 0 && p.sent+int64(n) >= p.cutAt:
					chunk, cut = buf[:p.cutAt-p.sent], true
					p.cutAt = -1 // one cut per CutAfter
				case p.stallAt >= 0 && p.sent+int64(n) >= p.stallAt:
					chunk, rest = buf[:p.stallAt-p.sent], buf[p.stallAt-p.sent:n]
					p.stallAt = -1
					if p.stall == nil {
						p.stall = make(chan struct{})
					}
				}
				if cut {
					p.sent += int64(len(chunk))
				} else {
					p.sent += int64(n)
				}
				p.mu.Unlock()
			}
			if _, werr := dst.Write(chunk); werr != nil {
				return
			}
			if cut {
				p.Cut()
				return
			}
			if len(rest) > 0 {
				p.mu.Lock()
				stall := p.stall
				p.mu.Unlock()
				if stall != nil {
					<-stall
				}
				if _, werr := dst.Write(rest); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return // EOF or a closed connection: the defers close both sides
		}
	}
}
