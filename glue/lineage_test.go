package glue

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tidemark-etl/tidemark/lineage"
)

// lineageReceiver is a local OpenLineage endpoint that keeps the events
// it receives, in order.
type lineageReceiver struct {
	mu     sync.Mutex
	events []lineage.RunEvent
}

func newLineageReceiver(t *testing.T) *lineageReceiver {
	t.Helper()
	rc := &lineageReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev lineage.RunEvent
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("decoding event %s: %v", body, err)
		}
		rc.mu.Lock()
		rc.events = append(rc.events, ev)
		rc.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	t.Setenv(lineage.EnvURL, srv.URL)
	return rc
}

// take returns the events received since the last call.
func (rc *lineageReceiver) take() []lineage.RunEvent {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	evs := rc.events
	rc.events = nil
	return evs
}

// TestSessionSendsLineage: issue #19 item 3. A Glue run sends the
// OpenLineage events tidemark run sends (OPENLINEAGE_URL): START when the
// run is recorded and COMPLETE with the source and sink it declared; a
// run that ends without a commit sends FAIL; a refused run, which is no
// run, sends nothing (glue run sent no events).
func TestSessionSendsLineage(t *testing.T) {
	rc := newLineageReceiver(t)
	w := newWorld(t)
	w.land(t, "a.csv", 1, 2)
	a, _ := newAPI(t, w.state, w.dir)
	_, b := w.script(t, a, "enable", true)
	evs := rc.take()
	if len(evs) != 2 || evs[0].EventType != lineage.EventStart || evs[1].EventType != lineage.EventComplete {
		t.Fatalf("a committed run sent %d events %v, want START and COMPLETE", len(evs), types(evs))
	}
	end := evs[1]
	if end.Job.Name != "sales" || end.Run.RunID != lineage.RunID("sales", b.RunID) {
		t.Errorf("COMPLETE names job %q run %q, want sales and run %s", end.Job.Name, end.Run.RunID, b.RunID)
	}
	if len(end.Inputs) != 1 || !strings.HasSuffix(end.Inputs[0].Name, "/in") || len(end.Outputs) != 1 || !strings.HasSuffix(end.Outputs[0].Name, "/out") {
		t.Errorf("COMPLETE's datasets: inputs %+v outputs %+v, want the in/ folder read and the out/ folder written", end.Inputs, end.Outputs)
	}

	w.land(t, "b.csv", 3, 1)
	a, sv := newAPI(t, w.state, w.dir)
	w.script(t, a, "enable", false)
	sv.Close(t.Context(), "the script failed before job.commit(); nothing it wrote was published")
	if evs := rc.take(); len(evs) != 2 || evs[0].EventType != lineage.EventStart || evs[1].EventType != lineage.EventFail {
		t.Errorf("a run that ended without a commit sent %v, want START and FAIL", types(evs))
	}

	a, sv = newAPI(t, w.state, w.dir)
	a.must("begin", BeginRequest{Job: "sales", Mode: "enable"}, &b)
	if code, _ := a.call("source", SourceRequest{RunID: b.RunID, Ctx: "orders_source", Paths: []string{"in"}, Format: "json"}, nil); code != http.StatusBadRequest {
		t.Fatalf("a changed definition: got HTTP %d, want 400", code)
	}
	sv.Close(t.Context(), "the script failed before job.commit(); nothing it wrote was published")
	if evs := rc.take(); len(evs) != 0 {
		t.Errorf("a refused run sent %v, want nothing (it is no run)", types(evs))
	}
}

func types(evs []lineage.RunEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.EventType)
	}
	return out
}
