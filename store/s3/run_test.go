package s3

import (
	"reflect"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// TestRunRoundTrip: every field of a run, Host included, comes back as
// BeginRun and Commit recorded it, from Run and from Runs, and from a
// second process's open of the store.
func TestRunRoundTrip(t *testing.T) {
	srv := startServer(t)
	s := srv.open(t, "roundtrip/", Options{})
	ctx := t.Context()
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "h", Host: "etl-7:4242"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 2, 3, 4, 5, 6, 789000, time.UTC)
	r, err := s.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r1", Mode: bookmark.ModeEnable, StartedAt: start,
		JobFile: "/etc/tidemark/j.yaml", Host: "etl-7:4242"})
	if err != nil {
		t.Fatal(err)
	}
	r.Status = store.StatusSucceeded
	r.FinishedAt = start.Add(time.Minute)
	r.Sources = map[string]store.Count{"src": {Files: 3, Bytes: 30, Rows: 9, Rejected: 1, Skipped: 2,
		Detail: rawCount(bookmark.KindFiles, `{"modified":1,"missing":1,"empty":1,"deferred":1,"unchanged":1,"future":1,"in_sinks":1,"changed_during_read":1}`)}}
	r.Sinks = map[string]store.Count{"tbl": {Files: 1, Rows: 8,
		Detail: rawCount(bookmark.KindTable, `{"regressions":1,"null_keys":1,"late":1,"table":true,"keys_after":"1","keys_up_to":"9"}`)}}
	if _, err := s.Commit(ctx, store.Commit{Job: "j", Token: l.Token, Advance: true, Run: r,
		Sources: map[string]bookmark.SourceState{"src": {Kind: "files"}}}); err != nil {
		t.Fatal(err)
	}
	want := r
	want.Version = 1
	other := srv.open(t, "roundtrip/", Options{})
	for name, st := range map[string]*Store{"same": s, "other": other} {
		got, err := st.Run(ctx, "j", "r1")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Run(r1) =\n %+v\nwant\n %+v", name, got, want)
		}
		runs, err := st.Runs(ctx, "j", store.RunQuery{})
		if err != nil || len(runs) != 1 || !reflect.DeepEqual(runs[0], want) {
			t.Errorf("%s: Runs = %+v, %v; want [%+v]", name, runs, err, want)
		}
	}
}

// rawCount is a count detail as a store without the kinds reads it back.
func rawCount(kind bookmark.SourceKind, fields string) store.CountDetail {
	return store.RawCount{RawDetail: bookmark.RawDetail{Of: kind, JSON: fields}}
}
