package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
)

// fakeTB records the failures of the helpers under test instead of failing
// the real test: the checks below prove that the read-back checks can fail.
type fakeTB struct {
	testing.TB
	failures []string
}

type fatal struct{}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.failures = append(f.failures, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	panic(fatal{})
}

// failed runs check against a fakeTB and reports whether it failed.
func failed(t *testing.T, check func(tb testing.TB)) bool {
	t.Helper()
	fake := &fakeTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(fatal); !ok {
					panic(r)
				}
			}
		}()
		check(fake)
	}()
	return len(fake.failures) > 0
}

// TestHarnessDetectsBadSinks: the read-back checks catch a duplicated file,
// a lost file and a wrongly named one in a real sink.
func TestHarnessDetectsBadSinks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	recs := f.addCSVs("a", 2, 20)
	s := f.mustRun()
	files := sinkFiles(t, f.output)
	if len(files) < 2 {
		t.Fatalf("want at least 2 published files, got %d", len(files))
	}
	if failed(t, func(tb testing.TB) { assertSink(tb, f.output, f.sink, recs) }) {
		t.Fatalf("the checks fail on a correct sink")
	}

	// A duplicated file, under a valid final name.
	dup := filepath.Join(filepath.Dir(files[0]), fmt.Sprintf("part-%s-99999.parquet", s.RunID))
	copyFile(t, files[0], dup)
	if !failed(t, func(tb testing.TB) { assertSink(tb, f.output, f.sink, recs) }) {
		t.Errorf("assertSink did not notice a duplicated file")
	}
	if !failed(t, func(tb testing.TB) { assertNoDuplicates(tb, f.output, f.sink) }) {
		t.Errorf("assertNoDuplicates did not notice a duplicated file")
	}
	removeFile(t, dup)

	// A lost file.
	backup := filepath.Join(t.TempDir(), "lost.parquet")
	copyFile(t, files[1], backup)
	removeFile(t, files[1])
	if !failed(t, func(tb testing.TB) { assertSink(tb, f.output, f.sink, recs) }) {
		t.Errorf("assertSink did not notice a lost file")
	}
	copyFile(t, backup, files[1])

	// A file not named part-<run>-<n>.<ext>.
	stray := filepath.Join(f.output, "stray.parquet")
	copyFile(t, files[0], stray)
	if !failed(t, func(tb testing.TB) { readSink(tb, f.output, f.sink) }) {
		t.Errorf("readSink did not notice a file that is not named part-<run>-<n>.<ext>")
	}
	removeFile(t, stray)

	// Files under _tidemark/ are invisible to readers, and seen by stagedFiles.
	copyFile(t, files[0], filepath.Join(f.output, "_tidemark", "staging", "x", filepath.Base(files[0])))
	if failed(t, func(tb testing.TB) { assertSink(tb, f.output, f.sink, recs) }) {
		t.Errorf("assertSink read a file under _tidemark/")
	}
	if got := len(stagedFiles(t, f.output)); got != 1 {
		t.Errorf("stagedFiles: got %d, want the 1 file placed under _tidemark/", got)
	}
}
