// Package statecopy moves a job's whole state from one state store to
// another through the store.Store contract alone: every bookmark version
// with its source states, every run with its input and output manifests,
// publish actions and published, purged and undone marks; no lease. It
// backs `tidemark state copy`, so that a job that outgrows SQLite moves to
// PostgreSQL or S3 without reprocessing anything.
package statecopy

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Export reads a job's whole history from st through the Store contract.
// It is a read: it takes no lease, so a run of the job that commits
// meanwhile may or may not be in it (copy a job no run is using).
func Export(ctx context.Context, st store.Store, job string) (store.JobHistory, error) {
	h := store.JobHistory{Job: job}
	vs, err := st.Versions(ctx, job, store.VersionQuery{})
	if err != nil {
		return h, fmt.Errorf("reading the versions of job %q: %w", job, err)
	}
	slices.Reverse(vs)
	versions := make([]store.VersionStates, len(vs))
	err = each(ctx, len(vs), func(ctx context.Context, i int) error {
		states, err := st.SourceStatesAt(ctx, job, vs[i].Version)
		if err != nil {
			return fmt.Errorf("reading the source states of job %q at version %d: %w", job, vs[i].Version, err)
		}
		versions[i] = store.VersionStates{Version: vs[i], States: states}
		return nil
	})
	if err != nil {
		return h, err
	}
	h.Versions = versions
	runs, err := store.AllRuns(ctx, st, job)
	if err != nil {
		return h, err
	}
	slices.Reverse(runs)
	hist := make([]store.RunHistory, len(runs))
	err = each(ctx, len(runs), func(ctx context.Context, i int) error {
		r := runs[i]
		outs, err := st.Outputs(ctx, job, r.RunID)
		if err != nil {
			return fmt.Errorf("reading the outputs of run %s: %w", r.RunID, err)
		}
		acts, err := st.Actions(ctx, job, r.RunID)
		if err != nil {
			return fmt.Errorf("reading the actions of run %s: %w", r.RunID, err)
		}
		hist[i] = store.RunHistory{Run: r, Outputs: outs, Actions: acts}
		return nil
	})
	if err != nil {
		return h, err
	}
	h.Runs = hist
	added := map[string]int64{} // run id -> the version its records were added at
	var ids []string
	for _, r := range runs {
		if r.Status == store.StatusSucceeded && r.Mode.Advances() && !r.Undone && r.Version > 0 {
			added[r.RunID] = r.Version
			ids = append(ids, r.RunID)
		}
	}
	if h.Files, err = exportFiles(ctx, st, job, ids, added); err != nil {
		return h, err
	}
	for r, err := range st.RunRanges(ctx, job, ids) {
		if err != nil {
			return h, fmt.Errorf("reading the key ranges of job %q: %w", job, err)
		}
		h.Ranges = append(h.Ranges, store.RangeHistory{RangeRecord: r, Added: added[r.RunID]})
	}
	return h, nil
}

// exportFiles reads every file record of the runs ids, one run at a time
// (RunInputs does not name a record's run), and works out when each was
// superseded: a record is replaced only by a later record of the same
// path, so each record but a path's newest was superseded at the version
// that added the next one. The newest must be current (Files), or the
// history cannot be told and the copy is refused.
func exportFiles(ctx context.Context, st store.Store, job string, ids []string, added map[string]int64) ([]store.FileHistory, error) {
	perRun := make([][]store.FileHistory, len(ids))
	err := each(ctx, len(ids), func(ctx context.Context, i int) error {
		id := ids[i]
		for f, err := range st.RunInputs(ctx, job, []string{id}) {
			if err != nil {
				return fmt.Errorf("reading the input manifest of run %s: %w", id, err)
			}
			perRun[i] = append(perRun[i], store.FileHistory{FileRecord: f, RunID: id, Added: added[id]})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var files []store.FileHistory
	ctxs := map[string]bool{}
	for _, fs := range perRun {
		for _, f := range fs {
			files = append(files, f)
			ctxs[f.Ctx] = true
		}
	}
	slices.SortStableFunc(files, func(a, b store.FileHistory) int {
		return cmp.Or(cmp.Compare(a.Ctx, b.Ctx), cmp.Compare(a.File.Path, b.File.Path), cmp.Compare(a.Added, b.Added))
	})
	for i := range files {
		if i+1 < len(files) && files[i+1].Ctx == files[i].Ctx && files[i+1].File.Path == files[i].File.Path {
			files[i].Removed = files[i+1].Added
		}
	}
	current := map[[2]string]bookmark.File{}
	for c := range ctxs {
		for f, err := range st.Files(ctx, job, c) {
			if err != nil {
				return nil, fmt.Errorf("reading the file records of job %q source %q: %w", job, c, err)
			}
			current[[2]string{c, f.Path}] = f
		}
	}
	newest := 0
	for _, f := range files {
		if f.Removed != 0 {
			continue
		}
		newest++
		if cur, ok := current[[2]string{f.Ctx, f.File.Path}]; !ok || cur != f.File {
			return nil, fmt.Errorf("reading the file records of job %q: the newest record of %s in source %q (run %s) is not current; "+
				"its history cannot be copied", job, f.File.Path, f.Ctx, f.RunID)
		}
	}
	if newest != len(current) {
		return nil, fmt.Errorf("reading the file records of job %q: %d current records, but the runs' input manifests end in %d",
			job, len(current), newest)
	}
	return files, nil
}

// exportReads is how many reads an export has in flight: over S3 each is
// a round trip, and a history of thousands of runs and versions read one
// after another took minutes.
const exportReads = 16

// each calls fn for 0 <= i < n, exportReads at a time, and returns the
// first error (after it, the calls not yet begun are not made).
func each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(exportReads)
	for i := range n {
		g.Go(func() error {
			if gctx.Err() != nil {
				return nil // an earlier call failed: g.Wait returns its error
			}
			return fn(gctx, i)
		})
	}
	return g.Wait()
}
