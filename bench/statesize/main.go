// Command statesize measures what the SQLite and PostgreSQL state stores
// keep per processed file and what the store's part of a no-op run costs:
// one job commits -files new file records in one run (40-byte paths, a
// 32-character ETag, as bench's pg-state scenario), the store's own
// db_bytes measure is read before and after, and then a fresh open reads
// the job's bookmark and every file record (what a run that finds nothing
// new reads of the store), timed in CPU seconds (user + system) and wall.
//
//	go run ./bench/statesize -files 100000 -pg "$TIDEMARK_TEST_PG"
//
// The PostgreSQL URL's password may be in it (it is moved to PGPASSWORD);
// each run uses a schema of its own (statesize_NANOS), left for a look:
// drop it when done.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
	_ "github.com/tidemark-etl/tidemark/store/postgres"
	_ "github.com/tidemark-etl/tidemark/store/sqlite"
)

func main() {
	files := flag.Int("files", 100_000, "file records to commit")
	pg := flag.String("pg", "", "a PostgreSQL server URL (postgres://user:pw@host:port/db); none: SQLite only")
	flag.Parse()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "statesize-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	locs := [][2]string{{"sqlite", filepath.Join(dir, "state.db")}}
	if *pg != "" {
		u, err := url.Parse(*pg)
		if err != nil {
			fail(err)
		}
		if pw, ok := u.User.Password(); ok {
			os.Setenv("PGPASSWORD", pw)
			u.User = url.User(u.User.Username())
		}
		q := u.Query()
		q.Set("schema", fmt.Sprintf("statesize_%d", time.Now().UnixNano()))
		u.RawQuery = q.Encode()
		locs = append(locs, [2]string{"postgres", u.String()})
	}
	fmt.Printf("%-9s %12s %14s %14s %12s %12s\n", "store", "files", "state bytes", "bytes/file", "no-op CPU s", "no-op wall s")
	for _, l := range locs {
		grew, cpu, wall, err := measure(ctx, l[1], *files)
		if err != nil {
			fail(fmt.Errorf("%s: %w", l[0], err))
		}
		fmt.Printf("%-9s %12d %14d %14.1f %12.3f %12.3f\n", l[0], *files, grew, float64(grew)/float64(*files), cpu, wall)
	}
}

func measure(ctx context.Context, loc string, files int) (grew int64, cpu, wall float64, err error) {
	st, err := store.Open(ctx, loc)
	if err != nil {
		return 0, 0, 0, err
	}
	before, err := st.Stats(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	l, err := st.AcquireLease(ctx, "statesize", store.Holder{ID: "bench", Host: "bench"}, time.Hour)
	if err != nil {
		return 0, 0, 0, err
	}
	added := make([]store.FileRecord, files)
	for n := range added {
		added[n] = store.FileRecord{Ctx: "orders", File: bookmark.File{
			Path: fmt.Sprintf("year=2025/month=%02d/part-%07d-%06d.csv.gz", n%12+1, n, 0), Size: int64(n), MTime: int64(n),
			ETag: fmt.Sprintf("%032x", n)}}
	}
	r, err := st.BeginRun(ctx, l.Token, store.Run{Job: l.Job, RunID: "run-1", Mode: bookmark.ModeEnable, Host: "bench"})
	if err != nil {
		return 0, 0, 0, err
	}
	r.Status = store.StatusSucceeded
	_, err = st.Commit(ctx, store.Commit{Job: l.Job, Token: l.Token, Advance: true, Run: r,
		Sources: map[string]bookmark.SourceState{"orders": {Kind: "files", Fingerprint: "fp", Tracking: bookmark.TrackExact, Files: int64(files)}},
		Added:   added})
	if err != nil {
		return 0, 0, 0, err
	}
	if err := st.ReleaseLease(ctx, l); err != nil {
		return 0, 0, 0, err
	}
	after, err := st.Stats(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	st.Close()
	grew = after["db_bytes"] - before["db_bytes"]

	// The store's part of a no-op: open, bookmark, every file record.
	c0, t0 := cpuTime(), time.Now()
	st, err = store.Open(ctx, loc)
	if err != nil {
		return 0, 0, 0, err
	}
	defer st.Close()
	if _, err := st.Head(ctx, "statesize"); err != nil {
		return 0, 0, 0, err
	}
	if _, err := st.SourceStates(ctx, "statesize"); err != nil {
		return 0, 0, 0, err
	}
	n := 0
	for _, err := range st.Files(ctx, "statesize", "orders") {
		if err != nil {
			return 0, 0, 0, err
		}
		n++
	}
	if n != files {
		return 0, 0, 0, fmt.Errorf("read %d file records back, want %d", n, files)
	}
	return grew, (cpuTime() - c0).Seconds(), time.Since(t0).Seconds(), nil
}

// cpuTime is this process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "statesize:", err)
	os.Exit(1)
}
