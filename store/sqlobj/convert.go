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
// ImportJob), then the catalog. It does not read each job back to compare,
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
	}
	if _, err := statecopy.CopyCatalog(ctx, from, to); err != nil {
		return nil, fmt.Errorf("the catalog: %w", err)
	}
	if readOnly {
		return objcore.Open(ctx, b, objcore.Options{Kind: kind, ReadOnly: true})
	}
	return to, nil
}
