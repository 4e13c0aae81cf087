package tidemark_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/tidemark-etl/tidemark"
	_ "github.com/tidemark-etl/tidemark/engine/duckdb"
	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/job"
	_ "github.com/tidemark-etl/tidemark/objstore/local"
	"github.com/tidemark-etl/tidemark/store"
	_ "github.com/tidemark-etl/tidemark/store/sqlite"
)

// crash is what the fault hook panics with to simulate a process dying at
// a step: no deferred cleanup of the run's own making runs after it except
// the lease release and store close, which a dead process's lease expiry
// and the OS would do anyway.
type crash struct{ step string }

// world is one random history's landing folder and its oracle.
type world struct {
	t        *testing.T
	dir      string
	tracking string // the source's tracking mode
	nextID   int
	rng      *rand.Rand
	version  map[string]int   // path -> newest version written
	present  map[string]bool  // path -> on disk now
	rows     map[string][]int // "path@version" -> record ids
	// bookmark is the oracle's bookmark: path -> version last read by a
	// committed enable run.
	bookmark map[string]int
	// delivered is what the enable sink must hold once every committed run
	// is published: record id -> count (must be 1).
	delivered map[int]int
	history   []snapshot // completed enable runs, for rewinds
}

type snapshot struct {
	runID     string
	bookmark  map[string]int
	delivered map[int]int
}

const jobTmpl = `job: prop
state: state.db
sources:
  - ctx: src
    path: landing/
    format: csv
    options: {header: true}
    tracking: %s
sinks:
  - ctx: out
    path: %s/
    format: parquet
`

