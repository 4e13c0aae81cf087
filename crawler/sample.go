package crawler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/tidemark-etl/tidemark/objstore"
)

// spread picks k of n items in order, evenly spaced, the first and the
// last included: the files of a folder a crawl opens.
func spread(n, k int) []int {
	if k >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	if k == 1 {
		return []int{n - 1}
	}
	out := make([]int, 0, k)
	for i := range k {
		j := i * (n - 1) / (k - 1)
		if len(out) == 0 || out[len(out)-1] != j {
			out = append(out, j)
		}
	}
	return out
}

// sampleConcurrency is how many files are classified at once.
const sampleConcurrency = 8

// classifyAll opens the files picked for sampling, several at once; each
// file records its own result, so the outcome does not depend on the
// order they finish in. An I/O error other than a file that vanished
// fails the crawl.
func classifyAll(ctx context.Context, picked []*sampleJob, limit int64) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(sampleConcurrency)
	for _, j := range picked {
		g.Go(func() error {
			f := j.f
			f.sampled = true
			s, err := classify(ctx, j.t.st, f.obj, limit, &f.read)
			var ioe *ioError
			switch {
			case err == nil:
				f.shape = &s
			case errors.Is(err, objstore.ErrNotExist):
				f.reason = "vanished while crawled"
			case errors.As(err, &ioe):
				return fmt.Errorf("reading %s: %w", j.t.key(f), ioe.err)
			default:
				f.reason = err.Error()
			}
			return nil
		})
	}
	return g.Wait()
}

// sampleJob is one file to open, with its target.
type sampleJob struct {
	t *target
	f *file
}

// pick chooses the files of folder d to open: among its candidates (all
// of them, or the new ones), at most n, spread over the folder's key order.
func pick(d *folder, n int, candidate func(*file) bool) []*file {
	var cands []*file
	for _, f := range d.files {
		if candidate(f) {
			cands = append(cands, f)
		}
	}
	var out []*file
	for _, i := range spread(len(cands), n) {
		out = append(out, cands[i])
	}
	return out
}

// settleFolder sets a folder's shape from its sampled files: the kind most
// of them have (a tie goes to the kind of the first file by key), their
// columns merged in key order. Files of other kinds are skipped, with why.
// ref, when set, names the header a CSV file's first line may repeat (a
// table's columns).
func settleFolder(d *folder, ref []string, skip func(f *file, reason string)) {
	var got []*file
	for _, f := range d.files {
		switch {
		case f.shape != nil:
			got = append(got, f)
		case f.sampled:
			skip(f, f.reason)
		}
	}
	if len(got) == 0 {
		return
	}
	shapes := make([]*shape, len(got))
	for i, f := range got {
		shapes[i] = f.shape
	}
	alignHeaders(shapes, ref)
	count := map[string]int{}
	first := map[string]int{}
	for i, s := range shapes {
		k := s.kind()
		if _, ok := first[k]; !ok {
			first[k] = i
		}
		count[k]++
	}
	kinds := make([]string, 0, len(count))
	for k := range count {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int {
		if count[a] != count[b] {
			return count[b] - count[a]
		}
		return first[a] - first[b]
	})
	win := kinds[0]
	var merged *shape
	for i, s := range shapes {
		if s.kind() != win {
			skip(got[i], fmt.Sprintf("%s, unlike the %s of the other files of its folder", s.describe(), shapes[first[win]].describe()))
			continue
		}
		if merged == nil {
			c := *s
			merged = &c
			continue
		}
		merged.Schema = merged.Schema.merge(s.Schema)
	}
	d.shape = merged
}

// alignHeaders reads again, as having a header, CSV shapes whose first line
// was taken for data because every value of the file is text, when that
// line repeats the header of another file of the same delimiter and width,
// or ref.
func alignHeaders(shapes []*shape, ref []string) {
	headers := map[string][]string{} // delimiter and width → header
	key := func(s *shape, width int) string { return fmt.Sprintf("%s %d", s.Options["delim"], width) }
	for _, s := range shapes {
		if s.Format == "csv" && s.Options["header"] == "true" {
			headers[key(s, len(s.Schema))] = s.Schema.names()
		}
	}
	for _, s := range shapes {
		if s.Format != "csv" || s.Options["header"] != "false" {
			continue
		}
		h := headers[key(s, len(s.Schema))]
		if h == nil && len(ref) == len(s.Schema) {
			h = ref
		}
		if h == nil || !sameNames(uniqueNames(s.first), h) {
			continue
		}
		s.Options = map[string]string{"delim": s.Options["delim"], "header": "true"}
		s.Schema = make(schema, len(h))
		for i, n := range h {
			s.Schema[i] = column{Name: n}
			if i < len(s.rest) && s.rest[i].Known {
				s.Schema[i].Type, s.Schema[i].Known = s.rest[i].Type, true
			}
		}
	}
}

func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}
