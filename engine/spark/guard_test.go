package spark

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// TestGuardRefusesUsedLocations: a sink location that holds anything (the
// input's own folder, an earlier output) or nests in another, or a root,
// is refused before Spark writes, and what was there is intact.
func TestGuardRefusesUsedLocations(t *testing.T) {
	e := newEngine(t)
	t.Cleanup(func() { _ = e.Close() })
	dir := t.TempDir()
	in := filepath.Join(dir, "in", "a.csv")
	if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte("id\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := engine.Source{Ctx: "a", Format: "csv", Files: []engine.Input{{Location: in, Key: "a.csv", Size: 7}}}
	fresh := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name string
		locs []string
		says string
	}{
		{"the input's folder", []string{filepath.Dir(in)}, "is not empty"},
		{"a root", []string{"/"}, "root"},
		{"nested sinks", []string{fresh, filepath.Join(fresh, "inner")}, "nest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := engine.Plan{Sources: []engine.Source{src}}
			for i, l := range tc.locs {
				p.Sinks = append(p.Sinks, engine.Sink{Ctx: "s" + string(rune('0'+i)), From: "a", Format: "csv", Location: l})
			}
			_, err := e.Execute(t.Context(), p)
			if err == nil || !strings.Contains(err.Error(), "spark write guard") || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got error %v, want the write guard saying %q", err, tc.says)
			}
			data, err := os.ReadFile(in)
			if err != nil || string(data) != "id\n1\n2\n" {
				t.Errorf("the input after a refused write: got %q (%v), want it intact", data, err)
			}
			if _, err := os.Stat(fresh); err == nil {
				t.Errorf("a refused plan wrote %s", fresh)
			}
		})
	}
}

// TestSparkErrorsOnce: Spark's error class and SQLSTATE appear once in a
// failed statement's error, and the statement's text does not.
func TestSparkErrorsOnce(t *testing.T) {
	e := newEngine(t)
	t.Cleanup(func() { _ = e.Close() })
	dir := t.TempDir()
	in := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(in, []byte("id\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := e.Execute(t.Context(), engine.Plan{
		Sources:    []engine.Source{{Ctx: "a", Format: "csv", Files: []engine.Input{{Location: in, Key: "a.csv", Size: 5}}}},
		Transforms: []engine.Transform{{Name: "t", SQL: "SELECT nosuch_column_xyz FROM a"}},
		Sinks:      []engine.Sink{{Ctx: "o", Format: "csv", Location: filepath.Join(dir, "out")}},
	})
	if err == nil {
		t.Fatal("got no error, want one")
	}
	msg := err.Error()
	for _, once := range []string{"UNRESOLVED_COLUMN", "42703"} {
		if n := strings.Count(msg, once); n != 1 {
			t.Errorf("got %q %d times in %q, want once", once, n, msg)
		}
	}
	if strings.Contains(msg, "SELECT nosuch") || !strings.HasPrefix(msg, "transform t: ") {
		t.Errorf("got %q, want it to start with the transform and not repeat its SQL", msg)
	}
}

// TestReleaseSession: Close releases the session on the server: its
// temporary views are gone for a new session of the same id.
func TestReleaseSession(t *testing.T) {
	e := newEngine(t)
	s, err := e.session(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	// A released session id cannot be used again.
	r, err := connect(t.Context(), e.remote, connectTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	r.id = s.id
	err = r.command(t.Context(), `{"sqlCommand": {"sql": "SELECT 1"}}`)
	if err == nil || !strings.Contains(cleanError(err).Error(), "SESSION") {
		t.Errorf("using a released session: got %v, want a session error", err)
	}
}

// TestUnreadableFileNamesCause: a file Spark cannot read at all (a .gz
// that is not gzip) fails as an input error naming the file and the
// cause, which Spark's own message (FAILED_READ_FILE.NO_HINT) leaves out.
func TestUnreadableFileNamesCause(t *testing.T) {
	e := newEngine(t)
	t.Cleanup(func() { _ = e.Close() })
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.csv.gz")
	if err := os.WriteFile(in, []byte("id\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := e.Execute(t.Context(), engine.Plan{
		Sources: []engine.Source{{Ctx: "a", Format: "csv", Schema: []bookmark.Column{{Name: "id", Type: "BIGINT"}},
			Files: []engine.Input{{Location: in, Key: "bad.csv.gz", Size: 5}}}},
		Sinks: []engine.Sink{{Ctx: "o", From: "a", Format: "csv", Location: filepath.Join(dir, "out")}},
	})
	var ie *engine.InputError
	if !errors.As(err, &ie) || ie.File != "bad.csv.gz" {
		t.Fatalf("got %v, want an input error naming bad.csv.gz", err)
	}
	if msg := strings.ToLower(err.Error()); !strings.Contains(msg, "gzip") && !strings.Contains(msg, "end of input stream") {
		t.Errorf("got %q, want the cause (not gzip, or its stream cut short) named", err)
	}
}

func TestEmptyPartitionValueRefused(t *testing.T) {
	src := &engine.Source{Ctx: "s", Hive: true}
	in := engine.Input{Key: "p=/a.csv", Size: 1}
	ie := samePartitions(src, in, in)
	if ie == nil || ie.File != "p=/a.csv" || ie.Column != "p" {
		t.Fatalf("got %v, want an error naming p=/a.csv and column p", ie)
	}
	if ie := samePartitions(src, engine.Input{Key: "p=1/a.csv"}, engine.Input{Key: "p=2/b.csv"}); ie != nil {
		t.Fatalf("p=1 and p=2: %v", ie)
	}
}

// TestReadFileNamed: the file of Spark's FAILED_READ_FILE message is
// found whether a period ends the sentence after it (the Parquet type
// mismatch) or not; with the period kept, no input matched it and the
// error named no file.
func TestReadFileNamed(t *testing.T) {
	for msg, want := range map[string]string{
		"[FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH] Encountered error while reading file file:///tmp/a/data_0.parquet. Data type mismatches": "file:///tmp/a/data_0.parquet",
		"[FAILED_READ_FILE.NO_HINT] Encountered error while reading file file:///tmp/a/b.csv.gz (SQLSTATE KD001)":                                      "file:///tmp/a/b.csv.gz",
		"Encountered error while reading file file:///tmp/a/v1.2.csv":                                                                                  "file:///tmp/a/v1.2.csv",
	} {
		m := readFileRE.FindStringSubmatch(msg)
		if m == nil || m[1] != want {
			t.Errorf("%q: got %v, want %s", msg, m, want)
		}
	}
}
