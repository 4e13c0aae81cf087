package storetest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// byteOrder is a list of paths in ascending byte order, the order Files
// must yield. It differs from path-segment order ("a/b" before "a-b"), from
// case-insensitive order ("Z" before "a"), from UTF-16 order (U+FFFD after
// U+1F600) and from locale collations.
var byteOrder = []string{
	"A.csv",
	"Z.csv",
	"a",
	"a b",
	"a%2F",
	"a-b",
	"a.b",
	"a/b",
	"a/b/c",
	"a0",
	"ab",
	"z",
	"é",
	"é/x",
	"日本/語.csv",
	"\ufffd",
	"😀",
}

func testFilesByteOrder(t *testing.T, s store.Store) {
	if !slices.IsSorted(byteOrder) {
		t.Fatal("byteOrder is not in Go string order")
	}
	var want []bookmark.File
	for i, p := range byteOrder {
		want = append(want, file(p, int64(i+1)))
	}
	shuffled := slices.Clone(want)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })

	l := acquire(t, s, job, "r1")
	// Half in one run, half in the next, plus another ctx in between.
	half := len(shuffled) / 2
	added := append(recs(src, shuffled[:half]...), recs(src2, file("m", 1))...)
	advance(t, s, l, "r1", 0, map[string]bookmark.SourceState{src: state("fp", 1)}, added, nil)
	advance(t, s, l, "r2", 1, map[string]bookmark.SourceState{src: state("fp", 2)}, recs(src, shuffled[half:]...), nil)

	wantFiles(t, "Files in byte order", files(t, s, job, src), want)
	wantFiles(t, "Files of the other ctx", files(t, s, job, src2), []bookmark.File{file("m", 1)})
	wantFiles(t, "Files of an unknown ctx", files(t, s, job, "nope"), nil)
}

func testFilesIdentity(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r1")
	fs := []bookmark.File{
		{Path: "no-etag.csv", Size: 0, MTime: 1},
		{Path: "big.csv", Size: 1 << 40, MTime: t0.UnixNano() + 999, ETag: `"d41d8cd98f00b204e9800998ecf8427e-12"`},
		{Path: "old.csv", Size: 7, MTime: -86400e9, ETag: "W/\"x\""},
	}
	advance(t, s, l, "r1", 0, nil, recs(src, fs...), nil)
	want := []bookmark.File{fs[1], fs[0], fs[2]}
	wantFiles(t, "Files with varied identities", files(t, s, job, src), want)
}

// testFilesEarlyBreak stops reading Files early and checks the store still
// works (the stream was closed).
func testFilesEarlyBreak(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r1")
	var added []store.FileRecord
	for i := range 100 {
		added = append(added, store.FileRecord{Ctx: src, File: file(string(rune('a'+i%26))+string(rune('a'+i/26)), 1)})
	}
	advance(t, s, l, "r1", 0, nil, added, nil)
	for range 20 {
		n := 0
		for _, err := range s.Files(t.Context(), job, src) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if n == 3 {
				break
			}
		}
		if n != 3 {
			t.Fatalf("read %d files before break, want 3", n)
		}
	}
	advance(t, s, l, "r2", 1, nil, recs(src, file("zz", 1)), nil)
	if got := len(files(t, s, job, src)); got != 101 {
		t.Errorf("Files after early breaks and a commit: %d records, want 101", got)
	}
}

func testFilesSuperseded(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r1")
	advance(t, s, l, "r1", 0, nil, recs(src, file("p.csv", 1), file("q.csv", 1)), nil)
	// p.csv changed: r2 reads it again and supersedes the old record.
	advance(t, s, l, "r2", 1, nil, recs(src, file("p.csv", 2)), recs(src, file("p.csv", 1)))
	wantFiles(t, "Files after superseding", files(t, s, job, src), []bookmark.File{file("p.csv", 2), file("q.csv", 1)})

	advance(t, s, l, "r3", 2, nil, recs(src, file("p.csv", 3), file("r.csv", 1)), recs(src, file("p.csv", 2)))
	wantFiles(t, "Files after superseding twice", files(t, s, job, src),
		[]bookmark.File{file("p.csv", 3), file("q.csv", 1), file("r.csv", 1)})

	// Superseded records stay in their run's input manifest.
	in := collect(t, s.RunInputs(t.Context(), job, []string{"r1"}))
	wantRecords(t, "RunInputs(r1)", in, recs(src, file("p.csv", 1), file("q.csv", 1)))
	in = collect(t, s.RunInputs(t.Context(), job, []string{"r3", "r1", "r2"}))
	wantRecords(t, "RunInputs(r1, r2, r3)", in,
		recs(src, file("p.csv", 1), file("p.csv", 2), file("p.csv", 3), file("q.csv", 1), file("r.csv", 1)))
}

