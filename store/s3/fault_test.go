package s3

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// faultCase is one fault on the objects of a commit.
type faultCase struct {
	name string
	rule faultRule
	// attempts is the SDK's attempts per request (0: the default, 8).
	attempts int
}

// faultCases are S3's 412, 409 and 503 and a lost answer, on each kind of
// object a commit writes.
func faultCases() []faultCase {
	var cs []faultCase
	for _, key := range []string{"/head.json", "/versions/", "/segments/", "/commits/", "/runs/"} {
		cs = append(cs,
			faultCase{name: "412" + key, rule: faultRule{method: "PUT", key: key, times: 1, status: 412}},
			faultCase{name: "409" + key, rule: faultRule{method: "PUT", key: key, times: 1, status: 409}},
			faultCase{name: "503x3" + key, rule: faultRule{method: "PUT", key: key, times: 3, status: 503}},
			faultCase{name: "lost" + key, rule: faultRule{method: "PUT", key: key, times: 1, lose: true}},
			faultCase{name: "lost-no-retry" + key, rule: faultRule{method: "PUT", key: key, times: 1, lose: true}, attempts: 1},
		)
	}
	return cs
}

// TestCommitFaults: whatever fault hits a commit's writes, once, the
// commit ends committed exactly once: the head moved by one version to
// it, its files are recorded once, its run record says succeeded, and a
// second commit of the same run is refused.
func TestCommitFaults(t *testing.T) {
	srv := startServer(t)
	for i, fc := range faultCases() {
		t.Run(fc.name, func(t *testing.T) {
			f := &faultHTTP{}
			o := Options{WrapHTTP: f.wrap}
			o.S3.MaxAttempts = fc.attempts
			s := srv.open(t, fmt.Sprintf("fault-%d/", i), o)
			ctx := t.Context()
			l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "h"}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			r, err := s.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r1"})
			if err != nil {
				t.Fatal(err)
			}
			f.add(fc.rule)
			r.Status = store.StatusSucceeded
			c := store.Commit{Job: "j", Token: l.Token, Advance: true, Run: r,
				Sources: map[string]bookmark.SourceState{"src": {Kind: "files", Files: 2}},
				Added:   []store.FileRecord{{Ctx: "src", File: bookmark.File{Path: "a", Size: 1}}, {Ctx: "src", File: bookmark.File{Path: "b", Size: 2}}},
				Outputs: []store.Output{{Sink: "out", Final: "part-0", Kind: "file", Root: "/o"}}}
			h, err := s.Commit(ctx, c)
			if err != nil {
				t.Fatalf("Commit under fault %s: %v", fc.name, err)
			}
			if f.injected() == 0 {
				t.Fatalf("fault %s was never injected", fc.name)
			}
			wantCommitted(t, s, h, "r1", 1)
			if _, err := s.Commit(ctx, c); err == nil {
				t.Error("a second commit of r1 succeeded")
			}
			wantCommitted(t, s, h, "r1", 1)
		})
	}
}

// wantCommitted fails the test unless run id is the only commit, at
// version, with files a and b.
func wantCommitted(t *testing.T, s *Store, h store.Head, id string, version int64) {
	t.Helper()
	ctx := t.Context()
	if h.Version != version || h.RunID != id {
		t.Errorf("head = version %d run %s, want %d %s", h.Version, h.RunID, version, id)
	}
	got, err := s.Head(ctx, "j")
	if err != nil || got.Version != version || got.RunID != id {
		t.Errorf("Head() = %+v, %v; want version %d run %s", got, err, version, id)
	}
	vs, err := s.Versions(ctx, "j", store.VersionQuery{})
	if err != nil || len(vs) != int(version) {
		t.Errorf("Versions = %v, %v; want %d", vs, err, version)
	}
	var paths []string
	for f, err := range s.Files(ctx, "j", "src") {
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, ",") != "a,b" {
		t.Errorf("Files = %v, want [a b]", paths)
	}
	r, err := s.Run(ctx, "j", id)
	if err != nil || r.Status != store.StatusSucceeded || r.Version != version {
		t.Errorf("Run(%s) = %+v, %v; want succeeded at version %d", id, r, err, version)
	}
	var n int
	for rec, err := range s.RunInputs(ctx, "j", []string{id}) {
		if err != nil {
			t.Fatal(err)
		}
		_ = rec
		n++
	}
	if n != 2 {
		t.Errorf("RunInputs(%s) yielded %d records, want 2", id, n)
	}
	runs, err := s.Unpublished(ctx, "j")
	if err != nil || len(runs) != 1 || runs[0].RunID != id {
		t.Errorf("Unpublished = %v, %v; want [%s]", runIDsOf(runs), err, id)
	}
}

