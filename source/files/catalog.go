package files

// A file source may name a catalog table (catalog: DB.TABLE) instead of a
// path: its location, format, reader options and first schema come from
// the table's current version when the run plans, and for a partitioned
// table only its registered partitions are listed, those that
// push_down_predicate keeps, one prefix each, before anything else is
// listed. Bookmarks are kept per ctx exactly as for a path.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/source"
)

// catalogRead is what a catalog source resolved its table to.
type catalogRead struct {
	table catalog.Table
	// prefixes are the partition folders to list, relative to the table's
	// location, in key order; nil lists the whole location (a table
	// without partition keys).
	prefixes []string
	// pred is push_down_predicate over the table's keys (nil: none).
	pred *catalog.Predicate
	// partitions and pruned count the registered partitions and those
	// push_down_predicate left out.
	partitions, pruned int
}

// resolveCatalog reads the source's table from the catalog and points the
// source at it: once per Source (a plan made again reads the same table).
func (s *Source) resolveCatalog(ctx context.Context, in source.Request) error {
	if s.cfg.Catalog == "" || s.cat != nil {
		return nil
	}
	if in.Catalog == nil {
		return fmt.Errorf("source %s: catalog: %s needs the state store's catalog, and none was given", s.spec.Ctx, s.cfg.Catalog)
	}
	db, name, err := catalog.ParseName(s.cfg.Catalog)
	if err != nil {
		return fmt.Errorf("source %s: catalog: %w", s.spec.Ctx, err)
	}
	t, err := catalog.Find(ctx, in.Catalog, db, name, 0)
	if errors.Is(err, catalog.ErrNotFound) {
		return s.jobFileError("catalog", "%v", err)
	}
	if err != nil {
		return fmt.Errorf("source %s: catalog: %w", s.spec.Ctx, err)
	}
	cr := &catalogRead{table: t}
	if s.cfg.PushDownPredicate != "" {
		if len(t.PartitionKeys) == 0 {
			return s.jobFileError("push_down_predicate", "table %s has no partition keys to prune by", s.cfg.Catalog)
		}
		if cr.pred, err = catalog.ParsePredicate(s.cfg.PushDownPredicate, t.PartitionKeys); err != nil {
			return s.jobFileError("push_down_predicate", "%v", strings.TrimPrefix(err.Error(), "push_down_predicate: "))
		}
	}
	cfg := *s.cfg
	cfg.Format = t.Format
	cfg.Options = map[string]any{}
	for k, v := range t.Options {
		cfg.Options[k] = v
	}
	if t.Compression != "" && t.Format != "parquet" { // a Parquet file's compression is inside it
		if _, ok := cfg.Options["compression"]; !ok {
			cfg.Options["compression"] = t.Compression
		}
	}
	loc := s.job.Resolve(t.Location)
	objs, err := objstore.Open(ctx, loc, cfg.S3)
	if err != nil {
		return fmt.Errorf("source %s: table %s: %w", s.spec.Ctx, s.cfg.Catalog, err)
	}
	s.cfg, s.location, s.objs, s.cat = &cfg, loc, objs, cr
	return nil
}

// Resolve reads the source's catalog table before the run is recorded
// (source.Resolver): a table that is not in the catalog, or a
// push_down_predicate naming a key the table does not have, is a job-file
// error. A source with a path has nothing to resolve.
func (s *Source) Resolve(ctx context.Context, cat catalog.Reader) error {
	return s.resolveCatalog(ctx, source.Request{Catalog: cat})
}

// Places returns a catalog source's folders once resolved
// (source.Placer): every partition registered for its table, then the
// table's location, whether push_down_predicate keeps it or not (a later run's
// predicate may). A source with a path has none: the job file gives it.
func (s *Source) Places(ctx context.Context, cat catalog.Reader) ([]source.Place, map[string]string, error) {
	if s.cat == nil {
		return nil, nil, nil
	}
	t := s.cat.table
	name := t.Database + "." + t.Name
	table := source.Place{Location: t.Location, What: "the location of table " + name}
	var out []source.Place // the partitions first, the most precise to name
	for p, err := range cat.Partitions(ctx, t.Database, t.Name) {
		if err != nil {
			return nil, nil, fmt.Errorf("source %s: %w", s.spec.Ctx, err)
		}
		var kv []string
		for i, k := range t.PartitionKeys {
			if i < len(p.Values) {
				kv = append(kv, k.Name+"="+p.Values[i])
			}
		}
		out = append(out, source.Place{Location: p.Location, What: fmt.Sprintf("partition %s of table %s", strings.Join(kv, "/"), name)})
	}
	return append(out, table), s.cfg.S3, nil
}

// jobFileError is a *job.Error at key of the source's block in the job
// file (a plain error for a source the job file does not hold, as a Glue
// script's).
func (s *Source) jobFileError(key, format string, args ...any) error {
	for i, src := range s.job.Sources {
		if src.Ctx == s.spec.Ctx {
			return s.job.ErrorAt(fmt.Sprintf("$.sources[%d].%s", i, key), format, args...)
		}
	}
	return fmt.Errorf("source %s: %s: %s", s.spec.Ctx, key, fmt.Sprintf(format, args...))
}

