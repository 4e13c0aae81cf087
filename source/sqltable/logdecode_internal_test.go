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

// TestCheckSlot: a slot the server invalidated, one gone, one of another
// database or plugin, and one moved past the bookmark each fail the run
// saying what happened and what to do.
func TestCheckSlot(t *testing.T) {
	s := &LogSource{ctx: "src", job: "j", slot: "s1", database: "shop", what: "table orders"}
	ok := slotStatus{Exists: true, Plugin: "pgoutput", Database: "shop", Confirmed: 100}
	for _, c := range []struct {
		name string
		st   func(s slotStatus) slotStatus
		want []string
	}{
		{"fine", func(s slotStatus) slotStatus { return s }, nil},
		{"behind", func(s slotStatus) slotStatus { s.Confirmed = 50; return s }, nil},
		{"lost", func(s slotStatus) slotStatus { s.WALStatus = "lost"; return s },
			[]string{"source src", "s1 was invalidated by the server", "max_slot_wal_keep_size", "tidemark bookmark reset j"}},
		{"gone", func(slotStatus) slotStatus { return slotStatus{} }, []string{"s1 is gone", "tidemark bookmark reset j"}},
		{"database", func(s slotStatus) slotStatus { s.Database = "other"; return s }, []string{"belongs to database other"}},
		{"plugin", func(s slotStatus) slotStatus { s.Plugin = "wal2json"; return s }, []string{"plugin wal2json"}},
		{"ahead", func(s slotStatus) slotStatus { s.Confirmed = 200; return s }, []string{"moved past the bookmark", "tidemark bookmark reset j"}},
	} {
		err := s.checkSlot(c.st(ok), 100)
		if (err == nil) != (c.want == nil) {
			t.Errorf("%s: error %v", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
	}
}
