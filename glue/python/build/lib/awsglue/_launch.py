"""How `tidemark glue run` starts a script: python -m awsglue._launch SCRIPT ARGS...

It runs the script as __main__ with its own argv. Under Spark Connect
(SPARK_REMOTE set, as pyspark reads it) there is no SparkContext: the script's
SparkContext.getOrCreate() then returns a stand-in that GlueContext accepts,
backed by the Connect session; calls that need a real SparkContext say so."""

import os
import runpy
import sys


class ConnectContext:
    """Stands for SparkContext under Spark Connect."""

    def __init__(self, remote):
        from pyspark.sql import SparkSession

        self._session = SparkSession.builder.remote(remote).getOrCreate()

    def setLogLevel(self, level):
        pass  # the server's log level is the server's

    def stop(self):
        self._session.stop()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedError(
            "SparkContext.%s does not exist under Spark Connect (SPARK_REMOTE is set); run the script on classic "
            "Spark (unset SPARK_REMOTE) or use the SparkSession (glue_context.spark_session)" % name
        )


def _connect_shim(remote):
    from pyspark import context

    def get_or_create(cls=None, conf=None):
        return ConnectContext(remote)

    context.SparkContext.getOrCreate = staticmethod(get_or_create)


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: python -m awsglue._launch SCRIPT.py ARGS...\n")
        raise SystemExit(2)
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    remote = os.environ.get("SPARK_REMOTE")
    if remote:
        _connect_shim(remote)
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
