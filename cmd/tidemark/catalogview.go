package main

import (
	"context"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/catalog"
)

// tableView is a catalog table as `catalog show --json` and `catalog
// tables --json` print it.
type tableView struct {
	Database       string            `json:"database"`
	Table          string            `json:"table"`
	Location       string            `json:"location"`
	Format         string            `json:"format"`
	Compression    string            `json:"compression,omitempty"`
	Options        map[string]string `json:"options,omitempty"`
	Version        int64             `json:"version"`
	Columns        []catalog.Column  `json:"columns"`
	PartitionKeys  []catalog.Column  `json:"partition_keys"`
	PartitionCount int               `json:"partition_count"`
	Deprecated     bool              `json:"deprecated,omitempty"`
	Parameters     map[string]string `json:"parameters,omitempty"`
	UpdatedAt      time.Time         `json:"updated_at"`
}

// showView is a table as `catalog show --json` prints it: with its
// partitions and versions.
type showView struct {
	tableView
	Partitions []partitionView `json:"partitions"`
	Versions   []versionView   `json:"versions"`
}

// partitionView is one partition, its values by partition key.
type partitionView struct {
	Values     map[string]string `json:"values"`
	Location   string            `json:"location"`
	Deprecated bool              `json:"deprecated,omitempty"`
}

// versionView is one version of a table in show's list.
type versionView struct {
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
	// Summary says how it differs from the version before.
	Summary string `json:"summary"`
}

// viewOf builds t's view; full adds its partitions and versions.
func viewOf(ctx context.Context, r catalog.Reader, t catalog.Table, full bool) (showView, error) {
	v := showView{Partitions: []partitionView{}}
	v.tableView = tableView{Database: t.Database, Table: t.Name, Location: t.Location, Format: t.Format, Compression: t.Compression,
		Options: t.Options, Version: t.Version, Columns: t.Columns, PartitionKeys: t.PartitionKeys,
		Deprecated: t.Deprecated, Parameters: t.Parameters, UpdatedAt: t.UpdatedAt}
	if v.Columns == nil {
		v.Columns = []catalog.Column{}
	}
	if v.PartitionKeys == nil {
		v.PartitionKeys = []catalog.Column{}
	}
	for p, err := range r.Partitions(ctx, t.Database, t.Name) {
		if err != nil {
			return v, err
		}
		v.PartitionCount++
		if !full {
			continue
		}
		pv := partitionView{Values: map[string]string{}, Location: p.Location, Deprecated: p.Deprecated}
		for i, k := range t.PartitionKeys {
			if i < len(p.Values) {
				pv.Values[k.Name] = p.Values[i]
			}
		}
		v.Partitions = append(v.Partitions, pv)
	}
	if !full {
		return v, nil
	}
	vs, err := r.TableVersions(ctx, t.Database, t.Name)
	if err != nil {
		return v, err
	}
	for i, ver := range vs {
		s := "created"
		if i+1 < len(vs) {
			s = summary(catalog.Diff(vs[i+1], ver))
		}
		v.Versions = append(v.Versions, versionView{Version: ver.Version, UpdatedAt: ver.UpdatedAt, Summary: s})
	}
	return v, nil
}

// summary says a version's differences in one line.
func summary(diff []catalog.Difference) string {
	if len(diff) == 0 {
		return "no change of columns or settings"
	}
	s := ""
	for i, d := range diff {
		if i == 3 {
			return s + fmt.Sprintf(", and %d more", len(diff)-3)
		}
		if i > 0 {
			s += ", "
		}
		s += differenceLine(d)
	}
	return s
}
