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


__all__ = ["GlueTransform", "ApplyMapping", "ResolveChoice", "DropFields", "SelectFields", "RenameField", "Filter",
           "DynamicFrame"]
