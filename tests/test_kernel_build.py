"""What a kernel build says while it runs and what it leaves for the next
one to measure itself by: files compiled of files to do, the time left,
and the build times recorded in the cache."""

import json
import os
import time

from hotline.kernel import build


def built(cache, name: str, seconds: float, compiled: int) -> None:
    directory = cache / "kernels" / name
    directory.mkdir(parents=True)
    (directory / "build.log").write_text("$ make\n" + "  CC      mm/x.o\n" * compiled
                                         + "  LD      vmlinux\n")
    (directory / "kernel.json").write_text(json.dumps({"build_seconds": seconds}))


def test_the_progress_line_says_files_done_of_files_to_do():
    assert build.compile_progress(10, None, 5) == "10 files compiled"
    # The rate is not yet the rest's: no estimate of the time left.
    assert build.compile_progress(10, 1100, 20) == "10 of about 1100 files compiled"
    assert build.compile_progress(100, 1100, 60) == \
        "100 of about 1100 files compiled, about 10m00s left"
    # More than the last build compiled: the total was wrong, so not shown.
    assert build.compile_progress(1200, 1100, 600) == "1200 files compiled"


def test_the_total_and_the_times_are_the_builds_here(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("HOTLINE_CACHE", str(cache))
    assert build.files_to_compile() is None and build.build_seconds_here() == []
    built(cache, "baseline-1", 670.5, 1106)
    old = time.time() - 60
    os.utime(cache / "kernels" / "baseline-1" / "kernel.json", (old, old))
    built(cache, "pte-chain-2", 230.3, 1107)
    assert build.files_to_compile() == 1107
    assert build.build_seconds_here() == [230.3, 670.5]
