package sqltable

import (
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
)

// detectTest is a changes: detect source on a test database and the
// bookmark its committed runs left.
type detectTest struct {
	t    *testing.T
	db   *sqltest.DB
	spec *job.Spec
	src  job.Source
	prev *bookmark.SourceState
}

func newDetectTest(t *testing.T, db *sqltest.DB, table string) *detectTest {
	t.Helper()
	cfg := &JobConfig{Connection: db.Connection, PasswordEnv: db.PasswordEnv, Table: table, Changes: ChangesDetect}
	cfg.ApplyDefaults(nil)
	return &detectTest{t: t, db: db, spec: &job.Spec{Job: "detectjob", Dir: t.TempDir()}, src: job.Source{Ctx: "src", Config: cfg}}
}

// plan plans a run against the committed bookmark; the source is closed
// when the test ends.
func (d *detectTest) plan(count bool) (*detectPlan, error) {
	d.t.Helper()
	s := OpenDetect(d.spec, d.src)
	d.t.Cleanup(func() { s.Close() })
	req := source.Request{Job: d.spec.Job, Mode: bookmark.ModeEnable, Count: count}
	if d.prev != nil {
		req.Prev, req.HasPrev = *d.prev, true
	}
	p, err := s.Plan(context.Background(), req)
	if err != nil {
		return nil, err
	}
	return p.(*detectPlan), nil
}

func (d *detectTest) mustPlan() *detectPlan {
	d.t.Helper()
	p, err := d.plan(false)
	if err != nil {
		d.t.Fatalf("Plan: %v", err)
	}
	return p
}

// commit commits p's bookmark, as the runner does after the sinks.
func (d *detectTest) commit(p *detectPlan) {
	d.t.Helper()
	a, ok := p.Advance("run", engine.SourceResult{})
	if !ok {
		d.t.Fatal("Advance: nothing to commit")
	}
	d.prev = &a.State
}

// changes are the plan's change rows as "op:col1:col2...", sorted; NULL
// is empty.
func changes(t *testing.T, p *detectPlan) []string {
	t.Helper()
	if p.file == "" {
		return nil
	}
	f, err := os.Open(p.file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r[len(r)-1]+":"+strings.Join(r[:len(r)-1], ":"))
	}
	sort.Strings(out)
	return out
}

// statements counts what detect sends to the database.
type statements struct {
	mu   sync.Mutex
	list []string
}

func countStatements(t *testing.T) *statements {
	s := &statements{}
	detectStatement = func(q string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.list = append(s.list, q)
	}
	t.Cleanup(func() { detectStatement = nil })
	return s
}

func (s *statements) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.list
	s.list = nil
	return out
}

func fillKV(t *testing.T, db *sqltest.DB, table string, n int) {
	t.Helper()
	for from := 1; from <= n; from += 1000 {
		var vals []string
		for i := from; i < from+1000 && i <= n; i++ {
			vals = append(vals, fmt.Sprintf("(%d, 'v%d')", i, i))
		}
		db.Exec(t, "INSERT INTO "+table+" (id, v) VALUES "+strings.Join(vals, ", "))
	}
}

// inList is the list of a statement's last " IN (...)", "" none.
func inList(q string) string {
	i := strings.LastIndex(q, " IN (")
	if i < 0 {
		return ""
	}
	rest := q[i+len(" IN ("):]
	return rest[:strings.Index(rest, ")")]
}

// detectDDL rewrites {int}, {pk} and {text} into each database's types.
func detectDDL(k sqldb.Kind, s string) string {
	r := map[sqldb.Kind]*strings.Replacer{
		sqldb.Postgres: strings.NewReplacer("{int}", "bigint", "{pk}", "bigint PRIMARY KEY", "{text}", "varchar(200)"),
		sqldb.MySQL:    strings.NewReplacer("{int}", "bigint", "{pk}", "bigint PRIMARY KEY", "{text}", "varchar(200)"),
		sqldb.SQLite:   strings.NewReplacer("{int}", "INTEGER", "{pk}", "INTEGER PRIMARY KEY", "{text}", "TEXT"),
	}[k]
	return r.Replace(s)
}

var detectKinds = []sqldb.Kind{sqldb.Postgres, sqldb.MySQL, sqldb.SQLite}

