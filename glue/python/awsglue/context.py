"""awsglue.context: GlueContext, whose readers plan tidemark sources and
whose writers stage tidemark sinks."""

import json
import os
import re

from . import _client
from ._types import ddl, schema_of
from .dynamicframe import DynamicFrame

_FORMATS = {"csv": "csv", "json": "json", "parquet": "parquet", "glueparquet": "parquet"}


def _format(fmt):
    f = (fmt or "").lower()
    if f not in _FORMATS:
        raise ValueError("awsglue: format %r is not supported by tidemark's awsglue (csv, json, parquet)" % fmt)
    return _FORMATS[f]


def _bool(v, default):
    if v is None:
        return default
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes")
    return bool(v)


class GlueContext:
    """Glue's GlueContext over a SparkContext (classic Spark), or over a
    SparkSession (Spark Connect, where there is no SparkContext)."""

    def __init__(self, sparkContext, **options):
        from pyspark.sql import SparkSession

        from ._launch import ConnectContext, LazyContext

        self._sc = sparkContext
        self._session = None
        if isinstance(sparkContext, SparkSession):
            self._session = sparkContext
        elif isinstance(sparkContext, ConnectContext):  # awsglue._launch's stand-in under Spark Connect
            self._session = sparkContext._session
        elif not isinstance(sparkContext, LazyContext):  # a real SparkContext
            self._session = SparkSession.builder.getOrCreate()
        # else awsglue._launch's lazy stand-in: the session starts on first use
        if self._session is not None:
            _utc(self._session)
        self._job = None
        self.create_dynamic_frame = DynamicFrameReader(self)
        self.write_dynamic_frame = DynamicFrameWriter(self)

    @property
    def spark_session(self):
        """The SparkSession, started on first use under tidemark glue run."""
        if self._session is None:
            from pyspark.sql import SparkSession

            self._sc._context()
            self._session = _utc(SparkSession.builder.getOrCreate())
        return self._session

    @property
    def sparkSession(self):
        return self.spark_session

    def get_logger(self):
        import logging

        return logging.getLogger("awsglue")

    def _reads(self):
        """The URL schemes the script's Spark reads itself: s3 when its session
        has s3a configured (TIDEMARK_GLUE_READS overrides), else local files
        only, and tidemark downloads S3 input first."""
        env = os.environ.get("TIDEMARK_GLUE_READS")
        if env:
            return [s.strip() for s in env.split(",") if s.strip()]
        return ["file"]

    def _run_id(self, what):
        if self._job is None:
            raise RuntimeError("%s needs a run: call Job(glue_context).init(args['JOB_NAME'], args) first" % what)
        return self._job._require(what)

    # Glue's flat spellings of the reader and writer methods.
    def create_dynamic_frame_from_options(self, *args, **kwargs):
        return self.create_dynamic_frame.from_options(*args, **kwargs)

    def create_dynamic_frame_from_catalog(self, *args, **kwargs):
        return self.create_dynamic_frame.from_catalog(*args, **kwargs)

    def write_dynamic_frame_from_options(self, *args, **kwargs):
        return self.write_dynamic_frame.from_options(*args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedError("GlueContext.%s is not implemented by tidemark's awsglue" % name)


def _utc(session):
    """Sets session's time zone to UTC, Glue's, unless the script's SparkConf
    names one: a cast of zone-less text or a TIMESTAMP to a timestamp (or of a
    timestamp to text or a date) in apply_mapping, resolveChoice or the
    script's own SQL then means what it means on Glue, not the JVM's zone
    (10:00 in New York was written as 15:00Z)."""
    key = "spark.sql.session.timeZone"
    try:
        conf = session.sparkContext.getConf()  # classic Spark: the SparkConf the script built
        if conf.contains(key):
            return session
    except Exception:  # Spark Connect has no SparkContext: its session's conf is the script's
        pass
    session.conf.set(key, "UTC")
    return session


class DynamicFrameReader:
    """glue_context.create_dynamic_frame: from_options and from_catalog."""

    def __init__(self, glue_context):
        self._gc = glue_context

    def from_options(self, connection_type, connection_options={}, format=None, format_options={},
                     transformation_ctx="", push_down_predicate="", **kwargs):
        if connection_type not in ("s3", "file"):
            raise NotImplementedError("create_dynamic_frame.from_options: connection_type %r is not implemented by tidemark's awsglue (s3, file)" % connection_type)
        opts = dict(connection_options or {})
        paths = opts.pop("paths", None)
        if isinstance(paths, str):
            paths = [paths]
        if not paths:
            raise ValueError("create_dynamic_frame.from_options: connection_options needs paths")
        body = {"run_id": self._gc._run_id("create_dynamic_frame.from_options"), "ctx": transformation_ctx or "",
                "paths": paths, "format": _format(format), "options": dict(format_options or {}),
                "recurse": _bool(opts.pop("recurse", None), False)}
        exclusions = opts.pop("exclusions", None)
        if exclusions:
            body["exclusions"] = json.loads(exclusions) if isinstance(exclusions, str) else list(exclusions)
        for glue, ours in (("boundedFiles", "bounded_files"), ("boundedSize", "bounded_size")):
            if glue in opts:
                body[ours] = int(opts.pop(glue))
        for ignored in ("groupFiles", "groupSize", "compressionType", "useS3ListImplementation"):
            opts.pop(ignored, None)
        if opts:
            raise NotImplementedError("create_dynamic_frame.from_options: connection_options %s not implemented by tidemark's awsglue" % ", ".join(sorted(opts)))
        if push_down_predicate:
            raise NotImplementedError("push_down_predicate on from_options is not implemented by tidemark's awsglue; use from_catalog")
        resp = _client.client().call("source", body)
        return self._frame(resp, transformation_ctx)

    def from_catalog(self, database=None, table_name=None, redshift_tmp_dir="", transformation_ctx="",
                     push_down_predicate="", additional_options={}, catalog_id=None, **kwargs):
        name = kwargs.pop("name_space", None) or database
        table = kwargs.pop("table", None) or table_name
        if not name or not table:
            raise ValueError("create_dynamic_frame.from_catalog needs database and table_name")
        body = {"run_id": self._gc._run_id("create_dynamic_frame.from_catalog"), "ctx": transformation_ctx or "",
                "catalog": {"database": name, "table": table, "push_down_predicate": push_down_predicate or ""}}
        resp = _client.client().call("source", body)
        return self._frame(resp, transformation_ctx)

    def _frame(self, resp, ctx):
        name = resp.get("name") or ctx  # a source without a ctx is recorded under a name made up
        if not resp.get("files"):
            # Nothing new: the frame is empty, of the recorded schema, and its
            # DataFrame is made only if the script uses it, so that a run with
            # nothing new need not start Spark.
            if self._gc._job is not None:
                self._gc._job._read(name, schema=[dict(c) for c in resp.get("schema") or []])
            gc = self._gc
            return DynamicFrame._empty(lambda: _read(gc.spark_session, resp), gc, ctx)
        df = _read(self._gc.spark_session, resp)
        if self._gc._job is not None:
            # job.commit() counts its rows: the run records what it read.
            self._gc._job._read(name, schema=schema_of(df, widen=resp.get("schema") is None), frame=df)
        return DynamicFrame(df, self._gc, ctx)


def _read(spark, resp):
    """The DataFrame of a planned source: its files read as the recorded
    schema says (or inferred on a first run), with the values of key=value
    folders as string columns."""
    from functools import reduce

    from pyspark.sql import functions as F

    files = resp.get("files") or []
    schema = resp.get("schema")
    fmt = resp["format"]
    opts = resp.get("options") or {}
    keys = _partition_keys(files)
    if not files:
        if schema:
            return spark.createDataFrame([], ddl(schema))
        from pyspark.sql.types import StructType

        return spark.createDataFrame([], StructType([]))

    header = fmt == "csv" and _bool(opts.get("header"), False)

    def reader(with_schema):
        r = spark.read.format(fmt)
        if fmt == "csv":
            # A header is checked against the schema's names: Spark's default
            # would read a file whose header orders the columns otherwise by
            # position, its values under the wrong names.
            r = r.option("header", header).option("enforceSchema", not header)
            # A quote inside a quoted field is doubled ("a ""b"""), as RFC 4180
            # and tidemark's engines read it; Spark's default escape, \,
            # would keep the quotes in the value.
            r = r.option("escape", '"')
        if fmt in ("csv", "json"):
            # A timestamp written without a zone, in a column that has some
            # with one, is UTC, as tidemark's engines read it; not the
            # session's time zone.
            r = r.option("timeZone", "UTC")
            for ours, theirs in (("delim", "sep"), ("quote", "quote"), ("escape", "escape")):
                if opts.get(ours) not in (None, ""):
                    r = r.option(theirs, opts[ours])
        if with_schema is not None and fmt != "parquet":
            r = r.schema(with_schema).option("mode", "FAILFAST")
        elif fmt == "csv":
            r = r.option("inferSchema", True)
        if fmt == "parquet":
            r = r.option("mergeSchema", True)  # every file's columns, not one file's
        return r

    data_schema = ddl(schema, skip=keys) if schema else None
    if data_schema is None and fmt != "parquet":
        # A first run infers over every file, then reads as every later run
        # will: with the types it records, each file's header checked.
        with _timestamps_without_zone(spark):
            inferred = reader(None).load([_spark_path(f["location"]) for f in files]).schema
        if fmt == "json":
            inferred = _in_file_order(spark, _spark_path(files[0]["location"]), inferred)
        data_schema = _first_schema(inferred, fmt == "csv" and not header)
    if schema and fmt == "json":
        _refuse_new_fields(spark, resp, [c["name"] for c in schema if c["name"] not in keys], keys)
    groups = {}
    for f in files:
        part = f.get("partition") or {}
        groups.setdefault(tuple(part.get(k) for k in keys), []).append(f["location"])
    frames = []
    for values, locations in sorted(groups.items(), key=lambda kv: [v or "" for v in kv[0]]):
        df = reader(data_schema).load([_spark_path(loc) for loc in locations])
        _refuse_partition_named_columns(resp, df.columns, keys, locations)
        for k, v in zip(keys, values):
            if v == _HIVE_NULL:
                v = None  # Hive's folder of NULLs
            df = df.withColumn(k, F.lit(v).cast("string"))
        frames.append(df)
    return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)


