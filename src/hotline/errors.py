"""The one exception hotline reports to the user as a one-line error, and the
one place that prints it."""

import sys
from typing import Callable

# Every hotline program prints its errors so; the guest's init and workloads
# (disk-images/) print theirs the same way, and simulate/guest_log.py finds
# them by it.
PREFIX = "hotline: error: "


class HotlineError(Exception):
    """A problem the user can fix; the message says what is wrong and how."""


def first_line(e: Exception) -> str:
    """What an exception says, in one line: a library's own may run to many."""
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def print_error(message: object) -> None:
    print(f"{PREFIX}{message}", file=sys.stderr)


def guarded(body: Callable[[], int | None]) -> int:
    """A program's exit status: body's (0 for None), or 1 with the error's
    one line where it raises HotlineError, or an OSError that no caller
    turned into one (a file that vanished, a disk that failed): a user
    never gets a traceback for what they can fix."""
    try:
        return body() or 0
    except HotlineError as e:
        print_error(e)
        return 1
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print_error(f"{where}{e.strerror or e}; check the path (space, permissions, a "
                    "folder where a file goes) and run the command again")
        return 1
