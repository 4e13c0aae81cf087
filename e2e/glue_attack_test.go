package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attackScript is a Glue-style script that does what --CASE says: the
// ways a script can misuse transformation_ctx, its reads and writes and
// job.commit() (issue #20's pass over the Glue face). --IN and --OUT are
// as glueScript's; --OTHER is a second folder.
const attackScript = `import sys
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions

args = getResolvedOptions(sys.argv, ["JOB_NAME", "IN", "OUT", "OTHER", "CASE"])
case = args["CASE"]
glue_context = GlueContext(SparkContext.getOrCreate())
job = Job(glue_context)
job.init(args["JOB_NAME"], args)

def read(path, ctx):
    return glue_context.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": [path], "recurse": True},
        format="csv", format_options={"withHeader": True}, transformation_ctx=ctx)

def write(frame, path, ctx):
    glue_context.write_dynamic_frame.from_options(
        frame=frame, connection_type="s3", connection_options={"path": path},
        format="parquet", transformation_ctx=ctx)

if case == "reuse_read":
    a = read(args["IN"], "orders_source")
    b = read(args["OTHER"], "orders_source")
    write(a, args["OUT"], "orders_sink")
    write(b, args["OUT"], "orders_sink")
elif case == "reuse_write":
    a = read(args["IN"], "orders_source")
    write(a, args["OUT"], "orders_sink")
    write(a, args["OTHER"] + "/y", "orders_sink")
elif case == "same_ctx_read_write":
    write(read(args["IN"], "orders"), args["OUT"], "orders")
elif case == "no_ctx":
    write(read(args["IN"], ""), args["OUT"], "orders_sink")
elif case == "sink_in_later_source":
    a = read(args["IN"], "orders_source")
    write(a, args["OUT"] + "/inner", "orders_sink")
    read(args["OUT"], "outer_source")
elif case == "sink_in_source":
    write(read(args["IN"], "orders_source"), args["IN"] + "/out", "orders_sink")
elif case == "raise_after_write":
    write(read(args["IN"], "orders_source"), args["OUT"], "orders_sink")
    raise RuntimeError("the script's own failure after its write")
elif case == "no_commit":
    write(read(args["IN"], "orders_source"), args["OUT"], "orders_sink")
    sys.exit(0)
elif case == "commit_twice":
    write(read(args["IN"], "orders_source"), args["OUT"], "orders_sink")
    job.commit()
elif case == "write_after_commit":
    a = read(args["IN"], "orders_source")
    write(a, args["OUT"], "orders_sink")
    job.commit()
    write(a, args["OTHER"], "late_sink")
else:
    write(read(args["IN"], "orders_source"), args["OUT"], "orders_sink")
job.commit()
print("COMMITTED", flush=True)
`

