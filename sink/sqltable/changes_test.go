package sqltable_test

import (
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/sink/sqltable"
)

// TestSinkMergeChanges: change rows (_op, _lsn, _seq, as a changes: log
// source writes them) are applied by mode merge: a D deletes the row with
// its merge keys, I and U upsert, and of several changes of one key in a
// run the last in commit order wins (by _lsn and _seq, whatever the order
// of the output's rows); a roll-forward applies nothing twice.
func TestSinkMergeChanges(t *testing.T) {
	sqltest.EachOf(t, servers, func(t *testing.T, db *sqltest.DB) {
		k := openSink(t, db, sqltable.SinkConfig{Table: "m", Mode: "merge", MergeKeys: []string{"id"}})
		cols := "t(id, v, _op, _lsn, _seq)"
		load(t, k, "r1", "SELECT * FROM (VALUES (1, 'a', 'I', '00000000/00000010', 0), (2, 'b', 'I', '00000000/00000010', 0), "+
			"(3, 'c', 'I', '00000000/00000010', 0), (4, 'd', 'I', '00000000/00000010', 0)) "+cols)
		equal(t, "after the snapshot", contents(t, db, "m"), []string{"1:a", "2:b", "3:c", "4:d"})

		// Out of commit order on purpose: 2 is updated then deleted (the
		// delete wins), 3 deleted then inserted again (the insert wins),
		// 5 inserted and deleted in one run (never there), 1 deleted, 4
		// updated twice in one transaction (the second wins).
		load(t, k, "r2", "SELECT * FROM (VALUES "+
			"(2, NULL, 'D', '00000000/00000030', 1), (2, 'B', 'U', '00000000/00000020', 1), "+
			"(3, 'C', 'I', '00000000/00000040', 1), (3, NULL, 'D', '00000000/00000030', 2), "+
			"(5, NULL, 'D', '00000000/00000050', 2), (5, 'e', 'I', '00000000/00000050', 1), "+
			"(4, 'D2', 'U', '00000000/00000020', 3), (4, 'D1', 'U', '00000000/00000020', 2), "+
			"(1, NULL, 'D', '00000000/00000020', 4)) "+cols)
		equal(t, "after the changes", contents(t, db, "m"), []string{"3:C", "4:D2"})

		if err := k.Publish(t.Context(), "job", "r2"); err != nil {
			t.Fatal(err)
		}
		equal(t, "after publishing again", contents(t, db, "m"), []string{"3:C", "4:D2"})
	})
}

// TestSinkMergeEmptyRun: a run with no output (a change-log run that only
// moved its position, a key-bookmark run that only recorded its
// regression baseline) publishes into an existing merge table, changing
// nothing; it failed saying the merge key is not a column of the output.
func TestSinkMergeEmptyRun(t *testing.T) {
	sqltest.EachOf(t, servers, func(t *testing.T, db *sqltest.DB) {
		k := openSink(t, db, sqltable.SinkConfig{Table: "m", Mode: "merge", MergeKeys: []string{"id"}})
		load(t, k, "r1", "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(id, v)")
		load(t, k, "r2", "")
		equal(t, "after an empty run", contents(t, db, "m"), []string{"1:a", "2:b"})
		if ok, err := k.Published(t.Context(), "job", "r2"); err != nil || !ok {
			t.Fatalf("the empty run's marker: %t, %v", ok, err)
		}
	})
}
