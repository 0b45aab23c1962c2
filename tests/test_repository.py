"""The repository itself: no tracked file over 5 MB.  Every clone carries
every file, so results kept for the tests are slimmed to what they test
(analysis/smoke-results/PROVENANCE.md) rather than committed whole.  And
no source file over 500 lines (one job per file) without a line near its
top that says why."""

import shutil
import subprocess

import pytest

from hotline import paths

LIMIT = 5_000_000  # bytes


def test_no_tracked_file_exceeds_5_mb():
    if shutil.which("git") is None or subprocess.run(
            ["git", "-C", str(paths.REPO), "rev-parse"], capture_output=True).returncode:
        pytest.skip(f"needs git and a checkout: {paths.REPO} is not one")
    listed = subprocess.run(["git", "-C", str(paths.REPO), "ls-files", "-z"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    sizes = {name: (paths.REPO / name).lstat().st_size
             for name in listed if name and (paths.REPO / name).exists()}
    assert sizes, "git ls-files listed nothing"
    too_big = {name: size for name, size in sizes.items() if size > LIMIT}
    assert not too_big, f"tracked files over {LIMIT:,} bytes: " + ", ".join(
        f"{name} ({size:,} bytes)" for name, size in sorted(too_big.items()))


LONG = 500
REASON = "Over 500 lines:"


def test_a_long_source_file_says_why():
    long = {}
    for path in [*(paths.REPO / "src").rglob("*.py"), *(paths.REPO / "plugins").rglob("*.[ch]")]:
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > LONG and not any(REASON in line for line in lines[:6]):
            long[str(path.relative_to(paths.REPO))] = len(lines)
    assert long == {}, f"over {LONG} lines with no '{REASON} ...' near the top"
