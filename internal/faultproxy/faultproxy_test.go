package faultproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
)

// echoServer answers every line with the same line.
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
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func start(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes a line and reads the echo within timeout.
func roundTrip(c net.Conn, line string, timeout time.Duration) (string, error) {
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(got, "\n"), err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestPassThrough(t *testing.T) {
	p := start(t, echoServer(t))
	c := dial(t, p)
	for _, line := range []string{"one", "two", strings.Repeat("x", 100000)} {
		got, err := roundTrip(c, line, time.Minute)
		if err != nil || got != line {
			t.Fatalf("echo of %d bytes: got %d bytes (%v), want them back", len(line), len(got), err)
		}
	}
	if s := p.Stats(); s.Bytes[Up] != s.Bytes[Down] || s.Bytes[Up] != 100009 || s.Accepted != 1 {
		t.Errorf("stats %+v, want 100009 bytes each way on 1 connection", s)
	}
}

// TestHold: nothing gets through while held, on an open connection or a
// new one; everything does once released.
func TestHold(t *testing.T) {
	p := start(t, echoServer(t))
	open := dial(t, p)
	if _, err := roundTrip(open, "warm", time.Minute); err != nil {
		t.Fatal(err)
	}
	p.Hold()
	fresh := dial(t, p)
	for _, c := range []net.Conn{open, fresh} {
		if _, err := roundTrip(c, "held", 300*time.Millisecond); !isTimeout(err) {
			t.Errorf("a round trip while held: got %v, want a timeout", err)
		}
	}
	p.Release()
	for _, c := range []net.Conn{open, fresh} {
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		got, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || got != "held\n" {
			t.Errorf("after Release: got %q (%v), want the held line", got, err)
		}
	}
}

// TestStall: a stall holds traffic at least for its duration, then lets it
// through by itself.
func TestStall(t *testing.T) {
	p := start(t, echoServer(t))
	c := dial(t, p)
	const d = 500 * time.Millisecond
	p.Stall(d)
	began := time.Now()
	got, err := roundTrip(c, "late", time.Minute)
	if err != nil || got != "late" {
		t.Fatalf("a round trip across a stall: got %q (%v)", got, err)
	}
	if took := time.Since(began); took < d-50*time.Millisecond {
		t.Errorf("a round trip across a %v stall took %v", d, took)
	}
}

func TestDelay(t *testing.T) {
	p := start(t, echoServer(t))
	c := dial(t, p)
	p.Delay(200 * time.Millisecond)
	began := time.Now()
	if _, err := roundTrip(c, "slow", time.Minute); err != nil {
		t.Fatal(err)
	}
	// The line and its echo each wait once.
	if took := time.Since(began); took < 400*time.Millisecond {
		t.Errorf("a round trip with 200ms of delay each way took %v", took)
	}
	p.Delay(0)
}

// TestCut: every open connection is reset; new ones work.
func TestCut(t *testing.T) {
	p := start(t, echoServer(t))
	cs := []net.Conn{dial(t, p), dial(t, p)}
	for _, c := range cs {
		if _, err := roundTrip(c, "before", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	p.Cut()
	for _, c := range cs {
		if _, err := roundTrip(c, "after", time.Minute); err == nil {
			t.Errorf("a round trip on a cut connection succeeded")
		}
	}
	if got, err := roundTrip(dial(t, p), "again", time.Minute); err != nil || got != "again" {
		t.Errorf("a new connection after Cut: got %q (%v)", got, err)
	}
	if s := p.Stats(); s.Cut < 2 {
		t.Errorf("stats %+v, want 2 connections cut", s)
	}
}

// TestDropAfter: the answer is cut once its budget of bytes went through;
// the request went through whole (the server got it); the drop fires once.
func TestDropAfter(t *testing.T) {
	p := start(t, echoServer(t))
	c := dial(t, p)
	p.DropAfter(Down, 5)
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, "0123456789\n"); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err == nil && len(got) == 11 {
		t.Fatalf("the answer came whole (%q), want it cut after 5 bytes", got)
	}
	if len(got) > 5 || !strings.HasPrefix("0123456789", string(got)) {
		t.Errorf("received %q before the drop, want at most the first 5 bytes", got)
	}
	if s := p.Stats(); s.Bytes[Up] != 11 || s.Bytes[Down] != 5 {
		t.Errorf("stats %+v, want the 11-byte request up and 5 bytes down", s)
	}
	if got, err := roundTrip(dial(t, p), "next", time.Minute); err != nil || got != "next" {
		t.Errorf("a connection after the drop fired: got %q (%v)", got, err)
	}

	p.DropAfter(Up, 3)
	c = dial(t, p)
	if _, err := roundTrip(c, "request", time.Minute); err == nil {
		t.Errorf("a request cut after 3 bytes got an answer")
	}
}

func TestRefuse(t *testing.T) {
	p := start(t, echoServer(t))
	p.Refuse(true)
	// The reset may come before the dial returns, or after.
	if c, err := net.Dial("tcp", p.Addr); err == nil {
		if _, err := roundTrip(c, "x", time.Minute); err == nil {
			t.Errorf("a round trip while refusing succeeded")
		}
		c.Close()
	}
	p.Refuse(false)
	if got, err := roundTrip(dial(t, p), "y", time.Minute); err != nil || got != "y" {
		t.Errorf("after Refuse(false): got %q (%v)", got, err)
	}
	if s := p.Stats(); s.Refused != 1 {
		t.Errorf("stats %+v, want 1 refused", s)
	}
}

// TestHTTP: an HTTP server (as versitygw is) behind the proxy answers, and
// a held proxy times the client out.
func TestHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello "+r.URL.Path)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	p := start(t, u.Host)
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + p.Addr + "/bucket/key")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello /bucket/key" {
		t.Errorf("through the proxy: got %q", body)
	}
	p.Hold()
	defer p.Release()
	client.Timeout = 300 * time.Millisecond
	if _, err := client.Get("http://" + p.Addr + "/x"); err == nil {
		t.Errorf("a request through a held proxy got an answer")
	}
}

// TestPostgres: the real PostgreSQL behind the proxy: queries work, a cut
// fails the next one on that connection, and a new connection works.
func TestPostgres(t *testing.T) {
	server := sqltest.Server(t, sqldb.Postgres)
	p := start(t, server.Host)
	password, _ := server.User.Password()
	t.Setenv("FAULTPROXY_TEST_PG_PASSWORD", password)
	via := *server
	via.Host = p.Addr
	via.User = url.User(server.User.Username())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := sqldb.Open(ctx, via.String(), "FAULTPROXY_TEST_PG_PASSWORD", sqldb.Options{AppName: "faultproxy-test"})
	if err != nil {
		t.Fatalf("connecting through the proxy: %v", err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var one int
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 through the proxy: %d, %v", one, err)
	}
	p.Cut()
	if err := conn.QueryRowContext(ctx, "SELECT 2").Scan(&one); err == nil {
		t.Errorf("a query on a cut connection succeeded")
	}
	if err := db.QueryRowContext(ctx, "SELECT 3").Scan(&one); err != nil || one != 3 {
		t.Errorf("a query on a new connection after the cut: %d, %v", one, err)
	}
	_ = os.Unsetenv("FAULTPROXY_TEST_PG_PASSWORD")
}
