package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attack2Script is a Glue-style script for the second attack round on the
// Glue face (issue #20): --CASE two_jobs makes a second Job object for the
// run; --CASE mapping casts with apply_mapping and writes CSV.
const attack2Script = `import sys
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions

args = getResolvedOptions(sys.argv, ["JOB_NAME", "IN", "OUT", "CASE"])
glue_context = GlueContext(SparkContext.getOrCreate())
job = Job(glue_context)
job.init(args["JOB_NAME"], args)
if args["CASE"] == "two_jobs":
    Job(glue_context).init(args["JOB_NAME"], args)
src = glue_context.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["IN"]], "recurse": True},
    format="csv", format_options={"withHeader": True}, transformation_ctx="orders_source")
fmt = "parquet"
if args["CASE"] == "mapping":
    src = ApplyMapping.apply(frame=src, mappings=[
        ("order_id", "long", "order_id", "long"), ("at", "string", "at", "timestamp"),
        ("amount", "string", "amount", "decimal")])
    fmt = "csv"
glue_context.write_dynamic_frame.from_options(
    frame=src, connection_type="s3", connection_options={"path": args["OUT"]},
    format=fmt, transformation_ctx="orders_sink")
job.commit()
`

func attack2World(t *testing.T) *glueWorld {
	t.Helper()
	w := newGlueWorld(t, local)
	if err := os.WriteFile(filepath.Join(w.dir, "script.py"), []byte(attack2Script), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *glueWorld) attack2(t *testing.T, env []string, c string) result {
	t.Helper()
	return w.glue(t, env, "--JOB_NAME", "sales", "--IN", w.in.loc(), "--OUT", w.out.loc(), "--CASE", c,
		"--job-bookmark-option", "job-bookmark-enable")
}

// TestGlueSecondJobObjectCountsRows: a second Job(glue_context).init() of
// the run (the same run) took over the reads, so job.commit() on the first
// counted none: runs showed 0 rows read.
func TestGlueSecondJobObjectCountsRows(t *testing.T) {
	w := attack2World(t)
	w.land(t, "mon", 2, 1)
	if r := w.attack2(t, nil, "two_jobs"); r.code != 0 {
		t.Fatalf("the run: %v", r)
	}
	wantIDs(t, w.ids(t), 11, "after the run")
	src := w.runs(t)[0]["sources"].(map[string]any)["orders_source"].(map[string]any)
	if src["rows"] != float64(10) || src["files"] != float64(2) {
		t.Errorf("runs: source orders_source %v, want 2 files and 10 rows read", src)
	}
}

// TestGlueApplyMappingValuesInNewYork: apply_mapping's casts in a JVM whose
// zone is New York give Glue's values (its runtime is UTC): a zone-less
// 10:00 is written as 10:00Z (it was 15:00Z), and "decimal" keeps the
// cents (it was DECIMAL(10,0): 12.34 written as 12).
func TestGlueApplyMappingValuesInNewYork(t *testing.T) {
	w := attack2World(t)
	w.in.put(t, "mon/a.csv", []byte("order_id,at,amount\n1,2024-01-01 10:00:00,12.34\n2,2024-01-01 23:30:00.123456,7\n"))
	if r := w.attack2(t, []string{"TZ=America/New_York"}, "mapping"); r.code != 0 {
		t.Fatalf("the run: %v", r)
	}
	files, _ := filepath.Glob(filepath.Join(w.out.mirror(t), "*.csv"))
	if len(files) != 1 {
		t.Fatalf("published %v, want one CSV file", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{"order_id,at,amount", "1,2024-01-01 10:00:00.000000Z,12.34", "2,2024-01-01 23:30:00.123456Z,7.00"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("published CSV:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
