package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// The changes: log scenarios read a PostgreSQL table by logical
// replication into a Parquet change log (ctx files) and a merge table
// (ctx rows_out, merge_keys [id]) on the same database. After every run
// the merge table equals the source table, and the change log replayed in
// commit order (_lsn, _seq) equals it too, with no change twice.

// newLogFixture is a PostgreSQL fixture with orders and a changes: log
// job; its replication slots are dropped before the database is.
func newLogFixture(t *testing.T, extra ...string) *sqlFixture {
	t.Helper()
	f := newSQLFixture(t, sqldb.Postgres)
	t.Cleanup(func() {
		_, _ = f.db.SQL.Exec("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = current_database() AND active_pid IS NOT NULL")
		if _, err := f.db.SQL.Exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = current_database()"); err != nil {
			t.Logf("cleanup: dropping replication slots: %v", err)
		}
	})
	f.createOrders()
	f.writeJob(sqlJob{src: sqlSrc{extra: append([]string{"changes: log"}, extra...)}, table: "orders_out", mode: "merge", mergeKeys: []string{"id"}})
	return f
}

// sourceRows is the source table as id:v:amount, sorted.
func (f *sqlFixture) sourceRows() []string {
	f.t.Helper()
	return f.db.Strings(f.t, "SELECT id || ':' || coalesce(v, 'NULL') || ':' || coalesce(amount::text, 'NULL') FROM orders ORDER BY 1")
}

// mergedRows is the merge table as id:v:amount, sorted.
func (f *sqlFixture) mergedRows() []string {
	f.t.Helper()
	return f.db.Strings(f.t, "SELECT id || ':' || coalesce(v, 'NULL') || ':' || coalesce(amount::text, 'NULL') FROM orders_out ORDER BY 1")
}

