"""Spark types and tidemark's engine-neutral column types (bookmark.Type texts)."""

import re

_TO_SPARK = {
    "BOOLEAN": "boolean",
    "TINYINT": "tinyint",
    "SMALLINT": "smallint",
    "INTEGER": "int",
    "BIGINT": "bigint",
    "FLOAT": "float",
    "DOUBLE": "double",
    "VARCHAR": "string",
    "BLOB": "binary",
    "DATE": "date",
    "TIMESTAMP": "timestamp_ntz",
    "TIMESTAMP WITH TIME ZONE": "timestamp",
}


def to_neutral(dt, widen=False):
    """The engine-neutral text of a Spark DataType. widen records integers as
    BIGINT and floats as DOUBLE (a first run's inferred schema, so that a later
    file's larger value still fits)."""
    from pyspark.sql import types as T

    if isinstance(dt, T.BooleanType):
        return "BOOLEAN"
    if isinstance(dt, (T.ByteType, T.ShortType, T.IntegerType)):
        return "BIGINT" if widen else {T.ByteType: "TINYINT", T.ShortType: "SMALLINT", T.IntegerType: "INTEGER"}[type(dt)]
    if isinstance(dt, T.LongType):
        return "BIGINT"
    if isinstance(dt, T.FloatType):
        return "DOUBLE" if widen else "FLOAT"
    if isinstance(dt, T.DoubleType):
        return "DOUBLE"
    if isinstance(dt, T.DecimalType):
        return "DECIMAL(%d,%d)" % (dt.precision, dt.scale)
    if isinstance(dt, T.StringType):
        return "VARCHAR"
    if isinstance(dt, T.BinaryType):
        return "BLOB"
    if isinstance(dt, T.DateType):
        return "DATE"
    if hasattr(T, "TimestampNTZType") and isinstance(dt, T.TimestampNTZType):
        return "TIMESTAMP"
    if isinstance(dt, T.TimestampType):
        return "TIMESTAMP WITH TIME ZONE"
    if isinstance(dt, T.ArrayType):
        return "ARRAY<%s>" % to_neutral(dt.elementType, widen)
    if isinstance(dt, T.MapType):
        return "MAP<%s, %s>" % (to_neutral(dt.keyType, widen), to_neutral(dt.valueType, widen))
    if isinstance(dt, T.StructType):
        return "STRUCT<%s>" % ", ".join("%s: %s" % (_quote(f.name), to_neutral(f.dataType, widen)) for f in dt.fields)
    raise ValueError("no engine-neutral type for Spark type %s" % dt.simpleString())


def _quote(name):
    return name if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name) else '"%s"' % name.replace('"', '""')


def schema_of(df, widen=False, skip=()):
    """The engine-neutral schema of a DataFrame, [{"name", "type"}]."""
    return [{"name": f.name, "type": to_neutral(f.dataType, widen)} for f in df.schema.fields if f.name not in skip]


def to_spark(text):
    """The Spark SQL type of an engine-neutral type text."""
    t = text.strip()
    up = t.upper()
    if up in _TO_SPARK:
        return _TO_SPARK[up]
    m = re.match(r"^DECIMAL\((\d+),\s*(\d+)\)$", up)
    if m:
        return "decimal(%s,%s)" % m.groups()
    if up.startswith("ARRAY<") and up.endswith(">"):
        return "array<%s>" % to_spark(t[6:-1])
    raise ValueError("awsglue: the recorded column type %r has no Spark type here" % text)


def ddl(columns, skip=()):
    """A Spark DDL schema string for recorded columns, leaving out skip."""
    return ", ".join("`%s` %s" % (c["name"].replace("`", "``"), to_spark(c["type"])) for c in columns if c["name"] not in skip)
