package glue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/tidemark-etl/tidemark/all" // the sources, sinks, engines and stores
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
)

// api is a test client of one Server: it plays the script.
type api struct {
	t     *testing.T
	url   string
	token string
}

func newAPI(t *testing.T, state, dir string) (*api, *Server) {
	t.Helper()
	sv := &Server{State: state, Dir: dir, Token: "secret-token"}
	hs := httptest.NewServer(sv.Handler())
	t.Cleanup(func() {
		sv.Close(t.Context(), "test ended")
		hs.Close()
	})
	return &api{t: t, url: hs.URL, token: sv.Token}, sv
}

// call posts body to verb and decodes the answer into out; it returns the
// HTTP status and the error response, if any.
func (a *api) call(verb string, body, out any) (int, ErrorResponse) {
	a.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", a.url+"/v1/"+verb, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s: %v", verb, err)
	}
	defer resp.Body.Close()
	var e ErrorResponse
	if resp.StatusCode != http.StatusOK {
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			a.t.Fatalf("%s: decoding: %v", verb, err)
		}
	}
	return resp.StatusCode, e
}

// must is call that fails the test on an error answer.
func (a *api) must(verb string, body, out any) {
	a.t.Helper()
	if code, e := a.call(verb, body, out); code != http.StatusOK {
		a.t.Fatalf("%s: got HTTP %d (%s), want 200", verb, code, e.Error)
	}
}

type world struct {
	dir, in, out, state string
}