// listCatalog decides which partition folders a catalog source lists:
// those registered for its table that push_down_predicate keeps (every
// one without it). A table without partition keys is listed whole. It is
// called once the source's definition is checked.
func (s *Source) listCatalog(ctx context.Context, in source.Request) error {
	if s.cat == nil || s.cat.prefixes != nil {
		return nil
	}
	cr, t := s.cat, s.cat.table
	db, name, pred := t.Database, t.Name, cr.pred
	if len(t.PartitionKeys) == 0 {
		return nil
	}
	prefixes := []string{}
	for p, err := range in.Catalog.Partitions(ctx, db, name) {
		if err != nil {
			return fmt.Errorf("source %s: %w", s.spec.Ctx, err)
		}
		cr.partitions++
		if pred != nil && !pred.Match(t.PartitionKeys, p.Values) {
			cr.pruned++
			continue
		}
		rel, err := partitionPrefix(t.Location, p.Location)
		if err != nil {
			return fmt.Errorf("source %s: table %s partition %v: %w", s.spec.Ctx, s.cfg.Catalog, p.Values, err)
		}
		prefixes = append(prefixes, rel)
	}
	slices.Sort(prefixes)
	// A partition whose folder lies in another kept one's (registered by
	// hand, or through the Glue API) is listed with it: listed again, its
	// files would come twice and out of order.
	kept := prefixes[:0]
	for _, p := range prefixes {
		if n := len(kept); n == 0 || !strings.HasPrefix(p, kept[n-1]) {
			kept = append(kept, p)
		}
	}
	cr.prefixes = kept
	return nil
}

// partitionPrefix is a partition's folder relative to its table's
// location, ending with '/'. A partition elsewhere is an error: the source
// lists below the table's location only.
func partitionPrefix(table, part string) (string, error) {
	norm := func(s string) string { return strings.TrimSuffix(strings.TrimPrefix(s, "file://"), "/") + "/" }
	t, p := norm(table), norm(part)
	rel, ok := strings.CutPrefix(p, t)
	if !ok || rel == "" {
		return "", fmt.Errorf("its location %s is not below the table's location %s", part, table)
	}
	return rel, nil
}

// listPartitions yields the objects of the partition folders to read, in
// key order: the prefixes are sorted, end with '/', and none holds
// another (listCatalog keeps the outer one), so each prefix's keys come
// after the previous one's. Files under a folder below a partition's
// that holds a _tidemark/ entry are another sink's output, left out and
// counted as a path source leaves them out (sinkBelow).
func (s *Source) listPartitions(ctx context.Context) iter.Seq2[objstore.Object, error] {
	return func(yield func(objstore.Object, error) bool) {
		marked := map[string]bool{}
		for _, p := range s.cat.prefixes {
			for o, err := range s.objs.List(ctx, p) {
				if err != nil {
					yield(o, err)
					return
				}
				dir, err := s.sinkBelow(ctx, p, o.Key, marked)
				if err != nil {
					yield(objstore.Object{}, err)
					return
				}
				if dir != "" {
					s.inSinks++
					if n := len(s.sinkDirs); n < 3 && (n == 0 || s.sinkDirs[n-1] != dir) {
						s.sinkDirs = append(s.sinkDirs, dir)
					}
					continue
				}
				if !yield(o, nil) {
					return
				}
			}
		}
	}
}

// sinkBelow returns the folder nearest partition prefix p, strictly below
// it, on key's path that holds a _tidemark/ entry ("" if none), asking the
// store once per folder (marked remembers): a small listing of
// folder/_tidemark/, which names the hidden folder and so lists it. Only
// files in subfolders of a partition cost one.
func (s *Source) sinkBelow(ctx context.Context, p, key string, marked map[string]bool) (string, error) {
	rel := strings.TrimPrefix(key, p)
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		dir := p + rel[:i]
		has, ok := marked[dir]
		if !ok {
			for _, err := range s.objs.List(ctx, dir+"/"+layout.MetaDir+"/") {
				if err != nil {
					return "", fmt.Errorf("listing %s: %w", dir, err)
				}
				has = true
				break
			}
			marked[dir] = has
		}
		if has {
			return dir, nil
		}
	}
	return "", nil
}

// catalogSchema is the schema a catalog source's first run reads with:
// the table's columns, then its partition keys (later runs read with the
// schema the bookmark recorded, as every file source does).
func (s *Source) catalogSchema() []bookmark.Column {
	if s.cat == nil || len(s.cat.table.Columns) == 0 {
		return nil
	}
	var out []bookmark.Column
	for _, c := range slices.Concat(s.cat.table.Columns, s.cat.table.PartitionKeys) {
		out = append(out, bookmark.Column{Name: c.Name, Type: c.Type})
	}
	return out
}

// catalogNote says which of a catalog source's partitions are listed.
func (s *Source) catalogNote() string {
	if s.cat == nil || s.cat.prefixes == nil {
		return ""
	}
	return fmt.Sprintf("table %s version %d: %d of %d partitions listed (%d pruned by push_down_predicate)",
		s.cfg.Catalog, s.cat.table.Version, len(s.cat.prefixes), s.cat.partitions, s.cat.pruned)
}

// validateCatalog checks a catalog source's block: a table name, none of
// the keys the table gives, and a predicate that parses (its keys are
// checked against the table's when the run plans).
func (c *Config) validateCatalog(ck *job.Check) {
	if _, _, err := catalog.ParseName(c.Catalog); err != nil {
		ck.Fail("catalog", "%v", err)
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"path", c.Path != ""}, {"format", c.Format != ""}, {"options", len(c.Options) > 0}} {
		if k.set {
			ck.Fail(k.key, "a catalog: source takes its %s from the table %s; remove %s:", k.key, c.Catalog, k.key)
		}
	}
	if c.Listing == "ordered" {
		ck.Fail("listing", "ordered listing is for S3 prefixes; a catalog: source lists its table's partitions")
	}
	if c.PushDownPredicate != "" {
		if _, err := catalog.ParsePredicate(c.PushDownPredicate, nil); err != nil {
			ck.Fail("push_down_predicate", "%v", err)
		}
	}
}
