package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// TestStalledHolderFreesItsJob: a holder stops in the middle of a write
// (partitioned, paused: its transaction holds the job's head row on one
// of the store's own sessions and sends nothing more). Once its lease
// expires a successor takes the lease, after the server ends the stalled
// transaction (idle_in_transaction_session_timeout, here 1.5 s). With the
// timeout off (0) the successor waits for the stalled host for as long as
// its connection lives.
func TestStalledHolderFreesItsJob(t *testing.T) {
	for _, tc := range []struct {
		timeout string
		freed   bool
	}{{"1500", true}, {"0", false}} {
		t.Run("idle_timeout="+tc.timeout, func(t *testing.T) {
			db := newDB(t)
			s := db.openAt(t, db.location("st")+"&idle_in_transaction_session_timeout="+tc.timeout)
			successor := db.openAt(t, db.location("st"))
			ctx := t.Context()
			const ttl = time.Second
			l, err := s.AcquireLease(ctx, "job", store.Holder{ID: "stalled"}, ttl)
			if err != nil {
				t.Fatal(err)
			}
			// The first step of every write of the job, and then nothing.
			tx, err := s.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.Background())
			if _, err := tx.Exec(ctx, `SELECT 1 FROM state_objects WHERE key = 'jobs/job/head.json' FOR UPDATE`); err != nil {
				t.Fatal(err)
			}
			time.Sleep(ttl + 200*time.Millisecond)

			wait := 30 * time.Second
			if !tc.freed {
				wait = 3 * time.Second
			}
			actx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			b, err := successor.AcquireLease(actx, "job", store.Holder{ID: "successor"}, time.Hour)
			switch {
			case tc.freed && err != nil:
				t.Fatalf("the successor could not take the expired lease of a stalled holder: %v", err)
			case tc.freed && b.Token <= l.Token:
				t.Errorf("successor token %d, want > %d", b.Token, l.Token)
			case !tc.freed && err == nil:
				t.Fatal("with the timeout off, the successor took the lease while the stalled holder's row lock was held: the test shows nothing")
			case !tc.freed && !errors.Is(actx.Err(), context.DeadlineExceeded):
				t.Fatalf("with the timeout off: %v, want the successor to wait until its deadline", err)
			}
			if tc.freed {
				// The stalled holder, back, is fenced out.
				if err := tx.Commit(ctx); err == nil {
					t.Error("the stalled transaction committed after the server ended it")
				}
				if _, err := s.BeginRun(ctx, l.Token, store.Run{Job: "job", RunID: "late"}); !errors.Is(err, store.ErrLeaseLost) {
					t.Errorf("a write of the stalled holder after the takeover: %v, want ErrLeaseLost", err)
				}
			}
		})
	}
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
