package files

// A file sink with catalog: {table: DB.TABLE, update: true} keeps its
// table in the data catalog in step with its files: Stage returns the
// catalog changes of the run (the table made from the output's schema
// when missing, new columns as a new version, the partitions written, and
// under mode overwrite the partitions it replaces dropped), which the
// run's commit applies in its own transaction; a purge reports the
// partition folders it emptied (Purged.Emptied), which the reset drops.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/objstore"
)

// validateCatalog checks the catalog: block.
func (c *Config) validateCatalog(ck *job.Check) {
	t := c.Catalog
	switch {
	case t.Table == "" && t.Update:
		ck.Fail("catalog.table", "is required with update: true (DB.TABLE)")
	case t.Table != "" && !t.Update:
		ck.Fail("catalog.update", "set update: true to register %s from this sink (it is the only thing a sink does with the catalog)", t.Table)
	case t.Table != "":
		if _, _, err := catalog.ParseName(t.Table); err != nil {
			ck.Fail("catalog.table", "%v", err)
		}
	}
}

// partitionLocation is the catalog location of a sink's partition folder
// dir (key=value/...): the same text for the changes Stage makes and the
// folders Purge empties.
func partitionLocation(root, dir string) string { return layout.Join(root, dir) + "/" }

// catalogChanges is what the run's commit changes in the catalog for the
// sink: nothing without catalog: {update: true}.
func (st *staging) catalogChanges(ctx context.Context, res engine.SinkResult, finals []string) (catalog.Changes, error) {
	s, kc := st.sink, st.sink.cfg
	if !kc.Catalog.Update {
		return catalog.Changes{}, nil
	}
	fail := func(format string, args ...any) (catalog.Changes, error) {
		return catalog.Changes{}, fmt.Errorf("sink %s: catalog table %s: %s", s.spec.Ctx, kc.Catalog.Table, fmt.Sprintf(format, args...))
	}
	if st.run.Catalog == nil {
		return fail("no catalog was given to register it in")
	}
	db, name, err := catalog.ParseName(kc.Catalog.Table)
	if err != nil {
		return fail("%v", err)
	}
	cur, err := st.run.Catalog.Table(ctx, db, name, 0)
	exists := err == nil
	if err != nil && !errors.Is(err, catalog.ErrNotFound) {
		return catalog.Changes{}, fmt.Errorf("sink %s: reading catalog table %s: %w", s.spec.Ctx, kc.Catalog.Table, err)
	}
	want, err := st.tableOf(db, name, res)
	if err != nil {
		return catalog.Changes{}, err
	}
	var c catalog.Changes
	switch {
	case !exists && want.Columns == nil:
		return fail("the engine did not report the output's columns to make the table from")
	case !exists:
		c.Databases = []catalog.Database{{Name: db}}
		c.Tables = []catalog.TableChange{{Table: want}}
		cur = want
	default:
		if cur.Location != want.Location {
			return fail("the table is at %s, the sink writes %s: give the sink the table's location as path:, or name another table", cur.Location, want.Location)
		}
		if cur.Format != want.Format {
			return fail("the table's format is %s, the sink writes %s", cur.Format, want.Format)
		}
		if !slices.Equal(catalog.ColumnNames(cur.PartitionKeys), catalog.ColumnNames(want.PartitionKeys)) {
			return fail("the table's partition keys are %v, the sink partitions by %v", catalog.ColumnNames(cur.PartitionKeys), kc.PartitionBy)
		}
		if m := readerMismatch(cur, want); m != "" {
			return fail("%s: give the sink the table's options, or name another table", m)
		}
		next := grown(cur, want.Columns)
		if len(catalog.Diff(cur, next)) > 0 {
			next.Parameters = want.Parameters
			c.Tables = []catalog.TableChange{{Table: next, Base: cur.Version}}
		}
	}

	written := map[string]bool{}
	for _, f := range finals {
		dir := path.Dir(f)
		if dir == "." || written[dir] || len(cur.PartitionKeys) == 0 {
			continue
		}
		written[dir] = true
		values, err := partitionValues(dir, cur.PartitionKeys)
		if err != nil {
			return fail("%v", err)
		}
		c.Partitions = append(c.Partitions, catalog.Partition{Database: db, Table: name, Values: values,
			Location: partitionLocation(s.root, dir)})
	}
	if kc.Mode == "overwrite" && exists {
		// The overwrite deletes every other partition's files at publish.
		for p, err := range st.run.Catalog.Partitions(ctx, db, name) {
			if err != nil {
				return catalog.Changes{}, fmt.Errorf("sink %s: %w", s.spec.Ctx, err)
			}
			if rel, ok := strings.CutPrefix(p.Location, layout.Name(s.root)); !ok || !written[strings.Trim(rel, "/")] {
				c.DropPartitions = append(c.DropPartitions, catalog.PartitionRef{Database: db, Table: name, Values: p.Values})
			}
		}
	}
	return c, nil
}

