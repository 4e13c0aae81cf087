package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/faultproxy"
	"github.com/tidemark-etl/tidemark/store"
)

// TestStalledHolderFreesItsJob: a holder stalls in the middle of its
// commit (the network to the store stops, its transaction holds the job's
// lease row). Once its lease expires a successor takes the lease, after
// the server ends the stalled transaction (idle_in_transaction_session_
// timeout, here 1.5 s); the stalled commit changes nothing and fails when
// the network comes back. With the timeout off (0) the successor would
// wait for the stalled host for as long as its connection lives.
func TestStalledHolderFreesItsJob(t *testing.T) {
	for _, tc := range []struct {
		timeout string
		freed   bool
	}{{"1500", true}, {"0", false}} {
		t.Run("idle_timeout="+tc.timeout, func(t *testing.T) {
			db := newDB(t)
			u, _ := url.Parse(db.url)
			p, err := faultproxy.New(u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			via := *u
			via.Host = net.JoinHostPort("127.0.0.1", fmt.Sprint(p.Port()))
			// One connection, so that both commits send the same bytes.
			loc := via.String() + "?schema=st&pool_max_conns=1&idle_in_transaction_session_timeout=" + tc.timeout
			s := db.openAt(t, loc)
			direct := db.openAt(t, db.location("st"))
			ctx := t.Context()
			const ttl = time.Second
			l, err := s.AcquireLease(ctx, "job", store.Holder{ID: "stalled"}, ttl)
			if err != nil {
				t.Fatal(err)
			}
			commitOf := func(id string) store.Commit {
				r, err := s.BeginRun(ctx, l.Token, store.Run{Job: "job", RunID: id})
				if err != nil {
					t.Fatal(err)
				}
				r.Status = store.StatusSucceeded
				h, _ := s.Head(ctx, "job")
				c := store.Commit{Job: "job", Token: l.Token, BaseVersion: h.Version, Advance: true, Run: r,
					Sources: map[string]bookmark.SourceState{"src": {Kind: "files"}},
					Outputs: []store.Output{{RunID: id, Sink: "sink", Kind: "file", Root: "/o/", Staged: "s/" + id, Final: "part-" + id}}}
				for i := range 50 {
					c.Added = append(c.Added, store.FileRecord{Ctx: "src", File: bookmark.File{Path: fmt.Sprintf("%s/%03d", id, i)}})
				}
				return c
			}
			// Measure a commit's bytes (the second on the connection: the
			// first prepares its statements), then stall the next one a
			// byte before its end: every statement but COMMIT has run.
			if _, err := s.Commit(ctx, commitOf("r0")); err != nil {
				t.Fatal(err)
			}
			c2 := commitOf("r2")
			p.CutAfter(1 << 40)
			if _, err := s.Commit(ctx, c2); err != nil {
				t.Fatal(err)
			}
			total := p.Sent()
			p.CutAfter(-1)
			c1 := commitOf("r1")
			p.StallAfter(total - 1)
			done := make(chan error, 1)
			go func() { _, err := s.Commit(context.Background(), c1); done <- err }()
			defer func() {
				p.Resume()
				err := <-done
				if !tc.freed {
					return // no one took the lease: the stalled commit may go on
				}
				if err == nil {
					t.Error("the stalled commit succeeded after its lease was taken")
				}
				r, _ := direct.Run(context.Background(), "job", "r1")
				if r.Status != store.StatusRunning {
					t.Errorf("the stalled run is %s, want running (its commit changed nothing)", r.Status)
				}
			}()
			waitIdleInTx(t, db)
			time.Sleep(ttl + 200*time.Millisecond)

			actx, cancel := context.WithTimeout(ctx, 30*time.Second)
			if !tc.freed {
				actx, cancel = context.WithTimeout(ctx, 3*time.Second)
			}
			defer cancel()
			b, err := direct.AcquireLease(actx, "job", store.Holder{ID: "successor"}, time.Hour)
			switch {
			case tc.freed && err != nil:
				t.Fatalf("the successor could not take the expired lease of a stalled holder: %v", err)
			case tc.freed && b.Token <= l.Token:
				t.Errorf("successor token %d, want > %d", b.Token, l.Token)
			case !tc.freed && err == nil:
				t.Fatalf("with the timeout off, the successor took the lease while the stalled holder's row lock was held: the test shows nothing")
			case !tc.freed && !errors.Is(actx.Err(), context.DeadlineExceeded):
				t.Fatalf("with the timeout off: %v, want the successor to wait until its deadline", err)
			}
		})
	}
}

// waitIdleInTx waits until a session of the test's database sits idle
// inside a transaction (the stalled holder, before its COMMIT).
func waitIdleInTx(t *testing.T, db *testDB) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var n int
		db.SQL.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'`).Scan(&n)
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the stalled commit's transaction never showed as idle in transaction")
}

// TestSessionDefaults: sessions end a write transaction left idle after
// 30 s and probe a silent client, unless the URL says otherwise.
func TestSessionDefaults(t *testing.T) {
	db := newDB(t)
	show := func(s *Store, name string) string {
		var v string
		if err := s.pool.QueryRow(t.Context(), "SHOW "+name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	s := db.open(t)
	if got := show(s, "idle_in_transaction_session_timeout"); got != "30s" {
		t.Errorf("idle_in_transaction_session_timeout = %s, want 30s", got)
	}
	if got := show(s, "tcp_keepalives_idle"); got != "30" {
		t.Errorf("tcp_keepalives_idle = %s, want 30", got)
	}
	o := db.openAt(t, db.location("other")+"&idle_in_transaction_session_timeout=5min")
	if got := show(o, "idle_in_transaction_session_timeout"); got != "5min" {
		t.Errorf("idle_in_transaction_session_timeout set in the URL = %s, want 5min", got)
	}
}
