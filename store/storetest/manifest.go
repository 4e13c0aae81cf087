package storetest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/store"
)

// testTypedOutputs: every kind of output comes back with the fields its
// kind needs, as committed.
func testTypedOutputs(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r1")
	c := commitOf(t, s, l, "r1", bookmark.ModeEnable, 0)
	c.Outputs = []store.Output{
		{RunID: "r1", Sink: "a_file", Kind: manifest.File, Root: "/out/a/", Staged: "_tidemark/staging/r1/data/x", Final: "part-r1-0.parquet", Rows: 3, Bytes: 30},
		{RunID: "r1", Sink: "b_upload", Kind: manifest.Upload, Root: "s3://out/b/", UploadID: "up-123", Final: "part-r1-0.parquet", Rows: 4, Bytes: 40},
		{RunID: "r1", Sink: "c_table", Kind: manifest.TableLoad, Final: "orders_out", Rows: 5, Table: &manifest.Table{
			Ctx: "c_table", Connection: "postgres://u@h/db", PasswordEnv: "PW", Table: "orders_out", Mode: "merge", MergeKeys: []string{"id"}}},
		{RunID: "r1", Rejects: "orders_source", Kind: manifest.File, Root: "/out/a/", Staged: "_tidemark/staging/r1/rejects/orders_source/x", Final: "_tidemark/rejects/r1/orders_source/x", Bytes: 7},
	}
	mustCommit(t, s, c)
	outs, err := s.Outputs(t.Context(), job, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Output{c.Outputs[3], c.Outputs[0], c.Outputs[1], c.Outputs[2]} // by sink ("" first), then final
	if !reflect.DeepEqual(outs, want) {
		t.Errorf("Outputs(r1):\n got %+v\nwant %+v", outs, want)
	}
}

// testRunRanges: a run's key ranges come back by ctx then run order, and
// a rewind deletes those of the runs it undoes.
func testRunRanges(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r")
	for i, id := range []string{"r1", "r2", "r3"} {
		c := commitOf(t, s, l, id, bookmark.ModeEnable, int64(i))
		c.Sources = map[string]bookmark.SourceState{src: {Kind: "table", Fingerprint: "fp", Detail: tableDetail(fmt.Sprintf(`{"runs":%d,"rows":%d}`, i+1, 10*(i+1)))}}
		c.Ranges = []store.RangeRecord{{Ctx: src, RunID: id, Range: []byte(`{"after":` + string(rune('0'+i)) + `}`), Rows: 10}}
		if id == "r2" {
			c.Ranges = append(c.Ranges, store.RangeRecord{Ctx: src2, RunID: id, Range: []byte(`{"x":1}`), Rows: 1})
		}
		mustCommit(t, s, c)
	}
	got := collect(t, s.RunRanges(t.Context(), job, []string{"r3", "r1", "r2"}))
	want := []store.RangeRecord{
		{Ctx: src, RunID: "r1", Range: []byte(`{"after":0}`), Rows: 10},
		{Ctx: src, RunID: "r2", Range: []byte(`{"after":1}`), Rows: 10},
		{Ctx: src, RunID: "r3", Range: []byte(`{"after":2}`), Rows: 10},
		{Ctx: src2, RunID: "r2", Range: []byte(`{"x":1}`), Rows: 1},
	}
	if src2 < src {
		want = append(want[3:], want[:3]...)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RunRanges:\n got %+v\nwant %+v", got, want)
	}
	if got := collect(t, s.RunInputs(t.Context(), job, []string{"r1", "r2", "r3"})); len(got) != 0 {
		t.Errorf("RunInputs of runs that read only ranges: got %+v, want none", got)
	}
	wantStates(t, s, job, map[string]bookmark.SourceState{src: {Kind: "table", Fingerprint: "fp", Detail: tableDetail(`{"runs":3,"rows":30}`)}})

	mustReset(t, s, l, "r1", "r2", "r3")
	got = collect(t, s.RunRanges(t.Context(), job, []string{"r1", "r2", "r3"}))
	if len(got) != 1 || got[0].RunID != "r1" {
		t.Errorf("RunRanges after rewinding to r1: got %+v, want r1's only", got)
	}
}
