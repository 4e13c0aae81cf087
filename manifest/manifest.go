// Package manifest defines the typed records of a run's manifests: what a
// run read (files, or a SQL key range) and what it wrote (files, multipart
// uploads, table loads). Every store backend stores these structures as
// they are; no reader parses a prefix inside a string.
package manifest

import "github.com/tidemark-etl/tidemark/bookmark"

// Kind is what an output is, and so how publishing makes it visible.
type Kind string

// Output kinds.
const (
	// File is an object staged under Staged and moved to Final on publish.
	File Kind = "file"
	// Upload is an incomplete multipart upload at Final (UploadID),
	// completed on publish: the bytes do not move again.
	Upload Kind = "upload"
	// TableLoad is rows in a staging table loaded into Table on publish.
	TableLoad Kind = "table_load"
)

// CatalogREST is Table.Catalog of an Iceberg table kept in a REST catalog.
const CatalogREST = "rest"

// Table is a SQL table sink's target as kept in output manifests, without a
// password (only the name of the variable that holds it), so that a
// roll-forward or purge needs no job file.
type Table struct {
	Ctx         string `json:"ctx"`
	Connection  string `json:"connection"`
	PasswordEnv string `json:"password_env,omitempty"`
	// Catalog is the kind of catalog an Iceberg table is kept in:
	// CatalogREST, or empty for tidemark's own catalog in the state store
	// at Connection. A REST catalog's base URI is Connection, its
	// credential in the environment variable PasswordEnv.
	Catalog string `json:"catalog,omitempty"`
	// Warehouse is the warehouse a REST catalog is asked for.
	Warehouse string   `json:"warehouse,omitempty"`
	Table     string   `json:"table"`
	Mode      string   `json:"mode,omitempty"`
	MergeKeys []string `json:"merge_keys,omitempty"`
	// PartitionBy is an Iceberg table's partition_by, its spec when the
	// publish creates it.
	PartitionBy []string `json:"partition_by,omitempty"`
}

// Output is one thing a run writes: staged or loaded before the commit,
// published after it under its final, deterministic name.
type Output struct {
	RunID string `json:"run_id"`
	// Sink is the sink ctx; empty for quarantined rows (Rejects).
	Sink string `json:"sink"`
	// Rejects is set on the quarantined rows of source ctx Rejects, kept
	// under the sink location's _tidemark/rejects/.
	Rejects string `json:"rejects,omitempty"`
	Kind    Kind   `json:"kind"`
	// Root is a file or upload output's location (URL or path); empty for
	// table loads.
	Root string `json:"root,omitempty"`
	// Table is a table load's target.
	Table *Table `json:"table,omitempty"`
	// Staged is a File's key relative to Root, under _tidemark/.
	Staged string `json:"staged,omitempty"`
	// UploadID is an Upload's multipart upload id.
	UploadID string `json:"upload_id,omitempty"`
	// Final is the key relative to Root, or a table load's table name.
	Final     string `json:"final"`
	Rows      int64  `json:"rows"`
	Bytes     int64  `json:"bytes"`
	Published bool   `json:"published"`
}

// FileInput is one file a run read from a file source ctx.
type FileInput struct {
	Ctx  string
	File bookmark.File
}

// RangeInput is the key range one run read from a SQL table source ctx.
type RangeInput struct {
	Ctx   string
	RunID string
	// Range is the source's range (opaque JSON, sqltable.Extract.Range).
	Range []byte
	Rows  int64
}
