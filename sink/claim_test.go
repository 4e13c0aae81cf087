package sink_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/s3test"
	"github.com/tidemark-etl/tidemark/objstore"
	_ "github.com/tidemark-etl/tidemark/objstore/local"
	_ "github.com/tidemark-etl/tidemark/objstore/s3"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// meetAtRead is a Record whose first Read waits, once it has read, until
// the other claimer has read too: both then decide on a location without
// a record, the interleaving a race of two claims can take.
type meetAtRead struct {
	sink.Record
	both *sync.WaitGroup
	once sync.Once
}

func (m *meetAtRead) Read(ctx context.Context) (sink.Owner, string, bool, error) {
	o, v, ok, err := m.Record.Read(ctx)
	m.once.Do(func() {
		m.both.Done()
		m.both.Wait()
	})
	return o, v, ok, err
}

// TestClaimRace: two jobs claim one fresh location at once, each having
// read it without a record. On a local folder and on S3 (versitygw),
// exactly one claims it; the other reads the winner's record and is
// refused with a *sink.OwnedError naming the winner, and the record names
// the winner. (The Iceberg sink and the test kind replaced the record with
// a rename: both claims passed, and the later write won.)
func TestClaimRace(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	bucket := srv.NewBucket(t)
	ctx := t.Context()
	for _, where := range []string{"local", "s3"} {
		for round := range 3 {
			root := filepath.Join(t.TempDir(), "out")
			if where == "s3" {
				root = fmt.Sprintf("s3://%s/race-%d/", bucket, round)
			}
			objs, err := objstore.Open(ctx, root, nil)
			if err != nil {
				t.Fatal(err)
			}
			var both sync.WaitGroup
			both.Add(2)
			errs := make([]error, 2)
			var done sync.WaitGroup
			for i, jobName := range []string{"job-a", "job-b"} {
				done.Add(1)
				go func() {
					defer done.Done()
					p := sink.ObjectPlace("out", root, objs)
					p.Record = &meetAtRead{Record: p.Record, both: &both}
					errs[i] = sink.ClaimAt(ctx, p, sink.Claim{Job: jobName, Identity: store.Identity{ID: "state-" + jobName,
						Location: "state-" + jobName}, Mode: bookmark.ModeEnable, RunID: "run-" + jobName})
				}()
			}
			done.Wait()
			winner, loser := 0, 1
			if errs[0] != nil {
				winner, loser = 1, 0
			}
			var owned *sink.OwnedError
			if errs[winner] != nil || !errors.As(errs[loser], &owned) {
				t.Fatalf("%s, round %d: claims racing for one location: got %v and %v, want one claim and one *sink.OwnedError",
					where, round, errs[0], errs[1])
			}
			rec, _, ok, err := sink.ObjectRecord(objs).Read(ctx)
			want := []string{"job-a", "job-b"}[winner]
			if err != nil || !ok || rec.Job != want || owned.Owner.Job != want {
				t.Errorf("%s, round %d: the record names %q (%v), the refusal %q; want both %q", where, round, rec.Job, err,
					owned.Owner.Job, want)
			}
		}
	}
}
