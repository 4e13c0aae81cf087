package files

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/internal/par"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// Layout of a sink's _tidemark/ folder.
const (
	metaDir    = layout.MetaDir
	stagingDir = metaDir + "/staging"
	rejectsDir = metaDir + "/rejects"
)

// publishConcurrency is how many staged files move at once (S3 moves are
// a copy and a delete each).
const publishConcurrency = 8

func stagingPrefix(runID string) string { return stagingDir + "/" + runID + "/" }

// finalName maps a staged file to its deterministic published key:
// [key=value/...]part-<run>-<n>.<ext>. The same staged set always maps to
// the same names, so a roll-forward after a crash repeats the publish.
func finalNames(runID string, staged []engine.StagedFile, ext string) []string {
	idx := make([]int, len(staged))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return staged[idx[a]].Path < staged[idx[b]].Path })
	names := make([]string, len(staged))
	for n, i := range idx {
		dir := path.Dir(staged[i].Path)
		name := partName(runID, n, ext)
		if dir != "." {
			name = dir + "/" + name
		}
		names[i] = name
	}
	return names
}

// partName is the published name of a run's n-th file of a sink.
func partName(runID string, n int, ext string) string {
	return fmt.Sprintf("part-%s-%05d.%s", runID, n, ext)
}

// sinkExt is the extension of a sink format's published files.
func sinkExt(format string) string {
	return map[string]string{"parquet": "parquet", "csv": "csv", "json": "json"}[format]
}

// location is a file sink location opened from its manifest records
// (sink.Location).
type location struct {
	root string
	objs objstore.Store
}

var _ sink.Location = (*location)(nil)

// OpenLocation opens the file sink location root (as manifests record it:
// a path or URL with its S3 options).
func OpenLocation(ctx context.Context, root string) (sink.Location, error) {
	objs, err := objstore.Open(ctx, root, nil)
	if err != nil {
		return nil, err
	}
	return &location{root: root, objs: objs}, nil
}

func (l *location) Close() error { return nil }

// Publish moves a committed run's staged outputs here to their final
// names and applies its overwrite actions. The location's ownership record
// names the run's version before any of its output appears (or an
// overwrite deletes anything): a state restored from a copy older than the
// run is refused even if the run was killed part way through publishing.
// Every step is idempotent.
func (l *location) Publish(ctx context.Context, p sink.Publication) error {
	if len(p.Outputs) > 0 || len(p.Actions) > 0 {
		if err := sink.RecordPublished(ctx, l.place(sinkOf(p)), p); err != nil {
			return err
		}
	}
	finals := map[string]bool{} // final keys of this run here
	var moves []func(context.Context) error
	for _, o := range p.Outputs {
		finals[o.Final] = true
		if o.Published {
			continue
		}
		moves = append(moves, func(ctx context.Context) error {
			err := publishOutput(ctx, l.objs, o)
			if errors.Is(err, objstore.ErrUploadGone) || errors.Is(err, objstore.ErrNotExist) {
				return fmt.Errorf("publishing %s of run %s: %w (%w)", joinLoc(o.Root, o.Final), p.RunID, sink.ErrOutputLost, err)
			}
			if err != nil {
				return fmt.Errorf("publishing %s of run %s: %w", joinLoc(o.Root, o.Final), p.RunID, err)
			}
			return nil
		})
	}
	if len(moves) > 0 {
		if err := moves[0](ctx); err != nil {
			return err
		}
		fault.At(fault.MidPublish)
		if err := par.Do(ctx, publishConcurrency, moves[1:]); err != nil {
			return err
		}
	}
	for _, a := range p.Actions {
		if err := applyAction(ctx, p.State, l.objs, p.Job, a, finals, p.Log); err != nil {
			return fmt.Errorf("run %s: %w", p.RunID, err)
		}
	}
	return nil
}

// Published deletes what is left of the run's staging folder.
func (l *location) Published(ctx context.Context, runID string, log *slog.Logger) {
	if err := l.objs.DeletePrefix(ctx, stagingPrefix(runID)); err != nil {
		log.Warn("cleaning staging folder", "root", l.root, "run", runID, "err", err)
	}
}

// PurgeName is where output o was published, as Purge reports it deleted.
func (l *location) PurgeName(o store.Output) string { return joinLoc(o.Root, o.Final) }

