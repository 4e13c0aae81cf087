package storetest

import (
	"reflect"
	"slices"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// output returns an unpublished output of run id.
func output(id, sink, final string) store.Output {
	return store.Output{
		RunID: id, Sink: sink, Root: "s3://out/" + sink + "/",
		Staged: "_tidemark/" + id + "/" + final, Final: final, Rows: int64(len(final)), Bytes: int64(100 * len(final)),
	}
}

func testOutputsAndActions(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r1")
	c := commitOf(t, s, l, "r1", bookmark.ModeEnable, 0)
	c.Outputs = []store.Output{
		output("r1", "sink_b", "part-r1-0.parquet"),
		output("r1", "sink_a", "product=b/part-r1-1.parquet"),
		output("r1", "sink_a", "product=a/part-r1-0.parquet"),
	}
	c.Actions = []store.SinkAction{
		{Sink: "sink_b", Root: "s3://out/sink_b/", Mode: "overwrite"},
		{Sink: "sink_a", Root: "s3://out/sink_a/", Mode: "overwrite_partitions", Partitions: []string{"product=b", "product=a"}},
	}
	mustCommit(t, s, c)

	outs, err := s.Outputs(ctx, job, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Output{c.Outputs[2], c.Outputs[1], c.Outputs[0]} // by sink, then final
	if !reflect.DeepEqual(outs, want) {
		t.Errorf("Outputs(r1):\n got %+v\nwant %+v", outs, want)
	}
	acts, err := s.Actions(ctx, job, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(acts, c.Actions) {
		t.Errorf("Actions(r1):\n got %+v\nwant %+v", acts, c.Actions)
	}

	if err := s.MarkPublished(ctx, job, l.Token, "r1"); err != nil {
		t.Fatal(err)
	}
	outs, _ = s.Outputs(ctx, job, "r1")
	for i := range want {
		want[i].Published = true
	}
	if !reflect.DeepEqual(outs, want) {
		t.Errorf("Outputs(r1) after MarkPublished:\n got %+v\nwant %+v", outs, want)
	}
	if err := s.MarkPublished(ctx, job, l.Token, "r1"); err != nil {
		t.Errorf("second MarkPublished: %v, want nil", err)
	}
	if outs, _ := s.Outputs(ctx, otherJob, "r1"); len(outs) != 0 {
		t.Errorf("Outputs of run r1 of another job = %v, want none", outs)
	}
}

func testUnpublished(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r")
	wantUnpublished := func(want ...string) {
		t.Helper()
		runs, err := s.Unpublished(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		if got := runIDs(runs); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
			t.Errorf("Unpublished = %v, want %v", got, want)
		}
	}

	c1 := commitOf(t, s, l, "r1", bookmark.ModeEnable, 0)
	c1.Outputs = []store.Output{output("r1", "sink", "part-r1-0.csv"), output("r1", "sink", "part-r1-1.csv")}
	mustCommit(t, s, c1)
	mustCommit(t, s, commitOf(t, s, l, "r2", bookmark.ModeEnable, 1)) // no outputs: never unpublished
	c3 := commitOf(t, s, l, "r3", bookmark.ModePause, 2)
	c3.Outputs = []store.Output{output("r3", "sink", "part-r3-0.csv")}
	mustCommit(t, s, c3)
	c4 := commitOf(t, s, l, "r4", bookmark.ModeDisable, 2)
	published := output("r4", "sink", "part-r4-0.csv")
	published.Published = true
	c4.Outputs = []store.Output{published}
	mustCommit(t, s, c4)                      // committed as already published
	begin(t, s, l, "r5", bookmark.ModeEnable) // running: not committed
	if err := s.FailRun(ctx, job, l.Token, "r5", t0, store.Run{}, "boom"); err != nil {
		t.Fatal(err)
	}

	wantUnpublished("r1", "r3")
	if err := s.MarkPublished(ctx, job, l.Token, "r1"); err != nil {
		t.Fatal(err)
	}
	wantUnpublished("r3")
	if err := s.MarkPublished(ctx, job, l.Token, "r3"); err != nil {
		t.Fatal(err)
	}
	wantUnpublished()

	// A run undone by a reset before its output was published is not rolled
	// forward: its input is read again.
	c6 := commitOf(t, s, l, "r6", bookmark.ModeEnable, 2)
	c6.Outputs = []store.Output{output("r6", "sink", "part-r6-0.csv")}
	mustCommit(t, s, c6)
	wantUnpublished("r6")
	if _, err := s.Reset(ctx, job, l.Token, "r2", "test"); err != nil {
		t.Fatal(err)
	}
	wantUnpublished()
}

func testPublishedOutputs(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r")
	root := output("", "sink", "").Root
	published := func() []string {
		t.Helper()
		var got []string
		for _, o := range collect(t, s.PublishedOutputs(ctx, job, root)) {
			if o.Root != root || !o.Published {
				t.Errorf("PublishedOutputs yielded %+v: want root %s, published", o, root)
			}
			got = append(got, o.RunID+":"+o.Final)
		}
		slices.Sort(got)
		return got
	}
	wantPublished := func(what string, want ...string) {
		t.Helper()
		if got := published(); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
			t.Errorf("PublishedOutputs %s = %v, want %v", what, got, want)
		}
	}

	c1 := commitOf(t, s, l, "r1", bookmark.ModeEnable, 0)
	c1.Outputs = []store.Output{output("r1", "sink", "part-r1-0.csv"), output("r1", "sink", "part-r1-1.csv"),
		output("r1", "other", "part-r1-0.csv")} // another root
	mustCommit(t, s, c1)
	wantPublished("before MarkPublished")
	if err := s.MarkPublished(ctx, job, l.Token, "r1"); err != nil {
		t.Fatal(err)
	}
	wantPublished("after r1", "r1:part-r1-0.csv", "r1:part-r1-1.csv")

	c2 := commitOf(t, s, l, "r2", bookmark.ModeDisable, 1)
	p := output("r2", "sink", "x=1/part-r2-0.csv")
	p.Published = true
	c2.Outputs = []store.Output{p}
	mustCommit(t, s, c2)
	c3 := commitOf(t, s, l, "r3", bookmark.ModeEnable, 1)
	c3.Outputs = []store.Output{output("r3", "sink", "part-r3-0.csv")}
	mustCommit(t, s, c3) // committed, not yet published
	begin(t, s, l, "r4", bookmark.ModeEnable)
	if err := s.FailRun(ctx, job, l.Token, "r4", t0, store.Run{}, "boom"); err != nil {
		t.Fatal(err)
	}
	wantPublished("with r2 published, r3 not", "r1:part-r1-0.csv", "r1:part-r1-1.csv", "r2:x=1/part-r2-0.csv")

	// Undone without purge: still in the sink. Purged: gone.
	if err := s.MarkPublished(ctx, job, l.Token, "r3"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reset(ctx, job, l.Token, "r1", "test"); err != nil {
		t.Fatal(err)
	}
	wantPublished("after a reset without purge", "r1:part-r1-0.csv", "r1:part-r1-1.csv", "r2:x=1/part-r2-0.csv", "r3:part-r3-0.csv")
	if err := s.MarkPurged(ctx, job, l.Token, "r3"); err != nil {
		t.Fatal(err)
	}
	wantPublished("after purging r3", "r1:part-r1-0.csv", "r1:part-r1-1.csv", "r2:x=1/part-r2-0.csv")

	// Another job's outputs at the same root are not this job's.
	l2 := acquire(t, s, "other-job", "o1")
	o := commitOf(t, s, l2, "o1", bookmark.ModeEnable, 0)
	po := output("o1", "sink", "part-o1-0.csv")
	po.Published = true
	o.Outputs = []store.Output{po}
	mustCommit(t, s, o)
	wantPublished("with another job's output", "r1:part-r1-0.csv", "r1:part-r1-1.csv", "r2:x=1/part-r2-0.csv")
}
