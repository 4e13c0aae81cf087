package glue

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestPythonPackage runs the awsglue package's own unit tests
// (glue/python/tests, Python's unittest) with the pyspark the test script
// installs: DynamicFrame's methods on a local SparkSession,
// getResolvedOptions, and the lazy Spark start under tidemark glue run.
func TestPythonPackage(t *testing.T) {
	python := os.Getenv("TIDEMARK_TEST_SPARK_PYTHON")
	if python == "" {
		if os.Getenv("TIDEMARK_SKIP_SPARK") == "1" {
			t.Skip("TIDEMARK_SKIP_SPARK=1: no pyspark")
		}
		t.Fatal("TIDEMARK_TEST_SPARK_PYTHON is not set: run the tests through scripts/test.sh, which makes a pyspark venv")
	}
	dir, err := filepath.Abs("python")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "unittest", "discover", "-v", "-s", "tests")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1",
		"PYSPARK_SUBMIT_ARGS=--master local[1] --conf spark.ui.enabled=false --driver-memory 512m pyspark-shell")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python -m unittest in glue/python: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
