import shutil

import pytest

from hotline import paths


@pytest.fixture
def tmp_results(tmp_path, monkeypatch):
    """Run directories go to a temporary place, build artifacts stay cached."""
    results = tmp_path / "results"
    monkeypatch.setenv("HOTLINE_RESULTS", str(results))
    return results


def require_tools(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (./hotline test installs them)")


@pytest.fixture
def repo():
    return paths.REPO
