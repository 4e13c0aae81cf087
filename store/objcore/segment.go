package objcore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// A segment is an immutable, sorted run of file records of one source
// ctx: jobs/JOB/segments/NONCE.seg, created with If-None-Match: *. Its
// encoding is zstd over a simple binary format:
//
//	"TMSEG1\n"
//	per record, in ascending Path (byte order), each path once:
//	  flags byte (1: tombstone, the path's record was superseded)
//	  uvarint length of the prefix shared with the previous path
//	  uvarint length + the rest of the path
//	  varint size, varint mtime (Unix ns)
//	  uvarint length + ETag, uvarint length + run id
//	end: flags byte 0xFF, uvarint count of records (a cut object fails)

// segMagic opens every segment.
const segMagic = "TMSEG1\n"

// segEnd marks the end of a segment's records.
const segEnd = 0xFF

// segRef names a segment in a version or a run record.
type segRef struct {
	Key   string `json:"key"`
	Ctx   string `json:"ctx"`
	Count int64  `json:"count"` // records, tombstones included
	Bytes int64  `json:"bytes"` // encoded size
}

// entry is one record of a segment.
type entry struct {
	File bookmark.File
	Run  string // the run that recorded it
	Tomb bool   // superseded: the path has no current record
}

// segWriter encodes a segment in memory.
type segWriter struct {
	buf  bytes.Buffer
	zw   *zstd.Encoder
	prev string
	n    int64
	tmp  []byte
}

// encoders are zstd encoders of segments, reused: making one allocates
// its window and tables (megabytes), more than encoding a small segment
// costs, and an import or compaction writes thousands.
var encoders = sync.Pool{New: func() any {
	zw, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<20))
	return zw
}}

// newSegWriter starts a segment.
func newSegWriter() *segWriter {
	w := &segWriter{}
	w.zw = encoders.Get().(*zstd.Encoder)
	w.zw.Reset(&w.buf)
	w.zw.Write([]byte(segMagic))
	return w
}

// add appends a record; paths must come in ascending order.
func (w *segWriter) add(e entry) error {
	if w.n > 0 && e.File.Path <= w.prev {
		return fmt.Errorf("segment records out of order: %q after %q", e.File.Path, w.prev)
	}
	shared := 0
	for shared < len(e.File.Path) && shared < len(w.prev) && e.File.Path[shared] == w.prev[shared] {
		shared++
	}
	b := w.tmp[:0]
	flags := byte(0)
	if e.Tomb {
		flags = 1
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(shared))
	b = appendString(b, e.File.Path[shared:])
	b = binary.AppendVarint(b, e.File.Size)
	b = binary.AppendVarint(b, e.File.MTime)
	b = appendString(b, e.File.ETag)
	b = appendString(b, e.Run)
	w.tmp = b
	if _, err := w.zw.Write(b); err != nil {
		return err
	}
	w.prev = e.File.Path
	w.n++
	return nil
}

// finish ends the segment and returns its bytes.
func (w *segWriter) finish() ([]byte, error) {
	b := binary.AppendUvarint([]byte{segEnd}, uint64(w.n))
	if _, err := w.zw.Write(b); err != nil {
		return nil, err
	}
	if err := w.zw.Close(); err != nil {
		return nil, err
	}
	w.zw.Reset(nil)
	encoders.Put(w.zw)
	w.zw = nil
	return w.buf.Bytes(), nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// segReader decodes a segment as it streams in.
type segReader struct {
	body io.Closer
	zr   *zstd.Decoder
	r    *bufio.Reader
	name string
	prev []byte
	n    int64
	done bool
}

// newSegReader starts decoding a segment read from body; name is for
// messages.
func newSegReader(body io.ReadCloser, name string) (*segReader, error) {
	zr, err := zstd.NewReader(body, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(1<<22))
	if err != nil {
		body.Close()
		return nil, err
	}
	sr := &segReader{body: body, zr: zr, r: bufio.NewReaderSize(zr, 32<<10), name: name}
	magic := make([]byte, len(segMagic))
	if _, err := io.ReadFull(sr.r, magic); err != nil || string(magic) != segMagic {
		sr.close()
		return nil, fmt.Errorf("reading segment %s: not a segment (bad header)", name)
	}
	return sr, nil
}

// next returns the next record; ok false at the end.
func (sr *segReader) next() (entry, bool, error) {
	if sr.done {
		return entry{}, false, nil
	}
	e, ok, err := sr.decode()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return entry{}, false, fmt.Errorf("reading segment %s after %d records: %w", sr.name, sr.n, err)
	}
	return e, ok, nil
}

func (sr *segReader) decode() (entry, bool, error) {
	flags, err := sr.r.ReadByte()
	if err != nil {
		return entry{}, false, err
	}
	if flags == segEnd {
		n, err := binary.ReadUvarint(sr.r)
		if err != nil {
			return entry{}, false, err
		}
		if int64(n) != sr.n {
			return entry{}, false, fmt.Errorf("segment says %d records", n)
		}
		sr.done = true
		return entry{}, false, nil
	}
	shared, err := binary.ReadUvarint(sr.r)
	if err != nil {
		return entry{}, false, err
	}
	if shared > uint64(len(sr.prev)) {
		return entry{}, false, fmt.Errorf("bad shared prefix length %d", shared)
	}
	rest, err := sr.readBytes()
	if err != nil {
		return entry{}, false, err
	}
	path := append(sr.prev[:shared:shared], rest...)
	var e entry
	e.Tomb = flags&1 != 0
	e.File.Path = string(path)
	sr.prev = path
	if e.File.Size, err = binary.ReadVarint(sr.r); err != nil {
		return entry{}, false, err
	}
	if e.File.MTime, err = binary.ReadVarint(sr.r); err != nil {
		return entry{}, false, err
	}
	etag, err := sr.readBytes()
	if err != nil {
		return entry{}, false, err
	}
	run, err := sr.readBytes()
	if err != nil {
		return entry{}, false, err
	}
	e.File.ETag, e.Run = string(etag), string(run)
	sr.n++
	return e, true, nil
}

func (sr *segReader) readBytes() ([]byte, error) {
	n, err := binary.ReadUvarint(sr.r)
	if err != nil {
		return nil, err
	}
	if n > 1<<20 {
		return nil, fmt.Errorf("field of %d bytes", n)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(sr.r, b)
	return b, err
}

func (sr *segReader) close() {
	sr.zr.Close()
	sr.body.Close()
}

// segPrefix is the folder of a job's segments.
func segPrefix(job string) string { return jobKey(job) + "segments/" }

// writeSegment stores a finished segment of ctx and returns its ref.
func (s *Store) writeSegment(ctx context.Context, job, srcCtx string, w *segWriter) (segRef, error) {
	b, err := w.finish()
	if err != nil {
		return segRef{}, fmt.Errorf("encoding a segment of job %q: %w", job, err)
	}
	key := segPrefix(job) + nonce() + ".seg"
	if err := s.create(ctx, key, b); err != nil {
		return segRef{}, err
	}
	return segRef{Key: key, Ctx: srcCtx, Count: w.n, Bytes: int64(len(b))}, nil
}

// openSegment starts reading a segment.
func (s *Store) openSegment(ctx context.Context, ref segRef) (*segReader, error) {
	body, err := s.b.Open(ctx, ref.Key)
	if err != nil {
		return nil, err
	}
	return newSegReader(body, s.url(ref.Key))
}
