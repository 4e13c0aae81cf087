"""How a planned source is read (awsglue.context._read), on a real local
SparkSession: a CSV header is the file's own, a first run's frame has the
types every later run reads with."""

import os
import shutil
import tempfile
import unittest

from awsglue.context import _read
from awsglue._types import schema_of


class ReadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from pyspark.sql import SparkSession

        cls.spark = (SparkSession.builder.master("local[1]").appName("awsglue-read-tests")
                     .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1").getOrCreate())

    @classmethod
    def tearDownClass(cls):
        cls.spark.stop()

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def put(self, name, text):
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return {"location": path, "key": name, "size": len(text)}

    def resp(self, files, schema=None, header=True):
        return {"format": "csv", "options": {"header": header}, "files": files, "schema": schema}

    def test_reordered_header_is_refused_not_read_by_position(self):
        # A later run reads with the recorded schema; a file whose header
        # names the columns in another order must not have its values put
        # under the wrong names.
        schema = [{"name": "order_id", "type": "BIGINT"}, {"name": "product", "type": "VARCHAR"},
                  {"name": "amount", "type": "DOUBLE"}]
        f = self.put("tue/r.csv", "amount,product,order_id\n100,p1,7\n200,p2,8\n")
        try:
            rows = [tuple(r) for r in _read(self.spark, self.resp([f], schema)).orderBy("order_id").collect()]
        except Exception as e:  # the read fails, naming the header's mismatch
            self.assertIn("header", str(e).lower())
            return
        self.assertEqual(rows, [(7, "p1", 100.0), (8, "p2", 200.0)], "values read by position under a reordered header")

    def test_reordered_header_on_a_first_run(self):
        a = self.put("mon/a.csv", "order_id,product,amount\n1,p1,1.5\n")
        b = self.put("mon/b.csv", "amount,product,order_id\n100,p2,7\n")
        try:
            rows = [tuple(r) for r in _read(self.spark, self.resp([a, b])).orderBy("order_id").collect()]
        except Exception as e:
            self.assertIn("header", str(e).lower())
            return
        self.assertEqual(rows, [(1, "p1", 1.5), (7, "p2", 100.0)], "values read by position under a reordered header")

    def test_first_run_types_are_the_recorded_ones(self):
        # The first run infers (order_id int); what it records, and what
        # every later run then reads with, is BIGINT: the first run's frame
        # must be BIGINT too, or the sink holds INT32 and INT64 files of one
        # column, which Spark cannot read as one table.
        f = self.put("mon/a.csv", "order_id,product,amount\n1,p1,1.5\n2,p2,2.5\n")
        first = _read(self.spark, self.resp([f]))
        recorded = schema_of(first, widen=True)
        self.assertEqual(schema_of(first), recorded, "the first run's frame differs from what it records")
        g = self.put("tue/b.csv", "order_id,product,amount\n3,p1,3.5\n")
        later = _read(self.spark, self.resp([g], recorded))
        self.assertEqual(first.schema, later.schema)

    def test_headerless_first_and_later_runs_agree(self):
        f = self.put("mon/a.csv", "1,p1\n2,p2\n")
        first = _read(self.spark, self.resp([f], header=False))
        self.assertEqual(first.columns, ["col0", "col1"])
        g = self.put("tue/b.csv", "3,p1\n")
        later = _read(self.spark, self.resp([g], schema_of(first, widen=True), header=False))
        self.assertEqual(first.schema, later.schema)
        self.assertEqual([tuple(r) for r in later.collect()], [(3, "p1")])

    def test_partition_keys_first_run(self):
        a = self.put("day=mon/a.csv", "order_id,product\n1,p1\n")
        b = self.put("day=tue/b.csv", "order_id,product\n2,p2\n")
        for x, v in ((a, "mon"), (b, "tue")):
            x["partition"] = {"day": v}
        df = _read(self.spark, self.resp([a, b]))
        self.assertEqual(schema_of(df), [{"name": "order_id", "type": "BIGINT"}, {"name": "product", "type": "VARCHAR"},
                                         {"name": "day", "type": "VARCHAR"}])
        self.assertEqual(sorted(tuple(r) for r in df.collect()), [(1, "p1", "mon"), (2, "p2", "tue")])

    def test_partition_columns_in_folder_order(self):
        # Glue appends a frame's partition columns as its folders nest them,
        # not sorted by name.
        a = self.put("year=2026/month=01/a.csv", "order_id\n1\n")
        b = self.put("year=2026/month=02/b.csv", "order_id\n2\n")
        for x, m in ((a, "01"), (b, "02")):
            x["partition"] = {"year": "2026", "month": m}
        df = _read(self.spark, self.resp([a, b]))
        self.assertEqual(df.columns, ["order_id", "year", "month"])
        self.assertEqual(sorted(tuple(r) for r in df.collect()), [(1, "2026", "01"), (2, "2026", "02")])

    def test_json_columns_in_file_order(self):
        # A first run's JSON columns come in the order the file writes its
        # keys, as tidemark run reads them (Spark's inference sorts them by
        # name: a CSV sink's columns came out in another order).
        f = self.put("a.json", '{"id": 1, "zeta": "z", "alpha": 2.5}\n{"id": 2, "beta": true, "zeta": "y"}\n')
        df = _read(self.spark, {"format": "json", "options": {}, "files": [f], "schema": None})
        self.assertEqual(df.columns, ["id", "zeta", "alpha", "beta"])
        self.assertEqual(sorted(tuple(r) for r in df.collect()), [(1, "z", 2.5, None), (2, "y", None, True)])

    def test_partition_null_folder(self):
        # Hive's folder of NULLs (what Spark and DuckDB write a NULL
        # partition value as) reads as NULL, not as its name.
        a = self.put("product=__HIVE_DEFAULT_PARTITION__/a.csv", "order_id\n1\n")
        b = self.put("product=p1/b.csv", "order_id\n2\n")
        a["partition"], b["partition"] = {"product": "__HIVE_DEFAULT_PARTITION__"}, {"product": "p1"}
        df = _read(self.spark, self.resp([a, b]))
        self.assertEqual(sorted(tuple(r) for r in df.collect()), [(1, None), (2, "p1")])

    def test_first_run_bad_records_fail(self):
        # A first run reads as later runs do (FAILFAST): a malformed JSON
        # line is no _corrupt_record column in the output, a CSV row with a
        # field too many does not lose it.
        j = self.put("mon/a.json", '{"order_id":1,"product":"a"}\n{"order_id":2,"product\n')
        with self.assertRaises(Exception):
            _read(self.spark, {"format": "json", "options": {}, "files": [j], "schema": None}).collect()
        c = self.put("mon/a.csv", "order_id,product\n1,a\n2,b,extra\n")
        with self.assertRaises(Exception):
            _read(self.spark, self.resp([c])).collect()

    def test_json_new_field_is_not_dropped(self):
        # A later run reads with the recorded schema: a field the schema
        # lacks must fail the run (tidemark's schema_evolution default),
        # not vanish from the output.
        schema = [{"name": "order_id", "type": "BIGINT"}, {"name": "product", "type": "VARCHAR"}]
        f = self.put("tue/b.json", '{"order_id":2,"product":"b","discount":5}\n')
        resp = {"format": "json", "options": {}, "files": [f], "schema": schema}
        try:
            cols = _read(self.spark, resp).columns
        except Exception as e:
            self.assertIn("discount", str(e))
            self.assertIn("b.json", str(e))
            return
        self.assertIn("discount", cols, "a new JSON field was dropped")

    def test_column_named_like_partition_folder_is_refused(self):
        # region=eu/ holds a file with its own region column: neither value
        # may replace the other without a word, on a first run or a later one.
        csv = self.put("in/region=eu/a.csv", "id,region\n1,us\n")
        csv["partition"] = {"region": "eu"}
        js = self.put("in/region=eu/a.json", '{"id":1,"region":"us"}\n')
        js["partition"] = {"region": "eu"}
        pq = os.path.join(self.dir, "pq")
        self.spark.createDataFrame([(1, "us")], "id bigint, region string").coalesce(1).write.parquet(pq)
        name = [n for n in os.listdir(pq) if n.endswith(".parquet")][0]
        os.makedirs(os.path.join(self.dir, "p", "region=eu"))
        loc = os.path.join(self.dir, "p", "region=eu", name)
        os.rename(os.path.join(pq, name), loc)
        par = {"location": loc, "key": "region=eu/" + name, "size": 1, "partition": {"region": "eu"}}
        recorded = [{"name": "id", "type": "BIGINT"}, {"name": "region", "type": "VARCHAR"}]
        for fmt, f, schema in (("csv", csv, None), ("json", js, None), ("json", js, recorded), ("parquet", par, None),
                               ("parquet", par, recorded)):
            with self.subTest(fmt=fmt, recorded=schema is not None):
                resp = {"format": fmt, "options": {"header": True} if fmt == "csv" else {}, "files": [f],
                        "schema": schema, "ctx": "src"}
                try:
                    rows = [r.asDict() for r in _read(self.spark, resp).collect()]
                except Exception as e:
                    self.assertIn("region", str(e))
                    continue
                self.fail("a column named like its partition folder was read: %s" % rows)

    def test_json_field_in_another_case_is_not_dropped(self):
        schema = [{"name": "order_id", "type": "BIGINT"}, {"name": "amount", "type": "BIGINT"}]
        f = self.put("tue/c.json", '{"order_id":3,"Amount":20}\n')
        resp = {"format": "json", "options": {}, "files": [f], "schema": schema}
        try:
            rows = [r.asDict() for r in _read(self.spark, resp).collect()]
        except Exception as e:
            self.assertIn("Amount", str(e))
            self.assertIn("c.json", str(e))
            return
        self.assertEqual(rows, [{"order_id": 3, "amount": 20}], "the value of a field spelled Amount was lost")

    def test_headerless_extra_field_is_not_dropped(self):
        schema = [{"name": "col0", "type": "BIGINT"}, {"name": "col1", "type": "VARCHAR"}]
        f = self.put("tue/b.csv", "3,p1,9\n")
        try:
            rows = [tuple(r) for r in _read(self.spark, self.resp([f], schema, header=False)).collect()]
        except Exception:
            return
        self.assertNotEqual(rows, [(3, "p1")], "a header-less CSV's extra field was dropped")

    def test_parquet_files_of_different_columns(self):
        a = os.path.join(self.dir, "a.parquet")
        b = os.path.join(self.dir, "b.parquet")
        self.spark.createDataFrame([(1, "p")], "order_id bigint, product string").coalesce(1).write.parquet(a)
        self.spark.createDataFrame([(2, "q", 5)], "order_id bigint, product string, discount bigint").coalesce(1).write.parquet(b)
        files = [{"location": os.path.join(d, n), "key": n, "size": 1} for d in (a, b) for n in sorted(os.listdir(d))
                 if n.endswith(".parquet")]
        df = _read(self.spark, {"format": "parquet", "options": {}, "files": files, "schema": None})
        self.assertIn("discount", df.columns, "a column of one of the run's Parquet files was dropped")
        df = _read(self.spark, {"format": "parquet", "options": {}, "files": list(reversed(files)), "schema": None})
        self.assertIn("discount", df.columns, "a column of one of the run's Parquet files was dropped")


if __name__ == "__main__":
    unittest.main()