def _spark_path(location):
    """location as Spark reads exactly that file: Spark expands a path's glob
    characters, so a file named o[1].csv was read as o1.csv, o{a,b}.csv as
    oa.csv and ob.csv, o*.csv as every o file (rows read twice, others
    lost); each is escaped with a backslash, which Hadoop's glob reads as
    the character itself."""
    return re.sub(r"([\\\[\]{}*?])", r"\\\1", location)


class _timestamps_without_zone:
    """Infers a timestamp written without a zone as TIMESTAMP_NTZ, as
    tidemark's engines read it (Spark's default reads it in the session's
    time zone, and writes the instant: 10:11 in New York became 15:11);
    one written with a zone stays a TIMESTAMP."""

    def __init__(self, spark):
        self._spark = spark
        self._old = None

    def __enter__(self):
        self._old = self._spark.conf.get("spark.sql.timestampType", None)
        self._spark.conf.set("spark.sql.timestampType", "TIMESTAMP_NTZ")

    def __exit__(self, *exc):
        if self._old is None:
            self._spark.conf.unset("spark.sql.timestampType")
        else:
            self._spark.conf.set("spark.sql.timestampType", self._old)


class _Pairs(list):
    """A JSON object's (key, value) pairs, in the file's order."""


def _in_file_order(spark, location, inferred, sample=1000):
    """inferred (a JSON schema, which Spark sorts by name) with its fields
    in the order the first file writes its keys, as tidemark run reads
    them; fields its first lines lack follow in Spark's order."""
    import json as _json

    from pyspark.sql import types as T

    order = []
    for row in spark.read.text(location).limit(sample).collect():
        try:
            pairs = _json.loads(row[0], object_pairs_hook=_Pairs)
        except ValueError:
            continue
        if isinstance(pairs, _Pairs):  # an object: its keys in the file's order
            for k, _ in pairs:
                if k not in order:
                    order.append(k)
    rank = {k: i for i, k in enumerate(order)}
    fields = sorted(inferred.fields, key=lambda f: rank.get(f.name, len(rank)))  # stable: the rest keep their order
    return T.StructType(fields)


