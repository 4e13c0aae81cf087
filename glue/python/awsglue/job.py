"""awsglue.job: Job, whose init begins a tidemark run and commit ends it."""

import os
import sys

from . import _client
from .utils import _bookmark_options, _parse


def _fault(step):
    """The crash-test hook: TIDEMARK_FAULT=before-commit kills the script
    (SIGKILL, nothing cleaned up) just before job.commit() asks tidemark to
    commit, after everything it wrote was staged."""
    if os.environ.get("TIDEMARK_FAULT") == step:
        import signal

        sys.stdout.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)


class Job:
    """A Glue job run. init(name, args) takes the job's lease (a second run of
    the job at once exits 3, naming the holder) and reads the bookmark;
    commit() publishes what the script wrote and advances every source's
    bookmark in one state-store transaction. A script that dies before
    commit() publishes nothing, and the next run reads the same input."""

    _current = None

    def __init__(self, glue_context):
        self._glue_context = glue_context
        self._run = None
        self._committed = None
        self._sources = {}

    @classmethod
    def continuation_enabled(cls):
        return False

    def init(self, job_name, args=None):
        args = dict(args or {})
        if "job_bookmark_option" in args:  # resolved by getResolvedOptions
            option = args.get("job_bookmark_option") or "job-bookmark-disable"
            start, end = args.get("job_bookmark_from"), args.get("job_bookmark_to")
        else:
            option, start, end = _bookmark_options(_parse(sys.argv), strict=False)
        body = {"job": job_name, "mode": option, "reads": self._glue_context._reads()}
        if start or end:
            body["from"], body["to"] = start or "", end or ""
        try:
            self._run = _client.client().call("begin", body)
        except _client.TidemarkError as e:
            if e.exit_code in (2, 3):
                sys.stderr.write("tidemark: %s\n" % e)
                sys.stderr.flush()
                raise SystemExit(e.exit_code) from None
            raise
        prev = Job._current
        if prev is not None and prev is not self and prev.run_id == self.run_id and prev._committed is None:
            # A second Job object of the same run (begin is idempotent): the
            # reads are the run's, whichever object commits counts them.
            self._sources = prev._sources
        Job._current = self
        self._glue_context._job = self
        return self

    @property
    def run_id(self):
        return self._run["run_id"] if self._run else None

    def _require(self, what):
        if self._run is None:
            raise RuntimeError("%s needs a run: call Job(glue_context).init(args['JOB_NAME'], args) first" % what)
        return self._run["run_id"]

    def _read(self, name, schema=None, frame=None):
        """Records a source read: the schema it was read with and the
        DataFrame of its new files, whose rows job.commit() counts (a second
        read of the same source is the same files: counted once)."""
        rep = self._sources.setdefault(name, {})
        if schema is not None:
            rep["schema"] = schema
        if frame is not None:
            rep["frame"] = frame

    def commit(self):
        """Publishes the run's output and advances the bookmark; a second call
        returns the first's result."""
        if self._committed is not None:
            return self._committed
        run_id = self._require("job.commit()")
        _fault("before-commit")
        sources = {}
        for name, rep in self._sources.items():
            if not name:
                continue
            out = {k: v for k, v in rep.items() if k != "frame"}
            if rep.get("frame") is not None:
                out["rows"] = rep["frame"].count()  # the rows of the files read, as tidemark run counts them
            sources[name] = out
        self._committed = _client.client().call("commit", {"run_id": run_id, "sources": sources})
        return self._committed

    def abort(self, reason=""):
        """Ends the run without committing (not a Glue method)."""
        if self._run is None or self._committed is not None:
            return
        _client.client().call("abort", {"run_id": self._run["run_id"], "reason": reason})

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedError("awsglue.job.Job.%s is not implemented by tidemark's awsglue" % name)