// TestDetectUnchangedFetchesNoRow: a run over an unchanged table sends one
// statement, the aggregate over the ranges, and fetches no row; a changed
// row makes it fetch that row's range alone.
func TestDetectUnchangedFetchesNoRow(t *testing.T) {
	sqltest.EachOf(t, detectKinds, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, detectDDL(db.Kind, "CREATE TABLE kv (id {pk}, v {text})"))
		fillKV(t, db, "kv", 5000)
		d := newDetectTest(t, db, "kv")
		stmts := countStatements(t)
		p := d.mustPlan()
		if got := len(changes(t, p)); got != 5000 || p.count.Inserts != 5000 {
			t.Fatalf("first run: %d change rows, %d inserts; want the 5000 rows as inserts", got, p.count.Inserts)
		}
		d.commit(p)
		stmts.take()

		p = d.mustPlan()
		got := stmts.take()
		if len(got) != 1 || !strings.Contains(got[0], "GROUP BY") {
			t.Fatalf("unchanged table: statements %q, want the one aggregate", got)
		}
		if p.Pending() != 0 || p.count.Fetched != 0 || p.file != "" {
			t.Fatalf("unchanged table: pending %d, fetched %d, file %q; want nothing", p.Pending(), p.count.Fetched, p.file)
		}

		db.Exec(t, "UPDATE kv SET v = 'changed' WHERE id = 77")
		p = d.mustPlan()
		got = stmts.take()
		if len(got) != 2 || inList(got[1]) == "" || strings.Contains(inList(got[1]), ",") {
			t.Errorf("one changed row: statements %q, want the aggregate and a fetch of one range", got)
		}
		if p.count.RangesChanged != 1 || p.count.Fetched == 0 || p.count.Fetched > 5000/int64(p.ranges)*3 {
			t.Errorf("one changed row: %d ranges changed, %d rows fetched of 5000 in %d ranges; want one range's rows", p.count.RangesChanged, p.count.Fetched, p.ranges)
		}
		if c := changes(t, p); !slices.Equal(c, []string{"U:77:changed"}) {
			t.Errorf("one changed row: changes %v, want U:77:changed", c)
		}
		d.commit(p)
		if p = d.mustPlan(); p.Pending() != 0 {
			t.Errorf("after the update was committed: pending %d", p.Pending())
		}
	})
}

// TestDetectCrashBeforeCommit: a run that found changes and wrote its key
// snapshot generation but never committed leaves the delivered keys as
// they were: the next run finds the same changes; a `tidemark plan`
// (counting) fetches nothing and writes nothing.
func TestDetectCrashBeforeCommit(t *testing.T) {
	sqltest.EachOf(t, detectKinds, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, detectDDL(db.Kind, "CREATE TABLE kv (id {pk}, v {text})"))
		fillKV(t, db, "kv", 100)
		d := newDetectTest(t, db, "kv")
		d.commit(d.mustPlan())
		db.Exec(t, "DELETE FROM kv WHERE id IN (5, 6)")
		db.Exec(t, "UPDATE kv SET v = NULL WHERE id = 7")
		db.Exec(t, "INSERT INTO kv (id, v) VALUES (500, 'new')")
		want := []string{"D:5:", "D:6:", "I:500:new", "U:7:"}

		dir := snapshotDir(d.spec, d.src.Ctx, db.Connection, "kv")
		before, _ := os.ReadDir(dir)
		stmts := countStatements(t)
		pp, err := d.plan(true)
		if err != nil {
			t.Fatal(err)
		}
		if got := stmts.take(); len(got) != 1 || pp.file != "" || pp.Preview().Detail.(PreviewDetail).Detect.RangesChanged == 0 {
			t.Errorf("plan: statements %q, file %q, preview %+v; want the aggregate alone and ranges to fetch", got, pp.file, pp.Preview().Detail.(PreviewDetail).Detect)
		}
		if after, _ := os.ReadDir(dir); len(after) != len(before) {
			t.Errorf("plan wrote into the key snapshot: %d entries, were %d", len(after), len(before))
		}

		p := d.mustPlan() // the run dies before its commit
		if got := changes(t, p); !slices.Equal(got, want) {
			t.Fatalf("changes %v, want %v", got, want)
		}
		p = d.mustPlan()
		if got := changes(t, p); !slices.Equal(got, want) {
			t.Fatalf("after a run that never committed: changes %v, want the same %v", got, want)
		}
		d.commit(p)
		if p = d.mustPlan(); p.Pending() != 0 {
			t.Errorf("after the commit: pending %d, want nothing", p.Pending())
		}
	})
}

// TestDetectCompositeKey: a two-column primary key (text and integer)
// works: a delete row carries both key columns.
func TestDetectCompositeKey(t *testing.T) {
	sqltest.EachOf(t, detectKinds, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, detectDDL(db.Kind, "CREATE TABLE ck (a {text} NOT NULL, b {int} NOT NULL, v {text}, PRIMARY KEY (a, b))"))
		db.Exec(t, "INSERT INTO ck (a, b, v) VALUES ('x', 1, 'one'), ('x', 2, 'two'), ('y,1', 1, 'comma'), ('it''s', 3, 'quote')")
		d := newDetectTest(t, db, "ck")
		d.commit(d.mustPlan())
		db.Exec(t, "DELETE FROM ck WHERE a = 'y,1'")
		db.Exec(t, "UPDATE ck SET v = 'TWO' WHERE a = 'x' AND b = 2")
		db.Exec(t, "INSERT INTO ck (a, b, v) VALUES ('x', 3, 'three')")
		p := d.mustPlan()
		want := []string{"D:y,1:1:", "I:x:3:three", "U:x:2:TWO"}
		if got := changes(t, p); !slices.Equal(got, want) {
			t.Fatalf("changes %v, want %v", got, want)
		}
	})
}

