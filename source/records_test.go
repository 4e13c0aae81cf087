package source_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/source/sqltable"
	"github.com/tidemark-etl/tidemark/store"
)

// TestCountJSONUnchanged: counts written before kinds owned their details
// decode as the kind that wrote them and encode byte for byte as they were
// stored (the runs --json shape and the states of old stores).
func TestCountJSONUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		kind       bookmark.SourceKind
	}{
		{"files", `{"files":3,"bytes":30,"rows":9,"rejected":1,"skipped":2,"modified":1,"missing":1,"empty":1,"deferred":1,"unchanged":1,"future":1,"in_sinks":1,"changed_during_read":1}`, bookmark.KindFiles},
		{"table", `{"files":1,"bytes":8,"rows":8,"regressions":1,"null_keys":2,"late":3,"table":true,"keys_after":"1","keys_up_to":"9"}`, bookmark.KindTable},
		{"core only", `{"files":0,"bytes":0,"rows":0}`, bookmark.KindFiles},
	} {
		var c store.Count
		if err := json.Unmarshal([]byte(tc.json), &c); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := c.View().DetailKind(); got != tc.kind {
			t.Errorf("%s: decoded as kind %s, want %s", tc.name, got, tc.kind)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.json {
			t.Errorf("%s: encoded\n %s\nwant\n %s", tc.name, b, tc.json)
		}
	}
	var c store.Count
	if err := json.Unmarshal([]byte(`{"files":1,"bytes":0,"rows":5,"late":2,"table":true,"keys_up_to":"7"}`), &c); err != nil {
		t.Fatal(err)
	}
	if d, ok := c.Detail.(sqltable.CountDetail); !ok || d.Late != 2 || d.KeysUpTo != "7" {
		t.Errorf("table count detail = %#v, want sqltable's with late 2, keys up to 7", c.Detail)
	}
	if err := json.Unmarshal([]byte(`{"files":1,"bytes":0,"rows":5,"missing":4}`), &c); err != nil {
		t.Fatal(err)
	}
	if d := files.CountDetailOf(c); d.Missing != 4 {
		t.Errorf("file count detail = %#v, want files' with missing 4", c.Detail)
	}
}

// TestPreviewJSONUnchanged: plan --json shows each kind's preview with
// the keys, in the order, it had when previews were one struct.
func TestPreviewJSONUnchanged(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		p    source.Preview
		want string
	}{
		{"files", source.Preview{Files: 2, Bytes: 9, New: []string{"a", "b"}, Unchanged: 1, Warnings: []string{"w"},
			Detail: &files.PreviewDetail{InSinks: 3, Future: 1, RootMissing: true, OldestUnread: &at}},
			`{"files":2,"bytes":9,"new":["a","b"],"modified":0,"unchanged":1,"deferred":0,"in_sinks":3,"future":1,"root_missing":true,"warnings":["w"],"oldest_unread":"2026-01-02T03:04:05Z"}`},
		{"table", source.Preview{New: []string{}, Detail: sqltable.PreviewDetail{Rows: 4, After: []string{"1"}, UpTo: []string{"5"}, Regressions: 2}},
			`{"files":0,"bytes":0,"new":[],"modified":0,"unchanged":0,"deferred":0,"table":true,"rows":4,"after":["1"],"up_to":["5"],"regressions":2}`},
		{"table nothing new", source.Preview{New: []string{}, Detail: sqltable.PreviewDetail{RegressionCheckOff: true}},
			`{"files":0,"bytes":0,"new":[],"modified":0,"unchanged":0,"deferred":0,"table":true}`},
	} {
		b, err := json.Marshal(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s: encoded\n %s\nwant\n %s", tc.name, b, tc.want)
		}
	}
}

// TestCursorStoredAsJSON: a SQL source's cursor is kept in the state as
// the JSON it is, not base64 (a third larger); a state written before, with
// the cursor base64-encoded, reads the same cursor.
func TestCursorStoredAsJSON(t *testing.T) {
	cursor := `{"v":1,"keys":["id"],"mark":["7"]}`
	b, err := json.Marshal(bookmark.SourceState{Kind: bookmark.KindTable, Detail: sqltable.StateDetail{Cursor: bookmark.JSONBytes(cursor)}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cursor":`+cursor) {
		t.Fatalf("cursor not kept as JSON: %s", b)
	}
	for _, in := range []string{string(b), `{"kind":"table","cursor":"eyJ2IjoxLCJrZXlzIjpbImlkIl0sIm1hcmsiOlsiNyJdfQ=="}`} {
		var st bookmark.SourceState
		if err := json.Unmarshal([]byte(in), &st); err != nil {
			t.Fatal(err)
		}
		if got := sqltable.StateDetailOf(st).Cursor; string(got) != cursor {
			t.Fatalf("from %s: cursor %q, want %q", in, got, cursor)
		}
	}
	// Bytes that are not JSON still come back.
	b, _ = json.Marshal(bookmark.SourceState{Kind: bookmark.KindTable, Detail: sqltable.StateDetail{Cursor: bookmark.JSONBytes("\xff not json")}})
	var st bookmark.SourceState
	if err := json.Unmarshal(b, &st); err != nil || string(sqltable.StateDetailOf(st).Cursor) != "\xff not json" {
		t.Fatalf("non-JSON cursor through %s: %q, %v", b, sqltable.StateDetailOf(st).Cursor, err)
	}
}

// TestStateJSONUnchanged: states written before kinds owned their details
// (an old store's) decode as the kind that wrote them and encode byte for
// byte as stored; bookmark show --json shows a table's runs and rows as
// it did.
func TestStateJSONUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name, stored, view string
	}{
		{"files", `{"kind":"files","fingerprint":"fp","describe":"d","schema":[{"name":"a","type":"BIGINT"}],"tracking":"timestamp","high_water":5,"band":[{"path":"x","size":1,"mtime":4}],"files":3,"bytes":30,"last_key":"k"}`,
			`{"kind":"files","fingerprint":"fp","describe":"d","schema":[{"name":"a","type":"BIGINT"}],"tracking":"timestamp","high_water":5,"band":[{"path":"x","size":1,"mtime":4}],"files":3,"bytes":30,"last_key":"k"}`},
		{"table", `{"kind":"table","fingerprint":"fp","schema":[{"name":"id","type":"BIGINT"}],"files":0,"bytes":0,"runs":2,"rows":7,"cursor":{"v":1}}`,
			`{"kind":"table","fingerprint":"fp","schema":[{"name":"id","type":"BIGINT"}],"files":2,"bytes":7,"cursor":{"v":1},"rows":7,"runs":2}`},
		{"table, nothing read", `{"kind":"table","fingerprint":"fp","files":0,"bytes":0}`,
			`{"kind":"table","fingerprint":"fp","files":0,"bytes":0,"rows":0,"runs":0}`},
	} {
		var st bookmark.SourceState
		if err := json.Unmarshal([]byte(tc.stored), &st); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.stored {
			t.Errorf("%s: encoded\n %s\nwant\n %s", tc.name, b, tc.stored)
		}
		v, err := st.View().ViewJSON(st)
		if err != nil {
			t.Fatal(err)
		}
		if string(v) != tc.view {
			t.Errorf("%s: view\n %s\nwant\n %s", tc.name, v, tc.view)
		}
	}
}
