package objcore

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Stats lists the store's objects and reports their number and size
// ("objects", "bytes"), those of the file-record segments ("segments",
// "segment_bytes") and the number of jobs ("jobs").
func (s *Store) Stats(ctx context.Context) (map[string]int64, error) {
	st := map[string]int64{"objects": 0, "bytes": 0, "segments": 0, "segment_bytes": 0}
	err := s.b.List(ctx, "", "", func(e Entry) (bool, error) {
		st["objects"]++
		st["bytes"] += e.Size
		if strings.HasSuffix(e.Key, ".seg") {
			st["segments"]++
			st["segment_bytes"] += e.Size
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("measuring %s: %w", s.root, err)
	}
	jobs, err := s.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	st["jobs"] = int64(len(jobs))
	return st, nil
}

// Jobs lists the jobs that have runs or bookmark versions, sorted.
func (s *Store) Jobs(ctx context.Context) ([]string, error) {
	dirs, err := s.b.Folders(ctx, "jobs/")
	if err != nil {
		return nil, fmt.Errorf("listing jobs in %s: %w", s.root, err)
	}
	var jobs []string
	for _, d := range dirs {
		job, err := unesc(d)
		if err != nil {
			continue
		}
		h, _, err := s.readHead(ctx, job)
		if err != nil {
			return nil, fmt.Errorf("listing jobs in %s: %w", s.root, err)
		}
		if h.Seq > 0 || h.Version > 0 {
			jobs = append(jobs, job)
		}
	}
	slices.Sort(jobs)
	return jobs, nil
}
