package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/store"
)

// area is a location reduced to what tells whether two locations overlap:
// a local folder (absolute, cleaned, symlinks resolved as far as the path
// exists) or an S3 bucket and prefix (S3 keys are literal: "a/../b" is a
// key of its own, so prefixes are compared as written). Other schemes have
// no area and overlap nothing.
type area struct {
	store string // "file", or "s3://" + endpoint + " " + bucket
	dir   string // ends with '/' (local: the OS separator); "" for a bucket root
	shown string // the location as the job file gives it, for messages
}

// areaOf reduces a job-file path (or a state location) to its area.
// endpoint is the location's s3 endpoint option, if any.
func areaOf(spec *job.Spec, p, endpoint string) (area, bool) {
	loc, _, _ := strings.Cut(spec.Resolve(p), "?")
	switch objstore.Scheme(loc) {
	case "file":
		return area{store: "file", dir: withSep(realPath(loc), string(filepath.Separator)), shown: p}, true
	case "s3":
		bucket, prefix, _ := strings.Cut(withoutUser(strings.TrimPrefix(loc, "s3://")), "/")
		prefix = strings.TrimLeft(prefix, "/")
		if prefix != "" {
			prefix = withSep(prefix, "/")
		}
		return area{store: "s3://" + endpoint + " " + bucket, dir: prefix, shown: store.Redact(p)}, true
	}
	return area{}, false
}

// withoutUser drops a user-info part ("key:secret@") from the host part of
// a URL without its scheme: it names no place, and is never shown.
func withoutUser(rest string) string {
	if i := strings.LastIndex(rest, "@"); i >= 0 && i < strings.Index(rest+"/", "/") {
		return rest[i+1:]
	}
	return rest
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
	scheme, rest, ok := strings.Cut(loc, "://")
	if !ok {
		scheme, rest = "", loc
	}
	switch scheme {
	case "", "file", "sqlite":
		abs, err := filepath.Abs(rest)
		if err != nil {
			return area{}, false
		}
		dir := filepath.Dir(abs)
		return area{store: "file", dir: withSep(realPath(dir), string(filepath.Separator)), shown: fmt.Sprintf("%q", dir)}, true
	case "s3":
		bucket, prefix, _ := strings.Cut(withoutUser(rest), "/")
		prefix = strings.TrimLeft(prefix, "/")
		if prefix != "" {
			prefix = withSep(prefix, "/")
		}
		return area{store: "s3:// " + bucket, dir: prefix, shown: "s3://" + bucket + "/" + prefix}, true
	}
	return area{}, false
}

func realPath(p string) string { return layout.RealPath(p) }

// within reports whether a lies in b or is b. Areas on different stores
// never overlap (two S3 endpoints given explicitly and differently are
// different stores; an endpoint given for one and not the other is taken
// as the same store, to refuse rather than miss).
func (a area) within(b area) bool {
	if a.store != b.store {
		as, bs := a.store, b.store
		if !strings.HasPrefix(as, "s3://") || !strings.HasPrefix(bs, "s3://") {
			return false
		}
		ae, abucket, _ := strings.Cut(strings.TrimPrefix(as, "s3://"), " ")
		be, bbucket, _ := strings.Cut(strings.TrimPrefix(bs, "s3://"), " ")
		if abucket != bbucket || (ae != "" && be != "" && ae != be) {
			return false
		}
	}
	return strings.HasPrefix(a.dir, b.dir)
}

// describe names an area for a message: the path as given, and what it
// resolves to when that differs.
func (a area) describe() string {
	dir := a.dir
	if a.store == "file" && len(dir) > 1 {
		dir = strings.TrimSuffix(dir, string(filepath.Separator))
	}
	if a.store != "file" || strings.TrimSuffix(a.shown, "/") == dir || strings.TrimPrefix(a.shown, "file://") == dir {
		return fmt.Sprintf("%q", a.shown)
	}
	return fmt.Sprintf("%q (%s)", a.shown, dir)
}

// placeOf is a block's folder and S3 settings; "" for a block that has
// none (a SQL table).
func placeOf(c job.Config) (string, map[string]string) {
	if p, ok := c.(job.Placed); ok {
		return p.Place()
	}
	return "", nil
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
		path, s3 := placeOf(src.Config)
		if path == "" {
			continue
		}
		if a, ok := areaOf(spec, path, s3["endpoint"]); ok {
			a.shown = fmt.Sprintf("%s %q", src.Ctx, store.Redact(path))
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
	jobDir, _ := areaOf(spec, spec.Dir, "")
	ownFolder := hasState && !jobDir.within(state)
	home, _ := os.UserHomeDir()
	var errs job.Errors // one per sink, every sink's
	var earlier []area  // the sinks before, shown as "sink CTX PATH"
	for i, k := range spec.Sinks {
		if err := checkSinkPath(spec, i, k, sources, earlier, state, hasState, ownFolder, home); err != nil {
			errs = append(errs, err)
			continue // a refused sink is no place for the others to be measured against
		}
		path, s3 := placeOf(k.Config)
		if a, ok := areaOf(spec, path, s3["endpoint"]); ok && path != "" {
			a.shown = fmt.Sprintf("%s %q", k.Ctx, store.Redact(path))
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
	if state.store == "file" {
		loc, _, _ := strings.Cut(stateLoc, "?")
		if _, rest, ok := strings.Cut(loc, "://"); ok {
			loc = rest
		}
		below += filepath.Base(loc)
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
	path, s3 := placeOf(k.Config)
	if path == "" {
		return nil
	}
	key := fmt.Sprintf("$.sinks[%d].path", i)
	sink, ok := areaOf(spec, path, s3["endpoint"])
	if !ok {
		return nil
	}
	if sink.store == "file" {
		dir := filepath.Clean(sink.dir)
		if filepath.Dir(dir) == dir {
			return spec.ErrorAt(key, "%s is the root of the file system; a sink needs a folder of its own", sink.describe())
		}
		if home != "" && dir == filepath.Clean(realPath(home)) {
			return spec.ErrorAt(key, "%s is your home folder; a sink needs a folder of its own", sink.describe())
		}
	}
	if hasState && (sink.dir == state.dir && sink.store == state.store || ownFolder && sink.within(state)) {
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
