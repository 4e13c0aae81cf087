"""The client of tidemark's bookmark API (tidemark glue serve / glue run)."""

import json
import os
import secrets
import subprocess
import sys
import urllib.error
import urllib.request


class TidemarkError(RuntimeError):
    """A failed request: the message and tidemark's exit code (1 a failed
    run, 2 a usage or job error, 3 the job's lease held)."""

    def __init__(self, message, exit_code=1, holder=None):
        super().__init__(message)
        self.exit_code = exit_code
        self.holder = holder


class Client:
    """Talks to one bookmark API server; starts one when none was given."""

    def __init__(self, url=None, token=None):
        self._proc = None
        self.url = url or os.environ.get("TIDEMARK_GLUE_URL")
        self.token = token or os.environ.get("TIDEMARK_GLUE_TOKEN")
        if not self.url:
            self._start()

    def _start(self):
        binary = os.environ.get("TIDEMARK_BIN", "tidemark")
        self.token = secrets.token_hex(24)
        env = dict(os.environ, TIDEMARK_GLUE_TOKEN=self.token)
        script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else os.getcwd()
        args = [binary, "glue", "serve", "--dir", os.path.dirname(script) if os.path.isfile(script) else script]
        try:
            self._proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        except FileNotFoundError:
            raise TidemarkError(
                "awsglue: the tidemark binary is not on PATH (set TIDEMARK_BIN to it, or run the script with `tidemark glue run`)",
                2,
            ) from None
        line = self._proc.stdout.readline()
        if not line:
            code = self._proc.wait()
            raise TidemarkError("awsglue: `tidemark glue serve` exited with code %d before it was ready" % code, 2)
        self.url = json.loads(line)["url"]

    def call(self, verb, body):
        data = json.dumps(body).encode()
        req = urllib.request.Request(
            self.url + "/v1/" + verb,
            data=data,
            method="POST",
            headers={"Content-Type": "application/json", "Authorization": "Bearer " + (self.token or "")},
        )
        try:
            with urllib.request.urlopen(req, timeout=3600) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            try:
                err = json.loads(e.read())
            except ValueError:
                raise TidemarkError("tidemark %s: HTTP %d" % (verb, e.code)) from None
            raise TidemarkError(err.get("error", "tidemark %s failed" % verb), err.get("exit_code", 1), err.get("holder")) from None
        except urllib.error.URLError as e:
            raise TidemarkError("tidemark %s: the bookmark API at %s is unreachable: %s" % (verb, self.url, e.reason)) from None


_client = None


def client():
    """The process's client, made on first use."""
    global _client
    if _client is None:
        _client = Client()
    return _client