func newWorld(t *testing.T) world {
	t.Helper()
	dir := t.TempDir()
	w := world{dir: dir, in: filepath.Join(dir, "in"), out: filepath.Join(dir, "out"), state: filepath.Join(dir, "state.db")}
	if err := os.MkdirAll(w.in, 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// land writes a CSV file of n rows under in/.
func (w world) land(t *testing.T, name string, first, n int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,amount\n")
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "%d,%d.5\n", i, i)
	}
	p := filepath.Join(w.in, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// script is one run of a script that copies in/ to out/ as CSV, as the
// awsglue package would drive the API; it returns the keys it was given.
func (w world) script(t *testing.T, a *api, mode string, commit bool) ([]string, BeginResponse) {
	t.Helper()
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "sales", Mode: mode}, &b)
	var src SourceResponse
	a.must("source", SourceRequest{RunID: b.RunID, Ctx: "orders_source", Paths: []string{"in"}, Format: "csv",
		Options: map[string]any{"withHeader": true}}, &src)
	var snk SinkResponse
	a.must("sink", SinkRequest{RunID: b.RunID, Ctx: "orders_sink", Path: "out", Format: "csv"}, &snk)
	var keys []string
	var rows strings.Builder
	rows.WriteString("id,amount\n")
	for _, f := range src.Files {
		keys = append(keys, f.Key)
		data, err := os.ReadFile(f.Location)
		if err != nil {
			t.Fatal(err)
		}
		rows.WriteString(strings.SplitN(string(data), "\n", 2)[1])
	}
	if len(keys) > 0 {
		if err := os.MkdirAll(snk.Location, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(snk.Location, "part-00000-x.csv"), []byte(rows.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		// What Spark writes beside its data is never published.
		for _, junk := range []string{"_SUCCESS", ".part-00000-x.csv.crc"} {
			if err := os.WriteFile(filepath.Join(snk.Location, junk), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if commit {
		a.must("commit", CommitRequest{RunID: b.RunID}, nil)
	}
	return keys, b
}

// published returns the ids in out/'s published CSV files, sorted.
func (w world) published(t *testing.T) []string {
	t.Helper()
	var ids []string
	entries, _ := os.ReadDir(w.out)
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), "_") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if !strings.HasSuffix(e.Name(), ".csv") {
			t.Errorf("published %s: want only .csv data files", e.Name())
		}
		data, err := os.ReadFile(filepath.Join(w.out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
			ids = append(ids, strings.Split(line, ",")[0])
		}
	}
	sort.Strings(ids)
	return ids
}

func TestSessionReadsOnlyWhatIsNew(t *testing.T) {
	w := newWorld(t)
	a, _ := newAPI(t, w.state, w.dir)
	w.land(t, "mon/a.csv", 1, 2)
	w.land(t, "mon/b.csv", 3, 2)
	keys, _ := w.script(t, a, "job-bookmark-enable", true)
	if got, want := strings.Join(keys, " "), "mon/a.csv mon/b.csv"; got != want {
		t.Errorf("first run read %q, want %q", got, want)
	}
	if got, want := strings.Join(w.published(t), " "), "1 2 3 4"; got != want {
		t.Errorf("after the first run out/ holds %q, want %q", got, want)
	}
	w.land(t, "tue/c.csv", 5, 1)
	keys, _ = w.script(t, a, "enable", true)
	if got, want := strings.Join(keys, " "), "tue/c.csv"; got != want {
		t.Errorf("second run read %q, want %q", got, want)
	}
	keys, _ = w.script(t, a, "enable", true)
	if len(keys) != 0 {
		t.Errorf("third run read %v, want nothing", keys)
	}
	if got, want := strings.Join(w.published(t), " "), "1 2 3 4 5"; got != want {
		t.Errorf("after three runs out/ holds %q, want %q", got, want)
	}
	keys, _ = w.script(t, a, "job-bookmark-disable", false)
	if len(keys) != 3 {
		t.Errorf("disable read %v, want all 3 files", keys)
	}
}

func TestSessionWithoutCommitPublishesNothing(t *testing.T) {
	w := newWorld(t)
	a, sv := newAPI(t, w.state, w.dir)
	w.land(t, "a.csv", 1, 3)
	_, b := w.script(t, a, "enable", false)
	var res map[string]any
	a.must("abort", AbortRequest{RunID: b.RunID, Reason: "boom"}, &res)
	if got := w.published(t); len(got) != 0 {
		t.Errorf("after an abort out/ holds %v, want nothing", got)
	}
	if res["status"] != "failed" {
		t.Errorf("abort answered status %v, want failed", res["status"])
	}
	a.must("abort", AbortRequest{RunID: b.RunID}, nil) // again: harmless
	// A run left open when the program ends is aborted by Close.
	keys, _ := w.script(t, a, "enable", false)
	if len(keys) != 1 {
		t.Fatalf("the run after an abort read %v, want a.csv again", keys)
	}
	sv.Close(t.Context(), "the script ended")
	if got := w.published(t); len(got) != 0 {
		t.Errorf("after Close out/ holds %v, want nothing", got)
	}
	a2, _ := newAPI(t, w.state, w.dir)
	keys, _ = w.script(t, a2, "enable", true)
	if len(keys) != 1 {
		t.Errorf("the next program's run read %v, want a.csv again", keys)
	}
	if got, want := strings.Join(w.published(t), " "), "1 2 3"; got != want {
		t.Errorf("out/ holds %q, want %q exactly once", got, want)
	}
}

func TestSessionVerbsAreIdempotent(t *testing.T) {
	w := newWorld(t)
	a, _ := newAPI(t, w.state, w.dir)
	w.land(t, "a.csv", 1, 2)
	var b1, b2 BeginResponse
	a.must("begin", BeginRequest{Job: "sales"}, &b1)
	a.must("begin", BeginRequest{Job: "sales"}, &b2)
	if b1.RunID != b2.RunID {
		t.Errorf("a second begin gave run %s, want the open run %s", b2.RunID, b1.RunID)
	}
	var s1, s2 SourceResponse
	req := SourceRequest{RunID: b1.RunID, Ctx: "orders", Paths: []string{"in"}, Format: "csv"}
	a.must("source", req, &s1)
	w.land(t, "b.csv", 3, 1) // lands in between: the run's plan does not change
	a.must("source", req, &s2)
	if len(s1.Files) != 1 || len(s2.Files) != 1 {
		t.Errorf("source twice gave %d then %d files, want 1 and 1", len(s1.Files), len(s2.Files))
	}
	var k1, k2 SinkResponse
	a.must("sink", SinkRequest{RunID: b1.RunID, Ctx: "out", Path: "out", Format: "csv"}, &k1)
	a.must("sink", SinkRequest{RunID: b1.RunID, Ctx: "out", Path: "out", Format: "csv"}, &k2)
	if k1.Location != k2.Location || k1.Location == "" {
		t.Errorf("sink twice gave %q then %q, want one staging folder", k1.Location, k2.Location)
	}
	var c1, c2 map[string]any
	a.must("commit", CommitRequest{RunID: b1.RunID}, &c1)
	a.must("commit", CommitRequest{RunID: b1.RunID}, &c2)
	if c1["version"] != c2["version"] || c1["status"] != "succeeded" {
		t.Errorf("commit twice answered %v then %v, want one succeeded commit", c1, c2)
	}
}

func TestSessionRefusals(t *testing.T) {
	w := newWorld(t)
	a, _ := newAPI(t, w.state, w.dir)
	w.land(t, "a.csv", 1, 2)
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "sales"}, &b)

	other, _ := newAPI(t, w.state, w.dir) // another program, same job
	code, e := other.call("begin", BeginRequest{Job: "sales"}, nil)
	if code != http.StatusConflict || e.ExitCode != 3 || e.Holder == nil || e.Holder.RunID != b.RunID {
		t.Errorf("a second program's begin: got HTTP %d exit %d holder %+v, want 409, exit 3, holder %s", code, e.ExitCode, e.Holder, b.RunID)
	}
	bad := *a
	bad.token = "wrong"
	if code, _ := bad.call("begin", BeginRequest{Job: "x"}, nil); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: got HTTP %d, want 401", code)
	}
	if code, e := a.call("source", map[string]any{"run_id": b.RunID, "ctx": "c", "pathz": []string{"in"}}, nil); code != http.StatusBadRequest || !strings.Contains(e.Error, "pathz") {
		t.Errorf("an unknown field: got HTTP %d %q, want 400 naming pathz", code, e.Error)
	}
	if code, e := a.call("source", SourceRequest{RunID: b.RunID, Ctx: "c", Paths: []string{"in"}, Format: "csv",
		Options: map[string]any{"multiLine": true}}, nil); code != http.StatusBadRequest || !strings.Contains(e.Error, "multiLine") {
		t.Errorf("an unsupported format option: got HTTP %d %q, want 400 naming multiLine", code, e.Error)
	}
	if code, e := a.call("source", SourceRequest{RunID: "nope", Ctx: "c", Paths: []string{"in"}}, nil); code != http.StatusBadRequest || e.ExitCode != 2 {
		t.Errorf("an unknown run: got HTTP %d exit %d, want 400 exit 2", code, e.ExitCode)
	}
	if code, e := a.call("source", SourceRequest{RunID: b.RunID, Ctx: "c", Paths: []string{filepath.Join(w.dir, "typo")}, Format: "csv"}, nil); code != http.StatusInternalServerError || !strings.Contains(e.Error, "typo") {
		t.Errorf("a missing folder: got HTTP %d %q, want 500 naming it", code, e.Error)
	}
}

