package crawler

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/objstore"
)

// tablePlan is one table a crawl maps onto a folder: an existing table of
// the catalog (at that location), or a new one.
type tablePlan struct {
	name     string
	t        *target
	dir      *folder
	loc      string
	existing *catalog.Table
	// shape is the sampled shape, columns merged (nil: nothing of the
	// table was sampled; an existing table then keeps its own).
	shape *shape
	keys  []catalog.Column
	parts []partPlan
}

// partPlan is one partition folder found.
type partPlan struct {
	values []string
	loc    string
}

// grouper maps the folders of targets to tables.
type grouper struct {
	cfg   *Config
	byLoc map[string]*catalog.Table
	plans []*tablePlan
	skip  func(t *target, d *folder, f *file, reason string)
}

// groupKey is what must agree across folders for them to be one new
// table: the reader (format, compression, options) and, unless compatible
// schemas are combined, the column names.
func (g *grouper) groupKey(s *shape) string {
	if g.cfg.Combine() {
		return s.kind()
	}
	return s.kind() + " columns " + strings.Join(s.Schema.names(), ",")
}

// makeTable maps table folder n: the existing table at its location, or
// one new table when its folders agree (or it has no subfolders), or else
// each subfolder on its own.
func (g *grouper) makeTable(t *target, n *folder, name string) {
	loc := t.location(n)
	if ex := g.byLoc[loc]; ex != nil {
		g.existingPlan(t, n, ex)
		return
	}
	keys := map[string]bool{}
	n.walk(func(d *folder) {
		if d.shape != nil {
			keys[g.groupKey(d.shape)] = true
		}
	})
	// Folders that agree are one table, unless an earlier crawl split
	// them into tables of their own.
	if len(n.children) == 0 || len(keys) <= 1 && !tableAtOrBelow(g.byLoc, loc, false) {
		g.newPlan(t, n, name)
		return
	}
	if len(n.files) > 0 {
		g.skip(t, n, nil, "beside subfolders whose files differ in format or columns, each of which is a table of its own")
	}
	for _, c := range n.children {
		g.makeTable(t, c, tableName(c.name))
	}
}

