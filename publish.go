package tidemark

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
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/store"
)

// Layout of a sink's _tidemark/ folder.
const (
	metaDir    = "_tidemark"
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

// roots caches object stores by location.
type roots map[string]objstore.Store

func (r roots) open(ctx context.Context, loc string) (objstore.Store, error) {
	if s, ok := r[loc]; ok {
		return s, nil
	}
	s, err := objstore.Open(ctx, loc, nil)
	if err != nil {
		return nil, err
	}
	r[loc] = s
	return s, nil
}

// publish moves a committed run's staged outputs to their final names,
// applies its overwrite actions and marks it published. Every step is
// idempotent, so a run killed anywhere in here is finished by the next
// command that calls publish again.
func publish(ctx context.Context, st store.Store, rs roots, jobName, runID string, log *slog.Logger) error {
	outs, err := st.Outputs(ctx, jobName, runID)
	if err != nil {
		return fmt.Errorf("reading outputs of run %s: %w", runID, err)
	}
	acts, err := st.Actions(ctx, jobName, runID)
	if err != nil {
		return fmt.Errorf("reading actions of run %s: %w", runID, err)
	}
	finals := map[string]map[string]bool{} // root -> final keys of this run
	var moves []func(context.Context) error
	for _, o := range outs {
		if o.Kind == manifest.TableLoad {
			moves = append(moves, func(ctx context.Context) error { return publishTable(ctx, o, jobName) })
			continue
		}
		s, err := rs.open(ctx, o.Root)
		if err != nil {
			return err
		}
		if finals[o.Root] == nil {
			finals[o.Root] = map[string]bool{}
		}
		finals[o.Root][o.Final] = true
		if o.Published {
			continue
		}
		moves = append(moves, func(ctx context.Context) error {
			err := publishOutput(ctx, s, o)
			if errors.Is(err, objstore.ErrUploadGone) || errors.Is(err, objstore.ErrNotExist) {
				return fmt.Errorf("publishing %s of run %s: %w (%w); %s", joinLoc(o.Root, o.Final), runID, errOutputLost, err,
					rereadHint(ctx, st, jobName, runID))
			}
			if err != nil {
				return fmt.Errorf("publishing %s of run %s: %w", joinLoc(o.Root, o.Final), runID, err)
			}
			return nil
		})
	}
	// The locations' ownership records name the run's version before any
	// of its output appears there (or an overwrite deletes anything): a
	// state restored from a copy older than the run is refused even if the
	// run was killed part way through publishing.
	var locations []string
	for root := range finals {
		locations = append(locations, root)
	}
	sort.Strings(locations)
	if err := recordPublished(ctx, st, rs, jobName, runID, locations, log); err != nil {
		return err
	}
	if len(moves) > 0 {
		if err := moves[0](ctx); err != nil {
			return err
		}
		fault.At(fault.MidPublish)
		if err := parallel(ctx, publishConcurrency, moves[1:]); err != nil {
			return err
		}
	}
	for _, a := range acts {
		if err := applyAction(ctx, st, rs, jobName, a, finals[a.Root], log); err != nil {
			return fmt.Errorf("run %s: %w", runID, err)
		}
	}
	fault.At(fault.AfterPublish)
	if err := st.MarkPublished(ctx, jobName, runID); err != nil {
		return fmt.Errorf("marking run %s published: %w", runID, err)
	}
	done := map[string]bool{}
	for _, o := range outs {
		if !done[o.Root] && o.Kind != manifest.TableLoad {
			done[o.Root] = true
			s, _ := rs.open(ctx, o.Root)
			if err := s.DeletePrefix(ctx, stagingPrefix(runID)); err != nil {
				log.Warn("cleaning staging folder", "root", o.Root, "run", runID, "err", err)
			}
		}
	}
	return nil
}

// errOutputLost marks a committed run whose output can no longer be
// published: a staged file or a prepared upload of it is gone (deleted,
// aborted by a lifecycle rule).
var errOutputLost = errors.New("the run's output is lost: its staged file or upload is gone")

// rereadHint says how to read a lost run's input again: rewind the
// bookmark to the enable run before it, purging what the lost run
// published in part.
func rereadHint(ctx context.Context, st store.Store, jobName, runID string) string {
	reset := fmt.Sprintf("tidemark bookmark reset %s --purge-output", jobName)
	runs, err := st.Runs(ctx, jobName)
	if err != nil {
		return "rewind the bookmark to the run before it with --purge-output (tidemark bookmark reset " + jobName + " --to-run RUN --purge-output) so that its input is read again"
	}
	seq := int64(-1)
	for _, r := range runs { // newest first
		if r.RunID == runID {
			seq = r.Seq
			continue
		}
		if seq >= 0 && r.Seq < seq && r.Mode == bookmark.ModeEnable && r.Status == store.StatusSucceeded && !r.Undone {
			return fmt.Sprintf("rewind the bookmark to the run before it so that its input is read again: "+
				"tidemark bookmark reset %s --to-run %s --purge-output (or clear it: %s)", jobName, r.RunID, reset)
		}
	}
	return "no earlier run to rewind to: clear the bookmark so that all input is read again: " + reset
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
func applyAction(ctx context.Context, st store.Store, rs roots, jobName string, a store.SinkAction, keep map[string]bool, log *slog.Logger) error {
	s, err := rs.open(ctx, a.Root)
	if err != nil {
		return err
	}
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
	st              store.Store
	job, sink, root string
	runs            map[string]map[string]bool // run id -> its keys here; nil: not the job's, or none
	err             error
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
		return realPath(filepath.Clean(strings.TrimPrefix(a, "file://"))) == realPath(filepath.Clean(strings.TrimPrefix(b, "file://")))
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

// recover finishes what earlier runs of the job left behind: committed runs
// not yet published are rolled forward, oldest first; then what the job's
// runs that never committed staged or began to upload is deleted from the
// given sink roots (only those runs': the state store names them).
//
// undone, when set, names the committed runs a reset is about to undo: one
// of them whose output can no longer be published (errOutputLost: its
// staged files or uploads are gone) is given up, marked published with a
// warning, instead of failing the reset that reads its input again.
func recoverJob(ctx context.Context, st store.Store, rs roots, jobName string, sinkRoots []string, log *slog.Logger, undone func(store.Run) bool) error {
	pending, err := st.Unpublished(ctx, jobName)
	if err != nil {
		return fmt.Errorf("finding unpublished runs: %w", err)
	}
	for _, r := range pending {
		log.Info("rolling forward committed run", "run", r.RunID)
		err := publish(ctx, st, rs, jobName, r.RunID, log)
		if err != nil && errors.Is(err, errOutputLost) && undone != nil && undone(r) {
			log.Warn("giving up the output of a run being undone: its staged files or uploads are gone; what of it was published is "+
				"deleted by --purge-output", "run", r.RunID, "err", err)
			err = st.MarkPublished(ctx, jobName, r.RunID)
		}
		if err != nil {
			return err
		}
	}
	if len(sinkRoots) == 0 {
		return nil
	}
	// Every committed run is published by now and the caller holds the
	// job's lease, so what the job's runs (but the one running) left
	// staged or half-uploaded is dead. Other runs' files are not the job's
	// to delete, whatever their names.
	runs, err := st.Runs(ctx, jobName)
	if err != nil {
		return fmt.Errorf("reading runs: %w", err)
	}
	mine := map[string]bool{}
	for _, r := range runs {
		if r.Status != store.StatusRunning {
			mine[r.RunID] = true
		}
	}
	for _, root := range sinkRoots {
		s, err := rs.open(ctx, root)
		if err != nil {
			return err
		}
		// A dead run's incomplete multipart uploads are invisible to List.
		if a, ok := s.(objstore.UploadAborter); ok {
			others := 0
			n, err := a.AbortStaleUploads(ctx, "", 0, func(k string) bool {
				id := runOfKey(k)
				if id != "" && !mine[id] {
					others++
				}
				return mine[id]
			})
			if err != nil {
				return fmt.Errorf("aborting stale uploads under %s: %w", root, err)
			}
			if n > 0 {
				log.Info("aborted incomplete uploads of runs that did not commit", "root", root, "uploads", n)
			}
			if others > 0 {
				log.Warn("incomplete uploads of runs this job's state does not know are left alone", "root", root, "uploads", others)
			}
		}
		dead := map[string]int{}
		foreign := 0
		for o, err := range s.List(ctx, stagingDir+"/") {
			if err != nil {
				return err
			}
			id, _, _ := strings.Cut(strings.TrimPrefix(o.Key, stagingDir+"/"), "/")
			if mine[id] {
				dead[id]++
			} else {
				foreign++
			}
		}
		for id, n := range dead {
			log.Info("deleting staged output of a run that did not commit", "root", root, "run", id, "files", n)
			if err := s.DeletePrefix(ctx, stagingPrefix(id)); err != nil {
				return fmt.Errorf("cleaning %s: %w", root, err)
			}
		}
		if foreign > 0 {
			log.Warn("staged files of runs this job's state does not know are left alone", "root", root, "files", foreign,
				"folder", joinLoc(root, stagingDir+"/"))
		}
	}
	return nil
}

// markDead records as failed the runs that died before they committed
// (killed, crashed): the caller holds the lease, so no other run of the job
// is alive. Runs are scanned newest first down to the last succeeded one,
// which had marked any older ones.
func markDead(ctx context.Context, st store.Store, jobName string, log *slog.Logger) error {
	runs, err := st.Runs(ctx, jobName)
	if err != nil {
		return fmt.Errorf("reading runs: %w", err)
	}
	for _, r := range runs {
		if r.Status == store.StatusSucceeded {
			break
		}
		if r.Status != store.StatusRunning {
			continue
		}
		log.Info("marking a run that died before committing as failed", "run", r.RunID)
		if err := st.FailRun(ctx, jobName, r.RunID, time.Now().UTC(), r, "the run died before it committed (killed or crashed); nothing of it was published"); err != nil {
			return fmt.Errorf("marking run %s failed: %w", r.RunID, err)
		}
	}
	return nil
}