func TestSessionWithoutCtxKeepsNoBookmark(t *testing.T) {
	w := newWorld(t)
	a, _ := newAPI(t, w.state, w.dir)
	w.land(t, "a.csv", 1, 2)
	for run := 1; run <= 2; run++ {
		var b BeginResponse
		a.must("begin", BeginRequest{Job: "sales"}, &b)
		var src SourceResponse
		a.must("source", SourceRequest{RunID: b.RunID, Paths: []string{"in"}, Format: "csv"}, &src)
		if len(src.Files) != 1 {
			t.Errorf("run %d without a ctx read %d files, want 1 (no bookmark)", run, len(src.Files))
		}
		a.must("commit", CommitRequest{RunID: b.RunID}, nil)
	}
}

func TestSessionReadsACatalogTable(t *testing.T) {
	w := newWorld(t)
	w.land(t, "product=a/1.csv", 1, 2)
	w.land(t, "product=b/2.csv", 3, 2)
	st, err := store.Open(t.Context(), w.state)
	if err != nil {
		t.Fatal(err)
	}
	err = st.ApplyCatalog(t.Context(), catalog.Changes{
		Databases: []catalog.Database{{Name: "sales_db"}},
		Tables: []catalog.TableChange{{Table: catalog.Table{Database: "sales_db", Name: "orders_raw", Location: w.in, Format: "csv",
			Options: map[string]string{"header": "true"}, Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}},
			PartitionKeys: []catalog.Column{{Name: "product", Type: "VARCHAR"}}}}},
		Partitions: []catalog.Partition{
			{Database: "sales_db", Table: "orders_raw", Values: []string{"a"}, Location: filepath.Join(w.in, "product=a")},
			{Database: "sales_db", Table: "orders_raw", Values: []string{"b"}, Location: filepath.Join(w.in, "product=b")},
		}})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newAPI(t, w.state, w.dir)
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "sales"}, &b)
	var src SourceResponse
	a.must("source", SourceRequest{RunID: b.RunID, Ctx: "orders_source",
		Catalog: &CatalogRef{Database: "sales_db", Table: "orders_raw", PushDownPredicate: "product = 'b'"}}, &src)
	if len(src.Files) != 1 || src.Files[0].Key != "product=b/2.csv" || src.Files[0].Partition["product"] != "b" {
		t.Errorf("from_catalog with product = 'b' gave %+v, want product=b/2.csv only", src.Files)
	}
	if src.Format != "csv" || fmt.Sprint(src.Options["header"]) != "true" {
		t.Errorf("from_catalog: format %q options %v, want the table's csv with header", src.Format, src.Options)
	}
	if code, e := a.call("source", SourceRequest{RunID: b.RunID, Ctx: "other", Catalog: &CatalogRef{Database: "sales_db", Table: "nope"}}, nil); code == http.StatusOK || !strings.Contains(e.Error, "nope") {
		t.Errorf("an unknown table: got HTTP %d %q, want an error naming it", code, e.Error)
	}
	a.must("commit", CommitRequest{RunID: b.RunID}, nil)
}

