package faultproxy

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer echoes every line back; it stops when the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func dial(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func TestForwardAndCut(t *testing.T) {
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, r := dial(t, p)
	if _, err := c.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "hello\n" {
		t.Fatalf("echo through the proxy: got %q, %v; want hello", line, err)
	}
	p.Cut()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("read after Cut succeeded, want the connection closed")
	}
	// New connections still work.
	c2, r2 := dial(t, p)
	c2.Write([]byte("again\n"))
	if line, err := r2.ReadString('\n'); err != nil || line != "again\n" {
		t.Fatalf("after Cut, a new connection: got %q, %v", line, err)
	}
}

func TestCutAfter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	received := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		b, _ := io.ReadAll(c)
		received <- string(b)
	}()
	p, err := New(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, r := dial(t, p)
	p.CutAfter(3)
	c.Write([]byte("abcdef\n"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadByte(); err == nil {
		t.Error("read after the cut succeeded, want the connection closed")
	}
	if got := <-received; got != "abc" {
		t.Errorf("after CutAfter(3): the server got %q, want %q", got, "abc")
	}
	if p.Sent() != 3 {
		t.Errorf("Sent = %d, want 3", p.Sent())
	}
}

func TestStall(t *testing.T) {
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, r := dial(t, p)
	p.Stall()
	c.Write([]byte("x\n"))
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("read through a stalled proxy succeeded")
	}
	p.Resume()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "x\n" {
		t.Fatalf("after Resume: got %q, %v; want x", line, err)
	}
}

func TestStallAfter(t *testing.T) {
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, r := dial(t, p)
	p.StallAfter(3)
	c.Write([]byte("ab\ncd\n"))
	// Everything stalls, the echo of what got through too.
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("a read through a stalled proxy succeeded")
	}
	if p.Sent() != 6 {
		t.Errorf("Sent = %d, want 6 (3 through, 3 held)", p.Sent())
	}
	p.Resume()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for _, want := range []string{"ab\n", "cd\n"} {
		if line, err := r.ReadString('\n'); err != nil || line != want {
			t.Fatalf("after Resume: got %q, %v; want %q", line, err, want)
		}
	}
}
