package storetest

import (
	"testing"

	"github.com/tidemark-etl/tidemark/store"
)

// testIdentity: a store's identity is set, does not change with use, and
// two stores have different ones.
func testIdentity(t *testing.T, open func(t *testing.T) store.Store) {
	a, b := open(t), open(t)
	idA, err := a.Identity(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if idA.ID == "" || idA.Location == "" {
		t.Fatalf("Identity() = %+v, want an id and a location", idA)
	}
	l := acquire(t, a, job, "r")
	mustCommit(t, a, commitOf(t, a, l, "r1", "enable", 0))
	again, err := a.Identity(t.Context())
	if err != nil || again != idA {
		t.Errorf("Identity() after a commit = %+v, %v; want %+v", again, err, idA)
	}
	idB, err := b.Identity(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if idB.ID == idA.ID {
		t.Errorf("two new stores have the same identity %q", idA.ID)
	}
}