// TestDetectRefused: a table without a primary key and one keyed by a
// float are refused, naming the table (and the column).
func TestDetectRefused(t *testing.T) {
	sqltest.EachOf(t, detectKinds, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, detectDDL(db.Kind, "CREATE TABLE nokey (id {int}, v {text})"))
		float := map[sqldb.Kind]string{sqldb.Postgres: "double precision", sqldb.MySQL: "DOUBLE", sqldb.SQLite: "REAL"}[db.Kind]
		db.Exec(t, "CREATE TABLE fkey (f "+float+" PRIMARY KEY, v varchar(20))")
		for _, tc := range []struct{ table, want string }{
			{"nokey", "no primary key"},
			{"fkey", "primary key column f has type"},
		} {
			_, err := newDetectTest(t, db, tc.table).plan(false)
			if err == nil || !strings.Contains(err.Error(), "table "+tc.table) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("table %s: error %v, want one naming the table and %q", tc.table, err, tc.want)
			}
		}
	})
}

// TestDetectSnapshotGuarded: a key snapshot that is gone or altered fails
// the run, saying what to do, instead of missing the deletes in it; a
// column added fails it naming the table; with the bookmark disabled the
// run delivers the table as inserts and keeps nothing.
func TestDetectSnapshotGuarded(t *testing.T) {
	sqltest.EachOf(t, []sqldb.Kind{sqldb.SQLite, sqldb.Postgres}, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, detectDDL(db.Kind, "CREATE TABLE kv (id {pk}, v {text})"))
		fillKV(t, db, "kv", 50)
		d := newDetectTest(t, db, "kv")
		d.commit(d.mustPlan())
		dir := snapshotDir(d.spec, d.src.Ctx, db.Connection, "kv")
		gens, _ := os.ReadDir(dir)
		if len(gens) != 1 {
			t.Fatalf("key snapshot %s: %d generations, want 1", dir, len(gens))
		}
		db.Exec(t, "DELETE FROM kv WHERE id = 9")

		// Disabled: every row an insert, nothing kept, nothing to commit.
		s := OpenDetect(d.spec, d.src)
		t.Cleanup(func() { s.Close() })
		pl, err := s.Plan(context.Background(), source.Request{Job: d.spec.Job, Mode: bookmark.ModeDisable, Prev: *d.prev, HasPrev: true})
		if err != nil {
			t.Fatal(err)
		}
		if p := pl.(*detectPlan); len(changes(t, p)) != 49 || p.count.Inserts != 49 {
			t.Errorf("disabled: %d change rows, %d inserts; want the table's 49 rows as inserts", len(changes(t, p)), p.count.Inserts)
		}
		if _, ok := pl.Advance("run", engine.SourceResult{}); ok {
			t.Error("disabled: the run would commit a bookmark")
		}

		// An altered range file.
		bucket := -1
		for i := range d.prev.Detail.(StateDetail).Detect.Figures {
			if d.prev.Detail.(StateDetail).Detect.Figures[i][0] > 0 {
				bucket = i
				break
			}
		}
		file := rangeFile(dir, gens[0].Name(), bucket)
		if err := os.Truncate(file, 0); err != nil {
			t.Fatal(err)
		}
		db.Exec(t, "DELETE FROM kv") // every range differs
		if _, err := d.plan(false); err == nil || !strings.Contains(err.Error(), "table kv") || !strings.Contains(err.Error(), "bookmark reset") {
			t.Errorf("an altered key snapshot: error %v, want one naming the table and the reset", err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if _, err := d.plan(false); err == nil || !strings.Contains(err.Error(), "missing") {
			t.Errorf("a missing key snapshot: error %v, want one saying it is missing", err)
		}

		db.Exec(t, "ALTER TABLE kv ADD COLUMN extra "+map[sqldb.Kind]string{sqldb.SQLite: "TEXT", sqldb.Postgres: "text"}[db.Kind])
		if _, err := d.plan(false); err == nil || !strings.Contains(err.Error(), "table kv") || !strings.Contains(err.Error(), "column extra added") {
			t.Errorf("a column added: error %v, want one naming the table and the column", err)
		}
	})
}

