package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/tidemark-etl/tidemark/objstore"
)

// tailUpload sends a remote sink's first output file while the engine
// writes it: an engine that says so (engine.Caps.Growing) writes an
// unpartitioned sink's one file front to back, so the bytes
// already on disk can go up as parts of an upload to the file's final key
// (part-<run>-00000.<ext>, the name it gets when it is the first of the
// sink's files) while the conversion goes on, and publishing later
// completes the upload. When the engine is done, the file's hash must
// equal the hash of what was sent; any doubt (another name, a rewrite, an
// error) drops the tail upload and the file is uploaded the ordinary way.
type tailUpload struct {
	objs objstore.Store
	key  string // final key
	file *growingFile
	done chan struct{} // closed when the upload returned
	id   string
	err  error
}

// tailPoll is how often a tail upload looks for more bytes.
const tailPoll = 20 * time.Millisecond

// startTail starts a tail upload when the sink is remote and its store
// can prepare uploads; nil otherwise.
func (st *staging) startTail(ctx context.Context) *tailUpload {
	p, ok := st.sink.objs.(objstore.Preparer)
	growing := st.run.Engine.Growing
	if !ok || !st.remote || growing == "" {
		return nil
	}
	t := &tailUpload{objs: st.sink.objs, key: partName(st.run.ID, 0, sinkExt(st.sink.cfg.Format)),
		file: &growingFile{ctx: ctx, dir: st.dataDir(), prefix: growing, ended: make(chan struct{}), h: xxh3.New()},
		done: make(chan struct{})}
	go func() {
		defer close(t.done)
		t.id, t.err = p.PrepareUpload(ctx, t.key, t.file)
		t.file.close()
	}()
	return t
}

// engineReturned tells the tail the engine has returned (failed: with an
// error), so the file is complete or will not be; after a failure it waits
// for the tail to end (its upload aborted).
func engineReturned(t *tailUpload, failed error) {
	t.file.failed = failed
	close(t.file.ended)
	if failed == nil {
		t.file.verify() // while the last part goes up
		return
	}
	<-t.done
}

// covers reports whether the tail upload sent the staged file at rel
// (relative to the sink's data folder), once it has ended.
func (t *tailUpload) covers(rel string) bool {
	<-t.done
	return t.err == nil && t.file.name != "" && rel == t.file.name
}

// take returns the upload id for the staged file at rel (relative to the
// sink's data folder) with final key final, or "" when the tail upload
// does not cover it (then it is aborted).
func (t *tailUpload) take(ctx context.Context, rel, final string) string {
	<-t.done
	if t.err != nil || t.file.name == "" || rel != t.file.name || final != t.key || !t.file.matches() {
		t.drop(ctx)
		return ""
	}
	id := t.id
	t.id = "" // taken: drop leaves it alone
	return id
}

// drop aborts the tail upload if it went up and was not taken.
func (t *tailUpload) drop(ctx context.Context) {
	<-t.done
	if t.err != nil || t.id == "" {
		return
	}
	if a, ok := t.objs.(objstore.UploadAborter); ok {
		_, _ = a.AbortStaleUploads(ctx, "", 0, func(k string) bool { return k == t.key })
	}
	t.id = ""
}

// growingFile reads the first file in dir whose name starts with prefix
// while the engine writes it: at the end of what is there it waits for more until the engine has
// returned. It hashes what it hands out.
type growingFile struct {
	ctx    context.Context
	dir    string
	prefix string        // of the file's name (engine.Caps.Growing)
	ended  chan struct{} // closed when the engine returned
	failed error         // set before ended is closed
	f      *os.File
	name   string // the file's name relative to dir
	h      *xxh3.Hasher
	final  chan xxh3.Uint128 // the finished file's hash (verify)
}

func (g *growingFile) Read(p []byte) (int, error) {
	for {
		// Whatever the engine wrote before it returned is there to read
		// once ended is seen, so an end of file after that is the end.
		var ended bool
		select {
		case <-g.ended:
			ended = true
		default:
		}
		if g.f == nil {
			if err := g.open(); err != nil {
				return 0, err
			}
		}
		if g.f != nil {
			n, err := g.f.Read(p)
			if n > 0 {
				g.h.Write(p[:n])
				return n, nil
			}
			if err != nil && err != io.EOF {
				return 0, err
			}
		}
		switch {
		case ended && g.failed != nil:
			return 0, fmt.Errorf("the engine failed: %w", g.failed)
		case ended && g.f == nil:
			return 0, fmt.Errorf("the engine wrote no %s file", g.prefix)
		case ended:
			return 0, io.EOF
		}
		select {
		case <-g.ended:
		case <-g.ctx.Done():
			return 0, g.ctx.Err()
		case <-time.After(tailPoll):
		}
	}
}

// open opens the file once it exists.
func (g *growingFile) open() error {
	f, err := g.first()
	if f != nil {
		g.f, g.name = f, filepath.Base(f.Name())
	}
	return err
}

// first opens the first file named prefix* in dir; nil when there is none yet.
func (g *growingFile) first() (*os.File, error) {
	entries, err := os.ReadDir(g.dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), g.prefix) {
			return os.Open(filepath.Join(g.dir, e.Name()))
		}
	}
	return nil, nil
}

func (g *growingFile) close() {
	if g.f != nil {
		g.f.Close()
	}
}

// verify starts hashing the finished file (the engine has returned).
func (g *growingFile) verify() {
	g.final = make(chan xxh3.Uint128, 1)
	go func() {
		var sum xxh3.Uint128
		if f, err := g.first(); err == nil && f != nil {
			h := xxh3.New()
			if _, err := io.Copy(h, f); err == nil {
				sum = h.Sum128()
			}
			f.Close()
		}
		g.final <- sum
	}()
}

// matches reports whether the finished file hashes to what was sent; call
// it after verify and once the reads are done.
func (g *growingFile) matches() bool {
	if g.final == nil {
		return false
	}
	sum := <-g.final
	return sum != (xxh3.Uint128{}) && sum == g.h.Sum128()
}
