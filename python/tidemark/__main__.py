"""The `tidemark` command of the pip package (and `python -m tidemark`).

It replaces itself with the tidemark binary the package carries, so exit
codes, signals, stdin and stdout are the binary's own. `tidemark glue run`
then starts scripts with the Python tidemark was installed into (the venv's,
where `pip install 'tidemark[glue]'` put pyspark) unless $TIDEMARK_PYTHON or
--python names another; without that, a venv's tidemark run by its full path
would start scripts with whatever python3 is first on PATH.
"""

import os
import sys

from . import binary


def main():
    exe = binary()
    env = os.environ
    if not env.get("TIDEMARK_PYTHON") and sys.executable:
        env = dict(env, TIDEMARK_PYTHON=sys.executable)
    try:
        os.execve(exe, [exe] + sys.argv[1:], env)
    except OSError as e:
        sys.stderr.write(
            "tidemark: running the binary %s of the tidemark package: %s; reinstall it (pip install --force-reinstall tidemark)\n"
            % (exe, e.strerror or e)
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