// writeFile writes a new version of path; old sets its mtime 25 years
// back (a late file), future up to two days ahead.
func (w *world) writeFile(path string, old, future bool) {
	w.t.Helper()
	w.version[path]++
	w.present[path] = true
	v := w.version[path]
	n := 1 + w.rng.IntN(5)
	var b strings.Builder
	b.WriteString("id,payload\n")
	var ids []int
	for range n {
		w.nextID++
		ids = append(ids, w.nextID)
		fmt.Fprintf(&b, "%d,%s@%d\n", w.nextID, path, v)
	}
	w.rows[fmt.Sprintf("%s@%d", path, v)] = ids
	p := filepath.Join(w.dir, "landing", path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		w.t.Fatal(err)
	}
	var tm time.Time
	switch {
	case old:
		tm = time.Date(2001, 1, 1, 0, 0, w.rng.IntN(60), 0, time.UTC)
	case future:
		tm = time.Now().Add(time.Duration(1+w.rng.IntN(48*60)) * time.Minute)
	default:
		return
	}
	if err := os.Chtimes(p, tm, tm); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) spec(sink string) *job.Spec {
	w.t.Helper()
	path := filepath.Join(w.dir, "job-"+sink+".yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(jobTmpl, w.tracking, sink)), 0o644); err != nil {
		w.t.Fatal(err)
	}
	s, err := job.Load(path)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// run runs the job, crashing at step if it is not empty. It returns the run
// id of a completed run.
func (w *world) run(sink string, opts tidemark.RunOptions, step string) (id string, crashed bool) {
	w.t.Helper()
	fault.Hook = func(s string) {
		if s == step {
			panic(crash{s})
		}
	}
	defer func() { fault.Hook = nil }()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	opts.LeaseTTL = 2 * time.Second
	for {
		res, err := tidemark.Run(context.Background(), w.spec(sink), opts)
		if err != nil && strings.Contains(err.Error(), "lease held") {
			// the simulated crash left its lease; it expires like a dead process's
			time.Sleep(500 * time.Millisecond)
			continue
		}
		if err != nil {
			w.t.Fatalf("run (%s, crash at %q): %v", opts.Mode, step, err)
		}
		return res.RunID, false
	}
}

// readSink returns the record ids in a sink's published files.
func readSink(t *testing.T, dir string) []int {
	t.Helper()
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), "_") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			files = append(files, "'"+p+"'")
		}
		return nil
	})
	if len(files) == 0 {
		return nil
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT id FROM read_parquet([" + strings.Join(files, ",") + "]) ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func (w *world) check(when string) {
	w.t.Helper()
	got := readSink(w.t, filepath.Join(w.dir, "out"))
	var want []int
	for id, n := range w.delivered {
		for range n {
			want = append(want, id)
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		w.t.Fatalf("%s: sink holds %d records, oracle %d\n got %v\nwant %v", when, len(got), len(want), got, want)
	}
}

// commitOracle applies a committed enable run to the oracle.
func (w *world) commitOracle() {
	for path, v := range w.version {
		if !w.present[path] || w.bookmark[path] == v {
			continue
		}
		w.bookmark[path] = v
		for _, id := range w.rows[fmt.Sprintf("%s@%d", path, v)] {
			w.delivered[id]++
		}
	}
}

func clone[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestPropertyRandomHistories drives random histories of arrivals,
// modifications, deletions, late files with old mtimes, crashes at every
// commit step, pauses and rewinds through the real runner, store and engine,
// and checks after every completed run that the sink holds every record that
// committed enable runs read, exactly once.
func TestPropertyRandomHistories(t *testing.T) {
	randomHistories(t, "exact", 6)
}

// TestPropertyTimestampHistories is the same under timestamp tracking,
// with files from the future (mtimes up to two days ahead) instead of late
// ones, which timestamp tracking misses by design. Its oracle is exact
// tracking's: every file is read once per version, whatever its mtime, and
// a file from the future hides nothing that lands after it.
func TestPropertyTimestampHistories(t *testing.T) {
	randomHistories(t, "timestamp", 4)
}

func randomHistories(t *testing.T, tracking string, histories int) {
	steps := 14
	if n, err := strconv.Atoi(os.Getenv("TIDEMARK_PROPERTY_HISTORIES")); err == nil {
		histories = n
	}
	for h := range histories {
		seed := uint64(h + 1)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rand := rand.New(rand.NewPCG(seed, seed))
			w := &world{t: t, dir: t.TempDir(), tracking: tracking, rng: rand, version: map[string]int{}, present: map[string]bool{}, rows: map[string][]int{},
				bookmark: map[string]int{}, delivered: map[int]int{}}
			if err := os.MkdirAll(filepath.Join(w.dir, "landing"), 0o755); err != nil {
				t.Fatal(err) // a source folder must exist
			}
			crashAt := []string{"", "", "", fault.AfterPlan, fault.AfterStage, fault.AfterCommit, fault.MidPublish, fault.AfterPublish}
			var log []string
			defer func() {
				if t.Failed() {
					t.Logf("history: %s", strings.Join(log, "; "))
				}
			}()
			for range steps {
				switch op := rand.IntN(10); {
				case op <= 2:
					n := 1 + rand.IntN(3)
					for range n {
						w.writeFile(fmt.Sprintf("d%d/f%03d.csv", rand.IntN(3), len(w.version)), false, false)
					}
					log = append(log, fmt.Sprintf("arrive %d", n))
				case op == 3 && tracking == "timestamp":
					w.writeFile(fmt.Sprintf("future/f%03d.csv", len(w.version)), false, true)
					log = append(log, "file from the future")
				case op == 3:
					w.writeFile(fmt.Sprintf("late/f%03d.csv", len(w.version)), true, false)
					log = append(log, "late file")
				case op == 4 && len(w.present) > 0:
					paths := sortedPaths(w.present)
					p := paths[rand.IntN(len(paths))]
					w.writeFile(p, false, false)
					log = append(log, "modify "+p)
				case op == 5 && len(w.present) > 0:
					paths := sortedPaths(w.present)
					p := paths[rand.IntN(len(paths))]
					_ = os.Remove(filepath.Join(w.dir, "landing", p))
					delete(w.present, p)
					log = append(log, "delete "+p)
				case op == 6:
					w.run("paused", tidemark.RunOptions{Mode: "pause"}, "")
					log = append(log, "pause run")
				case op == 7 && len(w.history) > 0:
					target := w.history[rand.IntN(len(w.history))]
					st, err := store.Open(context.Background(), filepath.Join(w.dir, "state.db"))
					if err != nil {
						t.Fatal(err)
					}
					for {
						_, err = tidemark.Reset(context.Background(), st, "prop", tidemark.ResetOptions{ToRun: target.runID, Purge: true})
						if err == nil || !strings.Contains(err.Error(), "lease held") {
							break
						}
						time.Sleep(500 * time.Millisecond)
					}
					st.Close()
					if err != nil {
						t.Fatalf("rewind to %s: %v", target.runID, err)
					}
					w.bookmark, w.delivered = clone(target.bookmark), clone(target.delivered)
					idx := slices.IndexFunc(w.history, func(s snapshot) bool { return s.runID == target.runID })
					w.history = w.history[:idx+1]
					log = append(log, "rewind to "+target.runID)
					w.check("after rewind to " + target.runID)
				default:
					step := crashAt[rand.IntN(len(crashAt))]
					id, crashed := w.run("out", tidemark.RunOptions{}, step)
					switch {
					case crashed && (step == fault.AfterPlan || step == fault.AfterStage):
						log = append(log, "run crashed before commit at "+step)
					case crashed:
						w.commitOracle()
						log = append(log, "run crashed after commit at "+step)
					default:
						w.commitOracle()
						w.history = append(w.history, snapshot{id, clone(w.bookmark), clone(w.delivered)})
						log = append(log, "run "+id)
						w.check("after run " + id)
					}
				}
			}
			// a final clean run rolls everything forward
			id, _ := w.run("out", tidemark.RunOptions{}, "")
			w.commitOracle()
			log = append(log, "final run "+id)
			w.check("after the final run")
		})
	}
}

func sortedPaths[V any](m map[string]V) []string {
	ps := make([]string, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}
