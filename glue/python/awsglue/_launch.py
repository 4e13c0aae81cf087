"""How `tidemark glue run` starts a script: python -m awsglue._launch SCRIPT ARGS...

It runs the script as __main__ with its own argv. Under Spark Connect
(SPARK_REMOTE set, as pyspark reads it) there is no SparkContext: the script's
SparkContext.getOrCreate() then returns a stand-in that GlueContext accepts,
backed by the Connect session; calls that need a real SparkContext say so.

On classic Spark, SparkContext.getOrCreate() without a conf returns a lazy
stand-in that starts the real SparkContext at its first use that needs one
(any attribute but setLogLevel): a run with nothing new, whose frames stay
empty and untouched, then ends without starting Spark at all. Once the real
context runs, getOrCreate() returns it; a call with a conf starts it at once.
The stand-in is not an instance of SparkContext: a script that checks the
type gets the real context by calling getOrCreate() after it started, or by
sc._context()."""

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


class LazyContext:
    """Stands for SparkContext.getOrCreate() on classic Spark until the
    script first needs the real context."""

    def __init__(self, get_or_create):
        self._get_or_create = get_or_create
        self._real = None
        self._log_level = None

    def _context(self):
        """The real SparkContext, started on the first call."""
        if self._real is None:
            self._real = self._get_or_create()
            if self._log_level is not None:
                self._real.setLogLevel(self._log_level)
        return self._real

    @property
    def _started(self):
        return self._real is not None

    def setLogLevel(self, level):
        if self._real is None:
            self._log_level = level  # applied when the context starts
        else:
            self._real.setLogLevel(level)

    def stop(self):
        if self._real is not None:
            self._real.stop()

    def __enter__(self):
        return self._context().__enter__()

    def __exit__(self, *exc):
        if self._real is not None:
            return self._real.__exit__(*exc)
        return None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._context(), name)


def _lazy_shim():
    from pyspark import context

    original = context.SparkContext.getOrCreate
    lazy = LazyContext(lambda: original())

    def get_or_create(conf=None):
        if conf is not None or context.SparkContext._active_spark_context is not None:
            return original(conf)
        return lazy

    context.SparkContext.getOrCreate = staticmethod(get_or_create)


def _connect_shim(remote):
    from pyspark import context

    def get_or_create(conf=None):
        return ConnectContext(remote)

    context.SparkContext.getOrCreate = staticmethod(get_or_create)


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: python -m awsglue._launch SCRIPT.py ARGS...\n")
        raise SystemExit(2)
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    # The shims from the package's module, not this __main__ copy of it, so
    # that GlueContext knows their stand-ins by class.
    from awsglue import _launch

    remote = os.environ.get("SPARK_REMOTE")
    if remote:
        _launch._connect_shim(remote)
    else:
        _launch._lazy_shim()
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
