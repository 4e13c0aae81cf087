package crawler

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/glob"
	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/store"
)

// file is one listed file of a target.
type file struct {
	obj  objstore.Object
	rec  bookmark.File
	dir  *folder
	new  bool // not in the crawler's bookmark, or changed since
	prev *bookmark.File

	// What sampling found: the file's shape, or why it has none.
	sampled bool
	shape   *shape
	reason  string
	read    reading
}

// folder is one folder of a target, with the files directly in it.
type folder struct {
	path     string // relative to the target, '/'-separated, "" for the target
	name     string // its last segment
	depth    int    // below the target
	files    []*file
	children []*folder
	byName   map[string]*folder

	// shape is the folder's sampled shape (nil when none of its files was
	// sampled or classified): its files' dominant kind, columns merged.
	shape *shape
}

func (f *folder) child(name string) *folder {
	if c, ok := f.byName[name]; ok {
		return c
	}
	p := name
	if f.path != "" {
		p = f.path + "/" + name
	}
	c := &folder{path: p, name: name, depth: f.depth + 1, byName: map[string]*folder{}}
	f.byName[name] = c
	f.children = append(f.children, c)
	return c
}

// walk calls fn for f and every folder below it, parents first, children
// in name order.
func (f *folder) walk(fn func(*folder)) {
	fn(f)
	for _, c := range f.children {
		c.walk(fn)
	}
}

// target is one crawled target, listed.
type target struct {
	cfg  Target
	loc  string // the location as resolved, for messages and the bookmark ctx
	root string // the object store's root: an absolute folder or s3://bucket/prefix/
	st   objstore.Store
	tree *folder

	listed, excluded int64

	// sinks are the objects of the folders below the target's root that
	// hold a _tidemark/ entry (a tidemark sink's output), by folder: the
	// listing left them out.
	sinks     map[string][]objstore.Object
	sinkSkips []Skip
}

// ctx is the target's bookmark ctx.
func (t *target) ctx() string { return t.loc }

// location is where a folder of the target is: a local folder, or an S3
// prefix ending in '/'.
func (t *target) location(f *folder) string {
	loc := objstore.Join(t.root, f.path)
	if !objstore.IsLocal(t.root) && f.path != "" {
		loc += "/"
	}
	return loc
}

// key is a file's path for messages: its location.
func (t *target) key(f *file) string { return objstore.Join(t.root, f.obj.Key) }

// listTarget lists a target (hidden names, '_' and '.', are left out by
// the store), drops what exclude matches, and marks each file new or
// known against the crawler's bookmark. A folder below the root holding
// _tidemark/ is left out unless it is at tableLevel (sinkFolders).
func listTarget(ctx context.Context, st store.Store, jobName string, cfg Target, loc string, tableLevel int) (*target, error) {
	if objstore.IsLocal(loc) { // resolved: a plain path
		info, err := os.Stat(loc)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", loc, err)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("target %s is not a folder", loc)
		}
	}
	obj, err := objstore.Open(ctx, loc, cfg.S3)
	if err != nil {
		return nil, err
	}
	var excl []*regexp.Regexp
	for _, g := range cfg.Exclude {
		re, err := glob.Compile(g)
		if err != nil {
			return nil, err
		}
		excl = append(excl, re)
	}
	t := &target{cfg: cfg, loc: loc, root: obj.Root(), st: obj, tree: &folder{byName: map[string]*folder{}}}
	if !objstore.IsLocal(t.root) && !strings.HasSuffix(t.root, "/") {
		t.root += "/"
	}
	prev := map[string]bookmark.File{}
	for f, err := range st.Files(ctx, jobName, t.ctx()) {
		if err != nil {
			return nil, fmt.Errorf("reading the crawler's bookmark: %w", err)
		}
		prev[f.Path] = f
	}
	objs := obj.List(ctx, "")
	if fs, ok := obj.(objstore.FolderSkipper); ok {
		// A folder holding _tidemark/ is a tidemark sink's output: left
		// out and reported (sinkFolders), unless it is a table folder.
		objs = fs.ListSkipping(ctx, layout.MetaDir, func(dir string, o objstore.Object) {
			if t.sinks == nil {
				t.sinks = map[string][]objstore.Object{}
			}
			t.sinks[dir] = append(t.sinks[dir], o)
		})
	}
	for o, err := range objs {
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", loc, err)
		}
		t.add(o, excl, prev)
	}
	t.sinkFolders(tableLevel, excl, prev)
	t.tree.walk(func(d *folder) {
		slices.SortFunc(d.children, func(a, b *folder) int { return strings.Compare(a.name, b.name) })
	})
	return t, nil
}

// add puts a listed object in the target's tree, marked new or known
// against the crawler's bookmark (prev), unless exclude drops it.
func (t *target) add(o objstore.Object, excl []*regexp.Regexp, prev map[string]bookmark.File) {
	if slices.ContainsFunc(excl, func(re *regexp.Regexp) bool { return re.MatchString(o.Key) }) {
		t.excluded++
		return
	}
	t.listed++
	segs := strings.Split(o.Key, "/")
	d := t.tree
	for _, s := range segs[:len(segs)-1] {
		d = d.child(s)
	}
	f := &file{obj: o, dir: d, rec: bookmark.File{Path: o.Key, Size: o.Size, MTime: o.ModTime.UnixNano(), ETag: o.ETag}}
	if p, ok := prev[o.Key]; ok {
		if !p.SameIdentity(f.rec) {
			f.new, f.prev = true, &p
		}
	} else {
		f.new = true
	}
	d.files = append(d.files, f)
}

// sinkFolders deals with the sink folders the listing left out: one at
// table_level is a table of its own (a sink's table, crawled as such) and
// goes back into the tree; any other would be read as a partition or a
// part of another table, so that a job reading the table reads the sink's
// output again (its own, when it is the job's sink): it is skipped and
// reported, never registered.
func (t *target) sinkFolders(tableLevel int, excl []*regexp.Regexp, prev map[string]bookmark.File) {
	dirs := make([]string, 0, len(t.sinks))
	for d := range t.sinks {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, dir := range dirs {
		if strings.Count(dir, "/")+1 == tableLevel {
			for _, o := range t.sinks[dir] {
				t.add(o, excl, prev)
			}
			continue
		}
		t.listed += int64(len(t.sinks[dir]))
		t.sinkSkips = append(t.sinkSkips, Skip{Path: strings.TrimSuffix(t.location(&folder{path: dir}), "/") + "/",
			Files: len(t.sinks[dir]), Reason: "holds " + layout.MetaDir + "/: it is a tidemark sink's output, which a job " +
				"reading this table would read again; crawl it as a target of its own"})
	}
}
