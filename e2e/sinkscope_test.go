package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// otherJob is a second job of a test, with a landing place, job file and
// state of its own, whose sink is at a location the test picks (nested in
// the fixture's output or landing place).
type otherJob struct {
	f       *fixture
	in      place
	jobPath string
	sink    sinkFormat
}

// newOtherJob writes job name reading its own landing place into sinkLoc.
func newOtherJob(f *fixture, name, sinkLoc string, o jobOpts) *otherJob {
	f.t.Helper()
	j := &otherJob{f: f, in: f.place(name + "-landing"), jobPath: filepath.Join(f.dir, name, "job.yaml"),
		sink: sinkFormat{format: "parquet", hive: o.partitionBy != "-"}}
	if o.sinkFormat != "" {
		j.sink.format = o.sinkFormat
	}
	o.name = name
	writeFile(f.t, j.jobPath, []byte(o.yaml(j.in.loc(), sinkLoc)))
	return j
}

// addCSV writes n new records into the job's landing place.
func (j *otherJob) addCSV(name string, n int) []record {
	j.f.t.Helper()
	recs := j.f.gen.records(n)
	j.in.put(j.f.t, name, csvBytes(recs))
	return recs
}

// mustRun runs the job and requires exit 0.
func (j *otherJob) mustRun(flags ...string) {
	j.f.t.Helper()
	if r := j.f.tidemark(nil, append([]string{"run", j.jobPath, "--json"}, flags...)...); r.code != 0 {
		j.f.t.Fatalf("run of %s: got exit %d, want 0\n%v", j.jobPath, r.code, r)
	}
}

// subLoc is the location of folder name inside place p.
func subLoc(p place, name string) string {
	return strings.TrimSuffix(p.loc(), "/") + "/" + name + "/"
}

// markSink makes sure the sink folder dir of place p holds a _tidemark/
// entry. On local disks a sink keeps its _tidemark/ folder; on S3 a clean
// run leaves no object under it until sinks record their ownership there
// (issue 7, item 1), so the test stands in for that record.
func markSink(t testing.TB, p place, dir string) {
	t.Helper()
	mirror := p.mirror(t)
	if _, err := os.Stat(filepath.Join(mirror, filepath.FromSlash(dir), "_tidemark")); err == nil {
		return
	}
	p.put(t, dir+"/_tidemark/owner.json", []byte(`{"job":"stand-in"}`))
}

// ownFiles lists the fixture job's published part files in a mirror of its
// output, leaving out the folders under skip (another job's sink).
func ownFiles(t testing.TB, mirror string, skip ...string) []string {
	t.Helper()
	var out []string
	for _, file := range sinkFiles(t, mirror) {
		rel := filepath.ToSlash(strings.TrimPrefix(file, mirror+string(filepath.Separator)))
		mine := partName.MatchString(filepath.Base(file))
		for _, s := range skip {
			if strings.HasPrefix(rel, s+"/") {
				mine = false
			}
		}
		if mine {
			out = append(out, file)
		}
	}
	return out
}

// assertKept checks that the foreign files in the output hold what the
// test wrote.
func assertKept(t testing.TB, mirror string, files map[string]string, when string) {
	t.Helper()
	for key, want := range files {
		got, err := os.ReadFile(filepath.Join(mirror, filepath.FromSlash(key)))
		if err != nil || !bytes.Equal(got, []byte(want)) {
			t.Errorf("%s: foreign file %s: got %q (%v), want it left as it was (%q)", when, key, got, err, want)
		}
	}
}

// TestOverwriteReplacesOnlyOwnOutput: an overwrite run deletes only what
// the job's manifests say it published; a file another tool wrote into the
// sink folder and another job's sink nested in it survive, and the run says
// how many such files it left. A purge deletes the job's output and leaves
// them too.
func TestOverwriteReplacesOnlyOwnOutput(t *testing.T) {
	t.Parallel()
	eachBackend(t, testOverwriteReplacesOnlyOwnOutput)
}

