package enginetest

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/engine"
)

// fileURL returns the file:// location of a local path.
func fileURL(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// input writes content under root/key and returns it as an input.
func input(t *testing.T, root, key string, content []byte) engine.Input {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return engine.Input{Location: fileURL(p), Key: key, Size: int64(len(content))}
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zstded(t *testing.T, s string) []byte {
	t.Helper()
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return w.EncodeAll([]byte(s), nil)
}

// execute runs p and fails the test on error.
func execute(t *testing.T, e engine.Engine, p engine.Plan) engine.Result {
	t.Helper()
	res, err := e.Execute(t.Context(), p)
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	return res
}

// sink is a sink into a fresh folder.
func sink(t *testing.T, ctx, from, format string) engine.Sink {
	return engine.Sink{Ctx: ctx, From: from, Format: format, Location: fileURL(filepath.Join(t.TempDir(), ctx))}
}

// localDir returns a sink's folder.
func localDir(t *testing.T, s engine.Sink) string {
	t.Helper()
	p, err := engine.LocalPath(s.Location)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkStaged checks that res lists exactly the files under the sink's
// folder, with their sizes, and rows that add up to the sink's rows.
func checkStaged(t *testing.T, s engine.Sink, res engine.SinkResult) {
	t.Helper()
	dir := localDir(t, s)
	var onDisk []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			onDisk = append(onDisk, filepath.ToSlash(rel))
		}
		return nil
	})
	var listed []string
	var rows int64
	for _, f := range res.Files {
		listed = append(listed, f.Path)
		rows += f.Rows
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Errorf("sink %s: staged file %s: %v", s.Ctx, f.Path, err)
			continue
		}
		if st.Size() != f.Bytes {
			t.Errorf("sink %s: %s: got %d bytes reported, want %d (on disk)", s.Ctx, f.Path, f.Bytes, st.Size())
		}
	}
	sort.Strings(onDisk)
	sort.Strings(listed)
	if !slices.Equal(listed, onDisk) {
		t.Errorf("sink %s: got files %v listed, want %v (on disk)", s.Ctx, listed, onDisk)
	}
	if rows != res.Rows {
		t.Errorf("sink %s: got %d rows in files, want %d (the sink's rows)", s.Ctx, rows, res.Rows)
	}
}

// readBack reads the files a sink wrote through the engine and returns
// their rows as sorted CSV lines (with the header first).
func readBack(t *testing.T, e engine.Engine, s engine.Sink, res engine.SinkResult) []string {
	t.Helper()
	dir := localDir(t, s)
	src := engine.Source{Ctx: "back", Format: s.Format, Hive: len(s.PartitionBy) > 0}
	for _, f := range res.Files {
		src.Files = append(src.Files, engine.Input{Location: fileURL(filepath.Join(dir, filepath.FromSlash(f.Path))), Key: f.Path, Size: f.Bytes})
	}
	out := sink(t, "readback", "back", "csv")
	r := execute(t, e, engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{out}})
	return csvRows(t, out, r.Sinks["readback"])
}

// csvRows returns the header of a CSV sink's files, then its rows sorted,
// each as comma-joined fields.
func csvRows(t *testing.T, s engine.Sink, res engine.SinkResult) []string {
	t.Helper()
	var header string
	var rows []string
	for _, f := range res.Files {
		data, err := os.ReadFile(filepath.Join(localDir(t, s), filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		for i, r := range recs {
			if i == 0 {
				header = strings.Join(r, ",")
				continue
			}
			rows = append(rows, strings.Join(r, ","))
		}
	}
	sort.Strings(rows)
	return append([]string{header}, rows...)
}

// equal fails when got != want.
func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func equalRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\ngot  %q\nwant %q", what, got, want)
	}
}
