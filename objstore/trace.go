package objstore

import (
	"context"
	"time"
)

// ListTrace receives what a listing has to tell besides its objects, the
// way net/http/httptrace reports on a request: set it on the context with
// WithListTrace, and a store's List and ListAfter call its hooks. Either
// hook may be nil. Hooks are called from the goroutine that iterates.
type ListTrace struct {
	// Skipped is called for an entry that looks like an input but is left
	// out for a reason a user must hear of: a dangling symlink, a symlink
	// loop, a symlink to something the listing already yields under
	// another key. key is the entry's own key, why a sentence.
	Skipped func(key, why string)
	// ServerTime is called once, with the store's own clock at the start of
	// the listing (S3: the Date header of the first response), by stores
	// whose objects' times come from a clock other than this machine's.
	ServerTime func(time.Time)
}

type listTraceKey struct{}

// WithListTrace returns ctx carrying t for the listings made with it.
func WithListTrace(ctx context.Context, t *ListTrace) context.Context {
	return context.WithValue(ctx, listTraceKey{}, t)
}

// ContextListTrace returns the ListTrace of ctx, or an empty one (whose
// hooks are nil) when there is none.
func ContextListTrace(ctx context.Context) *ListTrace {
	if t, ok := ctx.Value(listTraceKey{}).(*ListTrace); ok && t != nil {
		return t
	}
	return &ListTrace{}
}

// ReportSkipped calls the Skipped hook of ctx's trace, if any.
func ReportSkipped(ctx context.Context, key, why string) {
	if t := ContextListTrace(ctx); t.Skipped != nil {
		t.Skipped(key, why)
	}
}

// ReportServerTime calls the ServerTime hook of ctx's trace, if any.
func ReportServerTime(ctx context.Context, at time.Time) {
	if t := ContextListTrace(ctx); t.ServerTime != nil {
		t.ServerTime(at)
	}
}

// RootChecker is implemented by stores whose root is a thing that exists
// or not (a local folder). An S3 prefix is not: it "exists" while an object
// has it as a prefix, so an empty prefix and a mistyped one look the same,
// and S3 stores do not implement it (a missing bucket fails the listing).
type RootChecker interface {
	// CheckRoot returns nil when the root exists, an error wrapping
	// ErrNotExist (saying what is missing, and where a symlink points)
	// when it does not, and other errors as they come.
	CheckRoot(ctx context.Context) error
}
