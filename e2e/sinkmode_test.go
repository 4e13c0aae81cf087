package e2e

import (
	"fmt"
	"sort"
	"syscall"
	"testing"
)

// only keeps the records of the given products.
func only(recs []record, products ...string) []record {
	var out []record
	for _, r := range recs {
		for _, p := range products {
			if r.Product == p {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// byProduct groups records by product.
func byProduct(recs []record) map[string][]record {
	m := map[string][]record{}
	for _, r := range recs {
		m[r.Product] = append(m[r.Product], r)
	}
	return m
}

// TestSinkOverwrite: with mode overwrite, after each run that reads input
// exactly that run's data remains in the sink, in every partition, also
// in partitions the run did not write; a run with nothing new leaves the
// sink as it is. A run killed after its commit is rolled forward with its
// overwrite.
func TestSinkOverwrite(t *testing.T) {
	t.Parallel()
	eachBackend(t, testSinkOverwrite)
}

func testSinkOverwrite(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{mode: "overwrite"})
	a := f.addCSVs("a", 3, 20) // every product
	f.mustRun()
	f.assertSink(a)

	b := only(f.gen.records(60), "widget", "gadget")
	f.putCSV("b-01.csv", b)
	s := f.mustRun()
	assertFiles(t, "second run", s, 1)
	f.assertSink(b)
	for _, file := range f.sinkFiles() {
		if run := runOfFile(t, file); run != s.RunID {
			t.Errorf("after an overwrite run, published file %s is from run %s, want only files of %s", file, run, s.RunID)
		}
	}

	assertFiles(t, "run with nothing new", f.mustRun(), 0)
	f.assertSink(b)

	// Killed after the commit: the next run publishes it, overwrite included.
	c := only(f.gen.records(40), "gizmo")
	f.putCSV("c-01.csv", c)
	if _, r := f.run([]string{"TIDEMARK_FAULT=after-commit"}); r.signal != syscall.SIGKILL {
		t.Fatalf("run with TIDEMARK_FAULT=after-commit: want it killed by SIGKILL\n%v", r)
	}
	f.assertSink(b)
	assertFiles(t, "rerun after the kill", f.mustRun(), 0)
	f.assertSink(c)
}

// TestSinkOverwritePartitions: with mode overwrite_partitions a run
// replaces exactly the partitions it writes; the others keep what earlier
// runs published.
func TestSinkOverwritePartitions(t *testing.T) {
	t.Parallel()
	eachBackend(t, testSinkOverwritePartitions)
}

func testSinkOverwritePartitions(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{mode: "overwrite_partitions"})
	// want is the expected content per partition.
	want := byProduct(f.addCSVs("a", 3, 20))
	if len(want) != len(products) {
		t.Fatalf("the first run's input covers %d products, want all %d", len(want), len(products))
	}
	f.mustRun()
	assertPartitions(t, f, want)

	for i, written := range [][]string{{"widget", "gadget"}, {"gizmo"}, {"widget", "sprocket"}} {
		recs := only(f.gen.records(80), written...)
		f.putCSV(fmt.Sprintf("run%d.csv", i+2), recs)
		s := f.mustRun()
		assertFiles(t, fmt.Sprintf("run %d", i+2), s, 1)
		for p, rs := range byProduct(recs) {
			want[p] = rs
		}
		assertPartitions(t, f, want)
		for _, p := range written {
			for _, file := range partitionFiles(t, f, p) {
				if run := runOfFile(t, file); run != s.RunID {
					t.Errorf("run %d overwrote partition product=%s, but its file %s is from run %s", i+2, p, file, run)
				}
			}
		}
	}
	assertFiles(t, "run with nothing new", f.mustRun(), 0)
	assertPartitions(t, f, want)
}

// assertPartitions checks every product partition of the sink against want.
func assertPartitions(t testing.TB, f *fixture, want map[string][]record) {
	t.Helper()
	got := byProduct(f.readSink())
	var names []string
	for p := range want {
		names = append(names, p)
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	for _, p := range names {
		assertRecords(t, "partition product="+p, got[p], want[p])
	}
}

// partitionFiles lists the published files of one product partition.
func partitionFiles(t testing.TB, f *fixture, product string) []string {
	t.Helper()
	return sinkFiles(t, f.outDir()+"/product="+product)
}
