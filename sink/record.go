package sink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/objstore"
)

// OwnerKey is where a location in an object store keeps its ownership
// record.
const OwnerKey = layout.MetaDir + "/owner.json"

// ObjectRecord is the ownership record at OwnerKey in s. Its writes are
// conditional where s can make them so (objstore.Creator to create,
// objstore.Swapper to replace); a store that can do neither checks, then
// writes, which two racing claimers can both pass.
func ObjectRecord(s objstore.Store) Record { return objectRecord{s} }

type objectRecord struct{ s objstore.Store }

func (r objectRecord) Name() string { return layout.Join(r.s.Root(), OwnerKey) }

// Read reads the record, with its version where the store has versions.
func (r objectRecord) Read(ctx context.Context) (Owner, string, bool, error) {
	data, version, err := r.read(ctx)
	if errors.Is(err, objstore.ErrNotExist) {
		return Owner{}, "", false, nil
	}
	if err != nil {
		return Owner{}, "", false, fmt.Errorf("reading %s: %w", r.Name(), err)
	}
	o, err := r.decode(data)
	return o, version, err == nil, err
}

func (r objectRecord) read(ctx context.Context) ([]byte, string, error) {
	if sw, ok := r.s.(objstore.Swapper); ok {
		return sw.ReadVersion(ctx, OwnerKey)
	}
	rc, err := r.s.Open(ctx, OwnerKey)
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	return data, "", err
}

// decode decodes a record; one that is not one wraps ErrBadOwner and says
// how to go on.
func (r objectRecord) decode(data []byte) (Owner, error) {
	var o Owner
	why := ""
	switch err := json.Unmarshal(data, &o); {
	case len(bytes.TrimSpace(data)) == 0:
		why = "it is empty"
	case err != nil:
		why = err.Error()
	case o.Job == "" || o.StateStoreID == "":
		why = "it names no job or no state store id"
	}
	if why != "" {
		return Owner{}, fmt.Errorf("%s is %w (%s): restore it, or delete it to let the next run claim the location "+
			"(or take it over with `tidemark run JOBFILE --adopt-sink`)", r.Name(), ErrBadOwner, why)
	}
	return o, nil
}

// Create writes the record where none is, atomically where the store can
// (objstore.Creator).
func (r objectRecord) Create(ctx context.Context, o Owner) error {
	data, err := encodeOwner(o)
	if err != nil {
		return err
	}
	if c, ok := r.s.(objstore.Creator); ok {
		return c.Create(ctx, OwnerKey, bytes.NewReader(data))
	}
	// A store without conditional writes: check, then write (racy).
	if _, err := r.s.Stat(ctx, OwnerKey); err == nil {
		return objstore.ErrExists
	}
	return r.Replace(ctx, o, "")
}

// Replace replaces the record only if it is still the version read
// (objstore.Swapper); a store without conditional writes, or a version ""
// (a damaged record being replaced by --adopt-sink), replaces it whatever
// it holds.
func (r objectRecord) Replace(ctx context.Context, o Owner, version string) error {
	data, err := encodeOwner(o)
	if err != nil {
		return err
	}
	if sw, ok := r.s.(objstore.Swapper); ok && version != "" {
		err = sw.Swap(ctx, OwnerKey, data, version)
	} else {
		err = r.s.Put(ctx, OwnerKey, bytes.NewReader(data))
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", r.Name(), err)
	}
	return nil
}

func encodeOwner(o Owner) ([]byte, error) {
	data, err := json.MarshalIndent(o, "", "  ")
	return append(data, '\n'), err
}

// HoldsNothing reports whether a location in s holds nothing but its
// ownership record: no object outside _tidemark/ (published output),
// nothing under _tidemark/ but the record (staged runs, rejects), and no
// multipart upload under way. It is a Place's Empty for such a location.
func HoldsNothing(ctx context.Context, s objstore.Store) (bool, error) {
	for _, prefix := range []string{"", layout.MetaDir + "/"} {
		for o, err := range s.List(ctx, prefix) {
			if err != nil {
				return false, err
			}
			if o.Key != OwnerKey {
				return false, nil
			}
		}
	}
	if a, ok := s.(objstore.UploadAborter); ok {
		uploads := 0
		// A match that accepts nothing counts the uploads and aborts none.
		if _, err := a.AbortStaleUploads(ctx, "", -time.Hour, func(string) bool { uploads++; return false }); err != nil {
			return false, err
		}
		if uploads > 0 {
			return false, nil
		}
	}
	return true, nil
}

// ObjectPlace is the Place of the sink ctx at s, shown as location: its
// record at OwnerKey, empty when HoldsNothing.
func ObjectPlace(ctx, location string, s objstore.Store) Place {
	return Place{Sink: ctx, Location: location, Record: ObjectRecord(s),
		Empty: func(c context.Context) (bool, error) { return HoldsNothing(c, s) }}
}

// OpenPlace is ObjectPlace at location, opened with objstore.Open (a local
// path, or a URL of a registered scheme), shown as location without its
// options.
func OpenPlace(ctx context.Context, sinkCtx, location string) (Place, error) {
	objs, err := objstore.Open(ctx, location, nil)
	if err != nil {
		return Place{}, fmt.Errorf("opening the ownership record of %s: %w", layout.Name(location), err)
	}
	return ObjectPlace(sinkCtx, layout.Name(location), objs), nil
}
