package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	_ "modernc.org/sqlite"

	"github.com/tidemark-etl/tidemark/internal/s3test"
	_ "github.com/tidemark-etl/tidemark/store/sqlite"
)

// oldStateDir is where testdata/oldstate/make.sh made the fixture: the
// recorded fingerprints hold the CSV folder's and the SQLite file's paths,
// so the state is replayed in the same folder (under a lock, one test at a
// time on the machine).
const oldStateDir = "/tmp/tidemark-oldstate"

// oldStateMtimes are the landing files' mtimes as make.sh set them (a
// checkout does not keep mtimes; the file records hold them).
var oldStateMtimes = map[string]string{
	"a1.csv": "2025-01-01T10:00:00Z",
	"a2.csv": "2025-01-01T11:00:00Z",
	"b1.csv": "2025-01-02T10:00:00Z",
	"c1.csv": "2025-01-03T10:00:00Z",
}

// TestOldStateContinues: a state file written by the release before typed
// manifests (testdata/oldstate, made by its make.sh with that release's
// binary) opens in this binary, which shows the same bookmark and runs,
// continues both jobs with exactly-once output, and re-reads the migrated
// runs' inputs (files and a SQL key range) in pause from/to.
func TestOldStateContinues(t *testing.T) {
	unlock := lockOldStateDir(t)
	defer unlock()
	src, err := filepath.Abs("testdata/oldstate")
	if err != nil {
		t.Fatal(err)
	}
	work := oldStateDir
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	for _, name := range []string{"orders.yaml", "db.yaml", "source.db"} {
		copyFile(t, filepath.Join(src, name), filepath.Join(work, name))
	}
	copyFile(t, filepath.Join(src, "state.db"), filepath.Join(work, ".tidemark", "state.db"))
	for name, mtime := range oldStateMtimes {
		copyFile(t, filepath.Join(src, "landing", name), filepath.Join(work, "landing", name))
		tm, err := time.Parse(time.RFC3339, mtime)
		if err != nil {
			t.Fatal(err)
		}
		setMtime(t, filepath.Join(work, "landing", name), tm)
	}

	// The sink's objects, uploaded to a fresh versitygw.
	srv := s3test.Start(t)
	env := &s3Env{srv: srv, client: s3Client(srv.Endpoint, srv.AccessKey, srv.SecretKey, srv.Region)}
	restoreBucket(t, env, filepath.Join(src, "s3"), "tm-oldstate")

	cwd := t.TempDir()
	f := &fixture{
		t: t, be: onS3, dir: work,
		in:      &localPlace{dir: filepath.Join(work, "landing")},
		out:     &s3Place{srv: env, bucket: "tm-oldstate", prefix: "orders/"},
		jobPath: filepath.Join(work, "orders.yaml"),
		cwd:     cwd,
		env:     append(s3EnvFor(srv.Endpoint, srv.AccessKey, srv.SecretKey, srv.Region), "TMPDIR="+t.TempDir()),
		sink:    parquetByProduct,
		gen:     &gen{next: 1070},
		secrets: []string{srv.SecretKey},
	}
	dbJob := filepath.Join(work, "db.yaml")

	// Read-only commands read the old file through an upgraded copy and
	// leave it as it is; the first run upgrades it.
	stateFile := filepath.Join(work, ".tidemark", "state.db")
	before, err := os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	// The same bookmark and runs as the old binary showed.
	for _, c := range []struct{ job, name string }{{f.jobPath, "orders"}, {dbJob, "db"}} {
		for _, cmd := range [][]string{{"bookmark", "show"}, {"runs"}} {
			what := c.name + "." + cmd[0]
			if cmd[0] == "bookmark" {
				what = c.name + ".bookmark"
			}
			want, err := os.ReadFile(filepath.Join(src, "golden", what+".json"))
			if err != nil {
				t.Fatal(err)
			}
			r := f.tidemark(nil, append(cmd, c.job, "--json")...)
			if r.code != 0 {
				t.Fatalf("%v: got exit %d, want 0\n%v", cmd, r.code, r)
			}
			if got := r.stdout; !bytes.Equal(bytes.TrimSpace([]byte(got)), bytes.TrimSpace(want)) {
				t.Errorf("%s %s --json:\n got %s\nwant %s", cmd, c.name, got, want)
			}
		}
	}
	if after, err := os.ReadFile(stateFile); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the read-only commands changed the old state file (%v)", err)
	}
	var oldRuns, oldDBRuns []struct {
		RunID  string `json:"run_id"`
		Undone bool   `json:"undone"`
	}
	readJSON(t, filepath.Join(src, "golden", "orders.runs.json"), &oldRuns)
	readJSON(t, filepath.Join(src, "golden", "db.runs.json"), &oldDBRuns)
	if len(oldRuns) != 3 || !oldRuns[0].Undone || len(oldDBRuns) != 2 {
		t.Fatalf("golden runs: got %+v and %+v, want 3 runs (the newest undone) and 2", oldRuns, oldDBRuns)
	}
	r1, r2 := oldRuns[2].RunID, oldRuns[1].RunID
	d1, d2 := oldDBRuns[1].RunID, oldDBRuns[0].RunID

	// The CSV job continues: the file the rewind left unread and a new one.
	landing := map[string][]record{}
	for name := range oldStateMtimes {
		landing[name] = readCSVRecords(t, filepath.Join(work, "landing", name))
	}
	d := f.gen.records(12)
	f.putCSV("d1.csv", d)
	s := f.mustRun()
	assertFiles(t, "the run after the migration", s, 2)
	all := concat(landing["a1.csv"], landing["a2.csv"], landing["b1.csv"], landing["c1.csv"], d)
	f.assertSink(all)
	assertRecords(t, "the new run's output", f.sinkRun(s.RunID), concat(landing["c1.csv"], d))

	// Pause from/to over migrated runs reads what they read.
	p := f.mustRun("--job-bookmark-option", "pause", "--job-bookmark-from", r1, "--job-bookmark-to", r2)
	assertFiles(t, "pause (r1, r2]", p, 1)
	assertRecords(t, "pause (r1, r2] output", f.sinkRun(p.RunID), landing["b1.csv"])

	// The table job continues after its recorded mark.
	db, err := sql.Open("sqlite", filepath.Join(work, "source.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 36; i <= 50; i++ {
		if _, err := db.Exec(`INSERT INTO orders VALUES (?, ?, ?)`, i, "v"+strconv.Itoa(i), i*10); err != nil {
			t.Fatal(err)
		}
	}
	dbOut := &s3Place{srv: env, bucket: "tm-oldstate", prefix: "db/"}
	runDB := func(flags ...string) runSummary {
		t.Helper()
		r := f.tidemark(nil, append([]string{"run", dbJob, "--json"}, flags...)...)
		if r.code != 0 {
			t.Fatalf("run %s: got exit %d, want 0\n%v", dbJob, r.code, r)
		}
		return decodeOne[runSummary](t, r)
	}
	s = runDB()
	ids := dbIDs(t, dbOut.mirror(t))
	assertIDSet(t, "the table job's sink", flatIDs(ids), idRange(1, 50))
	assertIDSet(t, "the table job's new run", ids[s.RunID], idRange(36, 50))
	p = runDB("--job-bookmark-option", "pause", "--job-bookmark-from", d1, "--job-bookmark-to", d2)
	assertIDSet(t, "pause (d1, d2] of the table job", dbIDs(t, dbOut.mirror(t))[p.RunID], idRange(21, 35))
}

