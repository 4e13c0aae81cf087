package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
	_ "github.com/tidemark-etl/tidemark/store/postgres"
)

// benchPGState compares the PostgreSQL state store with SQLite on what a
// run pays: a no-op run over 100k processed files through the binary
// against find | sort (pgNoop), then the latency of a typical commit (one
// run's record, 10 file records, 2 outputs, its source state), side by
// side, and the state's size per 100k processed files. Latency and size
// drive the stores through their Go API in this process, so those times
// are the stores' own, not a CLI's.
func benchPGState(ctx context.Context, c *config) section {
	s := section{Title: "14. PostgreSQL state store: no-op run over 100k processed files, commit latency against SQLite, state size per 100k files"}
	b := &s.Body
	latRow := summaryRow{Measure: "Commit latency p50, PostgreSQL state vs SQLite", Tidemark: "—", Baseline: "—", Ratio: "—", Target: "report", Result: "not measured"}
	sizeRow := summaryRow{Measure: fmt.Sprintf("PostgreSQL state size per 100k files (%s files committed)", thousands(int64(c.PGStateFiles))),
		Tidemark: "—", Baseline: "—", Ratio: "—", Target: "report", Result: "not measured"}
	noopRow := summaryRow{Measure: fmt.Sprintf("No-op run over %s processed files, state in PostgreSQL", thousands(int64(c.NoopDirs*c.NoopPerDir))),
		Tidemark: "—", Baseline: "—", Ratio: "—", Target: fmt.Sprintf("≤ %.1f×", c.PGStateTarget), Result: "not measured"}
	sqliteNoopRow := noopRow
	sqliteNoopRow.Measure = strings.Replace(noopRow.Measure, "PostgreSQL", "SQLite", 1)
	notMeasured := func(why string) section {
		b.p(why)
		s.Summary = append(s.Summary, noopRow, sqliteNoopRow, latRow, sizeRow)
		return s
	}
	srv, err := c.srv.postgres(ctx)
	if err != nil {
		return notMeasured("Not measured: " + err.Error())
	}
	db, err := createDB(ctx, srv, "tm_bench_pgstate")
	if err != nil {
		return notMeasured("Not measured: " + err.Error())
	}
	defer db.drop()
	os.Setenv("PGPASSWORD", sqlPassword) // libpq's convention, as a user's job gets it
	dir := filepath.Join(c.work, "pgstate")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return notMeasured(err.Error())
	}
	var problems []string
	noopRow, sqliteNoopRow, problems = pgNoop(ctx, c, b, srv, srv.url(db.name)+"?schema=tidemark_noop", dir)
	s.Problems = append(s.Problems, problems...)
	locs := map[string]string{
		"sqlite":   filepath.Join(dir, "state.db"),
		"postgres": srv.url(db.name) + "?schema=tidemark_bench",
	}
	stores := map[string]store.Store{}
	for name, loc := range locs {
		st, err := store.Open(ctx, loc)
		if err != nil {
			return notMeasured(fmt.Sprintf("Opening the %s store: %v", name, err))
		}
		defer st.Close()
		stores[name] = st
	}
	b.h3("Commit latency (BeginRun + Commit)")
	b.p(fmt.Sprintf("Both stores are driven through the `store.Store` API in the harness's process: SQLite in the scratch "+
		"folder (`%s`), PostgreSQL on the harness's server over loopback (`%s`, password in `PGPASSWORD`). "+
		"Each commit is a whole run as the runner commits it: `BeginRun`, then one `Commit` holding the run record, "+
		"10 new file records, 2 outputs, an overwrite action and the source's state, checked against the fencing token "+
		"and compared-and-swapped on the bookmark version. The %d commits alternate between the stores, one each in turn.",
		locs["sqlite"], store.Redact(locs["postgres"]), c.PGStateCommits))

	lat := map[string][]time.Duration{}
	leases := map[string]store.Lease{}
	for name, st := range stores {
		l, err := st.AcquireLease(ctx, "bench-latency", store.Holder{ID: "bench", Host: "bench"}, time.Hour)
		if err != nil {
			return notMeasured(fmt.Sprintf("Taking a lease on the %s store: %v", name, err))
		}
		leases[name] = l
	}
	logf("pg-state: %d commits per store", c.PGStateCommits)
	for i := range c.PGStateCommits {
		for _, name := range []string{"sqlite", "postgres"} {
			d, err := timedCommit(ctx, stores[name], leases[name], i, 10)
			if err != nil {
				return notMeasured(fmt.Sprintf("Commit %d on the %s store: %v", i+1, name, err))
			}
			lat[name] = append(lat[name], d)
		}
	}
	q := func(name string, p float64) time.Duration {
		ds := slices.Clone(lat[name])
		slices.Sort(ds)
		return ds[min(len(ds)-1, int(float64(len(ds))*p))]
	}
	var rows [][]string
	for _, name := range []string{"sqlite", "postgres"} {
		rows = append(rows, []string{name, ms(q(name, 0.5)), ms(q(name, 0.9)), ms(q(name, 0.99))})
	}
	ratio50 := float64(q("postgres", 0.5)) / float64(q("sqlite", 0.5))
	ratio99 := float64(q("postgres", 0.99)) / float64(q("sqlite", 0.99))
	rows = append(rows, []string{"ratio postgres / sqlite", ratio(ratio50), ratio(float64(q("postgres", 0.9)) / float64(q("sqlite", 0.9))), ratio(ratio99)})
	b.table([]string{"store", "p50", "p90", "p99"}, rows)
	b.p("Mind the durability each side pays: SQLite commits with `synchronous=FULL` (an fsync per commit on this " +
		"machine's disk), while the harness's PostgreSQL runs with `fsync=off`, as the tests' does, so its commits pay " +
		"the round trips and the server's work but no disk flush. A production PostgreSQL flushes its WAL at commit " +
		"(over the network, often to a replica too): expect its latency to be this plus that flush.")
	latRow.Tidemark, latRow.Baseline, latRow.Ratio, latRow.Result = ms(q("postgres", 0.5)), ms(q("sqlite", 0.5))+" (SQLite)", ratio(ratio50), "done"

	// State size: one first run over PGStateFiles new files, in each store.
	b.h3("State size per 100k files")
	logf("pg-state: committing %s files to each store", thousands(int64(c.PGStateFiles)))
	var sizeRows [][]string
	per100k := map[string]float64{}
	for _, name := range []string{"sqlite", "postgres"} {
		st := stores[name]
		before, err := st.Stats(ctx)
		if err != nil {
			return notMeasured(fmt.Sprintf("Stats of the %s store: %v", name, err))
		}
		l, err := st.AcquireLease(ctx, "bench-size", store.Holder{ID: "bench", Host: "bench"}, time.Hour)
		if err != nil {
			return notMeasured(err.Error())
		}
		d, err := timedCommit(ctx, st, l, 0, c.PGStateFiles)
		if err != nil {
			return notMeasured(fmt.Sprintf("The %s-file commit on the %s store: %v", thousands(int64(c.PGStateFiles)), name, err))
		}
		after, err := st.Stats(ctx)
		if err != nil {
			return notMeasured(fmt.Sprintf("Stats of the %s store: %v", name, err))
		}
		grew := after["db_bytes"] - before["db_bytes"]
		per100k[name] = float64(grew) * 100_000 / float64(c.PGStateFiles)
		sizeRows = append(sizeRows, []string{name, secs(d), mb(grew), mb(int64(per100k[name]))})
	}
	b.table([]string{"store", fmt.Sprintf("commit of %s files", thousands(int64(c.PGStateFiles))), "state grew by", "per 100k files"}, sizeRows)
	b.p("The growth is the store's own measure (`Stats`' `db_bytes`): SQLite's pages (WAL excluded), PostgreSQL's " +
		"`pg_total_relation_size` of every table of the schema, indexes and TOAST included. Paths are 40 bytes, like " +
		"`year=2025/month=03/part-0000123.csv.gz`, with a 32-character ETag.")
	sizeRow.Tidemark, sizeRow.Baseline, sizeRow.Result = mb(int64(per100k["postgres"])), mb(int64(per100k["sqlite"]))+" (SQLite)", "done"
	sizeRow.Ratio = ratio(per100k["postgres"] / per100k["sqlite"])
	s.Summary = append(s.Summary, noopRow, sqliteNoopRow, latRow, sizeRow)
	return s
}

