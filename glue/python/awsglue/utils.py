"""awsglue.utils: getResolvedOptions, as Glue documents it."""

_BOOKMARK_OPTIONS = ("job-bookmark-enable", "job-bookmark-disable", "job-bookmark-pause")


class GlueArgumentError(Exception):
    """A job argument is missing or wrong."""


def _parse(argv):
    """The --KEY value (or --KEY=value) pairs of argv; a flag without a value
    holds None. The last occurrence of a key wins."""
    out = {}
    i = 0
    args = list(argv[1:]) if argv else []
    while i < len(args):
        a = args[i]
        if not a.startswith("--") or len(a) == 2:
            i += 1
            continue
        key = a[2:]
        if "=" in key:
            key, value = key.split("=", 1)
            out[key] = value
            i += 1
            continue
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            out[key] = args[i + 1]
            i += 2
        else:
            out[key] = None
            i += 1
    return out


def getResolvedOptions(args, options):
    """Returns the job arguments named by options (names without "--") from
    args (sys.argv), as Glue does: every named argument is required; flags not
    asked for are ignored; --job-bookmark-option (job-bookmark-enable, -disable
    or -pause; default job-bookmark-disable) and --job-bookmark-from /
    --job-bookmark-to (only with pause, both or neither) are always resolved,
    as job_bookmark_option, job_bookmark_from and job_bookmark_to."""
    parsed = _parse(args)
    result = {}
    missing = []
    for name in options:
        if name.startswith("--"):
            raise GlueArgumentError("option names are given without '--': %r" % name)
        if name in parsed and parsed[name] is not None:
            result[name] = parsed[name]
        else:
            missing.append("--" + name)
    if missing:
        raise GlueArgumentError("the following arguments are required: " + ", ".join(missing))
    option, start, end = _bookmark_options(parsed)
    result["job_bookmark_option"] = option
    result["job_bookmark_from"] = start
    result["job_bookmark_to"] = end
    return result


def _bookmark_options(parsed, strict=True):
    """The bookmark option, from and to of parsed argv (_parse), checked.
    A spelling Glue would ignore, running with job-bookmark-disable and
    reading everything again (--job_bookmark_option, the option without a
    value), is refused. strict checks the option's value and from/to as
    Glue does (Job.init leaves that to tidemark, which also takes the short
    spellings)."""
    for key in ("job-bookmark-option", "job-bookmark-from", "job-bookmark-to"):
        wrong = key.replace("-", "_")
        if wrong in parsed:
            raise GlueArgumentError("--%s is not Glue's spelling: write --%s (Glue would ignore it, and run with "
                                    "job-bookmark-disable)" % (wrong, key))
        if key in parsed and parsed[key] is None:
            raise GlueArgumentError("argument --%s: expected one argument" % key)
    option = parsed.get("job-bookmark-option") or "job-bookmark-disable"
    start, end = parsed.get("job-bookmark-from"), parsed.get("job-bookmark-to")
    if not strict:
        return option, start, end
    if option not in _BOOKMARK_OPTIONS:
        raise GlueArgumentError(
            "argument --job-bookmark-option: invalid choice: %r (choose from %s)" % (option, ", ".join(_BOOKMARK_OPTIONS))
        )
    if (start is None) != (end is None):
        raise GlueArgumentError("--job-bookmark-from and --job-bookmark-to go together")
    if start is not None and option != "job-bookmark-pause":
        raise GlueArgumentError("--job-bookmark-from and --job-bookmark-to are only allowed with --job-bookmark-option job-bookmark-pause")
    return option, start, end