# _HIVE_NULL is the folder name Spark and DuckDB write a NULL partition value as.
_HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def _partition_keys(files):
    """The partition columns in their folders' order (year=/month=/ gives
    year, then month), as Glue appends them; a key no file's path shows
    comes last, by name."""
    keys = []
    for f in files:
        part = f.get("partition") or {}
        for seg in (f.get("key") or "").split("/")[:-1]:
            k = seg.split("=", 1)[0]
            if "=" in seg and k in part and k not in keys:
                keys.append(k)
    rest = sorted({k for f in files for k in (f.get("partition") or {})} - set(keys))
    return keys + rest


def _clash_message(resp, where, col):
    return ("awsglue: source %s: %s has a column named like its partition folder (%s=...); one of the two values "
            "would be lost: rename the column or the folder" % (resp.get("ctx") or "(no ctx)", where, col))


def _refuse_partition_named_columns(resp, columns, keys, locations):
    """A file column named like a key=value folder of its file would be
    replaced by the folder's value: the run fails instead, naming the files."""
    low = {k.lower() for k in keys}
    for c in columns:
        if c.lower() in low:
            where = locations[0] if len(locations) == 1 else "one of %s" % ", ".join(locations[:5])
            raise ValueError(_clash_message(resp, where, c))


def _refuse_new_fields(spark, resp, known, keys=()):
    """Reading JSON with the recorded schema drops the fields it lacks: such a
    field fails the run instead (tidemark's schema_evolution default, fail),
    naming it and a file that has it; so does a field named like a partition
    folder (keys), whose values the folder's would replace."""
    from pyspark.sql import functions as F

    inferred = spark.read.json([_spark_path(f["location"]) for f in resp["files"]])
    # Exactly: Spark's JSON reader matches a field to a column by its exact
    # name, so a field spelled Amount is not the column amount.
    new = [f.name for f in inferred.schema.fields if f.name not in set(known) and f.name != "_corrupt_record"]
    if not new:
        return
    first = inferred.where(F.col("`%s`" % new[0].replace("`", "``")).isNotNull()).select(F.input_file_name()).first()
    if new[0].lower() in {k.lower() for k in keys}:
        raise ValueError(_clash_message(resp, first[0] if first else "a file", new[0]))
    same = [k for k in known if k.lower() == new[0].lower()]
    if same:
        raise ValueError("awsglue: source %s: %s has the field %s, which differs from the column %s only in case; "
                         "Spark's reader matches fields exactly, so its values would be lost"
                         % (resp.get("ctx") or "(no ctx)", first[0] if first else "a file", new[0], same[0]))
    raise ValueError("awsglue: source %s: %s has the field(s) %s, which the source's recorded schema (%s) lacks; "
                     "the run fails rather than drop them (tidemark's awsglue does not evolve a source's schema)"
                     % (resp.get("ctx") or "(no ctx)", first[0] if first else "a file", ", ".join(new), ", ".join(known)))


