package sqltable

import (
	"bufio"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/job"
)

// The key snapshot of a changes: detect source is what its committed runs
// delivered: per range, every key with its row hash, in a file of one
// generation (a run's). A run writes the files of the ranges it drilled
// into in a new generation folder before its commit; the bookmark it
// commits names, for every range, the generation holding its file. So the
// snapshot moves only with the committed bookmark: a run that dies before
// its commit leaves a generation no bookmark names, which a later run
// deletes, and the next run compares with what was committed.

// keepGenerations is how many generations no bookmark of the head names a
// run keeps (newest first), for `bookmark reset --to-run` to an earlier
// run; one further back is gone and such a reset's next run fails saying so.
const keepGenerations = 8

// snapshotDir is the folder of a source's key snapshots: .tidemark/detect/
// beside the job's SQLite state (its state: when that is a local path,
// else the job file), one folder per job, ctx and table.
func snapshotDir(spec *job.Spec, ctx, connection, table string) string {
	base := filepath.Join(spec.Dir, ".tidemark")
	if st := spec.State; st != "" && !strings.Contains(st, "://") {
		if !filepath.IsAbs(st) {
			st = filepath.Join(spec.Dir, st)
		}
		base = filepath.Dir(st)
	}
	h := sha256.Sum256([]byte(spec.Job + "\x00" + ctx + "\x00" + connection + "\x00" + table))
	return filepath.Join(base, "detect", slug(spec.Job)+"_"+slug(ctx)+"_"+hex.EncodeToString(h[:4]))
}

// keyEntry is one delivered row: its key texts (what identifies it), the
// key columns' values as the output renders them (for its delete row; nil
// when the texts are those values) and its row hash.
type keyEntry struct {
	Key  []string `json:"k"`
	Out  []string `json:"o,omitempty"`
	Hash string   `json:"h"`
}

// id joins the key texts into one map key.
func (e keyEntry) id() string { return strings.Join(e.Key, "\x00") }

// out is what the delete row shows of the key columns.
func (e keyEntry) out() []string {
	if e.Out != nil {
		return e.Out
	}
	return e.Key
}

// newGeneration names a new generation: its time, sortable, and a random
// tail.
func newGeneration() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405.000000000") + "-" + hex.EncodeToString(b[:])
}

func rangeFile(dir, gen string, bucket int) string {
	return filepath.Join(dir, gen, strconv.Itoa(bucket)+".jsonl.gz")
}

// readKeys reads the delivered keys of one range; want are the figures
// the bookmark recorded for it, which the file must hold (a file that
// does not is not the one the bookmark was committed with).
func readKeys(dir, gen string, bucket int, want rangeFigures) ([]keyEntry, error) {
	name := rangeFile(dir, gen, bucket)
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the key snapshot of range %d is missing (%s): it is kept beside the job's state and must move with it; "+
			"`tidemark bookmark reset` (without --to-run) starts over with a new one", bucket, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the key snapshot of range %d: %w", bucket, err)
	}
	defer f.Close()
	unreadable := func(err error) error {
		return fmt.Errorf("the key snapshot %s cannot be read (%w): `tidemark bookmark reset` (without --to-run) starts over with a new one", name, err)
	}
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, unreadable(err)
	}
	var out []keyEntry
	var got rangeFigures
	dec := json.NewDecoder(zr)
	for {
		var e keyEntry
		if err := dec.Decode(&e); err == io.EOF {
			break
		} else if err != nil {
			return nil, unreadable(err)
		}
		got.add(e.Hash)
		out = append(out, e)
	}
	if got.Rows != want.Rows || got.Sum1 != want.Sum1 || got.Sum2 != want.Sum2 {
		return nil, fmt.Errorf("the key snapshot %s holds %d keys with checksums %d/%d, not the %d keys with %d/%d the bookmark recorded: "+
			"`tidemark bookmark reset` (without --to-run) starts over with a new one", name, got.Rows, got.Sum1, got.Sum2, want.Rows, want.Sum1, want.Sum2)
	}
	return out, nil
}

// rangeWriter writes one range's file in a generation folder being made.
type rangeWriter struct {
	f   *os.File
	zw  *gzip.Writer
	bw  *bufio.Writer
	enc *json.Encoder
}

func createRange(tmpDir string, bucket int) (*rangeWriter, error) {
	f, err := os.Create(filepath.Join(tmpDir, strconv.Itoa(bucket)+".jsonl.gz"))
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	zw := gzip.NewWriter(bw)
	return &rangeWriter{f: f, zw: zw, bw: bw, enc: json.NewEncoder(zw)}, nil
}

func (w *rangeWriter) add(e keyEntry) error { return w.enc.Encode(e) }

// close flushes and syncs the file.
func (w *rangeWriter) close() error {
	err := w.zw.Close()
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// cleanGenerations deletes the generation folders (and unfinished ones)
// that keep names none of and that are not among the newest
// keepGenerations others.
func cleanGenerations(dir string, keep []string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var others []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case slices.Contains(keep, name):
		case strings.HasSuffix(name, ".tmp"):
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return err
			}
		default:
			others = append(others, name)
		}
	}
	slices.Sort(others)
	if len(others) > keepGenerations {
		for _, name := range others[:len(others)-keepGenerations] {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// rangeFigures are one range's rows and hash sums.
type rangeFigures struct {
	Rows, Sum1, Sum2 int64
}

func (f *rangeFigures) add(hash string) {
	f.Rows++
	f.Sum1 += hashPart(hash, 0)
	f.Sum2 += hashPart(hash, 1)
}