func testRunInputs(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r1")
	advance(t, s, l, "r1", 0, nil, append(recs(src, file("b", 1), file("a", 1)), recs(src2, file("z", 1))...), nil)
	advance(t, s, l, "r2", 1, nil, recs(src, file("c", 2)), nil)
	advance(t, s, l, "r3", 2, nil, append(recs(src2, file("y", 3)), recs(src, file("a/1", 3))...), nil)

	got := collect(t, s.RunInputs(t.Context(), job, []string{"r1", "r3"}))
	// Ordered by ctx ("customers_source" < "orders_source"), then path.
	want := append(recs(src2, file("y", 3), file("z", 1)), recs(src, file("a", 1), file("a/1", 3), file("b", 1))...)
	wantRecords(t, "RunInputs(r1, r3)", got, want)

	wantRecords(t, "RunInputs(r2)", collect(t, s.RunInputs(t.Context(), job, []string{"r2"})), recs(src, file("c", 2)))
	wantRecords(t, "RunInputs()", collect(t, s.RunInputs(t.Context(), job, nil)), nil)
	wantRecords(t, "RunInputs(unknown)", collect(t, s.RunInputs(t.Context(), job, []string{"nope"})), nil)
	wantRecords(t, "RunInputs of another job", collect(t, s.RunInputs(t.Context(), otherJob, []string{"r1"})), nil)
}

// testJobsIsolated runs two jobs with the same ctx and run ids side by side.
func testJobsIsolated(t *testing.T, s store.Store) {
	la := acquire(t, s, job, "r1")
	// Take and release otherJob's lease once so that its token differs from
	// la's, whether tokens count per job or per store.
	if err := s.ReleaseLease(t.Context(), acquire(t, s, otherJob, "r0")); err != nil {
		t.Fatal(err)
	}
	lb := acquire(t, s, otherJob, "r1")
	if lb.Token == la.Token {
		t.Fatalf("tokens of %q and %q are both %d after two acquisitions of one", job, otherJob, la.Token)
	}
	sa := map[string]bookmark.SourceState{src: state("a", 1)}
	sb := map[string]bookmark.SourceState{src: state("b", 2)}
	advance(t, s, la, "r1", 0, sa, recs(src, file("a.csv", 1)), nil)
	advance(t, s, lb, "r1", 0, sb, recs(src, file("b.csv", 2)), nil)
	advance(t, s, lb, "r2", 1, sb, recs(src, file("c.csv", 2)), nil)

	// A token of one job does not work for the other.
	c := commitOf(t, s, la, "r2", bookmark.ModeEnable, 1)
	c.Token = lb.Token
	_, err := s.Commit(t.Context(), c)
	wantErr(t, "Commit with another job's token", err, store.ErrLeaseLost)

	wantHead(t, s, job, 1, "r1")
	wantHead(t, s, otherJob, 2, "r2")
	wantStates(t, s, job, sa)
	wantFiles(t, "Files of "+job, files(t, s, job, src), []bookmark.File{file("a.csv", 1)})
	wantFiles(t, "Files of "+otherJob, files(t, s, otherJob, src), []bookmark.File{file("b.csv", 2), file("c.csv", 2)})

	if _, err := s.Reset(t.Context(), otherJob, lb.Token, "", "test"); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, "Files of "+job+" after resetting "+otherJob, files(t, s, job, src), []bookmark.File{file("a.csv", 1)})
	wantStates(t, s, job, sa)
	if r := getRun(t, s, job, "r1"); r.Undone {
		t.Errorf("run r1 of %q undone by a reset of %q", job, otherJob)
	}
}

// testCommitRefusesPlannerBugs checks file records a correct planner
// never commits, refused alike by every backend as a database's
// constraints would refuse them (store.CheckFileRecords), with nothing
// changed: superseding a path twice, superseding a path the bookmark does
// not hold (or holds as another source's), adding a path the bookmark
// holds without superseding it, and adding a path twice.
func testCommitRefusesPlannerBugs(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r1")
	advance(t, s, l, "r1", 0, nil, append(recs(src, file("p.csv", 1), file("q.csv", 1)), recs(src2, file("o.csv", 1))...), nil)
	r2 := commitOf(t, s, l, "r2", bookmark.ModeEnable, 1)
	for _, tc := range []struct {
		name              string
		added, superseded []store.FileRecord
	}{
		{"superseding p.csv twice", recs(src, file("p.csv", 2)), recs(src, file("p.csv", 1), file("p.csv", 1))},
		{"superseding r.csv, which is not recorded", recs(src, file("n.csv", 1)), recs(src, file("r.csv", 1))},
		{"superseding o.csv, recorded by another source", nil, recs(src, file("o.csv", 1))},
		{"adding q.csv, which is recorded, without superseding it", recs(src, file("q.csv", 2)), nil},
		{"adding n.csv twice", recs(src, file("n.csv", 1), file("n.csv", 2)), nil},
	} {
		c := r2
		c.Added, c.Superseded = tc.added, tc.superseded
		if _, err := s.Commit(t.Context(), c); err == nil {
			t.Errorf("Commit %s succeeded, want it refused", tc.name)
		}
		wantHead(t, s, job, 1, "r1")
		wantFiles(t, "Files after the refused commit "+tc.name, files(t, s, job, src), []bookmark.File{file("p.csv", 1), file("q.csv", 1)})
	}
	// The same run commits once it records what a correct planner would.
	c := r2
	c.Added, c.Superseded = recs(src, file("p.csv", 2), file("n.csv", 1)), recs(src, file("p.csv", 1))
	mustCommit(t, s, c)
	wantFiles(t, "Files after the commit", files(t, s, job, src), []bookmark.File{file("n.csv", 1), file("p.csv", 2), file("q.csv", 1)})
}