func testOverwriteReplacesOnlyOwnOutput(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{mode: "overwrite"})
	a := f.addCSVs("a", 2, 20)
	f.mustRun()

	foreign := map[string]string{"report.csv": "written,by,another,tool\n", "notes/readme.txt": "hello\n"}
	for k, v := range foreign {
		f.out.put(t, k, []byte(v))
	}
	nested := newOtherJob(f, "nested", subLoc(f.out, "nested"), jobOpts{})
	nestedRecs := nested.addCSV("n.csv", 15)
	nested.mustRun("--adopt-sink") // a sink inside another job's is refused without it
	nestedFiles := len(sinkFiles(t, filepath.Join(f.outDir(), "nested")))
	if nestedFiles == 0 {
		t.Fatal("the nested job published nothing")
	}

	b := f.addCSVs("b", 1, 30)
	s, r := f.run(nil)
	if r.code != 0 {
		t.Fatalf("overwrite run: got exit %d, want 0\n%v", r.code, r)
	}
	mirror := f.outDir()
	assertRecords(t, "the job's output after the overwrite", queryRecords(t, ownFiles(t, mirror, "nested"), f.sink), b)
	for _, file := range ownFiles(t, mirror, "nested") {
		if run := runOfFile(t, file); run != s.RunID {
			t.Errorf("after the overwrite, file %s of run %s is left; want only files of %s", file, run, s.RunID)
		}
	}
	assertKept(t, mirror, foreign, "after the overwrite")
	assertRecords(t, "the nested job's sink after the overwrite", readSink(t, filepath.Join(mirror, "nested"), nested.sink), nestedRecs)
	assertMentions(t, r, "did not write", fmt.Sprintf("files=%d", len(foreign)+nestedFiles), "report.csv")

	// A purge deletes every run's output of the job and nothing else; the
	// next run reads everything again.
	f.reset("--purge-output")
	mirror = f.outDir()
	if left := ownFiles(t, mirror, "nested"); len(left) > 0 {
		t.Errorf("after reset --purge-output, the job's files are left: %v", left)
	}
	assertKept(t, mirror, foreign, "after the purge")
	assertRecords(t, "the nested job's sink after the purge", readSink(t, filepath.Join(mirror, "nested"), nested.sink), nestedRecs)
	f.mustRun()
	mirror = f.outDir()
	assertRecords(t, "the job's output after the purge and a run", queryRecords(t, ownFiles(t, mirror, "nested"), f.sink), concat(a, b))
	assertKept(t, mirror, foreign, "after the run after the purge")
}

// TestOverwritePartitionsReplacesOnlyOwnOutput: overwrite_partitions
// replaces the job's own files in the partitions it writes and leaves a
// foreign file and another job's sink inside such a partition.
func TestOverwritePartitionsReplacesOnlyOwnOutput(t *testing.T) {
	t.Parallel()
	eachBackend(t, testOverwritePartitionsReplacesOnlyOwnOutput)
}

func testOverwritePartitionsReplacesOnlyOwnOutput(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{mode: "overwrite_partitions"})
	want := byProduct(f.addCSVs("a", 3, 20))
	f.mustRun()

	foreign := map[string]string{"product=widget/notes.txt": "kept\n", "product=widget/_SUCCESS": ""}
	for k, v := range foreign {
		f.out.put(t, k, []byte(v))
	}
	nested := newOtherJob(f, "nested", subLoc(f.out, "product=widget/nested"), jobOpts{partitionBy: "-"})
	nestedRecs := nested.addCSV("n.csv", 12)
	nested.mustRun("--adopt-sink") // a sink inside another job's is refused without it

	recs := only(f.gen.records(80), "widget", "gizmo")
	f.putCSV("b.csv", recs)
	s, r := f.run(nil)
	if r.code != 0 {
		t.Fatalf("overwrite_partitions run: got exit %d, want 0\n%v", r.code, r)
	}
	for p, rs := range byProduct(recs) {
		want[p] = rs
	}
	mirror := f.outDir()
	got := byProduct(queryRecords(t, ownFiles(t, mirror, "product=widget/nested"), f.sink))
	for p := range want {
		assertRecords(t, "partition product="+p, got[p], want[p])
	}
	for _, p := range []string{"widget", "gizmo"} {
		for _, file := range ownFiles(t, filepath.Join(mirror, "product="+p), "nested") {
			if run := runOfFile(t, file); run != s.RunID {
				t.Errorf("partition product=%s still holds %s of run %s; want only files of %s", p, file, run, s.RunID)
			}
		}
	}
	assertKept(t, mirror, foreign, "after overwrite_partitions")
	assertRecords(t, "the nested job's sink", readSink(t, filepath.Join(mirror, "product=widget", "nested"), nested.sink), nestedRecs)
	assertMentions(t, r, "did not write", "product=widget/notes.txt")
}

// TestSinkPathRules: a sink at the file-system root, in the state store's
// folder, inside a source folder or around one is a job-file error (exit
// 2, naming the key and line) and the run writes nothing, not even state.
func TestSinkPathRules(t *testing.T) {
	t.Parallel()
	eachBackend(t, testSinkPathRules)
	t.Run("local-only", func(t *testing.T) {
		t.Parallel()
		// No input: should the rules ever fail, the run still writes
		// nothing into the file-system root.
		f := newFixture(t, jobOpts{})
		for _, c := range []struct {
			sink  string
			flags []string
			want  string
		}{
			{"/", nil, "root of the file system"},
			{"file:///", nil, "root of the file system"},
			{filepath.Join(f.dir, ".tidemark"), nil, "state store's folder"},
			{filepath.Join(f.dir, ".tidemark", "out"), nil, "state store's folder"},
			{filepath.Join(f.dir, "st"), []string{"--state", filepath.Join(f.dir, "st", "state.db")}, "state store's folder"},
		} {
			assertRefused(t, f, c.sink, c.want, c.flags...)
		}
	})
}

