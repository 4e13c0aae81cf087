package catalog

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// Difference is one change between two versions of a table.
type Difference struct {
	// What changed: location, format, compression, option, column added,
	// column dropped, column type, partition keys, deprecated.
	What string `json:"what"`
	// Name is the option's or column's name, where there is one.
	Name string `json:"name,omitempty"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// Diff lists what changed from table version a to b: the table's
// settings, then columns in b's order (dropped ones last), then partition
// keys.
func Diff(a, b Table) []Difference {
	var out []Difference
	field := func(what, from, to string) {
		if from != to {
			out = append(out, Difference{What: what, From: from, To: to})
		}
	}
	field("location", a.Location, b.Location)
	field("format", a.Format, b.Format)
	field("compression", a.Compression, b.Compression)
	for _, k := range slices.Sorted(maps.Keys(union(a.Options, b.Options))) {
		if from, to := a.Options[k], b.Options[k]; from != to {
			out = append(out, Difference{What: "option", Name: k, From: from, To: to})
		}
	}
	old := map[string]string{}
	for _, c := range a.Columns {
		old[c.Name] = c.Type
	}
	kept := map[string]bool{}
	for _, c := range b.Columns {
		kept[c.Name] = true
		switch from, ok := old[c.Name]; {
		case !ok:
			out = append(out, Difference{What: "column added", Name: c.Name, To: c.Type})
		case from != c.Type:
			out = append(out, Difference{What: "column type", Name: c.Name, From: from, To: c.Type})
		}
	}
	for _, c := range a.Columns {
		if !kept[c.Name] {
			out = append(out, Difference{What: "column dropped", Name: c.Name, From: c.Type})
		}
	}
	field("partition keys", columnsText(a.PartitionKeys), columnsText(b.PartitionKeys))
	if a.Deprecated != b.Deprecated {
		field("deprecated", boolText(a.Deprecated), boolText(b.Deprecated))
	}
	return out
}

func union(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, b)
	return m
}

// columnsText is columns as "name TYPE, ...".
func columnsText(cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name + " " + c.Type
	}
	return strings.Join(parts, ", ")
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// AddsColumnsOnly reports whether b differs from a at most by columns
// added (after a's, or anywhere): the change a source reading the table by
// name takes without calling it a change of the source.
func AddsColumnsOnly(a, b Table) bool {
	for _, d := range Diff(a, b) {
		if d.What != "column added" {
			return false
		}
	}
	return true
}

// Normalized is a table version as two stores' readings of it compare
// equal: without the store's time stamp, empty maps and slices nil.
func Normalized(t Table) Table {
	t.UpdatedAt = time.Time{}
	if len(t.Options) == 0 {
		t.Options = nil
	}
	if len(t.Parameters) == 0 {
		t.Parameters = nil
	}
	if len(t.Columns) == 0 {
		t.Columns = nil
	}
	if len(t.PartitionKeys) == 0 {
		t.PartitionKeys = nil
	}
	return t
}
