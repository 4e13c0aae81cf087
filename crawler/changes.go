package crawler

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
)

// tableOf is the table version a plan proposes: the existing table with
// its columns widened and the new ones appended (never one dropped or
// narrowed), or a new table from the sample.
func (c *Config) tableOf(p *tablePlan) catalog.Table {
	if ex := p.existing; ex != nil {
		t := *ex
		t.Deprecated = false
		t.Columns = ex.Columns
		if p.shape != nil {
			base := make(schema, len(ex.Columns))
			for i, col := range ex.Columns {
				typ, err := bookmark.ParseType(col.Type)
				if err != nil {
					typ = bookmark.Type{Kind: bookmark.Other, Name: col.Type}
				}
				base[i] = column{Name: col.Name, Type: typ, Known: true}
			}
			t.Columns = catalogColumns(base.merge(p.shape.Schema).final())
		}
		return t
	}
	return catalog.Table{
		Database: c.Database, Name: p.name, Location: p.loc,
		Format: p.shape.Format, Compression: p.shape.Compression, Options: maps.Clone(p.shape.Options),
		Columns: catalogColumns(p.shape.Schema.final()), PartitionKeys: p.keys,
		Parameters: map[string]string{"classification": p.shape.Format, "crawler": c.Name},
	}
}

func catalogColumns(s schema) []catalog.Column {
	out := make([]catalog.Column, len(s))
	for i, col := range s {
		out[i] = catalog.Column{Name: col.Name, Type: col.Type.String()}
	}
	return out
}

// tableDiff says how table version b differs from a, one line per change.
func tableDiff(a, b catalog.Table) []string {
	var out []string
	if a.Deprecated && !b.Deprecated {
		out = append(out, "its files are back: no longer deprecated")
	}
	old := map[string]string{}
	for _, col := range a.Columns {
		old[col.Name] = col.Type
	}
	for _, col := range b.Columns {
		t, ok := old[col.Name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("column %s %s added", col.Name, col.Type))
		case t != col.Type:
			out = append(out, fmt.Sprintf("column %s widened from %s to %s", col.Name, t, col.Type))
		}
	}
	return out
}

// partKey identifies a partition by its values.
func partKey(values []string) string { return strings.Join(values, "\x00") }

// partitionChanges compares the partitions found with the table's
// partitions in the catalog: new ones (or deprecated ones whose files are
// back) are added, and those whose files are gone are deprecated, dropped
// or only counted, by the delete policy.
func (c *Config) partitionChanges(p *tablePlan, have []catalog.Partition, ch *catalog.Changes, r *TableReport) {
	if len(p.keys) == 0 {
		return // an unpartitioned table: its files are in its folder
	}
	found := map[string]bool{}
	cur := map[string]catalog.Partition{}
	for _, q := range have {
		cur[partKey(q.Values)] = q
	}
	for _, q := range p.parts {
		k := partKey(q.values)
		if found[k] {
			continue
		}
		found[k] = true
		// A sink writes a partition's folder with a trailing '/'.
		if old, ok := cur[k]; ok && !old.Deprecated && strings.TrimSuffix(old.Location, "/") == strings.TrimSuffix(q.loc, "/") {
			continue
		}
		ch.Partitions = append(ch.Partitions, catalog.Partition{Database: c.Database, Table: p.name, Values: q.values, Location: q.loc})
		r.PartitionsAdded++
	}
	r.Partitions = len(found)
	for _, q := range have {
		if found[partKey(q.Values)] || q.Deprecated {
			continue
		}
		switch c.SchemaChangePolicy.Delete {
		case "deprecate":
			q.Deprecated = true
			q.UpdatedAt = time.Time{}
			ch.Partitions = append(ch.Partitions, q)
			r.PartitionsDeprecated++
		case "delete":
			ch.DropPartitions = append(ch.DropPartitions, catalog.PartitionRef{Database: c.Database, Table: p.name, Values: q.Values})
			r.PartitionsDeleted++
		default:
			r.PartitionsGone++
			r.Partitions++
		}
	}
}

// goneTable applies the delete policy to a table of this crawler whose
// files are gone.
func (c *Config) goneTable(t catalog.Table, ch *catalog.Changes) *TableReport {
	r := reportOf(t)
	switch c.SchemaChangePolicy.Delete {
	case "deprecate":
		r.Status = StatusDeprecated
		if !t.Deprecated {
			nt := t
			nt.Deprecated = true
			ch.Tables = append(ch.Tables, catalog.TableChange{Table: nt, Base: t.Version})
			r.Version = t.Version + 1
			r.Changes = []string{"its files are gone: deprecated"}
		}
	case "delete":
		ch.Tables = append(ch.Tables, catalog.TableChange{Table: t, Base: t.Version, Drop: true})
		r.Status = StatusDeleted
		r.Changes = []string{"its files are gone: dropped with its partitions"}
	default:
		r.Status = StatusGone
		r.Changes = []string{"its files are gone: left in the catalog (delete: log)"}
	}
	return r
}

// reportOf is a table's report line before its status is known.
func reportOf(t catalog.Table) *TableReport {
	cols, keys := t.Columns, t.PartitionKeys
	if cols == nil {
		cols = []catalog.Column{}
	}
	if keys == nil {
		keys = []catalog.Column{}
	}
	return &TableReport{Version: t.Version, Location: t.Location, Format: t.Format, Compression: t.Compression,
		Options: t.Options, Columns: cols, PartitionKeys: keys}
}

// sameDefinition reports whether two versions define the same table:
// location, reader, columns, partition keys and deprecation.
func sameDefinition(a, b catalog.Table) bool {
	return a.Location == b.Location && a.Format == b.Format && a.Compression == b.Compression &&
		maps.Equal(a.Options, b.Options) && sameColumns(a.Columns, b.Columns) &&
		sameColumns(a.PartitionKeys, b.PartitionKeys) && a.Deprecated == b.Deprecated
}

func sameColumns(a, b []catalog.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
