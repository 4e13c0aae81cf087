package tidemark

import (
	"errors"
	"slices"
	"testing"

	"github.com/tidemark-etl/tidemark/sink"
)

// TestResetDryRun: a dry run says what the rewind with purge would undo
// and delete, and changes nothing; the real reset then does exactly that.
func TestResetDryRun(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	before := w.head()
	dry, err := Reset(t.Context(), w.store(), jobName, ResetOptions{ToRun: ids[0], Purge: true, DryRun: true})
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if got := w.head(); got != before {
		t.Errorf("head after the dry run: got %d, want %d", got, before)
	}
	for _, id := range ids {
		if r := w.runRecord(id); r.Undone || r.Purged {
			t.Errorf("run %s after the dry run: got undone %v purged %v, want neither", id, r.Undone, r.Purged)
		}
	}
	w.wantLines("1", "2", "3")
	if got, want := dry.Undone, ids[1:]; !slices.Equal(got, want) {
		t.Errorf("dry undone: got %q, want %q", got, want)
	}
	if got, want := dry.Deleted, []string{w.finalOf(ids[1]), w.finalOf(ids[2])}; !slices.Equal(got, want) {
		t.Errorf("dry deleted: got %q, want %q", got, want)
	}
	real, err := Reset(t.Context(), w.store(), jobName, ResetOptions{ToRun: ids[0], Purge: true})
	if err != nil {
		t.Fatalf("reset: %v", err)
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	if got, want := sorted(real.Deleted), sorted(dry.Deleted); !slices.Equal(got, want) {
		t.Errorf("deleted: got %q, the dry run said %q", got, want)
	}
	if got, want := sorted(real.Undone), sorted(dry.Undone); !slices.Equal(got, want) {
		t.Errorf("undone: got %q, the dry run said %q", got, want)
	}
	if _, err := Reset(t.Context(), w.store(), jobName, ResetOptions{ToRun: "nope", DryRun: true}); err == nil {
		t.Errorf("dry run to an unknown run: got no error, want one")
	}
}

// TestRunRecordsJobFile: a run records the job file's absolute path.
func TestRunRecordsJobFile(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	id := w.run(RunOptions{}).RunID
	if got, want := w.runRecord(id).JobFile, w.spec().Dir+"/job.yaml"; got != want {
		t.Errorf("job file: got %q, want %q", got, want)
	}
}

// TestResetDryRunRefusesWhatResetRefuses: when another store has taken the
// sink over, the dry run of a purge is refused as the purge is, instead
// of listing files the reset would never delete.
func TestResetDryRunRefusesWhatResetRefuses(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	old := w.store()
	w.state = stateLocation(t, t.TempDir())
	w.write("d.csv", "4")
	w.run(RunOptions{AdoptSink: true})
	_, realErr := Reset(t.Context(), old, jobName, ResetOptions{ToRun: ids[0], Purge: true})
	dry, dryErr := Reset(t.Context(), old, jobName, ResetOptions{ToRun: ids[0], Purge: true, DryRun: true})
	var owned *sink.OwnedError
	if !errors.As(realErr, &owned) {
		t.Fatalf("reset with purge from the old store: got %v, want the owner's refusal", realErr)
	}
	if dryErr == nil || dryErr.Error() != realErr.Error() {
		t.Errorf("dry run: got %+v, %v; want the reset's refusal %q", dry, dryErr, realErr)
	}
	if _, err := Reset(t.Context(), old, jobName, ResetOptions{ToRun: ids[0], DryRun: true}); err != nil {
		t.Errorf("dry run without purge: %v", err)
	}
	// The new store read everything again: nothing of either was deleted.
	w.wantLines("1", "1", "2", "2", "3", "3", "4")
}
