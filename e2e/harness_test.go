package e2e

import (
	"fmt"
	"path"
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
// a lost file and a wrongly named one in a real sink, on each backend (on
// S3 the sink is changed and read back through the S3 API).
func TestHarnessDetectsBadSinks(t *testing.T) {
	t.Parallel()
	eachBackend(t, testHarnessDetectsBadSinks)
}

func testHarnessDetectsBadSinks(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	recs := f.addCSVs("a", 2, 20)
	s := f.mustRun()
	dir := f.outDir()
	var keys []string
	for _, file := range sinkFiles(t, dir) {
		rel, err := filepath.Rel(dir, file)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, filepath.ToSlash(rel))
	}
	if len(keys) < 2 {
		t.Fatalf("want at least 2 published files, got %d", len(keys))
	}
	check := func(tb testing.TB) { assertSink(tb, f.outDir(), f.sink, recs) }
	if failed(t, check) {
		t.Fatalf("the checks fail on a correct sink")
	}

	// A duplicated file, under a valid final name.
	data0 := f.out.get(t, keys[0])
	dup := path.Join(path.Dir(keys[0]), fmt.Sprintf("part-%s-99999.parquet", s.RunID))
	f.out.put(t, dup, data0)
	if !failed(t, check) {
		t.Errorf("assertSink did not notice a duplicated file")
	}
	if !failed(t, func(tb testing.TB) { assertNoDuplicates(tb, f.outDir(), f.sink) }) {
		t.Errorf("assertNoDuplicates did not notice a duplicated file")
	}
	f.out.remove(t, dup)

	// A lost file.
	data1 := f.out.get(t, keys[1])
	f.out.remove(t, keys[1])
	if !failed(t, check) {
		t.Errorf("assertSink did not notice a lost file")
	}
	f.out.put(t, keys[1], data1)

	// A file not named part-<run>-<n>.<ext>.
	f.out.put(t, "stray.parquet", data0)
	if !failed(t, func(tb testing.TB) { readSink(tb, f.outDir(), f.sink) }) {
		t.Errorf("readSink did not notice a file that is not named part-<run>-<n>.<ext>")
	}
	f.out.remove(t, "stray.parquet")

	// Files under _tidemark/ are invisible to readers, and seen by stagedFiles.
	f.out.put(t, "_tidemark/staging/x/"+path.Base(keys[0]), data0)
	if failed(t, check) {
		t.Errorf("assertSink read a file under _tidemark/")
	}
	if got := len(f.stagedFiles()); got != 1 {
		t.Errorf("stagedFiles: got %d, want the 1 file placed under _tidemark/", got)
	}
}
