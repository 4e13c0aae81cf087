"""tidemark: incremental ETL with job bookmarks.

This package carries the tidemark binary (tidemark/bin/tidemark) and installs
the `tidemark` command that runs it; the awsglue package beside it is the face
Glue-style PySpark scripts import (`tidemark glue run SCRIPT.py`). The wheels
are built by scripts/wheels.sh from the binaries of scripts/release.sh.
"""

import os

from ._version import VERSION, __version__

__all__ = ["VERSION", "__version__", "binary"]


def binary():
    """The path of the tidemark binary this package carries."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "tidemark")
