"""Every DynamicFrame method and transform tidemark's awsglue has, on a real
local SparkSession."""

import contextlib
import io
import unittest

from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms import ApplyMapping, DropFields, Filter, RenameField, ResolveChoice, SelectFields


class DynamicFrameTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from pyspark.sql import SparkSession

        cls.spark = (SparkSession.builder.master("local[1]").appName("awsglue-tests")
                     .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1").getOrCreate())
        cls.df = cls.spark.createDataFrame(
            [(1, "a", "1.5"), (2, "b", "2.5"), (3, "c", "n/a")], "id bigint, name string, amount string")

    @classmethod
    def tearDownClass(cls):
        cls.spark.stop()

    def frame(self):
        return DynamicFrame.fromDF(self.df, None, "orders")

    def rows(self, frame):
        return [tuple(r) for r in frame.toDF().orderBy("id" if "id" in frame.toDF().columns else frame.toDF().columns[0]).collect()]

    def test_todf_fromdf_count(self):
        f = self.frame()
        self.assertIs(f.toDF(), self.df)
        self.assertEqual(f.count(), 3)
        self.assertEqual(f.name, "orders")

    def test_apply_mapping(self):
        f = self.frame().apply_mapping([("id", "long", "order_id", "string"), ("amount", "string", "amount", "double")])
        self.assertEqual(f.toDF().columns, ["order_id", "amount"])
        self.assertEqual(dict(f.toDF().dtypes), {"order_id": "string", "amount": "double"})
        got = sorted(tuple(r) for r in f.toDF().collect())
        self.assertEqual(got, [("1", 1.5), ("2", 2.5), ("3", None)])
        g = ApplyMapping.apply(frame=self.frame(), mappings=[("name", "string", "n", "string")])
        self.assertEqual(g.toDF().columns, ["n"])
        with self.assertRaises(ValueError):
            self.frame().apply_mapping([("id", "long")])

    def test_resolve_choice(self):
        f = self.frame().resolveChoice(specs=[("id", "cast:string"), ("amount", "project:double")])
        self.assertEqual(dict(f.toDF().dtypes), {"id": "string", "name": "string", "amount": "double"})
        g = ResolveChoice.apply(frame=self.frame(), specs=[("name", "make_cols")])
        self.assertEqual(g.toDF().dtypes, self.df.dtypes)
        with self.assertRaises(ValueError):
            self.frame().resolveChoice(specs=[("id", "explode")])

    def test_drop_select_rename(self):
        self.assertEqual(self.frame().drop_fields(["amount"]).toDF().columns, ["id", "name"])
        self.assertEqual(DropFields.apply(frame=self.frame(), paths=["id", "name"]).toDF().columns, ["amount"])
        self.assertEqual(self.frame().select_fields(["name"]).toDF().columns, ["name"])
        self.assertEqual(SelectFields.apply(frame=self.frame(), paths=["id"]).toDF().columns, ["id"])
        self.assertEqual(self.frame().rename_field("name", "customer").toDF().columns, ["id", "customer", "amount"])
        self.assertEqual(RenameField.apply(frame=self.frame(), old_name="id", new_name="k").toDF().columns,
                         ["k", "name", "amount"])
        with self.assertRaises(ValueError):
            self.frame().rename_field("nope", "x")

    def test_filter(self):
        f = self.frame().filter(lambda r: r["id"] >= 2)
        self.assertEqual(self.rows(f), [(2, "b", "2.5"), (3, "c", "n/a")])
        g = Filter.apply(frame=self.frame(), f=lambda r: r.name == "a")
        self.assertEqual(self.rows(g), [(1, "a", "1.5")])

    def test_print_schema_and_show(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.frame().printSchema()
            self.frame().show(2)
        text = out.getvalue()
        self.assertIn("id: long", text)
        self.assertIn("only showing top 2 rows", text)

    def test_transforms_of_a_frame_that_read_nothing(self):
        # A first run over an empty folder reads nothing and knows no
        # schema: the script's transforms must still run (Glue's do), the
        # mapping giving its target columns, so the run ends with exit 0.
        from pyspark.sql.types import StructType

        empty = DynamicFrame.fromDF(self.spark.createDataFrame([], StructType([])), None, "orders")
        f = ApplyMapping.apply(frame=empty, mappings=[("id", "long", "order_id", "string"), ("amount", "string", "amount", "double")])
        self.assertEqual(f.toDF().dtypes, [("order_id", "string"), ("amount", "double")])
        self.assertEqual(f.count(), 0)
        for g in (ResolveChoice.apply(frame=empty, specs=[("id", "cast:long")]), SelectFields.apply(frame=empty, paths=["id"]),
                  RenameField.apply(frame=empty, old_name="id", new_name="k"), DropFields.apply(frame=empty, paths=["id"])):
            self.assertEqual(g.count(), 0)

    def test_unknown_method_names_itself(self):
        with self.assertRaises(NotImplementedError) as cm:
            self.frame().spigot("s3://x")
        self.assertIn("DynamicFrame.spigot", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
