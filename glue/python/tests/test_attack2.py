"""The second attack round on the Glue face (issue #20): transforms whose
values came out changed or whose fields were silently kept or added, on a
real local SparkSession."""

import unittest

from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame


class Attack2Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from pyspark.sql import SparkSession

        cls.spark = (SparkSession.builder.master("local[1]").appName("awsglue-attack2-tests")
                     .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1").getOrCreate())
        cls.df = cls.spark.createDataFrame(
            [(1, "2024-01-01 10:00:00", ("x", "7"))], "id bigint, ts string, s struct<a:string,b:string>")

    @classmethod
    def tearDownClass(cls):
        cls.spark.stop()

    def frame(self, gc=None):
        return DynamicFrame.fromDF(self.df, gc, "orders")

    def test_cast_to_timestamp_is_utc_as_on_glue(self):
        # A JVM in New York: Glue's runtime is UTC, so the text 10:00 is 10:00Z;
        # the session's zone made it 15:00Z (written as such, exit 0).
        old = self.spark.conf.get("spark.sql.session.timeZone")
        self.spark.conf.set("spark.sql.session.timeZone", "America/New_York")
        self.addCleanup(self.spark.conf.set, "spark.sql.session.timeZone", old)
        from pyspark.sql import functions as F

        gc = GlueContext(self.spark)
        for f in (self.frame(gc).apply_mapping([("ts", "string", "ts", "timestamp")]),
                  self.frame(gc).resolveChoice(specs=[("ts", "cast:timestamp")])):
            got = f.toDF().select(F.unix_timestamp("ts")).first()[0]
            self.assertEqual(got, 1704103200, "2024-01-01 10:00:00 read as 10:00 UTC")

    def test_resolve_choice_on_a_nested_field_casts_the_field(self):
        # It added a top-level column named "s.b" and left s.b a string.
        f = self.frame().resolveChoice(specs=[("s.b", "cast:int")])
        self.assertEqual(f.toDF().columns, ["id", "ts", "s"])
        self.assertEqual(f.toDF().schema["s"].dataType.simpleString(), "struct<a:string,b:int>")
        self.assertEqual(f.toDF().first()["s"]["b"], 7)

    def test_drop_fields_drops_a_nested_field(self):
        # It kept s.a (Spark's drop ignores a name it lacks), exit 0.
        f = self.frame().drop_fields(["s.a"])
        self.assertEqual(f.toDF().schema["s"].dataType.simpleString(), "struct<b:string>")

    def test_drop_null_fields_and_join_are_transforms(self):
        # from awsglue.transforms import * gave no DropNullFields or Join: the
        # script died with a NameError traceback.
        import awsglue.transforms as T

        ns = {}
        exec("from awsglue.transforms import *", ns)
        for name in ("DropNullFields", "Join", "Relationalize", "SplitFields", "Map", "Union", "Spigot"):
            self.assertTrue(name in ns, "awsglue.transforms lacks %s" % name)
        df = self.spark.createDataFrame([(1, None, "a"), (2, None, None)], "id bigint, gone string, kept string")
        f = T.DropNullFields.apply(frame=DynamicFrame.fromDF(df, None, "x"))
        self.assertEqual(f.toDF().columns, ["id", "kept"])
        self.assertEqual(sorted(tuple(r) for r in f.toDF().collect()), [(1, "a"), (2, None)])

        orders = DynamicFrame.fromDF(self.spark.createDataFrame(
            [(10, 1, 5), (11, 2, 7), (12, 3, 9)], "order_id bigint, customer_id bigint, amount bigint"), None, "o")
        people = DynamicFrame.fromDF(self.spark.createDataFrame(
            [(1, "ann"), (2, "bob")], "id bigint, name string"), None, "p")
        j = T.Join.apply(frame1=orders, frame2=people, keys1=["customer_id"], keys2=["id"])
        self.assertEqual(sorted(j.toDF().columns), ["amount", "customer_id", "id", "name", "order_id"])
        got = sorted((r["order_id"], r["name"], r["amount"]) for r in j.toDF().collect())
        self.assertEqual(got, [(10, "ann", 5), (11, "bob", 7)])
        same = orders.join(["customer_id"], ["customer_id"],
                           DynamicFrame.fromDF(people.toDF().withColumnRenamed("id", "customer_id"), None, "p"))
        self.assertEqual(sorted(same.toDF().columns), ["amount", "customer_id", "name", "order_id"])
        # A field both frames have, other than a key, would keep one frame's
        # values under the name: refused, naming it.
        with self.assertRaisesRegex(ValueError, "amount"):
            T.Join.apply(orders, DynamicFrame.fromDF(self.spark.createDataFrame(
                [(1, 3)], "id bigint, amount bigint"), None, "q"), ["customer_id"], ["id"]).toDF()
        with self.assertRaisesRegex(NotImplementedError, "Relationalize"):
            T.Relationalize.apply(frame=orders, staging_path="/tmp/x", name="root")

    def test_apply_mapping_decimal_is_glues_decimal_10_2(self):
        # Glue's "decimal" is DecimalType(10, 2); Spark's is (10, 0): 12.34 came
        # out as 12, exit 0.
        from decimal import Decimal

        df = self.spark.createDataFrame([("12.34",)], "amount string")
        f = DynamicFrame.fromDF(df, None, "x")
        for g in (f.apply_mapping([("amount", "string", "amount", "decimal")]),
                  f.resolveChoice(specs=[("amount", "cast:decimal")])):
            self.assertEqual(g.toDF().first()[0], Decimal("12.34"))
        g = f.apply_mapping([("amount", "string", "amount", "decimal(12,4)")])
        self.assertEqual(g.toDF().first()[0], Decimal("12.3400"))

    def test_apply_mapping_to_a_dotted_target_makes_a_struct(self):
        # Glue nests a target a.b as field b of struct a; it made a column
        # named "a.b".
        f = self.frame().apply_mapping([("id", "long", "id", "long"), ("s.b", "string", "t.b", "int"),
                                        ("s.a", "string", "t.a", "string"), ("ts", "string", "u.v.w", "string")])
        df = f.toDF()
        self.assertEqual(df.columns, ["id", "t", "u"])
        self.assertEqual(df.schema["t"].dataType.simpleString(), "struct<b:int,a:string>")
        self.assertEqual(df.schema["u"].dataType.simpleString(), "struct<v:struct<w:string>>")
        row = df.first()
        self.assertEqual((row["t"]["b"], row["t"]["a"], row["u"]["v"]["w"]), (7, "x", "2024-01-01 10:00:00"))

    def test_a_planned_file_whose_name_looks_like_a_glob_is_read_itself(self):
        # Spark globs the paths it is given: o[1].csv read o1.csv (a row read
        # twice, one lost) and o{a,b}.csv read oa.csv; exit 0.
        import os
        import shutil
        import tempfile

        from awsglue.context import _read

        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        files = []
        for name, text in (("o1.csv", "id,n\n1,a\n"), ("o[1].csv", "id,n\n2,b\n"), ("o{a,b}.csv", "id,n\n3,c\n"),
                           ("oa.csv", "id,n\n4,d\n"), ("o*.csv", "id,n\n5,e\n"), ("o?.csv", "id,n\n6,f\n")):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
            if name not in ("o1.csv", "oa.csv"):
                files.append({"location": os.path.join(d, name), "key": name, "size": len(text)})
        for schema in (None, [{"name": "id", "type": "BIGINT"}, {"name": "n", "type": "VARCHAR"}]):
            resp = {"format": "csv", "options": {"header": True}, "files": files, "schema": schema}
            self.assertEqual(sorted(r["id"] for r in _read(self.spark, resp).collect()), [2, 3, 5, 6])
        jfiles = []
        for name, text in (("j1.json", '{"id": 1}\n'), ("j[1].json", '{"id": 2}\n')):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
            jfiles.append({"location": os.path.join(d, name), "key": name, "size": len(text)})
        for schema in (None, [{"name": "id", "type": "BIGINT"}]):
            resp = {"format": "json", "options": {}, "files": jfiles[1:], "schema": schema}
            self.assertEqual([r["id"] for r in _read(self.spark, resp).collect()], [2])

    def test_select_fields_keeps_a_nested_field_in_its_struct(self):
        # select_fields(["s.a"]) gave a top-level column a (beside a column a
        # the frame may have); Glue keeps it as field a of struct s.
        f = self.frame().select_fields(["id", "s.a"])
        self.assertEqual(f.toDF().columns, ["id", "s"])
        self.assertEqual(f.toDF().schema["s"].dataType.simpleString(), "struct<a:string>")
        self.assertEqual(f.toDF().first()["s"]["a"], "x")


if __name__ == "__main__":
    unittest.main()