func testSinkPathRules(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	f.addCSVs("a", 1, 5)
	holder := f.dir // holds the landing folder
	if be == onS3 {
		holder = strings.TrimSuffix(f.in.loc(), "landing/") // the bucket root
	}
	assertRefused(t, f, subLoc(f.in, "out"), "inside the folder of source orders_source")
	assertRefused(t, f, f.in.loc(), "inside the folder of source orders_source")
	assertRefused(t, f, holder, "holds the folder of source orders_source")
	// Beside the source, the job runs.
	writeFile(t, f.jobPath, []byte(jobOpts{}.yaml(f.in.loc(), strings.TrimSuffix(f.in.loc(), "/")+"-out/")))
	f.mustRun()
}

// assertRefused writes the fixture's job with sink path sink and checks
// that a run exits 2 with a job-file error naming the sink's path line and
// want, and wrote no state.
func assertRefused(t *testing.T, f *fixture, sink, want string, flags ...string) {
	t.Helper()
	yaml := jobOpts{}.yaml(f.in.loc(), sink)
	writeFile(t, f.jobPath, []byte(yaml))
	line, inSinks := 0, false
	for i, l := range strings.Split(yaml, "\n") {
		inSinks = inSinks || l == "sinks:"
		if inSinks && l == fmt.Sprintf("    path: %q", sink) {
			line = i + 1
		}
	}
	_, r := f.run(nil, flags...)
	if r.code != 2 {
		t.Errorf("sink %s: got exit %d, want 2\n%v", sink, r.code, r)
		return
	}
	assertMentions(t, r, fmt.Sprintf("job.yaml:%d: sinks[0].path", line), want)
	for _, st := range []string{filepath.Join(f.dir, ".tidemark", "state.db"), filepath.Join(f.dir, "st", "state.db")} {
		if _, err := os.Stat(st); err == nil {
			t.Errorf("sink %s: the refused run created the state %s", sink, st)
		}
	}
}

// TestSourceSkipsNestedSinks: another job's sink nested in a source folder
// (which validation cannot see) is not read: the source reads its own
// files only, and the run and plan count what they left.
func TestSourceSkipsNestedSinks(t *testing.T) {
	t.Parallel()
	eachBackend(t, testSourceSkipsNestedSinks)
}

func testSourceSkipsNestedSinks(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	exports := newOtherJob(f, "exporter", subLoc(f.in, "exports"), jobOpts{sinkFormat: "csv", partitionBy: "-", transform: "-"})
	exports.addCSV("e.csv", 10)
	exports.mustRun()
	markSink(t, f.in, "exports")
	exported := len(sinkFiles(t, filepath.Join(f.in.mirror(t), "exports")))
	if exported == 0 {
		t.Fatal("the exporter published nothing")
	}

	a := f.addCSVs("a", 2, 10)
	if got := f.plan(); *got.Files != 2 {
		t.Errorf("plan: %d files to read (%v), want the 2 of the source", *got.Files, got.New)
	}
	r := f.tidemark(nil, "plan", f.jobPath, "--json")
	assertMentions(t, r, fmt.Sprintf(`"in_sinks":%d`, exported))
	s, rr := f.run(nil)
	if rr.code != 0 {
		t.Fatalf("run: got exit %d, want 0\n%v", rr.code, rr)
	}
	assertFiles(t, "run", s, 2)
	f.assertSink(a)
	assertMentions(t, rr, fmt.Sprintf(`"in_sinks":%d`, exported), "another tidemark sink", "exports")
	// Later runs still leave it.
	exports.addCSV("e2.csv", 5)
	exports.mustRun()
	assertFiles(t, "run after another export", f.mustRun(), 0)
	f.assertSink(a)
}

// TestTwoSinksOneFolder: two file sinks of one job at one location, or one
// inside the other, are a job-file error naming the second sink's path
// line (before, the same location failed at run time with "staging folder
// ... is not empty", and nested ones mixed their files for readers).
func TestTwoSinksOneFolder(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		f.addCSVs("a", 1, 5)
		first := f.out.loc()
		for _, c := range []struct{ second, want string }{
			{first, "is the location of sink orders_sink"},
			{subLoc(f.out, "more"), "lies inside the folder of sink orders_sink"},
		} {
			yaml := jobOpts{}.yaml(f.in.loc(), first) + fmt.Sprintf("  - ctx: second_sink\n    path: %q\n    format: csv\n", c.second)
			writeFile(t, f.jobPath, []byte(yaml))
			line := strings.Count(yaml, "\n") - 1 // the second sink's path line
			_, r := f.run(nil)
			if r.code != 2 {
				t.Errorf("second sink %s: got exit %d, want 2\n%v", c.second, r.code, r)
				continue
			}
			assertMentions(t, r, fmt.Sprintf("job.yaml:%d: sinks[1].path", line), c.want)
		}
		if files := f.sinkFiles(); len(files) != 0 {
			t.Errorf("refused runs published %d files", len(files))
		}
		// The outer one second: refused the other way round.
		yaml := jobOpts{}.yaml(f.in.loc(), subLoc(f.out, "inner")) + fmt.Sprintf("  - ctx: second_sink\n    path: %q\n    format: csv\n", first)
		writeFile(t, f.jobPath, []byte(yaml))
		_, r := f.runExpect(2)
		assertMentions(t, r, "holds the folder of sink orders_sink")
	})
}
