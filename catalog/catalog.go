// Package catalog is tidemark's data catalog, Glue's model: databases,
// tables with a location, a format, reader options, engine-neutral columns
// and partition keys, a version per schema change, and partitions with
// their values and locations. It is kept in the state store, so every host
// and every store backend has it; a store that keeps it implements Store
// and passes store/storetest's catalog cases.
//
// This file is the contract only: the records and the store interface.
// The crawler (package crawler) proposes tables; sinks register tables and
// partitions in the same state-store transaction as a run's commit
// (store.Commit.Catalog); sources read tables by name.
package catalog

import (
	"context"
	"errors"
	"iter"
	"strings"
	"time"
)

// Sentinel errors that callers test with errors.Is.
var (
	// ErrNotFound means the database, table, version or partition does not
	// exist.
	ErrNotFound = errors.New("not in the catalog")
	// ErrConflict means a table changed since the caller read it: a
	// TableChange's Base is not the table's current version.
	ErrConflict = errors.New("catalog table changed since it was read")
)

// Database is a namespace of tables.
type Database struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	CreatedAt   time.Time `json:"created_at"` // set by the store when zero
}

// Column is one column of a table: its name and its engine-neutral type,
// the canonical text of a bookmark.Type ("BIGINT", "VARCHAR",
// "DECIMAL(18,2)", "STRUCT<a: INTEGER>").
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Table is one version of a table. A new version is written for every
// change of location, format, options, columns or partition keys; adding
// or dropping partitions does not make one.
type Table struct {
	Database string `json:"database"`
	Name     string `json:"table"`
	// Version counts from 1; the store assigns it on Apply (Base+1).
	Version int64 `json:"version"`
	// Location is the table's root: a local folder or an s3:// URL.
	Location string `json:"location"`
	// Format is csv, json or parquet; Compression is gzip, zstd or "".
	Format      string `json:"format"`
	Compression string `json:"compression,omitempty"`
	// Options are the reader options a source uses (delimiter, header,
	// quote), the same keys as a file source's options.
	Options map[string]string `json:"options,omitempty"`
	// Columns are the data columns, in file order, without partition keys.
	Columns []Column `json:"columns"`
	// PartitionKeys are the partition columns in folder order
	// (product=a/day=1 → product, day); their values live in Partitions.
	PartitionKeys []Column `json:"partition_keys"`
	// Deprecated is set by a crawl whose delete policy is deprecate, when
	// the table's files are gone.
	Deprecated bool `json:"deprecated,omitempty"`
	// Parameters are free-form facts (classification, the crawler that
	// wrote the version, the run that registered it).
	Parameters map[string]string `json:"parameters,omitempty"`
	UpdatedAt  time.Time         `json:"updated_at"` // set by the store
}

// Option returns the table's reader option under the first of names it
// has, names matched in any case (false if none is set).
func (t Table) Option(names ...string) (string, bool) {
	for _, n := range names {
		for k, v := range t.Options {
			if strings.EqualFold(k, n) {
				return v, true
			}
		}
	}
	return "", false
}

// Partition is one partition of a table. Values are in the order of the
// table's PartitionKeys and identify the partition within its table.
type Partition struct {
	Database string   `json:"database"`
	Table    string   `json:"table"`
	Values   []string `json:"values"`
	// Location is the partition's folder: a local folder or an s3:// URL.
	Location string `json:"location"`
	// Deprecated is set by a crawl whose delete policy is deprecate, when
	// the partition's files are gone.
	Deprecated bool      `json:"deprecated,omitempty"`
	UpdatedAt  time.Time `json:"updated_at"` // set by the store
}

// TableChange writes a new version of a table, or drops it.
type TableChange struct {
	// Table is the whole new version (Version is ignored: the store writes
	// Base+1).
	Table Table
	// Base is the version the change was made against: the table's current
	// version, or 0 for a table that must not exist yet. Apply fails with
	// ErrConflict otherwise, and changes nothing.
	Base int64
	// Drop removes the table, every version and every partition, instead of
	// writing a version (Base must still match; ErrNotFound for a table
	// that does not exist). A table made again after a drop starts at
	// version 1.
	Drop bool
}

// PartitionRef names one partition.
type PartitionRef struct {
	Database string   `json:"database"`
	Table    string   `json:"table"`
	Values   []string `json:"values"`
}

// Changes is one atomic change of the catalog: applied in one transaction,
// all or nothing, in this order: databases, tables (each in turn: a second
// change of one table has the first's new version as its Base),
// partitions added, then partitions dropped. Changes.Check lists what is
// refused before anything is read.
type Changes struct {
	// Databases are created when missing (an existing one is left as it
	// is).
	Databases []Database
	// Tables are written in order; a table's database must exist (after
	// Databases): ErrNotFound.
	Tables []TableChange
	// Partitions are added, or replaced when a partition with the same
	// values exists. Their table must exist (after Tables): ErrNotFound;
	// they must have one value per partition key of its current version
	// (CheckPartition).
	Partitions []Partition
	// DropPartitions are removed; a partition that does not exist is not
	// an error.
	DropPartitions []PartitionRef
}

// Empty reports whether c changes nothing.
func (c Changes) Empty() bool {
	return len(c.Databases) == 0 && len(c.Tables) == 0 && len(c.Partitions) == 0 && len(c.DropPartitions) == 0
}

// Store keeps a catalog. All methods are safe for concurrent use by
// several processes and hosts; a method that returns an error changed
// nothing. Reads may be retried freely. The catalog is not under any job's
// lease: concurrent writers are ordered by the compare-and-swap on each
// table's version (TableChange.Base).
type Store interface {
	// ApplyCatalog makes c durable atomically. ErrConflict if a
	// TableChange's Base is stale; ErrNotFound for a partition of a table
	// that does not exist. Not idempotent for tables (a retry after an
	// unknown outcome that had succeeded fails with ErrConflict: read the
	// table to tell); idempotent for databases and partitions.
	ApplyCatalog(ctx context.Context, c Changes) error
	// Databases returns every database, by name. A read.
	Databases(ctx context.Context) ([]Database, error)
	// Tables returns the current version of every table of a database, by
	// name (none for an unknown database). A read.
	Tables(ctx context.Context, database string) ([]Table, error)
	// Table returns one version of a table (version 0: the current one);
	// ErrNotFound if there is no such table or version. A read.
	Table(ctx context.Context, database, name string, version int64) (Table, error)
	// TableVersions returns every version of a table, newest first (none
	// for an unknown table). A read.
	TableVersions(ctx context.Context, database, name string) ([]Table, error)
	// Partitions yields a table's partitions ordered by Values (compared
	// element by element, byte order: CompareValues, the order of
	// ValuesKey), streaming, from one snapshot (none for an unknown
	// table). A read error is yielded once, last.
	Partitions(ctx context.Context, database, name string) iter.Seq2[Partition, error]
}
