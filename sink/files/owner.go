package files

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/sink"
)

// checkParents refuses to claim a location that lies inside another job's
// sink location. Records that cannot be read in the folders above (no
// permission there, say) are not this job's concern and are passed over.
func checkParents(ctx context.Context, root, sinkCtx, jobName string) error {
	for _, p := range parentLocations(root) {
		ps, err := objstore.Open(ctx, p, nil)
		if err != nil {
			continue
		}
		o, ok, err := readOwner(ctx, ps)
		if err == nil && ok && o.Job != jobName {
			return &sink.OwnedError{Sink: sinkCtx, Job: jobName, Owner: o, Inside: p}
		}
	}
	return nil
}

// parentLocations lists the locations that contain a sink location,
// nearest first, up to the file system root or the bucket; an S3
// location's option query is kept.
func parentLocations(root string) []string {
	loc, query, _ := strings.Cut(root, "?")
	if query != "" {
		query = "?" + query
	}
	var out []string
	if i := strings.Index(loc, "://"); i >= 0 {
		var parts []string
		for _, p := range strings.Split(loc[i+3:], "/") {
			if p != "" && p != "." {
				parts = append(parts, p)
			}
		}
		for n := len(parts) - 1; n >= 1; n-- {
			out = append(out, loc[:i+3]+strings.Join(parts[:n], "/")+"/"+query)
		}
		return out
	}
	for p := loc; filepath.Dir(p) != p; {
		p = filepath.Dir(p)
		out = append(out, p)
	}
	return out
}

// place is the location as the claim rule (package sink) sees it, for
// the sink ctx.
func (l *location) place(ctx string) sink.Place {
	return sink.ObjectPlace(ctx, layout.Name(l.root), l.objs)
}

// readOwner reads a location's ownership record; ok is false if it has
// none.
func readOwner(ctx context.Context, s objstore.Store) (sink.Owner, bool, error) {
	o, _, ok, err := sink.ObjectRecord(s).Read(ctx)
	return o, ok, err
}

var _ sink.PurgeChecker = (*location)(nil)

// CheckPurge refuses a reset's purge here as sink.CheckPurgeAt says.
func (l *location) CheckPurge(ctx context.Context, c sink.Claim) error {
	return sink.CheckPurgeAt(ctx, l.place(""), c)
}

// TakeForPurge takes the location over for a reset's purge as
// sink.TakeForPurgeAt says.
func (l *location) TakeForPurge(ctx context.Context, c sink.Claim) error {
	return sink.TakeForPurgeAt(ctx, l.place(""), c)
}

// sinkOf is the ctx of the sink a publication is for.
func sinkOf(p sink.Publication) string {
	for _, o := range p.Outputs {
		return o.Sink
	}
	for _, a := range p.Actions {
		return a.Sink
	}
	return ""
}
