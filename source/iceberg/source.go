// Package iceberg is the Iceberg table source: a source with iceberg:
// {table: DB.TABLE} reads an Iceberg table incrementally, snapshot by
// snapshot. The bookmark is the last snapshot read (its id and sequence
// number, and the table's uuid); a run reads the Parquet data files that
// the append snapshots after it added, up to the table's current snapshot
// when the run plans, and hands them to the engine as they are (every data
// file read is recorded, as a file source's are). The first run reads the
// table at its current snapshot.
//
// Snapshots that are not appends: a replace (a compaction) adds no rows
// and is skipped; an overwrite or a delete that removed rows follows
// on_rewrite (fail by default, *RewriteError). A bookmark the table's
// history no longer leads to (snapshots expired before a run read them, a
// rollback, a table made again under the name) is a *HistoryError, never
// a silent read from scratch.
//
// The table is read from tidemark's own catalog in the job's state store
// (internal/icecatalog), where Iceberg sinks keep theirs.
package iceberg

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/icecatalog"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// Name is the kind's name in the job file's registry and the source
// registry; Kind is its name in the records it writes.
const (
	Name                     = "iceberg"
	Kind bookmark.SourceKind = "iceberg"
)

// Source is one opened Iceberg source.
type Source struct {
	ctx string
	cfg *Config
}

var _ source.Source = (*Source)(nil)

func open(_ context.Context, _ *job.Spec, src job.Source) (source.Source, error) {
	return &Source{ctx: src.Ctx, cfg: src.Config.(*Config)}, nil
}

// Ctx is the source's ctx.
func (s *Source) Ctx() string { return s.ctx }

// fingerprint names the definition: the table read.
func (s *Source) fingerprint() string { return "iceberg:" + s.cfg.Iceberg.Table }

// CheckDefinition refuses a state written for another kind or table.
func (s *Source) CheckDefinition(_ context.Context, prev bookmark.SourceState) error {
	if prev.Kind != Kind || prev.Fingerprint != s.fingerprint() {
		was := prev.Describe
		if was == "" {
			was = string(prev.Kind) + " " + prev.Fingerprint
		}
		return &source.ChangedError{Ctx: s.ctx, Was: was, Now: "Iceberg table " + s.cfg.Iceberg.Table}
	}
	return nil
}

// Close does nothing.
func (s *Source) Close() error { return nil }

// identifier is the part of the state store that says where it is: the own
// catalog lives in its database.
type identifier interface {
	Identity(ctx context.Context) (store.Identity, error)
}

// load loads the table from its catalog: the REST catalog the block
// names, else the state store's own.
func (s *Source) load(ctx context.Context, st source.StateReader) (*table.Table, error) {
	name := s.cfg.Iceberg.Table
	var cat *icecatalog.Catalog
	where := "the state store's catalog (an Iceberg sink creates it on its first run, in the same state store)"
	if r := s.cfg.Iceberg.Catalog; r.URI != "" {
		c, err := icecatalog.OpenREST(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("source %s: reading Iceberg table %s: %w", s.ctx, name, err)
		}
		cat, where = c, "the REST catalog "+r.URI
	} else {
		id, ok := st.(identifier)
		if !ok {
			return nil, fmt.Errorf("source %s: reading Iceberg table %s: the state store does not say where it is", s.ctx, name)
		}
		ident, err := id.Identity(ctx)
		if err != nil {
			return nil, fmt.Errorf("source %s: reading Iceberg table %s: %w", s.ctx, name, err)
		}
		if _, err := icecatalog.Dialect(ident.Location); err != nil {
			return nil, fmt.Errorf("source %s: reading Iceberg table %s: %w", s.ctx, name, err)
		}
		if cat, err = icecatalog.Open(ctx, ident.Location); err != nil {
			return nil, fmt.Errorf("source %s: %w", s.ctx, err)
		}
	}
	defer cat.Close()
	ns, tn, _ := splitTable(name)
	tbl, found, err := cat.Load(ctx, table.Identifier{ns, tn})
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", s.ctx, err)
	}
	if !found {
		return nil, fmt.Errorf("source %s: Iceberg table %s is not in %s", s.ctx, name, where)
	}
	return tbl, nil
}
