package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestS3State: a job whose state lives in S3 (state: s3://bucket/prefix/)
// over two days and a rewind, through the binary: each run reads only what
// is new, runs --json and bookmark show --json read the state back from
// S3, the output holds every record exactly once until the rewind, the
// rewind restores Monday's bookmark exactly and the run after it reads
// Tuesday's files again; no local state file is made.
func TestS3State(t *testing.T) {
	t.Parallel()
	env := sharedS3(t)
	bucket := env.srv.NewBucket(t)
	state := "s3://" + bucket + "/tidemark/state/"
	f := newFixtureOn(t, onS3, jobOpts{top: []string{"state: " + state}})

	monday := f.addCSVs("monday", 3, 20)
	mon := f.mustRun()
	assertFiles(t, "Monday", mon, 3)
	atMon := f.bookmark()
	if atMon.RunID != mon.RunID {
		t.Errorf("bookmark after Monday names run %q, want %q", atMon.RunID, mon.RunID)
	}
	tuesday := f.addCSVs("tuesday", 2, 20)
	tue := f.mustRun()
	assertFiles(t, "Tuesday", tue, 2)
	assertFiles(t, "a run with nothing new", f.mustRun(), 0)
	f.assertSink(concat(monday, tuesday))
	f.assertNoDuplicates()
	if bm := f.bookmark(); bm.RunID != tue.RunID || sameSources(bm, atMon) {
		t.Errorf("bookmark after Tuesday = run %q, want %q with other source states than Monday's", bm.RunID, tue.RunID)
	}

	r := f.tidemark(nil, "runs", f.jobPath, "--json")
	if r.code != 0 {
		t.Fatalf("runs --json: exit %d\n%v", r.code, r)
	}
	var runs []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
		t.Fatalf("runs --json: %v\n%s", err, r.stdout)
	}
	var ids []string
	for _, run := range runs {
		ids = append(ids, run["run_id"].(string))
		if run["status"] != "succeeded" {
			t.Errorf("runs --json: run %v is %v, want succeeded", run["run_id"], run["status"])
		}
	}
	if len(ids) != 3 || ids[1] != tue.RunID || ids[2] != mon.RunID {
		t.Errorf("runs --json lists %v, want 3 runs newest first: the no-op, %s, %s", ids, tue.RunID, mon.RunID)
	}

	f.reset("--to-run", mon.RunID)
	if bm := f.bookmark(); !sameSources(bm, atMon) {
		t.Errorf("bookmark after the rewind to Monday differs from Monday's:\n got  %v\n want %v", bm.Sources, atMon.Sources)
	}
	again := f.mustRun()
	assertFiles(t, "the run after the rewind", again, 2)
	assertRecords(t, "the run after the rewind", f.sinkRun(again.RunID), tuesday)
	f.assertSink(concat(monday, tuesday, tuesday))

	if _, err := os.Stat(filepath.Join(filepath.Dir(f.jobPath), ".tidemark")); !os.IsNotExist(err) {
		t.Errorf("a job with state in S3 made a local state folder (%v)", err)
	}
	keys, err := env.listKeys(t.Context(), bucket, "tidemark/state/")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(keys, "tidemark/state/tidemark-state.json") || !slices.ContainsFunc(keys, func(k string) bool {
		return strings.HasPrefix(k, "tidemark/state/jobs/sales/")
	}) {
		t.Errorf("state objects in the bucket: %v, want the store's identity and the job's objects", keys)
	}
}
