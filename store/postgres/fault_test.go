package postgres

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/faultproxy"
	"github.com/tidemark-etl/tidemark/store"
)

// faultCommit is a commit of n files and two outputs under a fresh lease.
func faultCommit(t *testing.T, s *Store, n int) store.Commit {
	t.Helper()
	ctx := t.Context()
	l, err := s.AcquireLease(ctx, "job", store.Holder{ID: "a", Host: "h"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.BeginRun(ctx, l.Token, store.Run{Job: "job", RunID: "r1", Mode: bookmark.ModeEnable})
	if err != nil {
		t.Fatal(err)
	}
	r.Status = store.StatusSucceeded
	c := store.Commit{Job: "job", Token: l.Token, Advance: true, Run: r,
		Sources: map[string]bookmark.SourceState{"src": {Kind: "files", Fingerprint: "fp", Files: int64(n)}},
		Outputs: []store.Output{
			{RunID: "r1", Sink: "sink", Kind: "file", Root: "/out/", Staged: "_tidemark/r1/a", Final: "part-r1-0.parquet", Rows: 1},
			{RunID: "r1", Sink: "sink", Kind: "file", Root: "/out/", Staged: "_tidemark/r1/b", Final: "part-r1-1.parquet", Rows: 1},
		},
		Actions: []store.SinkAction{{Sink: "sink", Root: "/out/", Mode: "overwrite"}},
	}
	for i := range n {
		c.Added = append(c.Added, store.FileRecord{Ctx: "src", File: bookmark.File{Path: fmt.Sprintf("in/%07d.csv", i), Size: int64(i), MTime: int64(i)}})
	}
	return c
}

// wantAllOrNothing reads the store through a clean connection and fails
// the test unless the commit left all of itself or none, and reports which.
func wantAllOrNothing(t *testing.T, s *Store, c store.Commit) (all bool) {
	t.Helper()
	ctx := t.Context()
	h, err := s.Head(ctx, c.Job)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(ctx, c.Job, c.Run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	states, err := s.SourceStates(ctx, c.Job)
	if err != nil {
		t.Fatal(err)
	}
	nFiles := 0
	for _, err := range s.Files(ctx, c.Job, "src") {
		if err != nil {
			t.Fatal(err)
		}
		nFiles++
	}
	outs, err := s.Outputs(ctx, c.Job, c.Run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := s.Actions(ctx, c.Job, c.Run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("head %d, run %s, %d states, %d files, %d outputs, %d actions", h.Version, r.Status, len(states), nFiles, len(outs), len(acts))
	allOf := fmt.Sprintf("head 1, run succeeded, 1 states, %d files, 2 outputs, 1 actions", len(c.Added))
	noneOf := "head 0, run running, 0 states, 0 files, 0 outputs, 0 actions"
	if got != allOf && got != noneOf {
		t.Fatalf("after a commit cut short: %s; want all (%s) or nothing (%s)", got, allOf, noneOf)
	}
	return got == allOf
}

// TestCommitBackendKilled: the server process of a commit in flight is
// killed (pg_terminate_backend from another session, while the commit's
// swap of the job's head waits for the row, which another session holds,
// after writing the segments of 100k file records): the commit fails,
// naming the store and not its password, and leaves nothing; committed
// again, it goes through.
func TestCommitBackendKilled(t *testing.T) {
	db := newDB(t)
	s := db.open(t)
	c := faultCommit(t, s, 100_000)
	held := db.Hold(t)
	held.Exec(`SELECT 1 FROM ` + s.schema + `.state_objects WHERE key = 'jobs/job/head.json' FOR UPDATE`)
	done := make(chan error, 1)
	go func() { _, err := s.Commit(t.Context(), c); done <- err }()
	killed := db.KillQuery(t, "UPDATE state_objects SET", time.Minute)
	held.Commit()
	err := <-done
	if !killed {
		t.Fatalf("the commit's swap of the head was never seen running (commit: %v)", err)
	}
	wantNoSecret(t, "Commit whose backend was killed", err, store.Redact(db.url), db.password)
	if wantAllOrNothing(t, s, c) {
		t.Fatal("the killed commit's transaction was applied")
	}
	if _, err := s.Commit(t.Context(), c); err != nil {
		t.Fatalf("Commit again after the kill: %v", err)
	}
	if !wantAllOrNothing(t, s, c) {
		t.Fatal("the second commit left nothing")
	}
}

// TestCommitConnectionCut cuts the connection after every few bytes of a
// commit's traffic towards the server, through a TCP proxy in front of
// the real one: each time the store holds all of the commit or none of it,
// and an error names the store without its password. When the cut falls
// after COMMIT reached the server, the commit may fail on the client and
// be applied all the same; Head and Run tell (the contract's "unknown
// outcome").
func TestCommitConnectionCut(t *testing.T) {
	db := newDB(t)
	u, _ := url.Parse(db.url)
	p, err := faultproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	via := *u
	via.Host = p.Addr

	open := func(i int) (*Store, *Store, store.Commit) {
		loc := via.String() + "?application_name=tidemark-cut&schema=cut_" + fmt.Sprint(i)
		s := db.openAt(t, loc)
		direct := db.openAt(t, db.location("cut_"+fmt.Sprint(i)))
		return s, direct, faultCommit(t, s, 200)
	}
	// Measure the commit's bytes once, uncut.
	s, _, c := open(0)
	start := p.Stats().Bytes[faultproxy.Up]
	if _, err := s.Commit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	total := p.Stats().Bytes[faultproxy.Up] - start
	if total < 1000 {
		t.Fatalf("a commit of 200 files sent %d bytes, want more", total)
	}
	applied, failedNothing := 0, 0
	const steps = 24
	cuts := []int64{0, total - 1, total}
	for i := 1; i <= steps; i++ {
		cuts = append(cuts, total*int64(i)/(steps+1))
	}
	for i, at := range cuts {
		s, direct, c := open(i + 1)
		p.DropAfter(faultproxy.Up, at)
		_, err := s.Commit(t.Context(), c) // the drop fires once, at or before the commit's last byte
		// The server may still be finishing the transaction the client lost:
		// its outcome is settled once the session is no longer busy.
		waitNotBusy(t, db, "tidemark-cut")
		all := wantAllOrNothing(t, direct, c)
		switch {
		case err == nil && !all:
			t.Fatalf("cut after %d of %d bytes: Commit succeeded and left nothing", at, total)
		case err != nil:
			wantNoSecret(t, "Commit cut short", err, via.Host, db.password)
			if !strings.Contains(err.Error(), "committing run r1") {
				t.Errorf("Commit cut short: %v; want it to say what it was doing", err)
			}
			if all {
				applied++
			} else {
				failedNothing++
			}
		}
	}
	t.Logf("commit of %d bytes cut at %d points: %d failed and left nothing, %d failed after the server applied it",
		total, len(cuts), failedNothing, applied)
	if failedNothing == 0 {
		t.Error("no cut made the commit fail before it was applied; the test cuts in the wrong place")
	}
}

// TestCommitStalledStore: a store that stops answering (the network
// stalls) makes a commit with a deadline fail at the deadline, naming the
// store, and leaves nothing; once the network is back the same commit goes
// through.
func TestCommitStalledStore(t *testing.T) {
	db := newDB(t)
	u, _ := url.Parse(db.url)
	p, err := faultproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	via := *u
	via.Host = p.Addr
	s := db.openAt(t, via.String()+"?schema=stall")
	direct := db.openAt(t, db.location("stall"))
	c := faultCommit(t, s, 200)

	p.Hold()
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	_, err = s.Commit(ctx, c)
	cancel()
	p.Release()
	wantNoSecret(t, "Commit on a stalled store", err, via.Host, db.password)
	if wantAllOrNothing(t, direct, c) {
		t.Fatal("the stalled commit was applied")
	}
	if _, err := s.Commit(t.Context(), c); err != nil {
		t.Fatalf("Commit once the network is back: %v", err)
	}
	if !wantAllOrNothing(t, direct, c) {
		t.Fatal("the commit after the stall left nothing")
	}
}

// waitNotBusy waits until no session named app is running a statement or
// sits in a transaction.
func waitNotBusy(t *testing.T, db *testDB, app string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var n int
		db.SQL.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state <> 'idle'`, app).Scan(&n)
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("sessions %s still busy after a minute", app)
}
