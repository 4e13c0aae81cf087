package serve_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// historyVersion is one item of GET /history.
type historyVersion struct {
	Version int64  `json:"version"`
	Kind    string `json:"kind"`
	RunID   string `json:"run_id"`
	At      string `json:"at"`
	By      string `json:"by"`
}

// historyOf GETs one page of the job's bookmark history.
func (w *world) historyOf(query string) ([]historyVersion, int64) {
	w.t.Helper()
	var page struct {
		Versions   []historyVersion `json:"versions"`
		NextBefore int64            `json:"next_before"`
	}
	w.getJSON(jobPath("/history"+query), &page)
	return page.Versions, page.NextBefore
}

// TestHistoryRecordsWhoAsked: a rewind through serve is in the job's
// history as kind rewind, by serve, the remote address and the actor;
// commits are there with their runs; limit and before page it.
func TestHistoryRecordsWhoAsked(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	w.token = "tok-123456"
	w.serve(nil)
	csrf, _ := w.session()
	if code, body := w.action(w.token, csrf, csrf, `{"to_run":"`+ids[0]+`"}`); code != http.StatusOK {
		t.Fatalf("rewind: got %d %s", code, body)
	}
	vs, next := w.historyOf("")
	if len(vs) != 4 || next != 0 {
		t.Fatalf("history: got %+v next %d, want 4 versions and no next page", vs, next)
	}
	top := vs[0]
	if top.Version != 4 || top.Kind != "rewind" || top.RunID != ids[0] || top.At == "" ||
		!strings.HasPrefix(top.By, "serve 127.0.0.1:") || !strings.HasSuffix(top.By, " alice") {
		t.Errorf("history[0]: got %+v, want version 4, a rewind to %s by serve 127.0.0.1:PORT alice", top, ids[0])
	}
	for i, v := range vs[1:] {
		if want := ids[2-i]; v.Kind != "commit" || v.RunID != want || v.By != "" || v.Version != int64(3-i) {
			t.Errorf("history[%d]: got %+v, want version %d, a commit of %s", i+1, v, 3-i, want)
		}
	}
	page, next := w.historyOf("?limit=2")
	if len(page) != 2 || page[0].Version != 4 || next != 3 {
		t.Errorf("history?limit=2: got %+v next %d, want versions 4, 3 and next 3", page, next)
	}
	page, next = w.historyOf("?limit=2&before=3")
	if len(page) != 2 || page[0].Version != 2 || page[1].Version != 1 || next != 0 {
		t.Errorf("history?limit=2&before=3: got %+v next %d, want versions 2, 1 and no next page", page, next)
	}
	for path, want := range map[string]int{
		"/api/v1/jobs/nope/history":  http.StatusNotFound,
		jobPath("/history?limit=-1"): http.StatusBadRequest,
		jobPath("/history?before=x"): http.StatusBadRequest,
	} {
		if code, body := w.get(path); code != want || !strings.Contains(string(body), `"error"`) {
			t.Errorf("GET %s: got %d %s, want %d with an error", path, code, body, want)
		}
	}
}

// diffSource is one ctx of a run's bookmark_diff.
type diffSource struct {
	Before *struct {
		Files int64 `json:"files"`
	} `json:"before"`
	After *struct {
		Files int64 `json:"files"`
	} `json:"after"`
}

// runDiff GETs a run's bookmark_diff (nil when null).
func (w *world) runDiff(id string) *struct {
	Version int64                 `json:"version"`
	Before  int64                 `json:"before"`
	Sources map[string]diffSource `json:"sources"`
} {
	w.t.Helper()
	var d struct {
		BookmarkDiff *struct {
			Version int64                 `json:"version"`
			Before  int64                 `json:"before"`
			Sources map[string]diffSource `json:"sources"`
		} `json:"bookmark_diff"`
	}
	code, body := w.get(jobPath("/runs/" + id))
	if code != http.StatusOK {
		w.t.Fatalf("run %s: got %d %s", id, code, body)
	}
	if !strings.Contains(string(body), `"bookmark_diff":`) {
		w.t.Errorf("run %s: no bookmark_diff field in %s", id, body)
	}
	if err := json.Unmarshal(body, &d); err != nil {
		w.t.Fatal(err)
	}
	return d.BookmarkDiff
}

// TestRunBookmarkDiff: a committed run shows its version's states against
// the version before; the first run's ctx is new (before null); a run
// that read nothing new (no version of its own) and a failed run have none.
func TestRunBookmarkDiff(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	idle := w.run()
	w.write("d.csv", 1)
	failed := w.runFailing()
	w.serve(nil)
	d := w.runDiff(ids[1])
	if d == nil || d.Version != 2 || d.Before != 1 {
		t.Fatalf("diff of the second run: got %+v, want version 2 against 1", d)
	}
	o, ok := d.Sources["orders"]
	if !ok || o.Before == nil || o.After == nil || o.Before.Files != 1 || o.After.Files != 2 {
		t.Errorf("diff of the second run, ctx orders: got %+v, want 1 file before and 2 after", o)
	}
	d = w.runDiff(ids[0])
	if d == nil || d.Version != 1 || d.Before != 0 {
		t.Fatalf("diff of the first run: got %+v, want version 1 against 0", d)
	}
	if o := d.Sources["orders"]; o.Before != nil || o.After == nil || o.After.Files != 1 {
		t.Errorf("diff of the first run, ctx orders: got %+v, want none before and 1 file after", o)
	}
	if d := w.runDiff(failed); d != nil {
		t.Errorf("diff of a failed run: got %+v, want null", d)
	}
	if d := w.runDiff(idle); d != nil {
		t.Errorf("diff of a run that read nothing new: got %+v, want null", d)
	}
}