// TestDetectReset: a reset that clears the bookmark deletes the key
// snapshot (a dry run only says so); --to-run keeps it while the files of
// the run it restores are there, and is refused, before anything changes,
// once they are gone.
func TestDetectReset(t *testing.T) {
	db := sqltest.New(t, sqldb.SQLite)
	db.Exec(t, detectDDL(db.Kind, "CREATE TABLE kv (id {pk}, v {text})"))
	fillKV(t, db, "kv", 50)
	d := newDetectTest(t, db, "kv")
	d.commit(d.mustPlan())
	first := *d.prev
	db.Exec(t, "DELETE FROM kv WHERE id < 40")
	d.commit(d.mustPlan())
	dir := snapshotDir(d.spec, d.src.Ctx, db.Connection, "kv")
	ctx := context.Background()
	req := source.ResetRequest{Job: d.spec.Job, Ctx: d.src.Ctx, Spec: d.spec, Source: &d.src, Now: *d.prev, HasNow: true}

	back := req
	back.After, back.HasAfter = first, true
	msg, err := resetChanges(ctx, back)
	if err != nil || !strings.Contains(msg, "kept") {
		t.Errorf("--to-run the first run: %q, %v; want the key snapshot kept", msg, err)
	}
	g := first.Detail.(StateDetail).Detect
	for i := range g.Ranges {
		if gen := g.generation(i); gen != "" {
			if err := os.Remove(rangeFile(dir, gen, i)); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if _, err := resetChanges(ctx, back); err == nil || !strings.Contains(err.Error(), "without --to-run") {
		t.Errorf("--to-run a run whose key snapshot is gone: %v, want a refusal naming the full reset", err)
	}

	dry := req
	dry.DryRun = true
	if msg, err := resetChanges(ctx, dry); err != nil || !strings.Contains(msg, "would be deleted") {
		t.Errorf("dry run: %q, %v", msg, err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the dry run touched the key snapshot: %v", err)
	}
	if msg, err := resetChanges(ctx, req); err != nil || !strings.Contains(msg, "deleted") {
		t.Errorf("reset: %q, %v", msg, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after the reset the key snapshot %s is still there (%v)", dir, err)
	}
}

// TestDetectWorkload: random inserts, updates (a key moved too) and
// deletes between runs, some runs dying before their commit: the change
// rows of the committed runs, replayed in order, make the table, each
// change fitting what was delivered before it (an I of a key not there, a
// U or D of one there).
func TestDetectWorkload(t *testing.T) {
	sqltest.EachOf(t, detectKinds, func(t *testing.T, db *sqltest.DB) {
		db.Exec(t, detectDDL(db.Kind, "CREATE TABLE kv (id {pk}, v {text})"))
		fillKV(t, db, "kv", 300)
		d := newDetectTest(t, db, "kv")
		rnd := rand.New(rand.NewPCG(uint64(db.Kind), 7))
		delivered := map[string]string{}
		apply := func(p *detectPlan) {
			t.Helper()
			for _, c := range changes(t, p) {
				parts := strings.SplitN(c, ":", 3)
				op, id, v := parts[0], parts[1], parts[2]
				_, there := delivered[id]
				if (op == "I") == there {
					t.Fatalf("change %s does not fit what was delivered (key there: %t)", c, there)
				}
				if op == "D" {
					delete(delivered, id)
				} else {
					delivered[id] = v
				}
			}
		}
		next := 1000
		for round := range 25 {
			for range 1 + rnd.IntN(8) {
				id := 1 + rnd.IntN(next)
				switch rnd.IntN(4) {
				case 0:
					db.Exec(t, fmt.Sprintf("INSERT INTO kv (id, v) VALUES (%d, 'n%d')", next, round))
					next++
				case 1:
					db.Exec(t, fmt.Sprintf("DELETE FROM kv WHERE id = %d", id))
				case 2:
					db.Exec(t, fmt.Sprintf("UPDATE kv SET v = 'u%d' WHERE id = %d", round, id))
				case 3:
					db.Exec(t, fmt.Sprintf("UPDATE kv SET id = %d WHERE id = %d", next, id))
					next++
				}
			}
			p := d.mustPlan()
			if rnd.IntN(4) == 0 {
				continue // the run dies before its commit
			}
			apply(p)
			if p.Pending() > 0 {
				d.commit(p)
			}
			want := map[string]string{}
			for _, r := range db.Strings(t, "SELECT "+map[sqldb.Kind]string{sqldb.MySQL: "CONCAT(id, ':', v)"}[db.Kind]+
				map[bool]string{true: "CAST(id AS TEXT) || ':' || v"}[db.Kind != sqldb.MySQL]+" FROM kv") {
				id, v, _ := strings.Cut(r, ":")
				want[id] = v
			}
			if fmt.Sprint(delivered) != fmt.Sprint(want) {
				t.Fatalf("round %d: delivered %d keys, table %d; they differ:\n got %v\nwant %v", round, len(delivered), len(want), delivered, want)
			}
		}
	})
}
