package glue

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
)

// history is what the state store holds of a job: its runs and its
// bookmark version.
func (w world) history(t *testing.T, jobName string) (runs int, version int64) {
	t.Helper()
	st, err := store.Open(t.Context(), w.state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := st.Runs(t.Context(), jobName, store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	head, err := st.Head(t.Context(), jobName)
	if err != nil {
		t.Fatal(err)
	}
	return len(rs), head.Version
}

// refused checks that a declaration was refused as a job file's mistake
// is (HTTP 400, exit 2, the message naming want) and that, once the
// script died of it (the server closes, as glue run's does), nothing of
// the run was recorded: the job keeps runs runs and its bookmark version.
func (w world) refused(t *testing.T, sv *Server, code int, e ErrorResponse, want string, runs int, version int64) {
	t.Helper()
	if code != http.StatusBadRequest || e.ExitCode != 2 || !strings.Contains(e.Error, want) {
		t.Errorf("got HTTP %d exit %d %q, want 400, exit 2, naming %q", code, e.ExitCode, e.Error, want)
	}
	sv.Close(t.Context(), "the script failed before job.commit(); nothing it wrote was published")
	if gotRuns, gotVersion := w.history(t, "sales"); gotRuns != runs || gotVersion != version {
		t.Errorf("after the refusal the job has %d runs at bookmark version %d, want %d at %d (a refused run is no run)",
			gotRuns, gotVersion, runs, version)
	}
}

// TestSessionRefusesAChangedDefinitionBeforeRecording: issue #19 item 3.
// A source whose definition changed under its ctx is refused before the
// run is recorded, with the job file's message, as Run refuses it (a
// session recorded the run at begin and checked when the source was
// declared: a failed run in the history).
func TestSessionRefusesAChangedDefinitionBeforeRecording(t *testing.T) {
	w := newWorld(t)
	w.land(t, "a.csv", 1, 2)
	a, _ := newAPI(t, w.state, w.dir)
	w.script(t, a, "enable", true)

	a, sv := newAPI(t, w.state, w.dir)
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "sales", Mode: "enable"}, &b)
	code, e := a.call("source", SourceRequest{RunID: b.RunID, Ctx: "orders_source", Paths: []string{"in"}, Format: "json"}, nil)
	w.refused(t, sv, code, e, "orders_source", 1, 1)
}

// TestSessionRefusesAMissingCatalogTableBeforeRecording: issue #19 item
// 3. from_catalog of a table the catalog does not hold is refused before
// the run is recorded, as a job file's catalog source is.
func TestSessionRefusesAMissingCatalogTableBeforeRecording(t *testing.T) {
	w := newWorld(t)
	a, sv := newAPI(t, w.state, w.dir)
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "sales", Mode: "enable"}, &b)
	code, e := a.call("source", SourceRequest{RunID: b.RunID, Ctx: "orders_source", Catalog: &CatalogRef{Database: "sales_db", Table: "nope"}}, nil)
	w.refused(t, sv, code, e, "database sales_db is not in the catalog", 0, 0)
	if strings.HasPrefix(e.Error, ":") {
		t.Errorf("the message %q begins with the empty name of a job file a Glue session does not have", e.Error)
	}
}

// TestSessionRefusesASinkInACatalogSourceBeforeRecording: issue #19 item
// 3. A sink inside the folder a catalog source reads is refused before
// the run is recorded, as a job file's is (the job would read its own
// output as input).
func TestSessionRefusesASinkInACatalogSourceBeforeRecording(t *testing.T) {
	w := newWorld(t)
	w.land(t, "a.csv", 1, 2)
	st, err := store.Open(t.Context(), w.state)
	if err != nil {
		t.Fatal(err)
	}
	err = st.ApplyCatalog(t.Context(), catalog.Changes{
		Databases: []catalog.Database{{Name: "sales_db"}},
		Tables: []catalog.TableChange{{Table: catalog.Table{Database: "sales_db", Name: "orders_raw", Location: w.in, Format: "csv",
			Options: map[string]string{"header": "true"}, Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}}}}}})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	a, sv := newAPI(t, w.state, w.dir)
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "sales", Mode: "enable"}, &b)
	a.must("source", SourceRequest{RunID: b.RunID, Ctx: "orders_source", Catalog: &CatalogRef{Database: "sales_db", Table: "orders_raw"}}, nil)
	code, e := a.call("sink", SinkRequest{RunID: b.RunID, Ctx: "orders_sink", Path: filepath.Join("in", "out"), Format: "csv"}, nil)
	w.refused(t, sv, code, e, "orders_source", 0, 0)
}

// TestSessionRefusesAnotherJobsSinkBeforeRecording: issue #19 item 3. A
// sink location another job owns is refused before the run is recorded,
// as Run refuses it.
func TestSessionRefusesAnotherJobsSinkBeforeRecording(t *testing.T) {
	w := newWorld(t)
	w.land(t, "a.csv", 1, 2)
	a, _ := newAPI(t, w.state, w.dir)
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "other", Mode: "enable"}, &b)
	a.must("sink", SinkRequest{RunID: b.RunID, Ctx: "orders_sink", Path: "out", Format: "csv"}, nil)
	a.must("commit", CommitRequest{RunID: b.RunID}, nil)

	a, sv := newAPI(t, w.state, w.dir)
	a.must("begin", BeginRequest{Job: "sales", Mode: "enable"}, &b)
	a.must("source", SourceRequest{RunID: b.RunID, Ctx: "orders_source", Paths: []string{"in"}, Format: "csv"}, nil)
	code, e := a.call("sink", SinkRequest{RunID: b.RunID, Ctx: "orders_sink", Path: "out", Format: "csv"}, nil)
	w.refused(t, sv, code, e, "other", 0, 0)
}
