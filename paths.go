package tidemark

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/objstore"
)

// area is a place reduced to what tells whether two places overlap: a
// local folder (absolute, cleaned, symlinks resolved as far as the path
// exists) or an object store's bucket and prefix (S3 keys are literal:
// "a/../b" is a key of its own, so prefixes are compared as written).
// Other schemes have no area and overlap nothing.
type area struct {
	scheme   string // "file" or "s3"
	endpoint string // an S3 location's endpoint option, if given
	bucket   string
	dir      string // ends with '/' (local: the OS separator); "" for a bucket root
	shown    string // the place as the job file gives it, for messages
}

// areaOf reduces a block's place (or a state location's folder) to its
// area; ok is false for a place without a folder.
func areaOf(pl job.Place) (area, bool) {
	if pl.Folder == "" {
		return area{}, false
	}
	f := objstore.ParseFolder(pl.Folder)
	switch f.Scheme {
	case "file":
		return area{scheme: "file", dir: withSep(realPath(f.Dir), string(filepath.Separator)), shown: pl.Shown}, true
	case "s3":
		return area{scheme: "s3", endpoint: pl.S3["endpoint"], bucket: f.Bucket, dir: f.Dir, shown: pl.Shown}, true
	}
	return area{}, false
}

func withSep(dir, sep string) string {
	if strings.HasSuffix(dir, sep) {
		return dir
	}
	return dir + sep
}

// stateArea is the folder of a state location: a SQLite file's folder (a
// relative path is relative to the working folder, as the store opens it)
// or an S3 state store's prefix. Other stores have none.
func stateArea(loc string) (area, bool) {
	loc, _, _ = strings.Cut(loc, "?")
	switch objstore.Scheme(loc) {
	case "file", "sqlite":
		abs, err := filepath.Abs(stateFile(loc))
		if err != nil {
			return area{}, false
		}
		dir := filepath.Dir(abs)
		return area{scheme: "file", dir: withSep(realPath(dir), string(filepath.Separator)), shown: fmt.Sprintf("%q", dir)}, true
	case "s3":
		f := objstore.ParseFolder(loc)
		return area{scheme: "s3", bucket: f.Bucket, dir: f.Dir, shown: "s3://" + f.Bucket + "/" + f.Dir}, true
	}
	return area{}, false
}

// stateFile is a SQLite state location's file (plain, file:// or
// sqlite://).
func stateFile(loc string) string {
	if _, rest, ok := strings.Cut(loc, "://"); ok {
		return rest
	}
	return loc
}

func realPath(p string) string { return layout.RealPath(p) }

// within reports whether a lies in b or is b. Areas on different stores
// never overlap (two S3 endpoints given explicitly and differently are
// different stores; an endpoint given for one and not the other is taken
// as the same store, to refuse rather than miss).
func (a area) within(b area) bool {
	if a.scheme != b.scheme || a.bucket != b.bucket ||
		a.endpoint != "" && b.endpoint != "" && a.endpoint != b.endpoint {
		return false
	}
	return strings.HasPrefix(a.dir, b.dir)
}

// describe names an area for a message: the path as given, and what it
// resolves to when that differs.
func (a area) describe() string {
	dir := a.dir
	if a.scheme == "file" && len(dir) > 1 {
		dir = strings.TrimSuffix(dir, string(filepath.Separator))
	}
	if a.scheme != "file" || strings.TrimSuffix(a.shown, "/") == dir || strings.TrimPrefix(a.shown, "file://") == dir {
		return fmt.Sprintf("%q", a.shown)
	}
	return fmt.Sprintf("%q (%s)", a.shown, dir)
}

// placeOf is a block's place; none for a block that does not say
// (job.Placer).
func placeOf(spec *job.Spec, c job.Config) job.Place {
	if p, ok := c.(job.Placer); ok {
		return p.Place(spec)
	}
	return job.Place{}
}

