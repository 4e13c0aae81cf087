package sqltable_test

import (
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

// TestLogConfig: the keys of changes: log are checked without connecting,
// each problem at its key and line.
func TestLogConfig(t *testing.T) {
	for _, c := range []struct {
		name, block string
		want        []string // "" none
	}{
		{"ok", "connection: postgres://u@h/db\ntable: t\nchanges: log\nslot: my_slot\n", nil},
		{"mysql", "connection: mysql://u@h/db\ntable: t\nchanges: log\n", []string{"job.yaml:3: changes:", "must be postgres://"}},
		{"query", "connection: postgres://u@h/db\nquery: SELECT 1\nchanges: log\n", []string{"job.yaml:2: query:", "reads a table, not a query"}},
		{"keys", "connection: postgres://u@h/db\ntable: t\nchanges: log\nbookmark_keys: [id]\nlookback: 10\n",
			[]string{"job.yaml:4: bookmark_keys:", "job.yaml:5: lookback:", "not with changes: log"}},
		{"slot name", "connection: postgres://u@h/db\ntable: t\nchanges: log\nslot: My-Slot\n", []string{"job.yaml:4: slot:", "lower-case"}},
		{"slot without log", "connection: postgres://u@h/db\ntable: t\nslot: s\n", []string{"job.yaml:3: slot:", "only with changes: log"}},
		{"other value", "connection: postgres://u@h/db\ntable: t\nchanges: binlog\n", []string{"job.yaml:3: changes:", "binlog"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := job.ParseDocument("job.yaml", []byte(c.block), new(sqltable.JobConfig))
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want an error saying %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestLogNames: default slot names are valid PostgreSQL names, differ by
// job, ctx and database, and the publication follows the slot.
func TestLogNames(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range [][3]string{{"sales", "orders", "shop"}, {"sales", "orders", "shop2"}, {"sales", "orders_db", "shop"},
		{"Sales-Daily", "orders", "shop"}, {strings.Repeat("very-long-job-name", 5), "orders", "shop"},
		{strings.Repeat("very-long-job-name", 5), "orders2", "shop"}} {
		slot, pub := sqltable.LogNames(c[0], c[1], c[2], "", "")
		if len(slot) > 63 || strings.Trim(slot, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" || !strings.HasPrefix(slot, "tidemark_") {
			t.Errorf("LogNames%v: slot %q is not a valid name", c, slot)
		}
		if pub != slot {
			t.Errorf("LogNames%v: publication %q, want the slot's name %q", c, pub, slot)
		}
		if seen[slot] {
			t.Errorf("LogNames%v: slot %q given twice", c, slot)
		}
		seen[slot] = true
	}
	if slot, pub := sqltable.LogNames("j", "c", "d", "mine", ""); slot != "mine" || pub != "mine" {
		t.Errorf("named slot: got %s, %s; want mine, mine", slot, pub)
	}
	if _, pub := sqltable.LogNames("j", "c", "d", "mine", "theirs"); pub != "theirs" {
		t.Errorf("named publication: got %s, want theirs", pub)
	}
}
