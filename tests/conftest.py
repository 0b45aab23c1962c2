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


def run_twice(spec_text: str, tmp) -> list[list]:
    """A spec run twice from scratch, each time into a results tree of its
    own (for bit-identical comparisons): per time, its run directories in
    the order the spec plans them."""
    from hotline.experiment import run_experiment
    require_tools("qemu-system-x86_64", "make", "gcc")
    spec = tmp / "spec.toml"
    spec.write_text(spec_text)
    times = []
    with pytest.MonkeyPatch.context() as mp:
        for i in range(2):
            mp.setenv("HOTLINE_RESULTS", str(tmp / f"results-{i}"))
            results = run_experiment(spec, rerun=True)
            assert all(r.failure is None for r in results), [r.failure for r in results]
            times.append([r.directory for r in results])
    return times


@pytest.fixture
def repo():
    return paths.REPO