func runIDsOf(runs []store.Run) []string {
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	return ids
}

// TestCommitFaultFails: a fault that outlasts the retries fails the
// commit cleanly (the head did not move, the run is still running) with a
// message naming the store and not the secret key; the same commit then
// succeeds.
func TestCommitFaultFails(t *testing.T) {
	srv := startServer(t)
	f := &faultHTTP{}
	o := Options{WrapHTTP: f.wrap}
	o.S3.MaxAttempts = 2
	s := srv.open(t, "fails/", o)
	ctx := t.Context()
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "h"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	f.add(faultRule{method: "PUT", key: "/head.json", times: 2, status: 503})
	c := store.Commit{Job: "j", Token: l.Token, Advance: true, Run: r,
		Sources: map[string]bookmark.SourceState{"src": {Kind: "files"}},
		Added:   []store.FileRecord{{Ctx: "src", File: bookmark.File{Path: "a", Size: 1}}, {Ctx: "src", File: bookmark.File{Path: "b", Size: 2}}},
		Outputs: []store.Output{{Sink: "out", Final: "part-0", Kind: "file", Root: "/o"}}}
	_, err = s.Commit(ctx, c)
	if err == nil {
		t.Fatal("Commit with every head write failing succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, srv.location("fails/")) || strings.Contains(msg, srv.SecretKey) {
		t.Errorf("error %q: want it to name %s and not the secret key", msg, srv.location("fails/"))
	}
	if h, _ := s.Head(ctx, "j"); h.Version != 0 {
		t.Errorf("head after a failed commit = version %d, want 0", h.Version)
	}
	if got, _ := s.Run(ctx, "j", "r1"); got.Status != store.StatusRunning {
		t.Errorf("run after a failed commit is %s, want running", got.Status)
	}
	h, err := s.Commit(ctx, c)
	if err != nil {
		t.Fatalf("Commit once the fault is over: %v", err)
	}
	wantCommitted(t, s, h, "r1", 1)
}

// TestLeaseFaults: a lost answer to an acquisition is found out (the
// lease is ours, not held by "another"); a 412 on a renewal is retried.
func TestLeaseFaults(t *testing.T) {
	srv := startServer(t)
	f := &faultHTTP{}
	o := Options{WrapHTTP: f.wrap}
	o.S3.MaxAttempts = 1
	s := srv.open(t, "lease-faults/", o)
	ctx := t.Context()
	f.add(faultRule{method: "PUT", key: "/head.json", times: 1, lose: true})
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "h"}, time.Hour)
	if err != nil {
		t.Fatalf("AcquireLease with its answer lost: %v", err)
	}
	f.add(faultRule{method: "PUT", key: "/head.json", times: 1, status: 412})
	if _, err := s.RenewLease(ctx, l, 2*time.Hour); err != nil {
		t.Fatalf("RenewLease after a 412: %v", err)
	}
	_, err = s.AcquireLease(ctx, "j", store.Holder{ID: "other"}, time.Hour)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || held.Token != l.Token {
		t.Fatalf("AcquireLease by another: %v, want held with token %d", err, l.Token)
	}
}