// tableOf is the table the sink's output makes: its location, format and
// the reader options that read it back, and the output's columns (nil if
// the engine did not report them), the partition columns as its keys.
func (st *staging) tableOf(db, name string, res engine.SinkResult) (catalog.Table, error) {
	s, kc := st.sink, st.sink.cfg
	t := catalog.Table{Database: db, Name: name, Location: layout.Name(s.root), Format: kc.Format,
		Parameters: map[string]string{"tidemark_sink": s.spec.Ctx, "tidemark_run": st.run.ID}}
	if kc.Format == "csv" {
		t.Options = map[string]string{"header": "true"}
		for k, v := range kc.Options {
			switch strings.ToLower(k) {
			case "header", "delim", "delimiter", "sep", "quote", "escape", "nullstr", "dateformat", "timestampformat":
				t.Options[strings.ToLower(k)] = fmt.Sprint(v)
			}
		}
	}
	if v, ok := kc.Options["compression"]; ok && kc.Format != "parquet" && fmt.Sprint(v) != "none" {
		t.Compression = fmt.Sprint(v)
	}
	if res.Schema == nil {
		return t, nil
	}
	t.Columns = []catalog.Column{}
	for _, c := range res.Schema {
		if !slices.ContainsFunc(kc.PartitionBy, func(p string) bool { return strings.EqualFold(p, c.Name) }) {
			t.Columns = append(t.Columns, catalog.Column{Name: c.Name, Type: c.Type})
		}
	}
	for _, p := range kc.PartitionBy {
		i := slices.IndexFunc(res.Schema, func(c bookmark.Column) bool { return strings.EqualFold(p, c.Name) })
		if i < 0 {
			return t, fmt.Errorf("sink %s: partition column %s is not a column of the output", s.spec.Ctx, p)
		}
		t.PartitionKeys = append(t.PartitionKeys, catalog.Column{Name: res.Schema[i].Name, Type: res.Schema[i].Type})
	}
	return t, nil
}

// readerMismatch says how the files the sink writes (as table want
// describes them) differ from what table cur's reader expects: another
// compression or, for CSV, another delimiter or header ("" when they
// fit). An option cur leaves unset is settled by the reader from the
// files, so anything fits it.
func readerMismatch(cur, want catalog.Table) string {
	none := func(c string) string {
		if c == "none" {
			return ""
		}
		return c
	}
	if cur.Format != "parquet" && none(cur.Compression) != none(want.Compression) {
		return fmt.Sprintf("the table's files are compressed %q, the sink writes %q", none(cur.Compression), none(want.Compression))
	}
	if cur.Format != "csv" {
		return ""
	}
	opt := func(t catalog.Table, def string, names ...string) string {
		if v, ok := t.Option(names...); ok {
			return v
		}
		return def
	}
	if d, ok := cur.Option("delim", "delimiter", "sep"); ok {
		if w := opt(want, ",", "delim", "delimiter", "sep"); w != d {
			return fmt.Sprintf("the table's CSV files are read with delimiter %q, the sink writes %q", d, w)
		}
	}
	if h, ok := cur.Option("header"); ok {
		w := opt(want, "true", "header")
		hb, err1 := strconv.ParseBool(h)
		wb, err2 := strconv.ParseBool(w)
		if err1 != nil || err2 != nil || hb != wb {
			return fmt.Sprintf("the table's CSV files are read with header %s, the sink writes header %s", h, w)
		}
	}
	return ""
}

// grown is cur with the output's columns: new ones added after the
// table's, a type the output writes that widens the table's taken from the
// output; columns the output lacks stay, and so does a type that holds the
// output's (earlier files have their values: a narrower type would fail
// reading them).
func grown(cur catalog.Table, out []catalog.Column) catalog.Table {
	next := cur
	next.Columns = slices.Clone(cur.Columns)
	for _, c := range out {
		i := slices.IndexFunc(next.Columns, func(x catalog.Column) bool { return strings.EqualFold(x.Name, c.Name) })
		if i < 0 {
			next.Columns = append(next.Columns, c)
		} else {
			next.Columns[i].Type = widerType(next.Columns[i].Type, c.Type)
		}
	}
	return next
}

// widerType is the type of a table column of type have once the output
// writes it as out.
func widerType(have, out string) string {
	h, err1 := bookmark.ParseType(have)
	o, err2 := bookmark.ParseType(out)
	if err1 == nil && err2 == nil && bookmark.Widens(o, h) {
		return have
	}
	return out
}

// partitionValues reads a partition folder's key=value segments (values
// unescaped as the engine escaped them) in the order of keys.
func partitionValues(dir string, keys []catalog.Column) ([]string, error) {
	segs := strings.Split(dir, "/")
	if len(segs) != len(keys) {
		return nil, fmt.Errorf("folder %s is not one key=value folder per partition key %v", dir, catalog.ColumnNames(keys))
	}
	values := make([]string, len(keys))
	for i, seg := range segs {
		k, v, ok := strings.Cut(seg, "=")
		if !ok || !strings.EqualFold(k, keys[i].Name) {
			return nil, fmt.Errorf("folder %s: %q is not %s=VALUE", dir, seg, keys[i].Name)
		}
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		values[i] = v
	}
	return values, nil
}

// emptied lists the partition folders of outs that hold no file any more.
func emptied(ctx context.Context, objs objstore.Store, root string, finals []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range finals {
		dir := path.Dir(f)
		if dir == "." || seen[dir] {
			continue
		}
		seen[dir] = true
		empty := true
		for _, err := range objs.List(ctx, dir+"/") {
			if err != nil {
				return out, err
			}
			empty = false
			break
		}
		if empty {
			out = append(out, partitionLocation(root, dir))
		}
	}
	return out, nil
}
