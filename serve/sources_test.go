package serve_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/internal/s3test"
	"github.com/tidemark-etl/tidemark/job"
	_ "github.com/tidemark-etl/tidemark/objstore/s3"
	"github.com/tidemark-etl/tidemark/store"
)

// sourcesWorld is a job reading CSV objects from versitygw and a SQLite
// table, writing both to an S3 sink, with its SQLite state.
type sourcesWorld struct {
	*world
	s3     *s3test.Server
	bucket string
	db     *sql.DB
}

// newSourcesWorld starts versitygw, makes the bucket, the SQLite table
// and the job file.
func newSourcesWorld(t *testing.T) *sourcesWorld {
	t.Helper()
	srv := s3test.Start(t)
	srv.SetEnv(t)
	t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
	w := &sourcesWorld{world: newWorld(t), s3: srv, bucket: srv.NewBucket(t)}
	dbPath := filepath.Join(w.dir, "shop.db")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w.db = db
	if _, err := db.Exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, amount INTEGER)`); err != nil {
		t.Fatal(err)
	}
	yml := fmt.Sprintf("job: %q\nsources:\n"+
		"  - ctx: events\n    path: s3://%s/in/\n    format: csv\n    options: {header: true}\n"+
		"  - ctx: orders_db\n    connection: %q\n    table: orders\n    bookmark_keys: [id]\n"+
		"sinks:\n  - ctx: events_out\n    from: events\n    path: s3://%s/out/events/\n    format: csv\n"+
		"  - ctx: orders_out\n    from: orders_db\n    path: s3://%s/out/orders/\n    format: csv\n",
		jobName, w.bucket, "sqlite:"+dbPath, w.bucket, w.bucket)
	if err := os.WriteFile(w.jobFile, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// put uploads a CSV object under in/ with rows data rows.
func (w *sourcesWorld) put(name string, rows int) {
	w.t.Helper()
	var b strings.Builder
	b.WriteString("id,amount\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d,%d\n", i, i*10)
	}
	if err := w.s3.WriteObjectFile(w.bucket, "in/"+name, []byte(b.String())); err != nil {
		w.t.Fatal(err)
	}
}

// insert adds table rows with ids from..to.
func (w *sourcesWorld) insert(from, to int) {
	w.t.Helper()
	for id := from; id <= to; id++ {
		if _, err := w.db.Exec(`INSERT INTO orders VALUES (?, ?)`, id, id*100); err != nil {
			w.t.Fatal(err)
		}
	}
}

// runS3 runs the job in process (the S3 object store registered here).
func (w *sourcesWorld) runS3() string {
	w.t.Helper()
	spec, err := job.Load(w.jobFile)
	if err != nil {
		w.t.Fatal(err)
	}
	res, err := tidemark.Run(context.Background(), spec, tidemark.RunOptions{State: w.state})
	if err != nil {
		w.t.Fatalf("run: %v", err)
	}
	return res.RunID
}

// runItems is the part of the run detail these tests read.
type runItems struct {
	Outputs struct {
		Items []store.Output `json:"items"`
		Total int            `json:"total"`
	} `json:"outputs"`
	Inputs struct {
		Items []struct {
			Ctx   string          `json:"ctx"`
			Path  string          `json:"path"`
			Size  *int64          `json:"size"`
			ETag  string          `json:"etag"`
			Range json.RawMessage `json:"range"`
			Rows  *int64          `json:"rows"`
		} `json:"items"`
		Total int `json:"total"`
	} `json:"inputs"`
}

func TestAPIOverS3AndSQLiteRuns(t *testing.T) {
	w := newSourcesWorld(t)
	w.put("a.csv", 2)
	w.put("b.csv", 3)
	w.insert(1, 5)
	first := w.runS3()
	w.put("c.csv", 4)
	w.insert(6, 8)
	second := w.runS3()
	w.serve(nil)
	ctx := context.Background()

	var jobs jobsAnswer
	w.getJSON("/api/v1/jobs", &jobs)
	if len(jobs.Jobs) != 1 || jobs.Jobs[0].Version != 2 || jobs.Jobs[0].RunID != second {
		t.Fatalf("jobs: got %+v, want %s at version 2 from run %s", jobs.Jobs, jobName, second)
	}
	if lr := jobs.Jobs[0].LastRun; lr == nil || lr.Sources["events"].Rows != 4 || lr.Sources["orders_db"].Rows != 3 {
		t.Errorf("last run: got %+v, want 4 event rows and 3 table rows", lr)
	}

	var detail struct {
		NewestFiles map[string][]struct {
			Path string `json:"path"`
		} `json:"newest_files"`
	}
	w.getJSON(jobPath(""), &detail)
	if _, ok := detail.NewestFiles["orders_db"]; ok || len(detail.NewestFiles["events"]) != 3 || detail.NewestFiles["events"][0].Path != "c.csv" {
		t.Errorf("newest files: got %+v, want the three S3 keys (c.csv first) and no table ctx", detail.NewestFiles)
	}

	// Input paths are keys relative to the source's location.
	for _, tc := range []struct {
		run       string
		keys      []string
		tableRows int64
	}{{first, []string{"a.csv", "b.csv"}, 5}, {second, []string{"c.csv"}, 3}} {
		var got runItems
		w.getJSON(jobPath("/runs/"+tc.run), &got)
		var keys []string
		ranges := 0
		for _, in := range got.Inputs.Items {
			switch {
			case in.Ctx == "events":
				if in.ETag == "" || in.Size == nil || *in.Size == 0 {
					t.Errorf("run %s: S3 input %+v, want its ETag and size", tc.run, in)
				}
				keys = append(keys, in.Path)
			case in.Ctx == "orders_db":
				ranges++
				if in.Rows == nil || *in.Rows != tc.tableRows || len(in.Range) == 0 {
					t.Errorf("run %s: range input %+v, want %d rows and a range", tc.run, in, tc.tableRows)
				}
			default:
				t.Errorf("run %s: input of unknown ctx %+v", tc.run, in)
			}
		}
		if !slices.Equal(keys, tc.keys) || ranges != 1 {
			t.Errorf("run %s inputs: got keys %v and %d ranges, want %v and 1", tc.run, keys, ranges, tc.keys)
		}
		// What the store says.
		var stored []string
		for f, err := range w.st.RunInputs(ctx, jobName, []string{tc.run}) {
			if err != nil {
				t.Fatal(err)
			}
			stored = append(stored, f.File.Path)
		}
		if !slices.Equal(keys, stored) || got.Inputs.Total != len(stored)+1 {
			t.Errorf("run %s inputs: got %v (total %d), the store has %v and one range", tc.run, keys, got.Inputs.Total, stored)
		}
		outs, err := w.st.Outputs(ctx, jobName, tc.run)
		if err != nil {
			t.Fatal(err)
		}
		if got.Outputs.Total != len(outs) || len(got.Outputs.Items) != len(outs) {
			t.Fatalf("run %s outputs: got %d (total %d), the store has %d", tc.run, len(got.Outputs.Items), got.Outputs.Total, len(outs))
		}
		sinks := map[string]bool{}
		for i, o := range got.Outputs.Items {
			if o != outs[i] {
				t.Errorf("run %s output %d: got %+v, the store has %+v", tc.run, i, o, outs[i])
			}
			if o.Kind != "upload" || !strings.HasPrefix(o.Root, "s3://"+w.bucket+"/out/") || !o.Published {
				t.Errorf("run %s output %+v: want a published upload under s3://%s/out/", tc.run, o, w.bucket)
			}
			sinks[o.Sink] = true
		}
		if !sinks["events_out"] || !sinks["orders_out"] {
			t.Errorf("run %s outputs: got sinks %v, want events_out and orders_out", tc.run, sinks)
		}
	}
}