def _first_schema(inferred, headerless):
    """The schema a first run reads with: the inferred one with its integers
    as BIGINT and floats as DOUBLE (what it records, so the first run's output
    has the types of every later run's), a header-less CSV's columns named
    col0, col1, ...; None when nothing was inferred (empty files)."""
    from pyspark.sql import types as T

    if not inferred.fields:
        return None
    fields = []
    for i, f in enumerate(inferred.fields):
        dt = f.dataType
        if isinstance(dt, (T.ByteType, T.ShortType, T.IntegerType)):
            dt = T.LongType()
        elif isinstance(dt, T.FloatType):
            dt = T.DoubleType()
        fields.append(T.StructField("col%d" % i if headerless else f.name, dt, True))
    return T.StructType(fields)


class DynamicFrameWriter:
    """glue_context.write_dynamic_frame: from_options to s3 (or a local
    folder), staged for the commit."""

    def __init__(self, glue_context):
        self._gc = glue_context

    def from_options(self, frame, connection_type="s3", connection_options={}, format=None, format_options={},
                     transformation_ctx="", **kwargs):
        if connection_type not in ("s3", "file"):
            raise NotImplementedError("write_dynamic_frame.from_options: connection_type %r is not implemented by tidemark's awsglue (s3, file)" % connection_type)
        opts = dict(connection_options or {})
        path = opts.pop("path", None)
        if not path:
            raise ValueError("write_dynamic_frame.from_options: connection_options needs path")
        keys = list(opts.pop("partitionKeys", []) or [])
        opts.pop("compression", None)
        if opts:
            raise NotImplementedError("write_dynamic_frame.from_options: connection_options %s not implemented by tidemark's awsglue" % ", ".join(sorted(opts)))
        fmt = _format(format or "parquet")
        fopts = dict(format_options or {})
        body = {"run_id": self._gc._run_id("write_dynamic_frame.from_options"), "ctx": transformation_ctx or "",
                "path": path, "format": fmt, "partition_keys": keys}
        if fmt == "parquet":
            body["options"] = {"compression": fopts.get("compression", "snappy")}
        resp = _client.client().call("sink", body)
        if isinstance(frame, DynamicFrame) and frame._untouched_empty():
            return frame  # a source with nothing new, unused: nothing to write, no Spark job
        df = frame.toDF() if isinstance(frame, DynamicFrame) else frame
        if not df.columns:
            return frame  # nothing was read: nothing to write
        w = df.write.mode("append")
        if keys:
            w = w.partitionBy(*keys)
        if fmt == "parquet":
            w.option("compression", body["options"]["compression"]).parquet(resp["location"])
        elif fmt == "csv":
            w = w.option("header", _bool(fopts.get("writeHeader"), True))
            w = w.option("escape", fopts.get("escaper") or '"')  # RFC 4180's doubled quote, not Spark's \
            if fopts.get("quoteChar"):
                w = w.option("quote", fopts["quoteChar"])
            if fopts.get("separator"):
                w = w.option("sep", fopts["separator"])
            _full_timestamps(w).csv(resp["location"])
        else:
            _full_timestamps(w).json(resp["location"])
        return frame


def _full_timestamps(w):
    """Writes timestamps to the microsecond, as read (Spark's default text
    formats stop at the millisecond), in UTC (not the session's zone)."""
    return (w.option("timestampFormat", "yyyy-MM-dd HH:mm:ss.SSSSSSXXX")
             .option("timestampNTZFormat", "yyyy-MM-dd HH:mm:ss.SSSSSS")
             .option("timeZone", "UTC")
             .option("ignoreNullFields", False))  # JSON: a null is written, as tidemark's engines write it
