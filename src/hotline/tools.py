"""Versions of the host tools whose output goes into artifacts; each is part
of the cache key of what it builds or runs."""

import subprocess
from functools import cache

from hotline.errors import HotlineError


@cache
def tool_version(*command: str) -> str:
    """The first line a tool prints about its version (stdout or stderr)."""
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except FileNotFoundError:
        raise HotlineError(f"{command[0]} is not installed; ./hotline installs it") from None
    lines = (result.stdout + result.stderr).strip().splitlines()
    if not lines:
        raise HotlineError(f"'{' '.join(command)}' printed no version")
    return lines[0]


def compiler_version() -> str:
    return tool_version("gcc", "--version")