// TestSessionExclusions: Glue's exclusions keep files out whether written
// relative to the folder or as full paths under it, as Glue's scripts
// write them; a full path elsewhere, which would match nothing, is refused.
func TestSessionExclusions(t *testing.T) {
	w := newWorld(t)
	a, _ := newAPI(t, w.state, w.dir)
	w.land(t, "mon/a.csv", 1, 2)
	w.land(t, "tmp/b.csv", 3, 2)
	w.land(t, "mon/c.json.csv", 5, 2)
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "sales"}, &b)
	var src SourceResponse
	a.must("source", SourceRequest{RunID: b.RunID, Ctx: "orders_source", Paths: []string{w.in + "/"}, Format: "csv",
		Exclusions: []string{w.in + "/tmp/**", "**.json.csv"}}, &src)
	var keys []string
	for _, f := range src.Files {
		keys = append(keys, f.Key)
	}
	if got, want := strings.Join(keys, " "), "mon/a.csv"; got != want {
		t.Errorf("read %q, want %q", got, want)
	}
	code, e := a.call("source", SourceRequest{RunID: b.RunID, Ctx: "other", Paths: []string{w.in}, Format: "csv",
		Exclusions: []string{"/elsewhere/tmp/**"}}, nil)
	if code != http.StatusBadRequest || !strings.Contains(e.Error, "would match nothing") {
		t.Errorf("a full path outside the folder: got HTTP %d %q, want 400 saying it would match nothing", code, e.Error)
	}
}

// TestSessionRefusesACtxReused: a second read under one transformation_ctx
// with another folder, format or options is refused (it would be given the
// first read's files, its own folder never read), and so is a second write
// under one ctx (or to one path without a ctx) to another place or format
// (it would land in the first's folder); the same call again is still
// answered as the first.
func TestSessionRefusesACtxReused(t *testing.T) {
	w := newWorld(t)
	w.land(t, "a/1.csv", 1, 2)
	w.land(t, "b/2.csv", 3, 2)
	a, _ := newAPI(t, w.state, w.dir)
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "sales"}, &b)
	first := SourceRequest{RunID: b.RunID, Ctx: "orders", Paths: []string{"in/a"}, Format: "csv", Options: map[string]any{"withHeader": true}}
	a.must("source", first, nil)
	a.must("source", first, nil) // the same read again: idempotent
	for _, again := range []SourceRequest{
		{RunID: b.RunID, Ctx: "orders", Paths: []string{"in/b"}, Format: "csv", Options: map[string]any{"withHeader": true}},
		{RunID: b.RunID, Ctx: "orders", Paths: []string{"in/a"}, Format: "json"},
		{RunID: b.RunID, Ctx: "orders", Paths: []string{"in/a"}, Format: "csv"},
	} {
		code, e := a.call("source", again, nil)
		if code != http.StatusBadRequest || e.ExitCode != 2 || !strings.Contains(e.Error, `"orders"`) {
			t.Errorf("a second read of ctx orders (%v %s %v): got HTTP %d exit %d %q, want 400, exit 2, naming the ctx",
				again.Paths, again.Format, again.Options, code, e.ExitCode, e.Error)
		}
	}
	sk := SinkRequest{RunID: b.RunID, Ctx: "out", Path: "out1", Format: "csv"}
	a.must("sink", sk, nil)
	a.must("sink", sk, nil)
	for _, again := range []SinkRequest{
		{RunID: b.RunID, Ctx: "out", Path: "out2", Format: "csv"},
		{RunID: b.RunID, Ctx: "out", Path: "out1", Format: "parquet"},
		{RunID: b.RunID, Ctx: "out", Path: "out1", Format: "csv", PartitionKeys: []string{"id"}},
	} {
		code, e := a.call("sink", again, nil)
		if code != http.StatusBadRequest || e.ExitCode != 2 || !strings.Contains(e.Error, `"out"`) {
			t.Errorf("a second write of ctx out (%s %s %v): got HTTP %d exit %d %q, want 400, exit 2, naming the ctx",
				again.Path, again.Format, again.PartitionKeys, code, e.ExitCode, e.Error)
		}
	}
	a.must("sink", SinkRequest{RunID: b.RunID, Path: "out3", Format: "csv"}, nil)
	if code, e := a.call("sink", SinkRequest{RunID: b.RunID, Path: "out3", Format: "json"}, nil); code != http.StatusBadRequest || !strings.Contains(e.Error, "out3") {
		t.Errorf("a second write to out3 without a ctx in another format: got HTTP %d %q, want 400 naming out3", code, e.Error)
	}
}