// attackWorld is a glueWorld running attackScript, with a second folder.
func attackWorld(t *testing.T) (*glueWorld, place) {
	t.Helper()
	w := newGlueWorld(t, local)
	if err := os.WriteFile(filepath.Join(w.dir, "script.py"), []byte(attackScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return w, newPlace(t, local, w.dir, "other")
}

func (w *glueWorld) attack(t *testing.T, other place, c string, extra ...string) result {
	t.Helper()
	a := []string{"--JOB_NAME", "sales", "--IN", w.in.loc(), "--OUT", w.out.loc(), "--OTHER", other.loc(), "--CASE", c,
		"--job-bookmark-option", "job-bookmark-enable"}
	return w.glue(t, nil, append(a, extra...)...)
}

// published counts the data files published under dir (recursively),
// _tidemark/ and other _ or . names left out.
func published(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p != dir && (strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// TestGlueCtxReusedIsRefused: issue #20 item 1. Two reads of two folders
// under one transformation_ctx, and two writes to two folders under one,
// are refused with exit 2 naming the ctx; nothing is published and the
// bookmark stays where it was (before, the second read was given the
// first read's files and the second write landed in the first's folder,
// exit 0).
func TestGlueCtxReusedIsRefused(t *testing.T) {
	w, other := attackWorld(t)
	w.land(t, "mon", 2, 1)
	other.put(t, "x/other.csv", []byte("order_id,product,amount\n900,p0,1.5\n"))
	for _, c := range []string{"reuse_read", "reuse_write"} {
		r := w.attack(t, other, c)
		if r.code != 2 || !strings.Contains(r.stderr, `transformation_ctx "orders_s`) || strings.Contains(r.stderr, "Traceback") {
			t.Errorf("%s: got %v, want exit 2 naming the ctx, without a traceback", c, r)
		}
		if n := published(t, w.out.mirror(t)) + published(t, filepath.Join(w.dir, "other", "other", "y")); n != 0 {
			t.Errorf("%s: %d files published, want none", c, n)
		}
		if v := w.bookmark(t)["version"]; v != float64(0) {
			t.Errorf("%s: the bookmark is at version %v, want 0", c, v)
		}
	}
}

// TestGlueWithoutPyspark: issue #24. A Python without pyspark (here one
// started with -S, so its site-packages are not read) makes glue run exit
// 2 saying what to install, not a traceback; with SPARK_REMOTE it names
// the Spark Connect client.
func TestGlueWithoutPyspark(t *testing.T) {
	w := newGlueWorld(t, local)
	bare := filepath.Join(w.dir, "bare-python")
	if err := os.WriteFile(bare, []byte("#!/bin/sh\nexec "+w.python+" -S \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.python = bare
	w.land(t, "mon", 1, 1)
	for _, env := range [][]string{nil, {"SPARK_REMOTE=sc://127.0.0.1:1"}} {
		r := w.glue(t, env, w.args("job-bookmark-enable", "none")...)
		want := "pip install 'pyspark==4.0.*'"
		if env != nil {
			want = "pip install 'pyspark[connect]==4.0.*'"
		}
		if r.code != 2 || !strings.Contains(r.stderr, "pyspark is not installed for ") || !strings.Contains(r.stderr, want) ||
			strings.Contains(r.stderr, "Traceback") || !strings.Contains(r.stderr, "before it began a run") {
			t.Errorf("%v: got %v, want exit 2 saying %s, no traceback, and that no run began", env, r, want)
		}
	}
}

// TestGlueCountsRowsRead: issue #20 item 17. A Glue run that read 1,001
// rows records 1,001 rows read for its source (runs, and from there the
// dashboard and /metrics), not 0, and prints tidemark run's summary; a
// source read without a ctx is counted too, under its made-up name.
func TestGlueCountsRowsRead(t *testing.T) {
	w, other := attackWorld(t)
	id := 1
	for f, n := range []int{500, 500, 1} {
		var b strings.Builder
		b.WriteString("order_id,product,amount\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "%d,p%d,%d.25\n", id, id%3, id)
			id++
		}
		w.in.put(t, fmt.Sprintf("mon/orders-%d.csv", f), []byte(b.String()))
	}
	r := w.attack(t, other, "plain")
	if r.code != 0 {
		t.Fatalf("the run: %v", r)
	}
	wantIDs(t, w.ids(t), id, "after the run")
	src := w.runs(t)[0]["sources"].(map[string]any)["orders_source"].(map[string]any)
	if src["rows"] != float64(1001) || src["files"] != float64(3) {
		t.Errorf("runs: source orders_source %v, want 3 files and 1001 rows read", src)
	}
	for _, want := range []string{"run ", ": succeeded (mode enable", "  source orders_source: 3 files, ", ", 1001 rows\n", "  sink orders_sink: "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("glue run's stderr lacks the run summary's %q:\n%s", want, r.stderr)
		}
	}
	r = w.attack(t, other, "no_ctx")
	if r.code != 0 {
		t.Fatalf("the run without a ctx: %v", r)
	}
	src, _ = w.runs(t)[0]["sources"].(map[string]any)["unbookmarked_1"].(map[string]any)
	if src == nil || src["rows"] != float64(1001) {
		t.Errorf("runs: a source read without a ctx recorded %v, want 1001 rows read", w.runs(t)[0]["sources"])
	}
}

// TestGlueHostileScripts: issue #20's pass over the Glue face, a script
// at a time: each case's exit code, what was published and where the
// bookmark is.
func TestGlueHostileScripts(t *testing.T) {
	for _, c := range []struct {
		name      string
		code      int    // want; -1: any non-zero
		stderr    string // want in stderr
		published bool   // the orders are in OUT, once
		version   float64
	}{
		{"same_ctx_read_write", 0, "", true, 1},
		{"sink_in_source", 2, "", false, 0},
		{"sink_in_later_source", 2, "outer_source", false, 0},
		{"raise_after_write", 1, "the script's own failure after its write", false, 0},
		{"no_commit", 1, "without job.commit()", false, 0},
		{"commit_twice", 0, "", true, 1},
		{"write_after_commit", -1, "after job.commit() published run", true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, other := attackWorld(t)
			next := w.land(t, "mon", 2, 1)
			r := w.attack(t, other, c.name)
			if c.code >= 0 && r.code != c.code || c.code < 0 && r.code == 0 || !strings.Contains(r.stderr, c.stderr) {
				t.Errorf("got %v, want exit %d and %q", r, c.code, c.stderr)
			}
			if strings.Contains(r.stderr, "Traceback") != (c.name == "raise_after_write") {
				t.Errorf("a traceback where none is wanted, or none where the script raised:\n%s", r.stderr)
			}
			if c.published {
				wantIDs(t, w.ids(t), next, "after the run")
			} else if n := published(t, w.out.mirror(t)) + published(t, filepath.Join(w.in.mirror(t), "out")); n != 0 {
				t.Errorf("%d files published, want none", n)
			}
			if n := published(t, filepath.Join(w.dir, "other", "other")); n != 0 {
				t.Errorf("%d files published in OTHER, want none", n)
			}
			if v := w.version(t); v != c.version {
				t.Errorf("the bookmark is at version %v, want %v", v, c.version)
			}
		})
	}
}

// version is the job's bookmark version: 0 for a job with no state yet (a
// run refused before it was recorded is no run, issue #19 item 3).
func (w *glueWorld) version(t *testing.T) float64 {
	t.Helper()
	r := tidemark(t, w.dir, w.env, "bookmark", "show", "sales", "--state", filepath.Join(w.dir, ".tidemark", "state.db"), "--json")
	if r.code == 2 && strings.Contains(r.stderr, `job "sales" has no state`) {
		return 0
	}
	v, _ := w.bookmark(t)["version"].(float64)
	return v
}

// typesCSV has the values a Glue read and write must keep as tidemark
// run on DuckDB keeps them: timestamps to the microsecond without a zone
// (ts) and in a column where some have one (tz), decimals, NULLs, an empty
// quoted string, unicode, and a doubled quote inside a quoted field.
const typesCSV = `id,ts,tz,amount,note
1,2026-12-07 10:11:12.123456,2026-12-07 10:11:12.123456,12345.6789,""
2,2026-12-07 23:59:59.000001,2026-12-07T10:11:12.5+02:00,0.1,
3,,,-7.25,"naïve – 日本 🎉"
4,2026-01-01 00:00:00,2026-01-01 00:00:00,,"a,b ""q"""
`

// TestGlueTypesMatchDuckDB: the same CSV copied to Parquet, CSV and JSON
// by a Glue script (on a JVM in New York's time zone) and by the same job
// file on DuckDB holds the same values, read back with DuckDB. Before: the
// timestamps moved by the JVM's zone, CSV and JSON output lost their
// microseconds, and a doubled quote kept its quotes.
func TestGlueTypesMatchDuckDB(t *testing.T) {
	w := newGlueWorld(t, local)
	w.in.put(t, "t.csv", []byte(typesCSV))
	script := `import sys
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
args = getResolvedOptions(sys.argv, ["JOB_NAME", "IN", "OUT"])
gc = GlueContext(SparkContext.getOrCreate())
job = Job(gc)
job.init(args["JOB_NAME"], args)
f = gc.create_dynamic_frame.from_options(connection_type="s3", connection_options={"paths": [args["IN"]]},
    format="csv", format_options={"withHeader": True}, transformation_ctx="orders_source")
for fmt in ("parquet", "csv", "json"):
    gc.write_dynamic_frame.from_options(frame=f, connection_type="s3",
        connection_options={"path": args["OUT"] + "/" + fmt}, format=fmt, transformation_ctx=fmt)
job.commit()
`
	if err := os.WriteFile(filepath.Join(w.dir, "script.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	glueOut, duckOut := filepath.Join(w.dir, "glue"), filepath.Join(w.dir, "duck")
	if r := w.glue(t, []string{"TZ=America/New_York"}, "--JOB_NAME", "sales", "--IN", w.in.loc(), "--OUT", glueOut,
		"--job-bookmark-option", "job-bookmark-enable"); r.code != 0 {
		t.Fatalf("glue run: %v", r)
	}
	jobFile := fmt.Sprintf("job: types\nsources:\n  - {ctx: orders_source, path: %s, format: csv, options: {header: true}}\nsinks:\n", w.in.loc())
	for _, f := range []string{"parquet", "csv", "json"} {
		jobFile += fmt.Sprintf("  - {ctx: %s, from: orders_source, path: %s/%s, format: %s}\n", f, duckOut, f, f)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "types.yaml"), []byte(jobFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := tidemark(t, w.dir, nil, "run", "types.yaml"); r.code != 0 {
		t.Fatalf("tidemark run: %v", r)
	}
	read := func(dir, format string) []string {
		t.Helper()
		from := map[string]string{
			"parquet": "read_parquet('%s/*.parquet')",
			"csv":     "read_csv('%s/*.csv', header = true, all_varchar = true)",
			"json":    "read_json('%s/*.json', columns = {id: 'BIGINT', ts: 'VARCHAR', tz: 'VARCHAR', amount: 'DOUBLE', note: 'VARCHAR'})",
		}[format]
		q := `SELECT CAST(id AS BIGINT), epoch_us(CAST(CAST(ts AS VARCHAR) AS TIMESTAMP)),
			epoch_us(CAST(CAST(tz AS VARCHAR) || CASE WHEN CAST(tz AS VARCHAR) ~ '.*([+-]\d\d(:\d\d)?|Z)$' THEN '' ELSE '+00' END AS TIMESTAMPTZ)),
			CAST(amount AS DOUBLE), note FROM ` + fmt.Sprintf(from, dir) + ` ORDER BY 1`
		rows, err := duck.Query(q)
		if err != nil {
			t.Fatalf("reading %s: %v", dir, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id int64
			var ts, tz *int64
			var amount *float64
			var note *string
			if err := rows.Scan(&id, &ts, &tz, &amount, &note); err != nil {
				t.Fatal(err)
			}
			show := func(p any) string {
				switch v := p.(type) {
				case *int64:
					if v != nil {
						return fmt.Sprint(*v)
					}
				case *float64:
					if v != nil {
						return fmt.Sprint(*v)
					}
				case *string:
					if v != nil {
						return fmt.Sprintf("%q", *v)
					}
				}
				return "NULL"
			}
			out = append(out, fmt.Sprintf("%d %s %s %s %s", id, show(ts), show(tz), show(amount), show(note)))
		}
		return out
	}
	for _, f := range []string{"parquet", "csv", "json"} {
		got, want := read(filepath.Join(glueOut, f), f), read(filepath.Join(duckOut, f), f)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: Glue wrote\n%s\nDuckDB wrote\n%s", f, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
