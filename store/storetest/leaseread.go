package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// testCurrentLease: a store that reads leases (store.LeaseReader) shows
// the live holder, and none once the lease is released or expired.
func testCurrentLease(t *testing.T, s store.Store) {
	lr, ok := s.(store.LeaseReader)
	if !ok {
		t.Skip("the store does not read leases")
	}
	ctx := context.Background()
	if _, held, err := lr.CurrentLease(ctx, "cl-job"); err != nil || held {
		t.Fatalf("CurrentLease of a job never leased: held %v, err %v; want free", held, err)
	}
	l := acquire(t, s, "cl-job", "run-cl")
	got, held, err := lr.CurrentLease(ctx, "cl-job")
	if err != nil || !held || got.Holder.ID != "run-cl" || got.Token != l.Token {
		t.Fatalf("CurrentLease: got %+v held %v err %v, want run-cl's token %d", got, held, err, l.Token)
	}
	if err := s.ReleaseLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, held, err := lr.CurrentLease(ctx, "cl-job"); err != nil || held {
		t.Errorf("CurrentLease after release: held %v, err %v; want free", held, err)
	}
	if _, err := s.AcquireLease(ctx, "cl-job", holder("run-short"), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if _, held, err := lr.CurrentLease(ctx, "cl-job"); err != nil || held {
		t.Errorf("CurrentLease of an expired lease: held %v, err %v; want free", held, err)
	}
}