// TestSessionRefusesASourceHoldingASink: a read of a folder that holds a
// sink readied earlier in the run is refused, as a sink inside a source
// is (it would read the job's own output as input, again each run).
func TestSessionRefusesASourceHoldingASink(t *testing.T) {
	w := newWorld(t)
	w.land(t, "a.csv", 1, 2)
	a, _ := newAPI(t, w.state, w.dir)
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "sales"}, &b)
	a.must("source", SourceRequest{RunID: b.RunID, Ctx: "orders", Paths: []string{"in"}, Format: "csv"}, nil)
	a.must("sink", SinkRequest{RunID: b.RunID, Ctx: "out", Path: "outer/inner", Format: "csv"}, nil)
	if err := os.MkdirAll(filepath.Join(w.dir, "outer"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, e := a.call("source", SourceRequest{RunID: b.RunID, Ctx: "outer", Paths: []string{"outer"}, Format: "csv"}, nil)
	if code != http.StatusBadRequest || e.ExitCode != 2 || !strings.Contains(e.Error, "outer") {
		t.Errorf("a source holding the sink: got HTTP %d exit %d %q, want 400, exit 2, naming it", code, e.ExitCode, e.Error)
	}
	t.Logf("%s", e.Error)
}

// TestSessionPartitionValuesDecoded: the value of a key=value folder is
// percent-decoded, as both engines read it (DuckDB writes product=日本 as
// product=%E6%97%A5%E6%9C%AC; it was handed over as that text).
func TestSessionPartitionValuesDecoded(t *testing.T) {
	w := newWorld(t)
	w.land(t, "product=%E6%97%A5%E6%9C%AC/1.csv", 1, 1)
	w.land(t, "product=x%20y%25z/2.csv", 2, 1)
	w.land(t, "product=plain/3.csv", 3, 1)
	a, _ := newAPI(t, w.state, w.dir)
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "sales"}, &b)
	var src SourceResponse
	a.must("source", SourceRequest{RunID: b.RunID, Ctx: "orders", Paths: []string{"in"}, Format: "csv", Recurse: ptr(true)}, &src)
	var got []string
	for _, f := range src.Files {
		got = append(got, f.Partition["product"])
	}
	sort.Strings(got)
	if want := []string{"plain", "x y%z", "日本"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("partition values %q, want %q", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// TestSessionCallAfterCommit: a read after job.commit() is told that its
// run already ended, not that there is no such run.
func TestSessionCallAfterCommit(t *testing.T) {
	w := newWorld(t)
	w.land(t, "a.csv", 1, 1)
	a, _ := newAPI(t, w.state, w.dir)
	var b BeginResponse
	a.must("begin", BeginRequest{Job: "sales"}, &b)
	a.must("commit", CommitRequest{RunID: b.RunID}, nil)
	code, e := a.call("source", SourceRequest{RunID: b.RunID, Ctx: "late", Paths: []string{"in"}, Format: "csv"}, nil)
	if code != http.StatusBadRequest || !strings.Contains(e.Error, "already ended") || !strings.Contains(e.Error, "job.init()") {
		t.Errorf("a read after the commit: got HTTP %d %q, want 400 saying the run already ended", code, e.Error)
	}
}

// TestSessionCountsInputRows: a Glue run records the rows it read, as
// tidemark run does, also when the program reports no count (runs showed 0
// rows read for a Glue run that read 1,001).
func TestSessionCountsInputRows(t *testing.T) {
	w := newWorld(t)
	a, _ := newAPI(t, w.state, w.dir)
	w.land(t, "mon/a.csv", 1, 500)
	w.land(t, "mon/b.csv", 501, 501)
	w.script(t, a, "enable", true)
	st, err := store.Open(t.Context(), w.state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(t.Context(), "sales", store.RunQuery{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: got %d (%v), want 1", len(runs), err)
	}
	if got, want := runs[0].Sources["orders_source"].Rows, int64(1001); got != want {
		t.Errorf("rows read: got %d, want %d", got, want)
	}
	if got, want := runs[0].Sinks["orders_sink"].Rows, int64(1001); got != want {
		t.Errorf("rows written: got %d, want %d", got, want)
	}
}