// checkSinkPaths refuses sink locations that would make a run delete or
// read what it must not: a file-system root or the user's home folder, the
// state store's folder or a place inside it (only the folder itself when
// the state file sits in the job file's folder or above), and a place that
// holds one of the job's file sources or lies inside one (the job would
// read its own output back), and the place of another of the job's file
// sinks, inside it or holding it. Errors are job-file errors naming the sink's
// path key. A state store inside a source folder is refused first
// (checkStatePath).
func checkSinkPaths(spec *job.Spec, stateLoc string) error {
	var sources []area
	var sourceIdx []int
	for i, src := range spec.Sources {
		pl := placeOf(spec, src.Config)
		if a, ok := areaOf(pl); ok {
			a.shown = fmt.Sprintf("%s %q", src.Ctx, pl.Shown)
			sources = append(sources, a)
			sourceIdx = append(sourceIdx, i)
		}
	}
	if err := checkStatePath(spec, stateLoc, sources, sourceIdx); err != nil {
		return err
	}
	state, hasState := stateArea(stateLoc)
	// A state file beside the job file (or above it) sits in the project's
	// folder, not a folder of its own: only that folder itself is refused.
	jobDir, _ := areaOf(job.Place{Folder: spec.Resolve(spec.Dir)})
	ownFolder := hasState && !jobDir.within(state)
	home, _ := os.UserHomeDir()
	var errs job.Errors // one per sink, every sink's
	var earlier []area  // the sinks before, shown as "sink CTX PATH"
	for i, k := range spec.Sinks {
		if err := checkSinkPath(spec, i, k, sources, earlier, state, hasState, ownFolder, home); err != nil {
			errs = append(errs, err)
			continue // a refused sink is no place for the others to be measured against
		}
		pl := placeOf(spec, k.Config)
		if a, ok := areaOf(pl); ok {
			a.shown = fmt.Sprintf("%s %q", k.Ctx, pl.Shown)
			earlier = append(earlier, a)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// checkStatePath refuses a state store inside the folder of a file source
// at a place its listing does not skip (no name below the source's folder
// starts with _ or .): the job would read its own state — leases, run
// records, versions — as input, and again each time they change. The
// error names the job file's state: when the location comes from there,
// else the source's path.
func checkStatePath(spec *job.Spec, stateLoc string, sources []area, sourceIdx []int) error {
	state, ok := stateArea(stateLoc)
	if !ok {
		return nil
	}
	below := state.dir // the state's objects: its folder, and a SQLite file's name
	if state.scheme == "file" {
		loc, _, _ := strings.Cut(stateLoc, "?")
		below += filepath.Base(stateFile(loc))
	}
	fromFile := spec.State != "" && (stateLoc == spec.State || stateLoc == filepath.Join(spec.Dir, spec.State))
	for n, src := range sources {
		if !state.within(src) || hiddenBelow(strings.TrimPrefix(below, src.dir)) {
			continue
		}
		key, what := fmt.Sprintf("$.sources[%d].path", sourceIdx[n]), fmt.Sprintf("holds the state store's folder %s", state.shown)
		if fromFile {
			key, what = "$.state", fmt.Sprintf("%s lies inside the folder of source %s", state.shown, src.shown)
		}
		return spec.ErrorAt(key, "%s: the job would read its own state as input; keep the state store outside every source "+
			"folder, or in a folder whose name starts with _ or . (which listings skip)", what)
	}
	return nil
}

// hiddenBelow reports whether a relative path has a name that listings
// skip (starting with _ or .).
func hiddenBelow(rel string) bool {
	for _, seg := range strings.FieldsFunc(rel, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if strings.HasPrefix(seg, "_") || strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// checkSinkPath is checkSinkPaths for sink i.
func checkSinkPath(spec *job.Spec, i int, k job.Sink, sources, earlier []area, state area, hasState, ownFolder bool, home string) *job.Error {
	key := fmt.Sprintf("$.sinks[%d].path", i)
	sink, ok := areaOf(placeOf(spec, k.Config))
	if !ok {
		return nil
	}
	if sink.scheme == "file" {
		dir := filepath.Clean(sink.dir)
		if filepath.Dir(dir) == dir {
			return spec.ErrorAt(key, "%s is the root of the file system; a sink needs a folder of its own", sink.describe())
		}
		if home != "" && dir == filepath.Clean(realPath(home)) {
			return spec.ErrorAt(key, "%s is your home folder; a sink needs a folder of its own", sink.describe())
		}
	}
	if hasState && (sink.dir == state.dir && sink.scheme == state.scheme && sink.bucket == state.bucket && sink.endpoint == state.endpoint || ownFolder && sink.within(state)) {
		return spec.ErrorAt(key, "%s is in the state store's folder %s; write the sink elsewhere", sink.describe(), state.shown)
	}
	for _, other := range earlier {
		switch {
		case sink.within(other) && other.within(sink):
			return spec.ErrorAt(key, "%s is the location of sink %s too: two sinks would stage and overwrite each other's "+
				"files; give each sink a folder of its own", sink.describe(), other.shown)
		case sink.within(other):
			return spec.ErrorAt(key, "%s lies inside the folder of sink %s: readers of that sink would read this one's files too; "+
				"give each file sink a folder of its own", sink.describe(), other.shown)
		case other.within(sink):
			return spec.ErrorAt(key, "%s holds the folder of sink %s: readers of this sink would read that one's files too; "+
				"give each file sink a folder of its own", sink.describe(), other.shown)
		}
	}
	for _, src := range sources {
		switch {
		case sink.within(src):
			return spec.ErrorAt(key, "%s lies inside the folder of source %s: the job would read its own output back; "+
				"write the sink outside every source folder", sink.describe(), src.shown)
		case src.within(sink):
			return spec.ErrorAt(key, "%s holds the folder of source %s: the sink's output and the source's input would mix; "+
				"write the sink outside every source folder", sink.describe(), src.shown)
		}
	}
	return nil
}
