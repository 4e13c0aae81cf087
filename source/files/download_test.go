package files

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/objstore"
)

// listOnly is a store whose listing is objs; nothing else is called.
type listOnly struct {
	objstore.Store
	objs []objstore.Object
}

func (s listOnly) List(context.Context, string) iter.Seq2[objstore.Object, error] {
	return func(yield func(objstore.Object, error) bool) {
		for _, o := range s.objs {
			if !yield(o, nil) {
				return
			}
		}
	}
}

// TestReadIdentity: the version planned is recorded as listed (a GET's
// LastModified has whole seconds where a listing may have milliseconds);
// another version as a listing shows it, or as the GET said when the
// listing no longer shows it.
func TestReadIdentity(t *testing.T) {
	ctx := context.Background()
	listed := time.Date(2026, 12, 1, 10, 0, 0, 123_000_000, time.UTC)
	planned := bookmark.File{Path: "a.csv", Size: 10, MTime: listed.UnixNano(), ETag: "e1"}
	got, err := readIdentity(ctx, listOnly{}, planned, objstore.Object{Key: "a.csv", Size: 10, ModTime: listed.Truncate(time.Second), ETag: "e1"})
	if err != nil || got != planned {
		t.Errorf("the version planned: %+v, %v; want %+v as listed", got, err, planned)
	}

	read := objstore.Object{Key: "a.csv", Size: 10, ModTime: listed.Add(time.Hour).Truncate(time.Second), ETag: "e2"}
	now := objstore.Object{Key: "a.csv", Size: 10, ModTime: listed.Add(time.Hour), ETag: "e2"}
	s := listOnly{objs: []objstore.Object{now, {Key: "a.csv.bak", Size: 3, ETag: "x"}}}
	want := bookmark.File{Path: "a.csv", Size: 10, MTime: now.ModTime.UnixNano(), ETag: "e2"}
	if got, err := readIdentity(ctx, s, planned, read); err != nil || got != want {
		t.Errorf("a replacement: %+v, %v; want %+v as listed", got, err, want)
	}

	// Replaced again, or deleted, since: the version read, as the GET said.
	again := listOnly{objs: []objstore.Object{{Key: "a.csv", Size: 10, ModTime: listed.Add(2 * time.Hour), ETag: "e3"}}}
	asRead := bookmark.File{Path: "a.csv", Size: 10, MTime: read.ModTime.UnixNano(), ETag: "e2"}
	for what, s := range map[string]listOnly{"replaced again": again, "deleted": {objs: []objstore.Object{{Key: "a.csv.bak"}}}} {
		if got, err := readIdentity(ctx, s, planned, read); err != nil || got != asRead {
			t.Errorf("a version %s since it was read: %+v, %v; want %+v", what, got, err, asRead)
		}
	}
}
