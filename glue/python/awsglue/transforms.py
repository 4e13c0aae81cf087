"""awsglue.transforms: the transforms a Glue script applies to a DynamicFrame,
each X.apply(frame=..., ...) the same as the frame's own method."""

from .dynamicframe import DynamicFrame


class GlueTransform:
    """Base of the transforms: X.apply(**kwargs) and X()(**kwargs)."""

    @classmethod
    def apply(cls, *args, **kwargs):
        return cls()(*args, **kwargs)

    @classmethod
    def name(cls):
        return cls.__name__


class ApplyMapping(GlueTransform):
    def __call__(self, frame, mappings, case_sensitive=False, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame.apply_mapping(mappings, case_sensitive, transformation_ctx, info, stageThreshold, totalThreshold)


class ResolveChoice(GlueTransform):
    def __call__(self, frame, specs=None, choice="", database=None, table_name=None, transformation_ctx="", info="",
                 stageThreshold=0, totalThreshold=0, catalog_id=None):
        return frame.resolveChoice(specs, choice, database, table_name, transformation_ctx, info, stageThreshold,
                                   totalThreshold, catalog_id)


class DropFields(GlueTransform):
    def __call__(self, frame, paths, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame.drop_fields(paths, transformation_ctx, info, stageThreshold, totalThreshold)


class SelectFields(GlueTransform):
    def __call__(self, frame, paths, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame.select_fields(paths, transformation_ctx, info, stageThreshold, totalThreshold)


class RenameField(GlueTransform):
    def __call__(self, frame, old_name, new_name, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame.rename_field(old_name, new_name, transformation_ctx, info, stageThreshold, totalThreshold)


class Filter(GlueTransform):
    def __call__(self, frame, f, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame.filter(f, transformation_ctx, info, stageThreshold, totalThreshold)


class DropNullFields(GlueTransform):
    """Drops the fields that are null in every record, as Glue's (its
    NullType fields)."""

    def __call__(self, frame, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame.drop_null_fields(transformation_ctx, info, stageThreshold, totalThreshold)


class Join(GlueTransform):
    """An equality join of frame1's keys1 with frame2's keys2 (inner), with the
    fields of both frames."""

    def __call__(self, frame1, frame2, keys1, keys2, transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame1.join(keys1, keys2, frame2, transformation_ctx, info, stageThreshold, totalThreshold)


def _not_implemented(name):
    def call(self, *args, **kwargs):
        raise NotImplementedError("awsglue.transforms.%s is not implemented by tidemark's awsglue: use the frame's "
                                  "toDF() and Spark, then DynamicFrame.fromDF" % name)

    return type(name, (GlueTransform,), {"__call__": call, "__doc__": "Not implemented: calling it says so."})


# Glue's other transforms: a script that imports them by name (from
# awsglue.transforms import *) is told which one is missing when it calls
# it, not given a NameError.
_MISSING = ["ErrorsAsDynamicFrame", "FillMissingValues", "FindIncrementalMatches", "FindMatches", "FlatMap", "Map",
            "MapToCollection", "Relationalize", "SelectFromCollection", "Spigot", "SplitFields", "SplitRows", "Unbox",
            "UnnestFrame", "Union"]
for _name in _MISSING:
    globals()[_name] = _not_implemented(_name)

__all__ = ["GlueTransform", "ApplyMapping", "ResolveChoice", "DropFields", "SelectFields", "RenameField", "Filter",
           "DropNullFields", "Join", "DynamicFrame"] + _MISSING
