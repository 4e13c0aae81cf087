package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// bigRunFiles is how many files the big run commits.
const bigRunFiles = 100_000

// commitBigRun commits one run of job that read n files of ctx "in".
func commitBigRun(t *testing.T, st store.Store, job string, n int) {
	t.Helper()
	ctx := context.Background()
	l, err := st.AcquireLease(ctx, job, store.Holder{ID: "big"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.BeginRun(ctx, l.Token, store.Run{Job: job, RunID: "huge", Mode: bookmark.ModeEnable})
	if err != nil {
		t.Fatal(err)
	}
	r.Status = store.StatusSucceeded
	added := make([]store.FileRecord, n)
	for i := range added {
		added[i] = store.FileRecord{Ctx: "in", File: bookmark.File{Path: fmt.Sprintf("f/%06d.csv", i), Size: int64(i + 1), MTime: int64(i + 1)}}
	}
	c := store.Commit{Job: job, Token: l.Token, Advance: true, Run: r, Added: added,
		Sources: map[string]bookmark.SourceState{"in": {Kind: "files", Tracking: bookmark.TrackExact, Files: int64(n)}}}
	if _, err := st.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
}

// TestBigRunPagesItsInputs: a run with 100k files answers its last page
// (the last 10 items, total 100000) in an answer of bounded size, and the
// job's newest files are the ten newest of them.
func TestBigRunPagesItsInputs(t *testing.T) {
	st := memory.New(memory.Options{})
	commitBigRun(t, st, "big", bigRunFiles)
	h, err := New(Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(p string) []byte {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: got %d %s, want 200", p, resp.StatusCode, body)
		}
		return body
	}
	body := get("/api/v1/jobs/big/runs/huge?offset=99990&limit=20")
	var d runDetail
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	if got, want := d.Inputs.Total, bigRunFiles; got != want {
		t.Errorf("inputs total: got %d, want %d", got, want)
	}
	if got, want := len(d.Inputs.Items), 10; got != want {
		t.Fatalf("inputs items: got %d, want %d", got, want)
	}
	for i, in := range d.Inputs.Items {
		if want := fmt.Sprintf("f/%06d.csv", 99990+i); in.Path != want {
			t.Errorf("input %d: got %s, want %s", i, in.Path, want)
		}
	}
	// Ten items are well under 8 KiB; all 100k would be megabytes.
	if got, most := len(body), 8<<10; got > most {
		t.Errorf("answer size: got %d bytes, want at most %d", got, most)
	}

	var j jobDetail
	if err := json.Unmarshal(get("/api/v1/jobs/big"), &j); err != nil {
		t.Fatal(err)
	}
	newest := j.NewestFiles["in"]
	if len(newest) != newestPerCtx || newest[0].Path != fmt.Sprintf("f/%06d.csv", bigRunFiles-1) ||
		newest[newestPerCtx-1].Path != fmt.Sprintf("f/%06d.csv", bigRunFiles-newestPerCtx) {
		t.Errorf("newest files: got %+v, want f/099999.csv down to f/099990.csv", newest)
	}
}