// lockOldStateDir serialises the tests that use oldStateDir on this machine.
func lockOldStateDir(t *testing.T) func() {
	t.Helper()
	lf, err := os.OpenFile(oldStateDir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() { lf.Close() }
}

// restoreBucket creates bucket and uploads the files under dir/bucket as
// its objects.
func restoreBucket(t *testing.T, env *s3Env, dir, bucket string) {
	t.Helper()
	ctx := context.Background()
	if _, err := env.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("creating bucket %s: %v", bucket, err)
	}
	root := filepath.Join(dir, bucket)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, err = env.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket),
			Key: aws.String(filepath.ToSlash(rel)), Body: bytes.NewReader(data)})
		return err
	})
	if err != nil {
		t.Fatalf("restoring bucket %s: %v", bucket, err)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
}

// readCSVRecords reads a landing CSV file of sales orders.
func readCSVRecords(t *testing.T, path string) []record {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	var out []record
	for _, r := range rows[1:] {
		id, err1 := strconv.ParseInt(r[0], 10, 64)
		amount, err2 := strconv.ParseInt(r[3], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad row %v", path, r)
		}
		out = append(out, record{OrderID: id, CustomerID: r[1], Product: r[2], Amount: amount})
	}
	return out
}

// dbIDs reads the ids of the table job's Parquet sink, by run.
func dbIDs(t *testing.T, dir string) map[string][]int64 {
	t.Helper()
	out := map[string][]int64{}
	for _, file := range sinkFiles(t, dir) {
		rows, err := duck.Query("SELECT id FROM " + readerSQL([]string{file}, sinkFormat{format: "parquet"}))
		if err != nil {
			t.Fatalf("reading %s: %v", file, err)
		}
		run := runOfFile(t, file)
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			out[run] = append(out[run], id)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func flatIDs(byRun map[string][]int64) []int64 {
	var out []int64
	for _, ids := range byRun {
		out = append(out, ids...)
	}
	return out
}
