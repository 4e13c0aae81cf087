package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tidemark-etl/tidemark/sink"
)

// The table folder's ownership record, _tidemark/owner.json, names the
// job and state store that write the table: another store's own catalog
// would make a second table at the same folder.

func (l *location) ownerFile() string { return filepath.Join(l.dir, "_tidemark", "owner.json") }

// readOwner is the folder's ownership record (ok false: none yet).
func (l *location) readOwner() (o sink.Owner, ok bool, err error) {
	b, err := os.ReadFile(l.ownerFile())
	if os.IsNotExist(err) {
		return o, false, nil
	}
	if err != nil {
		return o, false, fmt.Errorf("reading the ownership record of Iceberg sink %s: %w", l.dir, err)
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return o, false, fmt.Errorf("reading the ownership record of Iceberg sink %s: %w", l.dir, err)
	}
	return o, true, nil
}

// writeOwner replaces the record (tmp, fsync, rename).
func (l *location) writeOwner(o sink.Owner) error {
	if err := os.MkdirAll(filepath.Dir(l.ownerFile()), 0o755); err != nil {
		return fmt.Errorf("writing the ownership record of Iceberg sink %s: %w", l.dir, err)
	}
	b, _ := json.Marshal(o)
	tmp := l.ownerFile() + ".tmp"
	f, err := os.Create(tmp)
	if err == nil {
		_, err = f.Write(b)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, l.ownerFile())
	}
	if err != nil {
		return fmt.Errorf("writing the ownership record of Iceberg sink %s: %w", l.dir, err)
	}
	return nil
}

// check refuses c where the record names another job or state store, or
// a run c's state does not know.
func (l *location) check(ctx context.Context, ctxName string, c sink.Claim, o sink.Owner) error {
	refuse := &sink.OwnedError{Sink: ctxName, Location: l.dir, Job: c.Job, State: c.Identity, Version: c.Version, Owner: o}
	if !o.Owns(c.Job, c.Identity) {
		return refuse
	}
	if n := o.Newest(); n != "" && c.Known != nil {
		known, err := c.Known(ctx, n)
		if err != nil {
			return err
		}
		if !known {
			refuse.UnknownRun = n
			return refuse
		}
	}
	return nil
}

// claim makes the folder the job's, as sink.Sink.Claim says.
func (l *location) claim(ctx context.Context, ctxName string, c sink.Claim) error {
	o, ok, err := l.readOwner()
	if err != nil {
		return err
	}
	if ok && !c.Adopt {
		if err := l.check(ctx, ctxName, c, o); err != nil {
			return err
		}
	}
	if c.CheckOnly || ok && o.Owns(c.Job, c.Identity) && !c.Adopt {
		return nil
	}
	now := time.Now().UTC()
	return l.writeOwner(sink.Owner{Job: c.Job, StateStoreID: c.Identity.ID, StateStore: c.Identity.Location,
		Version: c.Version, ClaimedBy: c.RunID, CreatedAt: now, UpdatedAt: now})
}

// CheckPurge refuses a purge of another job's or store's table.
func (l *location) CheckPurge(ctx context.Context, c sink.Claim) error {
	o, ok, err := l.readOwner()
	if err != nil || !ok {
		return err
	}
	if err := l.check(ctx, "", c, o); err != nil {
		var owned *sink.OwnedError
		if errors.As(err, &owned) {
			owned.Purge = true
		}
		return err
	}
	return nil
}

// TakeForPurge is CheckPurge, then the record raised to c.Version.
func (l *location) TakeForPurge(ctx context.Context, c sink.Claim) error {
	if err := l.CheckPurge(ctx, c); err != nil {
		return err
	}
	o, ok, err := l.readOwner()
	if err != nil || !ok {
		return err
	}
	o.Version, o.UpdatedAt = c.Version, time.Now().UTC()
	return l.writeOwner(o)
}
