"""awsglue.dynamicframe: DynamicFrame, a thin wrapper over a Spark DataFrame.

Casts (apply_mapping, resolveChoice) turn a value that does not fit into null,
as Glue does.

A DataFrame column has one type, so there are no choice types: resolveChoice
casts (cast:T, project:T) and leaves columns alone for make_cols and
make_struct, which only split ambiguous (choice) columns in Glue."""


class DynamicRecord(dict):
    """One record as filter's function sees it: a dict of field to value."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class DynamicFrame:
    """A Glue DynamicFrame over the DataFrame df."""

    def __init__(self, df, glue_ctx=None, name=""):
        self._frame = df
        self._make = None
        self.glue_ctx = glue_ctx
        self.name = name

    @classmethod
    def fromDF(cls, dataframe, glue_ctx, name):
        return cls(dataframe, glue_ctx, name)

    @classmethod
    def _empty(cls, make, glue_ctx, name):
        """An empty frame whose DataFrame make() builds on first use (a source
        with nothing new: a script that only writes it starts no Spark)."""
        f = cls(None, glue_ctx, name)
        f._make = make
        return f

    @property
    def _df(self):
        if self._make is not None:
            self._frame, self._make = self._make(), None
        return self._frame

    def _untouched_empty(self):
        """Whether this is an empty source frame whose DataFrame nothing asked for."""
        return self._make is not None

    def toDF(self, options=None):
        return self._df

    def _with(self, df):
        return DynamicFrame(df, self.glue_ctx, self.name)

    def _read_nothing(self):
        """Whether this frame has no columns: its source read nothing and knew
        no schema (a first run over an empty folder). Its transforms name
        fields it lacks; they give empty frames rather than fail, as Glue's."""
        return not self._df.columns

    def count(self):
        if self._make is not None:
            return 0  # an empty source frame: no Spark job to count nothing
        return self._df.count()

    def printSchema(self):
        self._df.printSchema()

    def show(self, num_rows=20):
        self._df.show(num_rows, truncate=False)

    def schema(self):
        return self._df.schema

    def apply_mapping(self, mappings, case_sensitive=False, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        """Keeps the mapped fields only: each (source, source_type, target,
        target_type) reads source, casts it to target_type, names it target."""
        from pyspark.sql import functions as F

        tree = {}  # target name -> column, or a dict of a struct's fields (a target a.b)
        for m in mappings:
            if len(m) != 4:
                raise ValueError("apply_mapping: each mapping is (source, source_type, target, target_type), got %r" % (m,))
            src, _, target, target_type = m
            col = _cast(F.lit(None) if self._read_nothing() else F.col(_path(src)), target_type)
            node, parts = tree, target.split(".") if "`" not in target else [target.replace("`", "")]
            for p in parts[:-1]:
                node = node.setdefault(p, {})
                if not isinstance(node, dict):
                    raise ValueError("apply_mapping: target %r is inside %r, which another mapping names as a field" % (target, p))
            if isinstance(node.get(parts[-1]), dict):
                raise ValueError("apply_mapping: target %r is a struct other mappings fill" % target)
            node[parts[-1]] = col
        return self._with(self._df.select(*[_built(v).alias(k) for k, v in tree.items()]))

    def resolveChoice(self, specs=None, choice="", database=None, table_name=None, transformation_ctx="", info="",
                      stageThreshold=0, totalThreshold=0, catalog_id=None):
        from pyspark.sql import functions as F

        if specs and choice:
            raise ValueError("resolveChoice: give specs or choice, not both")
        df = self._df
        if self._read_nothing():
            return self._with(df)
        for path, action in specs or []:
            kind, _, arg = action.partition(":")
            if kind in ("cast", "project"):
                if not arg:
                    raise ValueError("resolveChoice: %r needs a type, e.g. cast:long" % action)
                df = _with_field(df, path, _cast(F.col(_path(path)), arg))
            elif kind in ("make_cols", "make_struct"):
                continue  # a DataFrame column has one type: nothing to split
            elif kind == "match_catalog":
                raise NotImplementedError("resolveChoice match_catalog is not implemented by tidemark's awsglue")
            else:
                raise ValueError("resolveChoice: unknown action %r" % action)
        if choice and choice.startswith(("cast:", "project:")):
            pass  # no choice columns to resolve
        return self._with(df)

    def drop_fields(self, paths, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        from pyspark.sql import functions as F

        df = self._df
        for p in paths:
            top, dot, rest = p.partition(".")
            if dot and p not in df.columns and top in df.columns:
                df = df.withColumn(top, F.col(_path(top)).dropFields(rest))  # a struct's field: a.b
            else:
                df = df.drop(p)  # drop ignores a field it lacks
        return self._with(df)

    def select_fields(self, paths, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        from pyspark.sql import functions as F

        df = self._df
        if self._read_nothing():
            return self._with(df)
        tree = {}  # as apply_mapping's: a field a.b stays field b of struct a, as Glue keeps it
        for p in paths:
            top, dot, rest = p.partition(".")
            if not dot or p in df.columns or "`" in p:
                name = p[1:-1].replace("``", "`") if len(p) > 1 and p[0] == p[-1] == "`" else p
                tree[name] = F.col("`%s`" % p.replace("`", "``")) if p in df.columns else F.col(_path(p))
                continue
            node = tree.setdefault(top, {})
            if not isinstance(node, dict):
                continue  # the whole struct is selected already
            parts = rest.split(".")
            for q in parts[:-1]:
                node = node.setdefault(q, {})
            node[parts[-1]] = F.col(_path(p))
        return self._with(df.select(*[_built(v).alias(k) for k, v in tree.items()]))

    def rename_field(self, oldName, newName, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        if self._read_nothing():
            return self._with(self._df)
        if oldName not in self._df.columns:
            raise ValueError("rename_field: no field %r (fields: %s)" % (oldName, ", ".join(self._df.columns)))
        return self._with(self._df.withColumnRenamed(oldName, newName))

    def drop_null_fields(self, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        """Drops the top-level fields that are null in every record (Glue's
        DropNullFields); a frame without records keeps its fields."""
        from pyspark.sql import functions as F

        df = self._df
        if not df.columns:
            return self._with(df)
        counts = df.select([F.count(F.col(_path(c))).alias("c%d" % i) for i, c in enumerate(df.columns)]).first()
        total = df.count()
        if total == 0:
            return self._with(df)
        return self._with(df.drop(*[c for i, c in enumerate(df.columns) if counts[i] == 0]))

    def join(self, paths1, paths2, frame2, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        """An equality join (inner) of this frame's paths1 with frame2's paths2,
        with the fields of both; a key named alike in both is kept once. A
        field both frames have that is not such a key is refused: one frame's
        values would be lost under the name."""
        if isinstance(paths1, str):
            paths1 = [paths1]
        if isinstance(paths2, str):
            paths2 = [paths2]
        if len(paths1) != len(paths2) or not paths1:
            raise ValueError("join: keys1 and keys2 need the same number of fields, got %r and %r" % (paths1, paths2))
        left = self._df
        right = frame2.toDF() if isinstance(frame2, DynamicFrame) else frame2
        shared = [k1 for k1, k2 in zip(paths1, paths2) if k1 == k2]
        clash = sorted(set(c.lower() for c in left.columns) & set(c.lower() for c in right.columns)
                       - set(k.lower() for k in shared))
        if clash:
            raise ValueError("join: both frames have the field(s) %s; one frame's values would be lost: rename or drop "
                             "them in one frame first" % ", ".join(clash))
        cond = [left[k1] == right[k2] for k1, k2 in zip(paths1, paths2)]
        joined = left.join(right, cond, "inner")
        if shared:
            joined = joined.select([left[c] for c in left.columns] + [right[c] for c in right.columns if c not in shared])
        return self._with(joined)

    def filter(self, f, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        """Keeps the records for which f(record) is true; f sees each record as
        a DynamicRecord (a dict). Needs classic Spark (it runs f over the RDD)."""
        df = self._df
        if not hasattr(df, "rdd") or _is_connect(df):
            raise NotImplementedError("DynamicFrame.filter with a Python function needs classic Spark, not Spark Connect")
        rdd = df.rdd.filter(lambda row: bool(f(DynamicRecord(row.asDict(recursive=True)))))
        return self._with(df.sparkSession.createDataFrame(rdd, df.schema))

    def repartition(self, num_partitions, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return self._with(self._df.repartition(num_partitions))

    def coalesce(self, num_partitions, shuffle=False, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return self._with(self._df.coalesce(num_partitions))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedError("DynamicFrame.%s is not implemented by tidemark's awsglue" % name)


def _path(p):
    """A Glue field path as a Spark column name: a.b reads field b of struct
    a; a name with odd characters is quoted."""
    if "`" in p or all(part.replace("_", "").isalnum() for part in p.split(".")):
        return p
    return "`%s`" % p.replace("`", "``")


def _with_field(df, path, col):
    """df with the field at path (a top-level column, or a.b inside struct a)
    replaced by col; withColumn("a.b") would add a column named a.b and
    leave the struct's field as it was."""
    from pyspark.sql import functions as F

    top, dot, rest = path.partition(".")
    if dot and path not in df.columns and top in df.columns:
        return df.withColumn(top, F.col(_path(top)).withField(rest, col))
    return df.withColumn(path, col)


def _built(node):
    """The column of an apply_mapping target: a column, or a struct of its
    fields (Glue nests a target a.b as field b of struct a)."""
    from pyspark.sql import functions as F

    if isinstance(node, dict):
        return F.struct(*[_built(v).alias(k) for k, v in node.items()])
    return node


def _cast(col, type_name):
    """Glue's cast: a value that does not fit the type becomes null (Spark's
    try_cast; plain cast on a Spark without it, outside ANSI mode). Glue's
    decimal without a precision is DECIMAL(10,2); Spark's would be (10,0)
    and drop the cents."""
    if type_name.strip().lower() == "decimal":
        type_name = "decimal(10,2)"
    if hasattr(col, "try_cast"):
        return col.try_cast(type_name)
    return col.cast(type_name)


def _is_connect(df):
    return type(df).__module__.startswith("pyspark.sql.connect")
