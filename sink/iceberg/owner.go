package iceberg

import (
	"context"

	"github.com/tidemark-etl/tidemark/sink"
)

// The table folder's ownership record, _tidemark/owner.json, names the
// job and state store that write the table: another store's own catalog
// would make a second table at the same folder. It is claimed, checked
// and raised by the one claim rule (package sink), every write of it
// conditional on what was read, so two jobs racing for one folder cannot
// both claim it.

// ownerPlace is the folder as the claim rule sees it, for the sink ctx.
func (l *location) ownerPlace(ctx context.Context, sinkCtx string) (sink.Place, error) {
	return sink.OpenPlace(ctx, sinkCtx, l.dir)
}

// claim makes the folder the job's, as sink.Sink.Claim says.
func (l *location) claim(ctx context.Context, sinkCtx string, c sink.Claim) error {
	p, err := l.ownerPlace(ctx, sinkCtx)
	if err != nil {
		return err
	}
	return sink.ClaimAt(ctx, p, c)
}

// CheckPurge refuses a purge of another job's or store's table, as
// sink.CheckPurgeAt says.
func (l *location) CheckPurge(ctx context.Context, c sink.Claim) error {
	p, err := l.ownerPlace(ctx, "")
	if err != nil {
		return err
	}
	return sink.CheckPurgeAt(ctx, p, c)
}

// TakeForPurge takes the folder over for a reset's purge, as
// sink.TakeForPurgeAt says.
func (l *location) TakeForPurge(ctx context.Context, c sink.Claim) error {
	p, err := l.ownerPlace(ctx, "")
	if err != nil {
		return err
	}
	return sink.TakeForPurgeAt(ctx, p, c)
}

// recordPublished raises the record to the run before its files are
// committed to the table, as sink.RecordPublished says.
func (l *location) recordPublished(ctx context.Context, pub sink.Publication) error {
	p, err := l.ownerPlace(ctx, l.target.Ctx)
	if err != nil {
		return err
	}
	return sink.RecordPublished(ctx, p, pub)
}
