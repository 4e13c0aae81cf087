package files

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/source"
)

// remoteOnly is a store that is not a local disk and counts the reads of
// its objects, which all fail.
type remoteOnly struct {
	objstore.Store
	reads *atomic.Int64
}

func (remoteOnly) LocalPath(string) (string, bool) { return "", false }

func (s remoteOnly) Open(context.Context, string) (io.ReadCloser, error) {
	s.reads.Add(1)
	return nil, errors.New("no reading here")
}

func (s remoteOnly) Stat(_ context.Context, key string) (objstore.Object, error) {
	return objstore.Object{Key: key}, nil
}

// TestEngineReadsRemoteItself: inputs on a store whose scheme the engine
// reads itself are handed over as URLs, not downloaded; for an engine that
// reads only local files the same plan downloads them (and here fails,
// the store having nothing to give).
func TestEngineReadsRemoteItself(t *testing.T) {
	hive := true
	files := []bookmark.File{{Path: "a/1.csv", Size: 10}, {Path: "b/2.csv.gz", Size: 20}}
	reads := &atomic.Int64{}
	plan := func() *Plan {
		return &Plan{Ctx: "s", Take: append([]bookmark.File(nil), files...),
			src: &Source{objs: remoteOnly{reads: reads}, location: "s3://bucket/in/?region=eu-west-1",
				cfg: &Config{Format: "csv", HivePartitioning: &hive}}}
	}
	env := source.Env{Caps: engine.Caps{Read: []string{"file", "s3"}}, Log: discard,
		TempDir: func() (string, error) { return t.TempDir(), nil }}
	rd, err := plan().Open(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	in := rd.Input()
	want := []string{"s3://bucket/in/a/1.csv", "s3://bucket/in/b/2.csv.gz"}
	for i, f := range in.Files {
		if f.Location != want[i] || f.Key != files[i].Path {
			t.Errorf("input %d: location %q key %q, want %q and %q", i, f.Location, f.Key, want[i], files[i].Path)
		}
	}
	if retry, err := rd.Done(context.Background(), nil, engine.SourceResult{}, false); retry || err != nil {
		t.Errorf("Done after a read of URLs: retry %v, err %v; want neither (nothing local to check)", retry, err)
	}

	if n := reads.Load(); n != 0 {
		t.Errorf("%d objects read for an engine that reads them itself, want 0", n)
	}
	env.Caps = engine.Caps{Read: []string{"file"}}
	if _, err := plan().Open(context.Background(), env); err == nil || reads.Load() == 0 {
		t.Errorf("an engine that reads local files only: Open gave %v after %d reads, want a download (failing here)", err, reads.Load())
	}
}
