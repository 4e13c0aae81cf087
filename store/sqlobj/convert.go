package sqlobj

import (
	"context"
	"fmt"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/statecopy"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/objcore"
)

// Source is a state in the relational format, read to move it over.
type Source interface {
	store.Store
	store.JobLister
	catalog.Store
}

// CopyState opens an object store over b with from's id and copies every
// job of from into it by the state copy path (statecopy.Export, then
// ImportJob), then the catalog. It checks each job's head, newest run and current
// file records in the copy, but does not read the whole job back to compare,
// as tidemark state copy does: read back through objcore, a history of
// 3,000 runs and versions took over nine minutes (against seconds for the
// copy itself), and the conversion runs in an open. kind names the store in
// messages; with readOnly the store returned writes nothing.
func CopyState(ctx context.Context, from Source, b objcore.Backend, kind string, readOnly bool) (*objcore.Store, error) {
	id, err := from.Identity(ctx)
	if err != nil {
		return nil, err
	}
	to, err := objcore.Open(ctx, b, objcore.Options{Kind: kind, ID: id.ID})
	if err != nil {
		return nil, err
	}
	jobs, err := from.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	for _, job := range jobs {
		h, err := statecopy.Export(ctx, from, job)
		if err != nil {
			return nil, fmt.Errorf("job %q: %w", job, err)
		}
		if err := to.ImportJob(ctx, h); err != nil {
			return nil, fmt.Errorf("job %q: %w", job, err)
		}
		if err := checkImported(ctx, to, h); err != nil {
			return nil, fmt.Errorf("job %q: %w", job, err)
		}
	}
	if _, err := statecopy.CopyCatalog(ctx, from, to); err != nil {
		return nil, fmt.Errorf("the catalog: %w", err)
	}
	if readOnly {
		return objcore.Open(ctx, b, objcore.Options{Kind: kind, ReadOnly: true})
	}
	return to, nil
}

// checkImported checks what a run reads first of a job in the copy: the
// head's version, the newest run, and the number of current file records
// of each source.
func checkImported(ctx context.Context, to *objcore.Store, h store.JobHistory) error {
	head, err := to.Head(ctx, h.Job)
	if err != nil {
		return err
	}
	if head.Version != int64(len(h.Versions)) {
		return fmt.Errorf("the copy's bookmark is at version %d, the state's at %d", head.Version, len(h.Versions))
	}
	runs, err := to.Runs(ctx, h.Job, store.RunQuery{Limit: 1})
	if err != nil {
		return err
	}
	if len(runs) != min(1, len(h.Runs)) || len(runs) == 1 && runs[0].RunID != h.Runs[len(h.Runs)-1].Run.RunID {
		return fmt.Errorf("the copy's newest run is not the state's")
	}
	current := map[string]int{}
	for _, f := range h.Files {
		if f.Removed == 0 {
			current[f.Ctx]++
		}
	}
	for c, want := range current {
		got := 0
		for _, err := range to.Files(ctx, h.Job, c) {
			if err != nil {
				return err
			}
			got++
		}
		if got != want {
			return fmt.Errorf("the copy has %d current file records of source %q, the state %d", got, c, want)
		}
	}
	return nil
}
