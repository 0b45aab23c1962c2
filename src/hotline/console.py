"""Progress lines on the console: each long step names its phase and elapsed time."""

import sys
import time
from contextlib import contextmanager


def say(message: str) -> None:
    print(f"hotline: {message}", file=sys.stderr, flush=True)


def elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"


@contextmanager
def phase(name: str):
    """Announce a phase, and on leaving it say how long it took."""
    say(f"{name} ...")
    start = time.monotonic()
    yield
    say(f"{name}: done in {elapsed(time.monotonic() - start)}")


class Ticker:
    """Rate-limited one-line progress reports for steps that run for minutes."""

    def __init__(self, name: str, every_s: float = 15.0):
        self.name = name
        self.every_s = every_s
        self.start = time.monotonic()
        self.last = self.start

    def tick(self, status: str) -> None:
        now = time.monotonic()
        if now - self.last >= self.every_s:
            self.last = now
            say(f"{self.name}: {elapsed(now - self.start)} elapsed, {status}")
