package serve

import (
	"context"
	"slices"
	"sort"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Bounds of newestFiles: files kept per ctx and runs looked at.
const (
	newestPerCtx   = 10
	newestLookback = 20
)

// newestFile is one recently processed file of an exact-tracking source.
type newestFile struct {
	Path  string `json:"path"`
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"`
}

// newestFiles finds, for each exact-tracking file source of states, the
// up to newestPerCtx files processed most recently: the inputs of the
// job's newest succeeded enable runs (at most newestLookback runs looked
// at), newest run first, and within a run newest mtime first. It stops
// once every such ctx has newestPerCtx files. A read; an error is the
// store's.
func (s *server) newestFiles(ctx context.Context, job string, states map[string]bookmark.SourceState) (map[string][]newestFile, error) {
	out := map[string][]newestFile{}
	for c, st := range states {
		if st.View().ListsFiles(st) {
			out[c] = []newestFile{}
		}
	}
	if len(out) == 0 {
		return out, nil
	}
	runs, err := s.opts.Store.Runs(ctx, job, store.RunQuery{Limit: newestLookback})
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if full(out) {
			break
		}
		if r.Status != store.StatusSucceeded || r.Mode != bookmark.ModeEnable || r.Undone {
			continue
		}
		got := map[string][]newestFile{}
		for f, err := range s.opts.Store.RunInputs(ctx, job, []string{r.RunID}) {
			if err != nil {
				return nil, err
			}
			if have, ok := out[f.Ctx]; ok && len(have) < newestPerCtx {
				got[f.Ctx] = keepNewest(got[f.Ctx], newestFile{Path: f.File.Path, Size: f.File.Size, MTime: f.File.MTime}, newestPerCtx-len(have))
			}
		}
		for c, files := range got {
			out[c] = append(out[c], files...)
		}
	}
	return out, nil
}

// keepNewest inserts f into files (newest mtime first, then path) and
// keeps at most n, so a run of many files costs n entries.
func keepNewest(files []newestFile, f newestFile, n int) []newestFile {
	i := sort.Search(len(files), func(i int) bool {
		if files[i].MTime != f.MTime {
			return files[i].MTime < f.MTime
		}
		return files[i].Path > f.Path
	})
	if i >= n {
		return files
	}
	files = slices.Insert(files, i, f)
	return files[:min(len(files), n)]
}

// full says whether every ctx of m has newestPerCtx files.
func full(m map[string][]newestFile) bool {
	for _, files := range m {
		if len(files) < newestPerCtx {
			return false
		}
	}
	return true
}
