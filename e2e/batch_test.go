package e2e

import (
	"syscall"
	"testing"
)

// batchedRun is the part of `run --json` a run read in batches adds.
type batchedRun struct {
	RunID   string `json:"run_id"`
	Version int64  `json:"version"`
	Batches []struct {
		RunID   string `json:"run_id"`
		Status  string `json:"status"`
		Version int64  `json:"version"`
		Files   int64  `json:"files"`
	} `json:"batches"`
}

// TestBatchedRunKilledBetweenBatches: a first run over more files than
// batch_files publishes each batch as it commits it; killed after its
// first batch (TIDEMARK_FAULT=after-batch), it leaves that batch's records
// in the sink and its version in the bookmark; the rerun reads only the
// rest, in batches, and every record ends in the sink exactly once.
func TestBatchedRunKilledBetweenBatches(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{top: []string{"batch_files: 2"}})
		all := f.addCSVs("day", 5, 10)

		if _, r := f.run([]string{"TIDEMARK_FAULT=after-batch"}); r.signal != syscall.SIGKILL {
			t.Fatalf("run with TIDEMARK_FAULT=after-batch: want it killed after its first batch\n%v", r)
		}
		if got := len(f.readSink()); got != 20 {
			t.Errorf("sink after the kill: %d records, want the first batch's 20 (2 files of 10)", got)
		}
		if b := f.bookmark(); string(b.Version) != "1" {
			t.Errorf("bookmark after the kill: version %s, want 1 (the first batch)", b.Version)
		}

		s, r := f.run(nil)
		if r.code != 0 || s.Status != "succeeded" {
			t.Fatalf("rerun: got exit %d status %q, want 0 succeeded\n%v", r.code, s.Status, r)
		}
		assertFiles(t, "the rerun", s, 3)
		b := decodeOne[batchedRun](t, r)
		if len(b.Batches) != 2 || b.Batches[0].RunID != b.RunID || b.Batches[1].RunID != b.RunID+"-b0002" ||
			b.Batches[0].Files != 2 || b.Batches[1].Files != 1 || b.Version != 3 {
			t.Errorf("rerun's batches: got %+v (version %d), want %s with 2 files and %s-b0002 with 1, at version 3",
				b.Batches, b.Version, b.RunID, b.RunID)
		}
		f.assertSink(all)
		f.assertNoDuplicates()
		if left := f.stagedFiles(); len(left) > 0 {
			t.Errorf("after the rerun, %d staged files are left under _tidemark: %v", len(left), firstFew(left))
		}
		// Each batch is a run of its own in the history.
		runs := decodeOne[[]runSummary](t, f.tidemark(nil, "runs", f.jobPath, "--json"))
		var files []int64
		for _, r := range runs {
			if r.Status == "succeeded" {
				files = append(files, r.Sources["orders_source"].Files)
			}
		}
		if len(files) != 3 || files[0] != 1 || files[1] != 2 || files[2] != 2 {
			t.Errorf("runs: succeeded runs read %v files, newest first, want [1 2 2]", files)
		}
		assertFiles(t, "the run after the rerun", f.mustRun(), 0)
		f.assertSink(all)
	})
}
