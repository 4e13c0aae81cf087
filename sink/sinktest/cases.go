package sinktest

import (
	"errors"
	"time"

	"github.com/tidemark-etl/tidemark/sink"
)

// testClaimOwnership: a location the job claimed under one state store is
// refused to the job of another store with a *sink.OwnedError, at its
// check and at its claim, and to another job unless the kind is Shared;
// nothing there changes.
func testClaimOwnership(w *world) {
	k := w.sink("append")
	w.run(k, "1:a")
	other := w.open(w.t)
	for _, check := range []bool{true, false} {
		err := k.Claim(w.t.Context(), w.claimWith(other, "", check))
		var owned *sink.OwnedError
		if !errors.As(err, &owned) {
			w.t.Fatalf("claim (check only: %v) by another state store: %v, want a *sink.OwnedError", check, err)
		}
	}
	c := w.claimWith(w.st, "", false)
	c.Job = "another-job"
	err := k.Claim(w.t.Context(), c)
	var owned *sink.OwnedError
	switch {
	case w.k.Shared && err != nil:
		w.t.Fatalf("claim by another job of the same state store at a shared location: %v", err)
	case !w.k.Shared && !errors.As(err, &owned):
		w.t.Fatalf("claim by another job of the same state store: %v, want a *sink.OwnedError", err)
	}
	w.wantRows("after the refused claims", "1:a")
	// The owner goes on.
	w.run(k, "2:b")
	w.wantRows("after the owner's next run", "1:a", "2:b")
}

// testCheckOnly: a claim with CheckOnly writes no record: another state
// store that checked first does not keep the job's store out.
func testCheckOnly(w *world) {
	k := w.sink("append")
	other := w.open(w.t)
	if err := k.Claim(w.t.Context(), w.claimWith(other, "", true)); err != nil {
		w.t.Fatalf("checking a fresh location: %v", err)
	}
	w.run(k, "1:a")
	w.wantRows("after a run following another store's check", "1:a")
}

// testPublishRoundTrip: prepare, the engine's write, stage; nothing is
// visible until the commit's publish, then exactly the run's rows.
func testPublishRoundTrip(w *world) {
	k := w.sink("append")
	id := w.begin()
	w.claim(k, id)
	_, staged := w.stage(k, id, "1:a", "2:b", "3:")
	if staged.Count.Rows != 3 {
		w.t.Errorf("staged count: %d rows, want 3", staged.Count.Rows)
	}
	w.wantRows("after staging")
	w.commit(id, staged)
	w.wantRows("after the commit, before publishing")
	if err := w.publish(id, true); err != nil {
		w.t.Fatalf("publishing: %v", err)
	}
	w.wantRows("after publishing", "1:a", "2:b", "3:")
	w.run(k, "4:d")
	w.wantRows("after a second run", "1:a", "2:b", "3:", "4:d")
}

// testPublishTwice: a crash after the locations published, before the run
// was marked published, has the next command publish again: nothing is
// duplicated, nothing of the run is lost, in either mode.
func testPublishTwice(w *world) {
	for _, mode := range []string{"append", "overwrite"} {
		w := newWorld(w.t, w.k, Store{Open: w.open})
		k := w.sink(mode)
		w.run(k, "1:a")
		id := w.begin()
		w.claim(k, id)
		_, staged := w.stage(k, id, "2:b", "3:c")
		w.commit(id, staged)
		want := []string{"1:a", "2:b", "3:c"}
		if mode == "overwrite" {
			want = want[1:]
		}
		if err := w.publish(id, false); err != nil {
			w.t.Fatalf("mode %s: publishing: %v", mode, err)
		}
		w.wantRows("mode "+mode+", after publishing once", want...)
		if err := w.publish(id, false); err != nil {
			w.t.Fatalf("mode %s: publishing again (crash before it was marked): %v", mode, err)
		}
		if err := w.publish(id, true); err != nil {
			w.t.Fatalf("mode %s: publishing a third time, then marking: %v", mode, err)
		}
		w.wantRows("mode "+mode+", after publishing three times", want...)
	}
}