// Purge deletes the run's published files here (and their staged copies).
// A file not where it was published is reported in Gone.
func (l *location) Purge(ctx context.Context, _ string, runID string, outs []store.Output, log *slog.Logger) (sink.Purged, error) {
	var res sink.Purged
	for _, o := range outs {
		_, statErr := l.objs.Stat(ctx, o.Final)
		if statErr != nil && !errors.Is(statErr, objstore.ErrNotExist) {
			return res, fmt.Errorf("purging output of run %s: %w", runID, statErr)
		}
		keys := []string{o.Final}
		if o.Kind == manifest.File {
			keys = append(keys, o.Staged) // an upload's bytes are at Final
		}
		for _, k := range keys {
			if err := l.objs.Delete(ctx, k); err != nil {
				return res, fmt.Errorf("purging output of run %s: %w", runID, err)
			}
		}
		if statErr != nil {
			res.Gone = append(res.Gone, joinLoc(o.Root, o.Final))
			continue
		}
		res.Deleted = append(res.Deleted, joinLoc(o.Root, o.Final))
		log.Info("deleted", "run", runID, "file", joinLoc(o.Root, o.Final))
	}
	var finals []string
	for _, o := range outs {
		if o.Rejects == "" {
			finals = append(finals, o.Final)
		}
	}
	var err error
	if res.Emptied, err = emptied(ctx, l.objs, l.root, finals); err != nil {
		return res, fmt.Errorf("purging output of run %s: %w", runID, err)
	}
	return res, nil
}

// publishOutput makes one staged output visible at its final key: it
// completes a prepared upload, or moves the staged object.
func publishOutput(ctx context.Context, s objstore.Store, o store.Output) error {
	if o.Kind != manifest.Upload {
		return s.Move(ctx, o.Staged, o.Final)
	}
	p, ok := s.(objstore.Preparer)
	if !ok {
		return fmt.Errorf("the output was uploaded to be completed, which %s cannot do", s.Root())
	}
	return p.CompleteUpload(ctx, o.Final, o.UploadID)
}

// runKey matches the keys of what a run stages or uploads (its data files
// part-<run>-<n>.<ext>, anywhere in the sink, and its folders under
// _tidemark/), capturing the run id.
var runKey = regexp.MustCompile(`^` + metaDir + `/(?:staging|rejects)/(\d{8}T\d{6}Z-[0-9a-f]+)/|(?:^|/)part-(\d{8}T\d{6}Z-[0-9a-f]+)-\d+\.[a-z]+$`)

// runOfKey returns the id of the run that staged or uploads key, or "" if
// key is not a name tidemark gives a run's files.
func runOfKey(key string) string {
	m := runKey.FindStringSubmatch(key)
	if m == nil {
		return ""
	}
	return m[1] + m[2]
}

// applyAction deletes the published files that an overwrite replaces: the
// files of the sink (or of the written partitions) that the job's
// manifests say its earlier runs published there and that a purge has not
// deleted (store.PublishedOutputs), except this run's own. Files tidemark
// did not write there (another tool's, another job's sink nested below) are
// left alone and reported; files under _-prefixed folders are never
// touched.
func applyAction(ctx context.Context, st sink.StateReader, s objstore.Store, jobName string, a store.SinkAction, keep map[string]bool, log *slog.Logger) error {
	ours := map[string]bool{}
	for o, err := range st.PublishedOutputs(ctx, jobName, a.Root) {
		if err != nil {
			return fmt.Errorf("overwriting sink %s: %w", a.Sink, err)
		}
		ours[o.Final] = true
	}
	respelled := &respelledOutputs{st: st, job: jobName, sink: a.Sink, root: a.Root}
	prefixes := []string{""}
	if a.Mode == "overwrite_partitions" {
		prefixes = prefixes[:0]
		for _, p := range a.Partitions {
			prefixes = append(prefixes, strings.TrimSuffix(p, "/")+"/")
		}
	}
	// A location whose ownership record names this job holds no other
	// job's files outside the sinks nested in it (each keeps its own
	// _tidemark/): there, files with the names tidemark gives a run's
	// output are this job's even when its manifests do not list them (an
	// earlier history: a disable run on a fresh state, an adopted
	// location). They are found by a listing that leaves nested sinks out.
	owner, owned, err := readOwner(ctx, s)
	if err != nil {
		return fmt.Errorf("overwriting sink %s: %w", a.Sink, err)
	}
	skipper, canSkip := s.(objstore.FolderSkipper)
	byName := owned && owner.Job == jobName && canSkip
	var foreign []string       // a few, one per folder under the prefix
	named := map[string]bool{} // those folders
	nForeign := 0
	leave := func(prefix, key string) {
		nForeign++
		top, _, _ := strings.Cut(strings.TrimPrefix(key, prefix), "/")
		if len(foreign) < maxForeignNamed && !named[top] {
			named[top] = true
			foreign = append(foreign, key)
		}
	}
	list := func(prefix string) iter.Seq2[objstore.Object, error] {
		if !byName {
			return s.List(ctx, prefix)
		}
		return func(yield func(objstore.Object, error) bool) {
			nested := func(_ string, o objstore.Object) {
				if strings.HasPrefix(o.Key, prefix) {
					leave(prefix, o.Key) // a nested sink's file: another job's
				}
			}
			for o, err := range skipper.ListSkipping(ctx, metaDir, nested) {
				if err == nil && !strings.HasPrefix(o.Key, prefix) {
					continue
				}
				if !yield(o, err) {
					return
				}
			}
		}
	}
	for _, prefix := range prefixes {
		var del []string
		for o, err := range list(prefix) {
			if err != nil {
				return fmt.Errorf("listing sink %s for overwrite: %w", a.Sink, err)
			}
			switch {
			case keep[o.Key]:
			case ours[o.Key], byName && runOfKey(o.Key) != "" && !strings.HasPrefix(o.Key, metaDir+"/"):
				del = append(del, o.Key)
			case respelled.owns(ctx, o.Key):
				del = append(del, o.Key)
			default:
				leave(prefix, o.Key)
			}
		}
		for _, k := range del {
			if err := s.Delete(ctx, k); err != nil {
				return fmt.Errorf("overwriting sink %s: %w", a.Sink, err)
			}
		}
		if len(del) > 0 {
			log.Info("overwrite removed old output", "sink", a.Sink, "files", len(del), "prefix", prefix)
		}
	}
	if nForeign > 0 {
		log.Warn("overwrite left in place files that this job's runs did not write (another tool's or another job's)",
			"sink", a.Sink, "files", nForeign, "examples", strings.Join(foreign, ", "))
	}
	return nil
}

