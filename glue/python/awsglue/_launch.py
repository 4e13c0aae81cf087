"""How `tidemark glue run` starts a script: python -m awsglue._launch SCRIPT ARGS...

It runs the script as __main__ with its own argv. Under Spark Connect
(SPARK_REMOTE set, as pyspark reads it) there is no SparkContext: the script's
SparkContext.getOrCreate() or SparkContext() then returns a stand-in that GlueContext accepts,
backed by the Connect session; calls that need a real SparkContext say so.

On classic Spark, SparkContext.getOrCreate() without a conf, and SparkContext()
without arguments (as Glue's generated scripts start), return a lazy stand-in
that starts the real SparkContext at its first use that needs one (any
attribute but setLogLevel): a run with nothing new, whose frames stay empty
and untouched, then ends without starting Spark at all. Once the real context
runs, getOrCreate() returns it; a call with a conf or arguments starts it at
once. The stand-in passes isinstance(sc, SparkContext); sc._context() is the
real context."""

import os
import runpy
import sys


class ConnectContext:
    """Stands for SparkContext under Spark Connect."""

    def __init__(self, remote):
        from pyspark.sql import SparkSession

        self._session = SparkSession.builder.remote(remote).getOrCreate()

    @property
    def __class__(self):
        return _spark_context_class()

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

    @property
    def __class__(self):
        return _spark_context_class()

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


def _spark_context_class():
    """pyspark's SparkContext: what the stand-ins pass isinstance for."""
    from pyspark import context

    return context.SparkContext


def _construct_as(stand_in):
    """Makes SparkContext() without arguments return stand_in() (a script's
    own `sc = SparkContext()`) while no real context runs; with arguments,
    or once one runs, the constructor is pyspark's own."""
    from pyspark import context

    cls = context.SparkContext

    def new(klass, *args, **kwargs):
        if klass is cls and not args and not kwargs and cls._active_spark_context is None:
            return stand_in()  # not an instance of klass: __init__ is not called
        return object.__new__(klass)

    cls.__new__ = new


def _lazy_shim():
    from pyspark import context

    original = context.SparkContext.getOrCreate
    lazy = LazyContext(lambda: original())

    def get_or_create(conf=None):
        if conf is not None or context.SparkContext._active_spark_context is not None:
            return original(conf)
        return lazy

    context.SparkContext.getOrCreate = staticmethod(get_or_create)
    _construct_as(lambda: lazy)


def _connect_shim(remote):
    from pyspark import context

    made = []

    def get_or_create(conf=None):
        if not made:
            made.append(ConnectContext(remote))
        return made[0]

    context.SparkContext.getOrCreate = staticmethod(get_or_create)
    _construct_as(get_or_create)


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
    from awsglue._client import TidemarkError
    from awsglue.utils import GlueArgumentError

    remote = os.environ.get("SPARK_REMOTE")
    _launch._need_pyspark(remote)
    if remote:
        _launch._connect_shim(remote)
    else:
        _launch._lazy_shim()
    try:
        runpy.run_path(script, run_name="__main__")
    except TidemarkError as e:
        # tidemark refused a call (a ctx reused, a sink inside a source, a
        # held lease): its message and exit code, not a traceback.
        _exit("tidemark: %s" % e, e.exit_code or 1)
    except GlueArgumentError as e:
        _exit("tidemark: the script's arguments: %s" % e, 2)


# PYSPARK is the pyspark the package is written and tested against.
PYSPARK = "4.0.*"


def _exit(message, code):
    sys.stdout.flush()
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    raise SystemExit(code)


def _need_pyspark(remote):
    """Exits 2 saying what to install when this Python lacks pyspark (or,
    with SPARK_REMOTE, the Spark Connect client's dependencies)."""
    try:
        import pyspark
    except ImportError:
        extra = "[connect]" if remote else ""
        _exit("tidemark: pyspark is not installed for %s: pip install 'pyspark%s==%s' (or run with --python naming "
              "a Python that has it)" % (sys.executable, extra, PYSPARK), 2)
    if remote:
        try:
            import pyspark.sql.connect.session  # noqa: F401  (checks pandas, pyarrow, grpcio, ...)
        except ImportError as e:
            version = ".".join(pyspark.__version__.split(".")[:2]) + ".*"
            _exit("tidemark: SPARK_REMOTE is set but pyspark's Spark Connect client is incomplete for %s (%s): "
                  "pip install 'pyspark[connect]==%s'" % (sys.executable, str(e).strip().splitlines()[0], version), 2)


if __name__ == "__main__":
    main()
