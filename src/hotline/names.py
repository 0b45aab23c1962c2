"""The one pattern for a name that becomes part of a path: an experiment
(its spec's file name, which names its results folder), a run id, a kernel
variant, a spec an experiment includes.  Letters, digits and `._+-`,
starting with a letter or digit: no separator, no `..`, nothing a shell,
YAML or Snakemake's wildcards read as syntax."""

import re

from hotline.errors import HotlineError

MAX_LENGTH = 200
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
ALLOWED = "letters, digits, '.', '_', '+' and '-', starting with a letter or digit"


def problem(name) -> str | None:
    """What keeps `name` from being used in a path, or None."""
    if not isinstance(name, str):
        return f"{name!r} is not text"
    if not _NAME.fullmatch(name):
        return f"'{name}' is not a name hotline puts in a path ({ALLOWED})"
    if len(name) > MAX_LENGTH:
        return f"'{name[:40]}...' is {len(name)} characters long; at most {MAX_LENGTH}"
    return None


def check(name, what: str) -> str:
    """`name`, or a one-line error that starts with `what` (the file or key
    it came from) and says what is allowed."""
    if reason := problem(name):
        raise HotlineError(f"{what}: {reason}")
    return name
