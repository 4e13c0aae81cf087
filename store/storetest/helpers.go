package storetest

import (
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// job is the job most tests use; otherJob checks isolation.
const (
	job      = "sales-daily"
	otherJob = "sales-hourly"
	src      = "orders_source"
	src2     = "customers_source"
)

// t0 is the suite's clock origin, with microsecond precision.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

// holder returns a Holder for run id.
func holder(id string) store.Holder {
	return store.Holder{ID: id, Host: "host-" + id, PID: 4242, Started: t0}
}

// acquire takes job's lease for an hour or fails the test.
func acquire(t *testing.T, s store.Store, job, id string) store.Lease {
	t.Helper()
	l, err := s.AcquireLease(t.Context(), job, holder(id), time.Hour)
	if err != nil {
		t.Fatalf("AcquireLease(%q, %q): %v", job, id, err)
	}
	return l
}

// begin starts run id or fails the test.
func begin(t *testing.T, s store.Store, l store.Lease, id string, mode bookmark.Mode) store.Run {
	t.Helper()
	r, err := s.BeginRun(t.Context(), l.Token, store.Run{Job: l.Job, RunID: id, Mode: mode, StartedAt: t0})
	if err != nil {
		t.Fatalf("BeginRun(%q, %q): %v", l.Job, id, err)
	}
	return r
}

// commitOf begins run id and builds its commit under l. The caller fills in
// what the run read and wrote. Advancing runs are enable runs.
func commitOf(t *testing.T, s store.Store, l store.Lease, id string, mode bookmark.Mode, base int64) store.Commit {
	t.Helper()
	r := begin(t, s, l, id, mode)
	r.Status = store.StatusSucceeded
	r.FinishedAt = t0.Add(time.Duration(r.Seq) * time.Minute)
	r.Sources = map[string]store.Count{src: {Files: 1, Bytes: 10, Rows: 100}}
	r.Sinks = map[string]store.Count{"orders_sink": {Files: 1, Rows: 100}}
	return store.Commit{Job: l.Job, Token: l.Token, BaseVersion: base, Advance: mode.Advances(), Run: r}
}

// mustCommit commits c or fails the test.
func mustCommit(t *testing.T, s store.Store, c store.Commit) store.Head {
	t.Helper()
	h, err := s.Commit(t.Context(), c)
	if err != nil {
		t.Fatalf("Commit(run %s, base %d): %v", c.Run.RunID, c.BaseVersion, err)
	}
	return h
}

// advance commits enable run id at base with the given states and records.
func advance(t *testing.T, s store.Store, l store.Lease, id string, base int64,
	states map[string]bookmark.SourceState, added, superseded []store.FileRecord) store.Head {
	t.Helper()
	c := commitOf(t, s, l, id, bookmark.ModeEnable, base)
	c.Sources, c.Added, c.Superseded = states, added, superseded
	return mustCommit(t, s, c)
}

// file returns a file identity whose size is size and whose mtime and ETag
// derive from path and size.
func file(path string, size int64) bookmark.File {
	return bookmark.File{
		Path:  path,
		Size:  size,
		MTime: t0.UnixNano() + size*int64(time.Second) + 123,
		ETag:  fmt.Sprintf("%q-%d", path, size),
	}
}

// recs wraps files as records of one source ctx.
func recs(srcCtx string, files ...bookmark.File) []store.FileRecord {
	out := make([]store.FileRecord, len(files))
	for i, f := range files {
		out[i] = store.FileRecord{Ctx: srcCtx, File: f}
	}
	return out
}

// state returns a source state with every field set.
func state(fingerprint string, files int64) bookmark.SourceState {
	return bookmark.SourceState{
		Kind:        "files",
		Fingerprint: fingerprint,
		Describe:    "s3://in/sales/ csv " + fingerprint,
		Schema:      []bookmark.Column{{Name: "order_id", Type: "BIGINT"}, {Name: "product", Type: "VARCHAR"}},
		Tracking:    bookmark.TrackExact,
		HighWater:   t0.UnixNano() + files,
		Band:        []bookmark.File{file("band/x.csv", files)},
		Files:       files,
		Bytes:       files * 10,
	}
}

// collect drains a Seq2, failing the test on the first error.
func collect[T any](t *testing.T, seq iter.Seq2[T, error]) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			t.Fatalf("iterating: %v", err)
		}
		out = append(out, v)
	}
	return out
}

// files returns the current files of one source ctx.
func files(t *testing.T, s store.Store, job, srcCtx string) []bookmark.File {
	t.Helper()
	return collect(t, s.Files(t.Context(), job, srcCtx))
}

// wantFiles fails the test unless got equals want (nil and empty are equal).
func wantFiles(t *testing.T, what string, got, want []bookmark.File) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", what, fileList(got), fileList(want))
	}
}

// wantRecords fails the test unless got equals want (nil and empty are equal).
func wantRecords(t *testing.T, what string, got, want []store.FileRecord) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// fileList prints files compactly for messages.
func fileList(fs []bookmark.File) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%q(%d)", f.Path, f.Size)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// wantStates fails the test unless the job's head states equal want.
func wantStates(t *testing.T, s store.Store, job string, want map[string]bookmark.SourceState) {
	t.Helper()
	got, err := s.SourceStates(t.Context(), job)
	if err != nil {
		t.Fatalf("SourceStates(%q): %v", job, err)
	}
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SourceStates(%q):\n got %+v\nwant %+v", job, got, want)
	}
}

// wantHead fails the test unless the job's head has version and run id.
func wantHead(t *testing.T, s store.Store, job string, version int64, runID string) store.Head {
	t.Helper()
	h, err := s.Head(t.Context(), job)
	if err != nil {
		t.Fatalf("Head(%q): %v", job, err)
	}
	if h.Version != version || h.RunID != runID || h.Job != job {
		t.Errorf("Head(%q) = {job %q, version %d, run %q}, want {job %q, version %d, run %q}",
			job, h.Job, h.Version, h.RunID, job, version, runID)
	}
	return h
}

// getRun reads one run or fails the test.
func getRun(t *testing.T, s store.Store, job, id string) store.Run {
	t.Helper()
	r, err := s.Run(t.Context(), job, id)
	if err != nil {
		t.Fatalf("Run(%q, %q): %v", job, id, err)
	}
	return r
}

// runIDs lists the ids of runs in order.
func runIDs(runs []store.Run) []string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	return ids
}

// wantErr fails the test unless errors.Is(err, target).
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// near reports whether a and b are within d of each other.
func near(a, b time.Time, d time.Duration) bool {
	diff := a.Sub(b)
	return diff <= d && diff >= -d
}

// tableDetail is a SQL table source's state detail as a store reads it
// back without the kind built in: the fields as written.
func tableDetail(fields string) bookmark.StateDetail {
	return bookmark.RawState{RawDetail: bookmark.RawDetail{Of: bookmark.KindTable, JSON: fields}}
}