// timedCommit begins run i of the lease's job and commits it with files
// new file records, returning how long BeginRun and Commit took together.
func timedCommit(ctx context.Context, st store.Store, l store.Lease, i, files int) (time.Duration, error) {
	h, err := st.Head(ctx, l.Job)
	if err != nil {
		return 0, err
	}
	id := fmt.Sprintf("run-%06d", i)
	added := make([]store.FileRecord, files)
	for n := range added {
		added[n] = store.FileRecord{Ctx: "orders", File: bookmark.File{
			Path: fmt.Sprintf("year=2025/month=%02d/part-%07d-%06d.csv.gz", n%12+1, n, i), Size: int64(n), MTime: int64(n),
			ETag: fmt.Sprintf("%032x", n)}}
	}
	start := time.Now()
	r, err := st.BeginRun(ctx, l.Token, store.Run{Job: l.Job, RunID: id, Mode: bookmark.ModeEnable, Host: "bench"})
	if err != nil {
		return 0, err
	}
	r.Status = store.StatusSucceeded
	r.Sources = map[string]store.Count{"orders": {Files: int64(files), Rows: int64(files)}}
	_, err = st.Commit(ctx, store.Commit{Job: l.Job, Token: l.Token, BaseVersion: h.Version, Advance: true, Run: r,
		Sources: map[string]bookmark.SourceState{"orders": {Kind: "files", Fingerprint: "fp", Tracking: bookmark.TrackExact,
			Files: int64(files * (i + 1))}},
		Added: added,
		Outputs: []store.Output{
			{RunID: id, Sink: "out", Kind: "file", Root: "s3://out/", Staged: "_tidemark/staging/" + id + "/0", Final: "part-" + id + "-0.parquet", Rows: 5},
			{RunID: id, Sink: "out", Kind: "file", Root: "s3://out/", Staged: "_tidemark/staging/" + id + "/1", Final: "part-" + id + "-1.parquet", Rows: 5},
		},
		Actions: []store.SinkAction{{Sink: "out", Root: "s3://out/", Mode: "overwrite"}},
	})
	return time.Since(start), err
}