// tableAtOrBelow reports whether byLoc has a table below loc (or at it,
// with at).
func tableAtOrBelow(byLoc map[string]*catalog.Table, loc string, at bool) bool {
	loc = normLocation(loc)
	if at && byLoc[loc] != nil {
		return true
	}
	prefix := strings.TrimSuffix(loc, "/") + "/"
	if objstore.IsLocal(loc) {
		prefix = loc + string(filepath.Separator)
	}
	for l := range byLoc {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// foldersByDepth lists the folders below n that hold files, and the depth
// (below n) that holds most files: a tie goes to the shallower.
func foldersByDepth(n *folder) ([]*folder, int) {
	var out []*folder
	files := map[int]int{}
	n.walk(func(d *folder) {
		if len(d.files) > 0 {
			out = append(out, d)
			files[d.depth-n.depth] += len(d.files)
		}
	})
	best := -1
	for depth, c := range files {
		if best < 0 || c > files[best] || c == files[best] && depth < best {
			best = depth
		}
	}
	return out, best
}

// newPlan maps n to a new table.
func (g *grouper) newPlan(t *target, n *folder, name string) {
	folders, depth := foldersByDepth(n)
	var kept []*folder
	for _, d := range folders {
		if d.depth-n.depth != depth {
			g.skip(t, d, nil, fmt.Sprintf("%d folders below the table folder %s, whose other files are %d deep", d.depth-n.depth, t.location(n), depth))
			continue
		}
		kept = append(kept, d)
	}
	// The reader most files have.
	count := map[string]int{}
	var order []string
	for _, d := range kept {
		if d.shape == nil {
			continue
		}
		k := g.groupKey(d.shape)
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k] += len(d.files)
	}
	if len(order) == 0 {
		return // nothing classified: each file was skipped, with why
	}
	win := order[0]
	for _, k := range order[1:] {
		if count[k] > count[win] {
			win = k
		}
	}
	p := &tablePlan{name: name, t: t, dir: n, loc: t.location(n)}
	var parts []*folder
	for _, d := range kept {
		if why := ambiguousFolder(n, d); why != "" {
			g.skip(t, d, nil, fmt.Sprintf("table %s: %s", p.loc, why))
			continue
		}
		if d.shape != nil && g.groupKey(d.shape) != win {
			g.skip(t, d, nil, fmt.Sprintf("%s, unlike the other folders of table %s", d.shape.describe(), p.loc))
			continue
		}
		parts = append(parts, d)
		if d.shape == nil {
			continue
		}
		if p.shape == nil {
			c := *d.shape
			p.shape = &c
			continue
		}
		p.shape.Schema = p.shape.Schema.merge(d.shape.Schema)
	}
	p.keys = partitionKeys(n, parts, depth)
	for _, k := range p.keys {
		if slices.ContainsFunc(p.shape.Schema, func(c column) bool { return strings.EqualFold(c.Name, k.Name) }) {
			for _, d := range parts {
				g.skip(t, d, nil, fmt.Sprintf("table %s: its partition folders name %q, which is also a column of its files", p.loc, k.Name))
			}
			return
		}
	}
	for _, d := range parts {
		vals, err := partitionValues(n, d, p.keys)
		if err != nil {
			// A key spelled in another case than its siblings': readers
			// would take it for another column.
			g.skip(t, d, nil, fmt.Sprintf("table %s: %v, as its sibling folders name the key: rename it", p.loc, err))
			continue
		}
		p.parts = append(p.parts, partPlan{values: vals, loc: t.location(d)})
	}
	g.plans = append(g.plans, p)
}

// existingPlan maps n to the catalog table ex at its location: folders at
// its partition depth whose names fit its keys, of its format.
func (g *grouper) existingPlan(t *target, n *folder, ex *catalog.Table) {
	p := &tablePlan{name: ex.Name, t: t, dir: n, loc: ex.Location, existing: ex, keys: ex.PartitionKeys}
	folders, _ := foldersByDepth(n)
	for _, d := range folders {
		if d.depth-n.depth != len(ex.PartitionKeys) {
			g.skip(t, d, nil, fmt.Sprintf("%d folders below table %s.%s, whose partitions are %d deep", d.depth-n.depth, ex.Database, ex.Name, len(ex.PartitionKeys)))
			continue
		}
		if why := ambiguousFolder(n, d); why != "" {
			g.skip(t, d, nil, fmt.Sprintf("table %s.%s: %s", ex.Database, ex.Name, why))
			continue
		}
		vals, err := partitionValues(n, d, ex.PartitionKeys)
		if err != nil {
			g.skip(t, d, nil, fmt.Sprintf("table %s.%s: %v", ex.Database, ex.Name, err))
			continue
		}
		if d.shape != nil && !readsAs(ex, d.shape) {
			g.skip(t, d, nil, fmt.Sprintf("%s, unlike table %s.%s (%s)", d.shape.describe(), ex.Database, ex.Name,
				shape{Format: ex.Format, Compression: ex.Compression, Options: ex.Options}.describe()))
			continue
		}
		p.parts = append(p.parts, partPlan{values: vals, loc: t.location(d)})
		if d.shape == nil {
			continue
		}
		if p.shape == nil {
			c := *d.shape
			p.shape = &c
			continue
		}
		p.shape.Schema = p.shape.Schema.merge(d.shape.Schema)
	}
	g.plans = append(g.plans, p)
}

// readsAs reports whether files of shape s are read by table ex's reader:
// the same format and compression and, for CSV, the delimiter and header
// the table sets. One it leaves unset (a sink's table says header only) is
// settled by the reader from the files, so any fits; the table's other
// reader options (quote, nullstr, ...) are its own, as content cannot show
// them.
func readsAs(ex *catalog.Table, s *shape) bool {
	if ex.Format != "csv" || s.Format != "csv" {
		return s.kind() == shape{Format: ex.Format, Compression: ex.Compression, Options: ex.Options}.kind()
	}
	if s.Compression != ex.Compression {
		return false
	}
	for k, v := range ex.Options {
		switch strings.ToLower(k) {
		case "delim", "delimiter", "sep":
			if v != s.Options["delim"] {
				return false
			}
		case "header":
			if b, err := strconv.ParseBool(v); err != nil || strconv.FormatBool(b) != s.Options["header"] {
				return false
			}
		}
	}
	return true
}

// partitionKeys names the partition levels of a new table: a level whose
// folders are all k=v with the same k is k; any other level is
// partition_N (N its level, from 0). Partition values are text.
func partitionKeys(n *folder, parts []*folder, depth int) []catalog.Column {
	keys := make([]catalog.Column, depth)
	for i := range depth {
		// A key spelled in another case in some folders (Day=5 beside
		// day=1) is still that key: the spelling most folders use names
		// it, and newPlan skips the others, saying why.
		name := ""
		count := map[string]int{}
		for j, d := range parts {
			k, _, ok := hivePair(segments(n, d)[i])
			if !ok || j > 0 && !strings.EqualFold(k, name) {
				name = ""
				break
			}
			name = k
			count[k]++
		}
		for k, c := range count {
			if name != "" && (c > count[name] || c == count[name] && k < name) {
				name = k
			}
		}
		if name == "" {
			name = "partition_" + strconv.Itoa(i)
		}
		keys[i] = catalog.Column{Name: name, Type: "VARCHAR"}
	}
	return keys
}

var unnamedKey = regexp.MustCompile(`^partition_[0-9]+$`)

// partitionValues are folder d's values for keys: the value of k=v for a
// named key (it must be named so), the folder name for partition_N.
func partitionValues(n, d *folder, keys []catalog.Column) ([]string, error) {
	segs := segments(n, d)
	vals := make([]string, len(keys))
	for i, k := range keys {
		name, v, ok := hivePair(segs[i])
		switch {
		case ok && name == k.Name:
			vals[i] = v
		case unnamedKey.MatchString(k.Name):
			vals[i] = segs[i]
		default:
			return nil, fmt.Errorf("folder %q is not %s=VALUE", segs[i], k.Name)
		}
	}
	return vals, nil
}

// segments are the folder names from below n down to d.
func segments(n, d *folder) []string {
	rel := strings.TrimPrefix(strings.TrimPrefix(d.path, n.path), "/")
	if rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// ambiguousFolder says what is wrong with a folder between table folder n
// and d named k=v=w ("" when none is): readers split it differently
// (Spark reads k as "v=w", DuckDB finds no column), so the engines refuse
// it, and Hive writes an '=' in a value as %3D.
func ambiguousFolder(n, d *folder) string {
	for _, seg := range segments(n, d) {
		if k, v, ok := strings.Cut(seg, "="); ok && k != "" && strings.Contains(v, "=") {
			return fmt.Sprintf("partition folder %q has more than one '=', so its key and value are ambiguous "+
				"(name it %s=%s: Hive writes '=' in a value as %%3D)", seg, k, strings.ReplaceAll(v, "=", "%3D"))
		}
	}
	return ""
}

// hivePair splits a key=value folder name; the value is unescaped as Hive
// writes it (%2F for '/').
func hivePair(seg string) (key, value string, ok bool) {
	k, v, ok := strings.Cut(seg, "=")
	if !ok || k == "" {
		return "", "", false
	}
	if u, err := url.PathUnescape(v); err == nil {
		v = u
	}
	return k, v, true
}

var notIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// tableName makes a folder name a table name: lower case, runs of other
// characters as '_', never starting with a digit.
func tableName(folderName string) string {
	n := strings.Trim(notIdent.ReplaceAllString(strings.ToLower(folderName), "_"), "_")
	if n == "" {
		return "table"
	}
	if n[0] >= '0' && n[0] <= '9' {
		n = "t_" + n
	}
	return n
}
