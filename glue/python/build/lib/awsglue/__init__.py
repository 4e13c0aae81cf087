"""tidemark's awsglue: run Glue-style PySpark scripts with tidemark's job bookmarks.

Written for tidemark from Glue's documented names, signatures and behaviour
(it shares no code with aws-glue-libs). The modules a Glue script imports are
here: awsglue.utils (getResolvedOptions), awsglue.job (Job), awsglue.context
(GlueContext), awsglue.dynamicframe (DynamicFrame) and awsglue.transforms.

A script run by `tidemark glue run SCRIPT.py ARGS...` finds tidemark's
bookmark API through the environment; a script started any other way (python,
spark-submit) starts `tidemark glue serve` itself, from PATH or $TIDEMARK_BIN.
"""

__version__ = "0.1.0"
