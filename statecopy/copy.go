package statecopy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// Summary is what Copy moved of one job.
type Summary struct {
	Job      string `json:"job"`
	Versions int    `json:"versions"`
	Runs     int    `json:"runs"`
	Files    int    `json:"files"`
	Ranges   int    `json:"ranges"`
	Outputs  int    `json:"outputs"`
	// Head is the bookmark version both stores now hold.
	Head int64 `json:"head"`
}

// ErrNoImport means the destination store cannot write history as it was
// (its backend does not implement store.Importer).
var ErrNoImport = errors.New("the destination state store cannot import a job's history")

// Copy copies job's whole state from one store to another and reads it
// back from the destination to check that it holds exactly what the
// source does. The destination must hold no state of the job
// (store.ErrJobExists); the source is left as it was. It takes no lease
// on either store: copy a job that no run is using, and point its job
// file at the destination before it runs again.
func Copy(ctx context.Context, from, to store.Store, job string) (Summary, error) {
	sum := Summary{Job: job}
	imp, ok := to.(store.Importer)
	if !ok {
		return sum, ErrNoImport
	}
	h, err := Export(ctx, from, job)
	if err != nil {
		return sum, err
	}
	if len(h.Runs) == 0 && len(h.Versions) == 0 {
		return sum, fmt.Errorf("job %q: %w in the source state store", job, store.ErrNotFound)
	}
	if err := CheckDestination(ctx, to, job); err != nil {
		return sum, err
	}
	if err := imp.ImportJob(ctx, h); err != nil {
		return sum, err
	}
	back, err := Export(ctx, to, job)
	if err != nil {
		return sum, fmt.Errorf("reading the copy back: %w", err)
	}
	if diff := compare(h, back); diff != "" {
		return sum, fmt.Errorf("the copy of job %q differs from its source: %s", job, diff)
	}
	sum.Versions, sum.Runs, sum.Files, sum.Ranges = len(h.Versions), len(h.Runs), len(h.Files), len(h.Ranges)
	for _, r := range h.Runs {
		sum.Outputs += len(r.Outputs)
	}
	sum.Head = int64(len(h.Versions))
	return sum, nil
}

// CheckDestination returns an error wrapping store.ErrJobExists when the
// destination has a run or a bookmark version of the job: a copy writes
// only into a store that holds nothing of it. A read.
func CheckDestination(ctx context.Context, to store.Store, job string) error {
	head, err := to.Head(ctx, job)
	if err != nil {
		return fmt.Errorf("reading the destination's bookmark of job %q: %w", job, err)
	}
	runs, err := to.Runs(ctx, job, store.RunQuery{Limit: 1})
	if err != nil {
		return fmt.Errorf("reading the destination's runs of job %q: %w", job, err)
	}
	if head.Version > 0 || len(runs) > 0 {
		return fmt.Errorf("job %q (bookmark version %d, runs recorded): %w", job, head.Version, store.ErrJobExists)
	}
	return nil
}

// compare returns "" when two histories are the same, else where they
// first differ.
func compare(a, b store.JobHistory) string {
	ja, jb := canonical(a), canonical(b)
	if bytes.Equal(ja, jb) {
		return ""
	}
	i := 0
	for i < len(ja) && i < len(jb) && ja[i] == jb[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("at %q, the copy has %q", clip(ja, lo, i+80), clip(jb, lo, i+80))
}

func clip(b []byte, lo, hi int) string { return string(b[min(lo, len(b)):min(hi, len(b))]) }

// canonical is a history's JSON with times in UTC and empty collections
// alike, so that two stores' readings of one history compare equal.
func canonical(h store.JobHistory) []byte {
	utc := func(t time.Time) time.Time {
		if t.IsZero() {
			return time.Time{}
		}
		return t.UTC()
	}
	for i := range h.Versions {
		v := &h.Versions[i]
		v.At = utc(v.At)
		if len(v.States) == 0 {
			v.States = nil
		}
	}
	for i := range h.Runs {
		r := &h.Runs[i].Run
		r.StartedAt, r.FinishedAt = utc(r.StartedAt), utc(r.FinishedAt)
		if len(r.Sources) == 0 {
			r.Sources = nil
		}
		if len(r.Sinks) == 0 {
			r.Sinks = nil
		}
		if len(h.Runs[i].Outputs) == 0 {
			h.Runs[i].Outputs = nil
		}
		if len(h.Runs[i].Actions) == 0 {
			h.Runs[i].Actions = nil
		}
	}
	data, err := json.Marshal(h)
	if err != nil {
		return []byte(err.Error())
	}
	return data
}