// testPurgeIdempotent: a purge deletes what one run published, and again
// deletes nothing more and does not fail.
func testPurgeIdempotent(w *world) {
	k := w.sink("append")
	w.run(k, "1:a")
	id := w.run(k, "2:b", "3:c")
	for i := range 2 {
		if err := w.purge(id); err != nil {
			w.t.Fatalf("purge %d: %v", i+1, err)
		}
		w.wantRows("after purging the second run", "1:a")
	}
}

// testCleanupDeadOnly: Cleanup deletes what dead runs staged and leaves
// another run's staging (one under way, or committed) alone.
func testCleanupDeadOnly(w *world) {
	k := w.sink("append")
	dead, live := w.begin(), w.begin()
	w.claim(k, live)
	w.stage(k, dead, "1:dead")
	_, staged := w.stage(k, live, "2:live")
	w.wantStaged("before cleanup", dead, true)
	w.wantStaged("before cleanup", live, true)
	isDead := func(id string) (bool, error) { return id == dead, nil }
	for range 2 {
		if err := k.Cleanup(w.t.Context(), isDead, w.log); err != nil {
			w.t.Fatalf("cleanup: %v", err)
		}
	}
	w.wantStaged("after cleanup", dead, false)
	w.wantStaged("after cleanup", live, true)
	w.commit(live, staged)
	if err := w.publish(live, true); err != nil {
		w.t.Fatalf("publishing the live run after cleanup: %v", err)
	}
	w.wantRows("after publishing the live run", "2:live")
}

// testLostOutput: a committed run whose staged output is gone fails to
// publish with an error wrapping sink.ErrOutputLost, and changes nothing
// (an overwrite deletes nothing).
func testLostOutput(w *world) {
	for _, mode := range []string{"append", "overwrite"} {
		w := newWorld(w.t, w.k, Store{Open: w.open})
		k := w.sink(mode)
		w.run(k, "1:a")
		id := w.begin()
		w.claim(k, id)
		_, staged := w.stage(k, id, "2:b")
		w.commit(id, staged)
		w.p.Lose(w.t, id)
		err := w.publish(id, false)
		if !errors.Is(err, sink.ErrOutputLost) {
			w.t.Fatalf("mode %s: publishing a run whose staging is lost: %v, want sink.ErrOutputLost", mode, err)
		}
		w.wantRows("mode "+mode+", after the failed publish", "1:a")
	}
}

// testDiscard: Discard, before or after Stage, leaves nothing of the run
// and publishes nothing; it may be called twice.
func testDiscard(w *world) {
	k := w.sink("append")
	before, after := w.begin(), w.begin()
	w.claim(k, before)
	stg := w.prepare(k, before)
	w.write(stg, "1:a")
	stg.Discard(w.t.Context())
	stg.Discard(w.t.Context())
	w.wantStaged("after discarding before Stage", before, false)
	// Nothing Discard left running may stage anything later (an upload
	// still on its way when it returned).
	time.Sleep(500 * time.Millisecond)
	w.wantStaged("half a second after discarding before Stage", before, false)
	stg, _ = w.stage(k, after, "2:b")
	stg.Discard(w.t.Context())
	stg.Discard(w.t.Context())
	w.wantStaged("after discarding after Stage", after, false)
	w.wantRows("after the discards")
}

// testPublishedRemovesStaging: once a run is published and Published was
// called, nothing of its staging is left.
func testPublishedRemovesStaging(w *world) {
	k := w.sink("append")
	id := w.run(k, "1:a")
	w.wantStaged("after publishing", id, false)
}

// testAppender: a sink that says it appends keeps what earlier runs
// published; one that does not (or is no Appender) replaces it.
func testAppender(w *world) {
	for _, mode := range []string{"append", "overwrite"} {
		w := newWorld(w.t, w.k, Store{Open: w.open})
		k := w.sink(mode)
		a, ok := k.(sink.Appender)
		appends := ok && a.Appends()
		if appends != (mode == "append") {
			w.t.Errorf("mode %s: Appends() is %v", mode, appends)
		}
		w.run(k, "1:a")
		w.run(k, "2:b")
		if appends {
			w.wantRows("mode "+mode+", after two runs", "1:a", "2:b")
		} else {
			w.wantRows("mode "+mode+", after two runs", "2:b")
		}
	}
}
