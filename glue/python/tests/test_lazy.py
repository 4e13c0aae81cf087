"""Under tidemark glue run (python -m awsglue._launch), SparkContext.getOrCreate()
or SparkContext(), and GlueContext, start no Spark until the script needs it: a
run with nothing new, whose frames stay empty and untouched, starts no JVM."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

_SCRIPT = textwrap.dedent('''
    from pyspark import SparkContext as Real
    from pyspark.context import SparkContext
    from awsglue.context import GlueContext
    from awsglue.dynamicframe import DynamicFrame

    sc = __START__
    assert isinstance(sc, SparkContext), "the stand-in is not a SparkContext to the script"
    sc.setLogLevel("ERROR")
    assert SparkContext.getOrCreate() is sc, "a second getOrCreate before the start is the same stand-in"
    gc = GlueContext(sc)
    assert Real._active_spark_context is None, "GlueContext started Spark"

    made = []
    def make():
        made.append(1)
        return gc.spark_session.createDataFrame([], "order_id bigint, product string")
    frame = DynamicFrame._empty(make, gc, "orders_source")
    assert frame.count() == 0 and frame._untouched_empty()
    assert Real._active_spark_context is None and not made, "counting an empty source frame started Spark"
    print("LAZY", flush=True)

    assert frame.toDF().columns == ["order_id", "product"], frame.toDF().columns
    assert made == [1] and not frame._untouched_empty()
    assert Real._active_spark_context is not None, "toDF() did not start Spark"
    assert SparkContext.getOrCreate() is Real._active_spark_context, "getOrCreate after the start is the real context"
    assert sc.parallelize([1, 2, 3]).count() == 3, "the stand-in forwards to the real context"
    assert frame.apply_mapping([("order_id", "long", "id", "string")]).toDF().columns == ["id"]
    print("STARTED", sc.getConf().get("spark.master"), flush=True)
    sc.stop()
''')


class LazySparkUnderGlueRun(unittest.TestCase):
    def run_script(self, env=None, start="SparkContext.getOrCreate()"):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "script.py")
            with open(path, "w") as f:
                f.write(_SCRIPT.replace("__START__", start))
            e = dict(os.environ)
            e.pop("SPARK_REMOTE", None)
            e["PYSPARK_SUBMIT_ARGS"] = "--master local[1] --conf spark.ui.enabled=false --driver-memory 512m pyspark-shell"
            e.update(env or {})
            return subprocess.run([sys.executable, "-m", "awsglue._launch", path], env=e, capture_output=True,
                                  text=True, timeout=300)

    def test_no_spark_until_used(self):
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertIn("LAZY", r.stdout)
        self.assertIn("STARTED local[1]", r.stdout)

    def test_constructor_no_spark_until_used(self):
        # Glue's generated scripts start with sc = SparkContext().
        r = self.run_script(start="SparkContext()")
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertIn("LAZY", r.stdout)
        self.assertIn("STARTED local[1]", r.stdout)

    def test_spark_start_failure_surfaces_at_first_use(self):
        # With no Spark installation to start, the script gets as far as an
        # untouched empty frame and fails only where it needs the data.
        with tempfile.TemporaryDirectory() as empty:
            r = self.run_script({"SPARK_HOME": empty})
        self.assertIn("LAZY", r.stdout)
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("STARTED", r.stdout)


if __name__ == "__main__":
    unittest.main()
