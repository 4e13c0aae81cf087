package sqltable

import (
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// TestLogValue: values of the change stream (the server's text) become
// the text the engine parses, as the snapshot's COPY writes them.
func TestLogValue(t *testing.T) {
	list := column{Name: "a", Type: bookmark.ListOf(varchar)}
	for _, c := range []struct {
		col       column
		in, want  string
		wantError bool
	}{
		{column{Name: "b", Type: bookmark.Scalar(bookmark.Blob)}, `\x00ff41`, `\x00\xff\x41`, false},
		{column{Name: "b", Type: bookmark.Scalar(bookmark.Blob)}, `\x`, ``, false},
		{list, `{}`, `[]`, false},
		{list, `{1,NULL,3}`, `["1",NULL,"3"]`, false},
		{list, `{"a,b","c\"d",NULL,"","NULL","x\\y"}`, `["a,b","c\"d",NULL,"","NULL","x\\y"]`, false},
		{list, `{{1,2},{3,4}}`, ``, true},
		{list, `[0:1]={1,2}`, ``, true},
		{column{Name: "n", Type: bookmark.DecimalOf(10, 2)}, `NaN`, ``, true},
		{column{Name: "n", Type: bookmark.DecimalOf(10, 2)}, `-1.50`, `-1.50`, false},
		{column{Name: "v", Type: varchar}, `NaN`, `NaN`, false},
	} {
		got, err := logValue(c.col, []byte(c.in))
		if (err != nil) != c.wantError {
			t.Errorf("logValue(%s, %q): error %v, want error %t", c.col.Type, c.in, err, c.wantError)
			continue
		}
		if err != nil {
			continue
		}
		var s string
		switch v := got.(type) {
		case string:
			s = v
		case []byte:
			s = string(v)
		}
		if s != c.want {
			t.Errorf("logValue(%s, %q) = %q, want %q", c.col.Type, c.in, s, c.want)
		}
	}
}

// TestSlotWarning: a slot past max_wal_size or about to be invalidated is
// warned of, in the run's log and in plan's warnings; a reserved one not.
func TestSlotWarning(t *testing.T) {
	s := &LogSource{slot: "s1"}
	for status, want := range map[string]string{"reserved": "", "extended": "more than max_wal_size", "unreserved": "will invalidate it"} {
		p := &logPlan{s: s, status: slotStatus{Exists: true, WALStatus: status, Restart: 1 << 20, Current: 3 << 30}}
		got := p.slotWarning()
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("wal_status %s: warning %q, want one saying %q", status, got, want)
		}
		pv := p.Preview()
		if (want == "") != (len(pv.Warnings) == 0) {
			t.Errorf("wal_status %s: plan's warnings %v", status, pv.Warnings)
		}
	}
}
