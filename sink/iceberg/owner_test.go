package iceberg_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	_ "github.com/tidemark-etl/tidemark/objstore/local"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// TestClaimRace: two jobs whose Iceberg sinks name one table folder claim
// it at once, round after round on a fresh folder: exactly one claims it
// each time and the other is refused with a *sink.OwnedError, and the
// folder's owner.json names the winner. (The record was written with a
// rename over what was read: both claims passed, and the table had two
// owners, the later write's on record.)
func TestClaimRace(t *testing.T) {
	base := t.TempDir()
	for round := range 30 {
		dir := filepath.Join(base, fmt.Sprint(round), "tbl")
		jobs := []string{"job-a", "job-b"}
		sinks := make([]sink.Sink, 2)
		for i := range jobs {
			s, err := parse(t, "iceberg: {table: sales.orders}", "path: "+dir)
			if err != nil {
				t.Fatal(err)
			}
			if sinks[i], err = sink.Open(t.Context(), s, s.Sinks[0]); err != nil {
				t.Fatal(err)
			}
		}
		start := make(chan struct{})
		errs := make([]error, 2)
		var done sync.WaitGroup
		for i, jobName := range jobs {
			done.Add(1)
			go func() {
				defer done.Done()
				<-start
				state := filepath.Join(base, jobName+".db")
				errs[i] = sinks[i].Claim(t.Context(), sink.Claim{Job: jobName, Identity: store.Identity{ID: "id-" + jobName,
					Location: state}, Mode: bookmark.ModeEnable, RunID: "run-" + jobName})
			}()
		}
		close(start)
		done.Wait()
		var owned *sink.OwnedError
		won := -1
		switch {
		case errs[0] == nil && errors.As(errs[1], &owned):
			won = 0
		case errs[1] == nil && errors.As(errs[0], &owned):
			won = 1
		default:
			t.Fatalf("round %d: two jobs claiming one table folder: got %v and %v, want one claim and one *sink.OwnedError",
				round, errs[0], errs[1])
		}
		b, err := os.ReadFile(filepath.Join(dir, "_tidemark", "owner.json"))
		var rec sink.Owner
		if err == nil {
			err = json.Unmarshal(b, &rec)
		}
		if err != nil || rec.Job != jobs[won] || owned.Owner.Job != jobs[won] {
			t.Fatalf("round %d: owner.json names %q (%v), the refusal %q; want %s", round, rec.Job, err, owned.Owner.Job, jobs[won])
		}
	}
}