// respelledOutputs recognises the job's own published files at a sink
// whose manifests name its location spelled another way: through a
// symlink or with `..`, or on S3 with or without a trailing slash
// (sameLocation). A file is the job's when its name is one a run of the
// job gave it (part-<run>-<n>), and that run succeeded, was not purged and
// published exactly that key for this sink at the same location.
type respelledOutputs struct {
	st              sink.StateReader
	job, sink, root string
	runs            map[string]map[string]bool // run id -> its keys here; nil: not the job's, or none
}

func (r *respelledOutputs) owns(ctx context.Context, key string) bool {
	id := runOfKey(key)
	if id == "" {
		return false
	}
	if r.runs == nil {
		r.runs = map[string]map[string]bool{}
	}
	keys, seen := r.runs[id]
	if !seen {
		keys = r.load(ctx, id)
		r.runs[id] = keys
	}
	return keys[key]
}

func (r *respelledOutputs) load(ctx context.Context, id string) map[string]bool {
	run, err := r.st.Run(ctx, r.job, id)
	if err != nil || run.Status != store.StatusSucceeded || run.Purged {
		return nil
	}
	outs, err := r.st.Outputs(ctx, r.job, id)
	if err != nil {
		return nil
	}
	keys := map[string]bool{}
	for _, o := range outs {
		if o.Published && o.Sink == r.sink && o.Root != r.root && sameLocation(o.Root, r.root) {
			keys[o.Final] = true
		}
	}
	return keys
}

// sameLocation reports whether two sink roots name the same place spelled
// differently: local folders whose paths resolve to the same folder (symlinks
// and `..` resolved as far as they exist), or S3 locations with the same
// bucket, prefix (leading slashes dropped and a trailing one added, as the
// S3 store does) and options.
func sameLocation(a, b string) bool {
	sa, sb := objstore.Scheme(a), objstore.Scheme(b)
	if sa != sb {
		return false
	}
	switch sa {
	case "file":
		return layout.RealPath(filepath.Clean(strings.TrimPrefix(a, "file://"))) == layout.RealPath(filepath.Clean(strings.TrimPrefix(b, "file://")))
	case "s3":
		return s3Canonical(a) == s3Canonical(b)
	}
	return false
}

// s3Canonical is an s3:// location with its prefix as the S3 store uses it
// and its options in a fixed order.
func s3Canonical(loc string) string {
	loc, query, _ := strings.Cut(loc, "?")
	bucket, prefix, _ := strings.Cut(strings.TrimPrefix(loc, "s3://"), "/")
	prefix = strings.TrimLeft(prefix, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return loc + "?" + query
	}
	return "s3://" + bucket + "/" + prefix + "?" + q.Encode()
}

// maxForeignNamed is how many foreign files an overwrite names in its
// warning, from as many folders.
const maxForeignNamed = 5