// replayed applies the change log (every published Parquet row) in commit
// order and returns the table it makes, as id:v:amount sorted; it fails
// the test when a change (_lsn, _seq) appears twice.
func (f *sqlFixture) replayed() []string {
	f.t.Helper()
	rows := f.fileRows("_lsn, lpad(CAST(_seq AS VARCHAR), 12, '0'), _op, CAST(id AS VARCHAR), coalesce(v, 'NULL'), coalesce(CAST(amount AS VARCHAR), 'NULL')")
	sort.Slice(rows, func(i, j int) bool { return rows[i][0]+rows[i][1] < rows[j][0]+rows[j][1] })
	seen := map[string]bool{}
	table := map[string]string{}
	for _, r := range rows {
		if r[1] != strings.Repeat("0", 12) { // snapshot rows share (_lsn, 0)
			if seen[r[0]+"/"+r[1]] {
				f.t.Errorf("change %s #%s is in the change log twice", r[0], r[1])
			}
			seen[r[0]+"/"+r[1]] = true
		}
		if r[2] == "D" {
			delete(table, r[3])
		} else {
			table[r[3]] = r[3] + ":" + r[4] + ":" + r[5]
		}
	}
	out := make([]string, 0, len(table))
	for _, v := range table {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// assertSynced checks that the merge table and the replayed change log
// equal the source table.
func (f *sqlFixture) assertSynced(what string) {
	f.t.Helper()
	want := f.sourceRows()
	if got := f.mergedRows(); strings.Join(got, " ") != strings.Join(want, " ") {
		f.t.Fatalf("%s: merge table\n got %v\nwant %v", what, got, want)
	}
	if got := f.replayed(); strings.Join(got, " ") != strings.Join(want, " ") {
		f.t.Fatalf("%s: change log replayed\n got %v\nwant %v", what, got, want)
	}
}

// TestSQLChangesLog: a first run reads the snapshot, later runs read
// inserts, updates (a key moved to another too) and deletes (a row
// inserted and deleted between two runs too), in commit order; the merge
// table and the change log equal the table after each run, and a run with
// nothing new reads nothing.
func TestSQLChangesLog(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	f.insertOrders(idRange(1, 5)...)
	s := f.mustRun()
	if s.src().Rows != 5 {
		t.Fatalf("first run read %d rows, want the snapshot's 5", s.src().Rows)
	}
	f.assertSynced("after the snapshot")
	if ops := f.fileRows("DISTINCT _op"); len(ops) != 1 || ops[0][0] != "I" {
		t.Fatalf("snapshot rows: _op %v, want I only", ops)
	}

	f.exec("UPDATE orders SET v = 'two', amount = 2 WHERE id = 2")
	f.exec("DELETE FROM orders WHERE id = 3")
	f.insertOrders(6)
	f.exec("BEGIN; INSERT INTO orders VALUES (7, 'seven', 7); UPDATE orders SET amount = 77 WHERE id = 7; DELETE FROM orders WHERE id = 7; COMMIT")
	f.exec("UPDATE orders SET id = 40 WHERE id = 4")
	s = f.mustRun()
	if got := s.src().Rows; got != 8 {
		t.Errorf("second run read %d change rows, want 8 (U, D, I, I, U, D, and D+U for the moved key)", got)
	}
	f.assertSynced("after the changes")
	if got := f.fileRows("_op, CAST(id AS VARCHAR)"); !strings.Contains(fmt.Sprint(got), "[D 4]") || !strings.Contains(fmt.Sprint(got), "[U 40]") {
		t.Errorf("the moved key: change log %v lacks D 4 and U 40", got)
	}

	s = f.mustRun()
	if s.src().Rows != 0 {
		t.Errorf("a run with nothing new read %d rows", s.src().Rows)
	}
	f.assertSynced("after a run with nothing new")

	// plan and bookmark show tell the slot's retained WAL and lag.
	r := f.tidemark(nil, "plan", f.jobPath, "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"slot_retained_wal_bytes"`) || !strings.Contains(r.stdout, `"slot_lag_bytes"`) {
		t.Errorf("plan --json does not show the slot's retained WAL and lag\n%v", r)
	}
	r = f.tidemark(nil, "plan", f.jobPath)
	if r.code != 0 || !strings.Contains(r.output(), "retains") {
		t.Errorf("plan does not show the slot's retained WAL\n%v", r)
	}
	var bm struct {
		Sources map[string]struct {
			Log struct {
				Slot     string `json:"slot"`
				LSN      string `json:"lsn"`
				Retained *int64 `json:"slot_retained_wal_bytes"`
				Lag      *int64 `json:"slot_lag_bytes"`
			} `json:"log"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(f.bookmark()), &bm); err != nil {
		t.Fatal(err)
	}
	if l := bm.Sources["orders_db"].Log; l.Slot == "" || l.LSN == "" || l.Retained == nil || l.Lag == nil {
		t.Errorf("bookmark show --json: log %+v lacks the slot, its position, retained WAL or lag", l)
	}
	r = f.tidemark(nil, "bookmark", "show", f.jobPath)
	if !strings.Contains(r.output(), "retained") {
		t.Errorf("bookmark show does not show the slot's retained WAL\n%v", r)
	}
}

// TestSQLChangesLogCrash: runs killed after staging (before the commit)
// and after the commit (before publishing) lose no change and deliver none
// twice: the slot moves only to a committed bookmark.
func TestSQLChangesLogCrash(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	f.insertOrders(idRange(1, 10)...)
	f.killedAt("after-stage") // the snapshot run dies before its commit
	f.mustRun()
	f.assertSynced("after the snapshot run killed before its commit")
	next := int64(100)
	for _, step := range []string{"after-stage", "after-commit", "mid-publish", "after-plan"} {
		f.exec(fmt.Sprintf("UPDATE orders SET amount = amount + 1 WHERE id %% 3 = %d", next%3))
		f.exec("DELETE FROM orders WHERE id = (SELECT min(id) FROM orders)")
		f.insertOrders(next, next+1)
		next += 2
		f.killedAt(step)
		f.exec(fmt.Sprintf("UPDATE orders SET v = 'after %s' WHERE id = %d", step, next-1))
		f.mustRun()
		f.assertSynced("after a run killed at " + step)
	}
}

// TestSQLChangesLogBound: a transaction that commits after a run took its
// bound is not read in part: the run reads none of it, the next all of it.
func TestSQLChangesLogBound(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	f.insertOrders(1)
	f.mustRun()
	f.insertOrders(2) // committed before the run: read by it
	held := f.db.Hold(t)
	held.Exec("INSERT INTO orders (id, v, amount) VALUES (100, 'held', 1)")
	p := f.start([]string{"TIDEMARK_FAULT=after-plan:sleep=2s"}, "run", f.jobPath, "--json")
	p.waitFor(t, "fault: paused at after-plan", 60*time.Second)
	held.Exec("INSERT INTO orders (id, v, amount) VALUES (101, 'held', 1)")
	held.Commit() // after the run's bound
	r := f.wait(p)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%v", r.code, r)
	}
	s := decodeOne[sqlSummary](t, r)
	if got := f.fileIDsOfRun(s.RunID); fmt.Sprint(got) != "[2]" {
		t.Fatalf("the run that took its bound before the commit read ids %v, want [2]", got)
	}
	s = f.mustRun()
	if got := f.fileIDsOfRun(s.RunID); fmt.Sprint(got) != "[100 101]" {
		t.Fatalf("the next run read ids %v, want the whole transaction [100 101]", got)
	}
	f.assertSynced("after the held transaction")
}

// TestSQLChangesLogRefusals: a TRUNCATE, a column added and a dropped
// slot each fail the run (exit 1) with a message naming the table (or the
// slot) and what to do; after a bookmark reset the next run reads a new
// snapshot and the merge table equals the table again.
func TestSQLChangesLogRefusals(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	f.insertOrders(idRange(1, 3)...)
	f.mustRun()

	refused := func(what string, wants ...string) {
		t.Helper()
		_, r := f.runExpect(1, nil)
		for _, w := range wants {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: the error does not say %q\n%v", what, w, r)
			}
		}
		f.reset("--purge-output")
		f.mustRun()
		f.assertSynced("after " + what + " and a reset")
	}

	f.exec("TRUNCATE orders")
	f.insertOrders(7)
	// The message names the job's reset, not a placeholder for it.
	refused("a TRUNCATE", "table orders was truncated", "`tidemark bookmark reset sqljob`")

	f.exec("ALTER TABLE orders ADD COLUMN note text")
	f.insertOrders(8)
	refused("a column added", "table orders changed its columns", "column note added", "`tidemark bookmark reset sqljob`")

	f.exec("ALTER TABLE orders DROP COLUMN note")
	refused("a column dropped", "table orders changed its columns", "column note dropped", "`tidemark bookmark reset sqljob`")

	f.exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = current_database()")
	f.insertOrders(9)
	refused("a dropped slot", "is gone", "`tidemark bookmark reset sqljob`")
}

// TestSQLChangesLogTypes: a change row carries each value as the
// snapshot does (bytea, arrays, numeric, time zones, booleans, JSON, NULL
// and the empty string): a row inserted after the snapshot with the same
// values reads back the same from the change log.
func TestSQLChangesLogTypes(t *testing.T) {
	t.Parallel()
	f := newSQLFixture(t, sqldb.Postgres)
	t.Cleanup(func() {
		_, _ = f.db.SQL.Exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = current_database()")
	})
	f.exec(`CREATE TABLE typed (id bigint PRIMARY KEY, b bytea, a int[], ta text[], n numeric(12,3), tz timestamptz,
		ts timestamp, d date, ok boolean, j jsonb, e text, z text, u uuid, f double precision, iv interval,
		g bigint GENERATED ALWAYS AS (id * 2) STORED)`)
	values := `'\x00ff41'::bytea, '{1,NULL,3}', '{"a,b","c\"d",NULL,""}', 123.456, '2024-05-01 10:00:00.123456+02',
		'2024-05-01 10:00:00.5', '2024-02-29', true, '{"k": [1, "x"]}', '', NULL, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1.5e-7, '1 day 02:03:04'`
	f.exec("INSERT INTO typed VALUES (1, " + values + ")")
	f.writeJob(sqlJob{src: sqlSrc{table: "typed", extra: []string{"changes: log"}}, table: "typed_out", mode: "merge", mergeKeys: []string{"id"}})
	f.mustRun()
	f.exec("INSERT INTO typed VALUES (2, " + values + ")")
	f.mustRun()
	cols := "CAST(b AS VARCHAR), CAST(a AS VARCHAR), CAST(ta AS VARCHAR), CAST(n AS VARCHAR), CAST(tz AS VARCHAR), CAST(ts AS VARCHAR), " +
		"CAST(d AS VARCHAR), CAST(ok AS VARCHAR), CAST(j AS VARCHAR), e, coalesce(z, 'NULL'), CAST(u AS VARCHAR), CAST(f AS VARCHAR), CAST(iv AS VARCHAR)"
	rows := f.fileRows("CAST(id AS VARCHAR), " + cols)
	if len(rows) != 2 {
		t.Fatalf("change log holds %d rows, want 2", len(rows))
	}
	if a, b := fmt.Sprint(rows[0][1:]), fmt.Sprint(rows[1][1:]); a != b {
		t.Fatalf("a change row reads differently from the snapshot's row of the same values:\nsnapshot %s\nchange   %s", a, b)
	}
	if !strings.Contains(fmt.Sprint(rows[0]), `\x00\xFFA`) || !strings.Contains(fmt.Sprint(rows[0]), `['a,b', 'c"d', NULL, '']`) {
		t.Errorf("values read back as %v", rows[0])
	}
}

// TestSQLChangesLogToast: an update that leaves a large (TOASTed) value
// unchanged does not blank it in the merge table: with replica identity
// FULL the value comes from the old row; without it the run fails naming
// the column and saying how to fix it, and delivers nothing.
func TestSQLChangesLogToast(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	f.exec("ALTER TABLE orders ALTER COLUMN v TYPE text")
	f.exec("ALTER TABLE orders ALTER COLUMN v SET STORAGE EXTERNAL") // out of line, uncompressed
	f.exec("INSERT INTO orders SELECT 1, string_agg(md5(i::text), '') , 10 FROM generate_series(1, 400) i")
	f.mustRun()
	f.exec("UPDATE orders SET amount = 11 WHERE id = 1")
	_, r := f.runExpect(1, nil)
	for _, want := range []string{"column v", "REPLICA IDENTITY FULL"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the error does not say %q\n%v", want, r)
		}
	}
	f.exec("ALTER TABLE orders REPLICA IDENTITY FULL")
	f.reset("--purge-output")
	f.mustRun()
	f.exec("UPDATE orders SET amount = 12 WHERE id = 1")
	f.mustRun()
	f.assertSynced("after an update that kept the large value")
}

// TestSQLChangesLogModes: disable reads the table as it is (every row an
// I) and leaves the bookmark and the slot; pause reads the changes enable
// would and leaves them for the next enable run; pause from/to is refused.
func TestSQLChangesLogModes(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	f.insertOrders(idRange(1, 3)...)
	first := f.mustRun()
	before := f.bookmark()

	f.exec("DELETE FROM orders WHERE id = 2")
	s := f.mustRun("--job-bookmark-option", "disable")
	if got := f.fileIDsOfRun(s.RunID); fmt.Sprint(got) != "[1 3]" {
		t.Errorf("disable read ids %v, want the table as it is, [1 3]", got)
	}
	if ops := f.queryParquet(f.parquetFiles()[s.RunID], "DISTINCT _op"); fmt.Sprint(ops) != "[[I]]" {
		t.Errorf("disable: _op %v, want I", ops)
	}
	if f.bookmark() != before {
		t.Errorf("disable changed the bookmark")
	}

	s = f.mustRun("--job-bookmark-option", "pause")
	if got := f.queryParquet(f.parquetFiles()[s.RunID], "_op, CAST(id AS VARCHAR)"); fmt.Sprint(got) != "[[D 2]]" {
		t.Errorf("pause read %v, want the delete of 2", got)
	}
	if f.bookmark() != before {
		t.Errorf("pause changed the bookmark")
	}
	s = f.mustRun()
	if got := f.queryParquet(f.parquetFiles()[s.RunID], "_op, CAST(id AS VARCHAR)"); fmt.Sprint(got) != "[[D 2]]" {
		t.Errorf("the enable run after pause read %v, want the delete of 2 again", got)
	}
	if got := f.mergedRows(); strings.Join(got, " ") != strings.Join(f.sourceRows(), " ") {
		t.Errorf("merge table %v, want %v", got, f.sourceRows())
	}

	_, r := f.runExpect(1, nil, "--job-bookmark-option", "pause", "--job-bookmark-from", first.RunID, "--job-bookmark-to", s.RunID)
	if !strings.Contains(r.stderr, "cannot read what earlier runs read again") {
		t.Errorf("pause from/to: the error does not say why\n%v", r)
	}
}

// TestSQLChangesLogWorkload: random inserts, updates (keys moved too),
// deletes and large transactions between runs, half of them killed at a
// random step: after every successful run the merge table and the change
// log replayed equal the table.
func TestSQLChangesLogWorkload(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(22, seed))
	f.insertOrders(idRange(1, 50)...)
	next := int64(51)
	steps := []string{"after-plan", "mid-read", "after-stage", "after-commit", "mid-publish", "after-publish"}
	for i := range 8 {
		for range 1 + rng.IntN(4) {
			switch rng.IntN(5) {
			case 0:
				n := int64(1 + rng.IntN(20))
				f.insertOrders(idRange(next, next+n-1)...)
				next += n
			case 1:
				f.exec(fmt.Sprintf("UPDATE orders SET amount = amount + 1, v = 'u%d' WHERE id %% 7 = %d", i, rng.IntN(7)))
			case 2:
				f.exec(fmt.Sprintf("DELETE FROM orders WHERE id %% 11 = %d", rng.IntN(11)))
			case 3:
				f.exec(fmt.Sprintf("UPDATE orders SET id = %d WHERE id = (SELECT max(id) FROM orders)", next+100000))
				next++
			case 4: // a large transaction: inserts, then updates and deletes of its own rows
				f.exec(fmt.Sprintf("BEGIN; INSERT INTO orders SELECT g, 'big', g FROM generate_series(%d, %d) g; "+
					"UPDATE orders SET amount = -amount WHERE id BETWEEN %d AND %d; DELETE FROM orders WHERE id %% 2 = 0 AND id >= %d; COMMIT",
					next, next+1999, next, next+999, next))
				next += 2000
			}
		}
		// At least one change, so that a run to be killed at a step after
		// the plan has something to stage (a delete or update of ids the
		// workload removed before changes nothing).
		f.insertOrders(next)
		next++
		if rng.IntN(2) == 0 {
			step := steps[rng.IntN(len(steps))]
			t.Logf("iteration %d: killed at %s", i, step)
			f.killedAt(step)
		}
		f.mustRun()
		f.assertSynced(fmt.Sprintf("iteration %d", i))
	}
}

// TestSQLChangesLogIdleWAL: when the server's WAL moves far (16 MiB) with
// no change of the table, a run moves the bookmark's position and the
// slot with it, so that the slot does not keep that WAL, delivering
// nothing.
func TestSQLChangesLogIdleWAL(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	f.insertOrders(1)
	f.mustRun()
	lsn := func() string {
		var bm struct {
			Sources map[string]struct {
				Log struct{ LSN string } `json:"log"`
			} `json:"sources"`
		}
		if err := json.Unmarshal([]byte(f.bookmark()), &bm); err != nil {
			t.Fatal(err)
		}
		return bm.Sources["orders_db"].Log.LSN
	}
	before := lsn()
	f.exec("CREATE TABLE other AS SELECT g AS id, md5(g::text) AS v FROM generate_series(1, 300000) g")
	s := f.mustRun()
	if s.src().Rows != 0 {
		t.Errorf("the run read %d rows of a table nobody changed", s.src().Rows)
	}
	after := lsn()
	if after <= before {
		t.Fatalf("the position stayed at %s after the server's WAL moved on", after)
	}
	f.mustRun() // moves the slot to the committed position
	var confirmed string
	if err := f.db.SQL.QueryRow("SELECT lpad(split_part(confirmed_flush_lsn::text, '/', 1), 8, '0') || '/' || lpad(split_part(confirmed_flush_lsn::text, '/', 2), 8, '0') FROM pg_replication_slots WHERE database = current_database()").Scan(&confirmed); err != nil {
		t.Fatal(err)
	}
	if confirmed < after {
		t.Errorf("the slot is at %s, behind the committed position %s", confirmed, after)
	}
	f.insertOrders(2)
	f.mustRun()
	f.assertSynced("after an idle stretch of WAL")
}

// TestSQLChangesLogResetToRun: bookmark reset --to-run the run before the
// last reads the last run's changes again (the slot still holds them);
// further back the run fails saying the slot moved past the bookmark.
func TestSQLChangesLogResetToRun(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	f.insertOrders(1)
	r1 := f.mustRun()
	f.insertOrders(2)
	r2 := f.mustRun()
	f.insertOrders(3)
	f.mustRun()
	f.reset("--to-run", r2.RunID, "--purge-output")
	s := f.mustRun()
	if got := f.fileIDsOfRun(s.RunID); fmt.Sprint(got) != "[3]" {
		t.Errorf("after reset --to-run the run before the last, the next run read ids %v, want [3]", got)
	}
	f.assertSynced("after reset --to-run one run back")
	// Two runs back the slot has moved past: the reset refuses before it
	// changes anything, saying so, and the job runs on.
	r := f.tidemark(nil, "bookmark", "reset", f.jobPath, "--to-run", r1.RunID, "--purge-output")
	if r.code == 0 || !strings.Contains(r.stderr, "has moved past the position the reset would rewind to") || !strings.Contains(r.stderr, "bookmark reset sqljob") {
		t.Errorf("reset two runs back: got exit %d, want a refusal saying the slot moved past and naming the full reset\n%v", r.code, r)
	}
	f.insertOrders(4)
	f.mustRun()
	f.assertSynced("after a refused reset")
}

// TestSQLChangesLogResetSlot: bookmark reset says what it does to the
// slot (text and JSON): --dry-run says it would drop it and leaves it;
// the reset drops it, so that it no longer holds WAL, and the next run
// creates it with a new snapshot without a warning of a slot left; a
// rewind to the last run keeps it; given the job's name it says it
// leaves the slot and how to drop it.
func TestSQLChangesLogResetSlot(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	f.insertOrders(1)
	f.mustRun()
	f.insertOrders(2)
	r2 := f.mustRun()
	slots := func() int {
		var n int
		if err := f.db.SQL.QueryRow("SELECT count(*) FROM pg_replication_slots WHERE database = current_database()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	dry := f.reset("--dry-run")
	if !strings.Contains(dry.stdout, "would be dropped") || slots() != 1 {
		t.Errorf("reset --dry-run: want it to say the slot would be dropped and leave it (slots %d)\n%v", slots(), dry)
	}
	dj := f.reset("--dry-run", "--json")
	var dv struct{ Sources map[string]string }
	if err := json.Unmarshal([]byte(dj.stdout), &dv); err != nil || !strings.Contains(dv.Sources["orders_db"], "would be dropped") {
		t.Errorf("reset --dry-run --json: sources %v (%v), want orders_db's slot would be dropped\n%v", dv.Sources, err, dj)
	}
	kept := f.reset("--to-run", r2.RunID, "--json")
	var kv struct{ Sources map[string]string }
	if err := json.Unmarshal([]byte(kept.stdout), &kv); err != nil || !strings.Contains(kv.Sources["orders_db"], "kept") {
		t.Errorf("reset --to-run the last run --json: sources %v (%v), want the slot kept\n%v", kv.Sources, err, kept)
	}
	done := f.reset("--purge-output")
	if !strings.Contains(done.stderr, "source orders_db: replication slot") || !strings.Contains(done.stderr, "dropped") || slots() != 0 {
		t.Errorf("reset: want it to say it dropped the slot, and the slot gone (slots %d)\n%v", slots(), done)
	}
	_, r := f.runExpect(0, nil)
	if strings.Contains(r.stderr, "the run drops the slot") {
		t.Errorf("the run after the reset still found a slot left without a bookmark\n%v", r)
	}
	f.assertSynced("after a reset that dropped the slot")
	byName := f.tidemark(nil, "bookmark", "reset", "sqljob", "--state", filepath.Join(f.dir, ".tidemark", "state.db"), "--dry-run")
	if byName.code != 0 || !strings.Contains(byName.stdout, "left as it is") || !strings.Contains(byName.stdout, "pg_drop_replication_slot") {
		t.Errorf("reset --dry-run by the job's name: want it to say it leaves the slot and how to drop it\n%v", byName)
	}
}

// TestSQLChangesLogSlotBusy: a run that finds the slot in use by another
// reader for a moment (a `tidemark plan` peeking it, here a replication
// connection holding it for two seconds) waits for it and reads the
// changes, rather than failing with "slot is active".
func TestSQLChangesLogSlotBusy(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	f.insertOrders(1)
	f.mustRun()
	f.insertOrders(2)
	var slot string
	if err := f.db.SQL.QueryRow("SELECT slot_name FROM pg_replication_slots WHERE database = current_database()").Scan(&slot); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pc, err := pgconn.ParseConfig(f.conn)
	if err != nil {
		t.Fatal(err)
	}
	pc.Password = f.password
	pc.RuntimeParams["replication"] = "database"
	conn, err := pgconn.ConnectConfig(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := pglogrepl.StartReplication(ctx, conn, slot, 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names '" + slot + "'"}}); err != nil {
		t.Fatal(err)
	}
	var active bool
	if err := f.db.SQL.QueryRow("SELECT active FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&active); err != nil || !active {
		t.Fatalf("the slot is not held by the test's connection (active %v, %v)", active, err)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(2 * time.Second)
		conn.Close(ctx)
	}()
	s, r := f.run(nil)
	<-released
	if r.code != 0 {
		t.Fatalf("a run while the slot was busy for two seconds: exit %d, want 0 (it waits)\n%v", r.code, r)
	}
	if s.src().Rows != 1 {
		t.Errorf("the run read %d rows, want 1", s.src().Rows)
	}
	f.assertSynced("after a run that waited for the slot")
}

// TestSQLChangesLogMetrics: run --metrics-file (the same metrics as
// serve's /metrics) has the slot's retained WAL and lag per job and
// source, as the last run saw them (the bookmark's figures).
func TestSQLChangesLogMetrics(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	f.insertOrders(1)
	f.mustRun()
	f.exec("CREATE TABLE other AS SELECT g AS id FROM generate_series(1, 20000) g")
	f.insertOrders(2)
	prom := filepath.Join(t.TempDir(), "sqljob.prom")
	f.mustRun("--metrics-file", prom)
	var bm struct {
		Sources map[string]struct {
			Log struct {
				Retained int64 `json:"slot_retained_wal_bytes"`
				Lag      int64 `json:"slot_lag_bytes"`
			} `json:"log"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(f.bookmark()), &bm); err != nil {
		t.Fatal(err)
	}
	lg := bm.Sources["orders_db"].Log
	if lg.Retained <= 0 {
		t.Fatalf("the bookmark says the slot retained %d bytes of WAL; want more than 0 after a run's changes", lg.Retained)
	}
	fams := readProm(t, prom)
	wantGauge(t, fams, "tidemark_source_slot_retained_wal_bytes", float64(lg.Retained), "ctx", "orders_db", "job", "sqljob")
	wantGauge(t, fams, "tidemark_source_slot_lag_bytes", float64(lg.Lag), "ctx", "orders_db", "job", "sqljob")
}
