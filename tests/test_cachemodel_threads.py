"""The cache model threaded (cm_set_threaded: lock-free L1 hits, the lock for
the rest), as multi-threaded TCG drives it.

One access at a time it must give exactly what the unthreaded model gives
(every hand-derived test of test_cachemodel.py, and random streams compared
access by access).  Several threads at once, one per core, it must stay
coherent and its counts must add up: tests/cachemodel_stress.c hammers it
from four threads with stalls at the model's race points, and checks it
between rounds; built once plainly and once under ThreadSanitizer."""

import inspect
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from hotline import paths
from hotline.simulate.qemu.cachemodel import CacheModel
from tests import test_cachemodel
from tests.conftest import require_tools

LINE = 64
INCLUSIONS = ("none", "inclusive", "non-inclusive", "exclusive")


@pytest.fixture(autouse=True)
def compiler():
    require_tools("gcc")


class ThreadedCacheModel(CacheModel):
    def __init__(self, **kw):
        super().__init__(threaded=True, **kw)


HAND_DERIVED = [name for name, test in vars(test_cachemodel).items()
                if name.startswith("test_") and callable(test)
                and not inspect.signature(test).parameters]


@pytest.mark.parametrize("name", HAND_DERIVED)
def test_the_hand_derived_outcomes_hold_threaded(name, monkeypatch):
    monkeypatch.setattr(test_cachemodel, "CacheModel", ThreadedCacheModel)
    getattr(test_cachemodel, name)()


@pytest.mark.parametrize("inclusion, hit_after", [("inclusive", False), ("non-inclusive", True)])
def test_l3_inclusion_back_invalidates_threaded(inclusion, hit_after, monkeypatch):
    monkeypatch.setattr(test_cachemodel, "CacheModel", ThreadedCacheModel)
    test_cachemodel.test_l3_inclusion_back_invalidates(inclusion, hit_after)


def pair(cores, inclusion):
    """The same small hierarchy unthreaded and threaded."""
    l3 = None if inclusion == "none" else (2, 2, 30)
    kw = dict(cores=cores, l1i=(1, 2, 1), l1d=(1, 2, 1), l2=(2, 2, 10), l3=l3,
              inclusion="non-inclusive" if inclusion == "none" else inclusion,
              store_buffer_entries=4, store_buffer_window=16)
    return CacheModel(**kw), CacheModel(threaded=True, **kw)


ACCESSES = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["ifetch", "load", "store", "rmw"]),
                              st.integers(0, 40 * LINE), st.sampled_from([1, 4, 8])),
                    max_size=300)


@settings(max_examples=150, deadline=None)
@given(cores=st.integers(1, 4), inclusion=st.sampled_from(INCLUSIONS), accesses=ACCESSES)
def test_threaded_one_at_a_time_is_the_unthreaded_model(cores, inclusion, accesses):
    plain, threaded = pair(cores, inclusion)
    for i, (core, kind, addr, size) in enumerate(accesses):
        core %= cores
        assert threaded.access(core, kind, addr, size, pc=i) == \
            plain.access(core, kind, addr, size, pc=i), i
        assert threaded.check() is None, i
    assert plain.check() is None


@pytest.fixture(scope="module")
def stress(tmp_path_factory):
    """Builds tests/cachemodel_stress.c: {"plain": path, "tsan": path or None}."""
    out = tmp_path_factory.mktemp("stress")
    sources = [paths.REPO / "tests" / "cachemodel_stress.c",
               paths.REPO / "plugins" / "cachemodel" / "cachemodel.c"]
    flags = ["-Wall", "-Wextra", "-Werror", "-pthread", "-DCM_RACE_POINT=race_point",
             f"-I{paths.REPO / 'plugins' / 'cachemodel'}"]
    built = {}
    for name, extra in (("plain", ["-O2"]), ("tsan", ["-O1", "-g", "-fsanitize=thread"])):
        binary = out / f"stress-{name}"
        ran = subprocess.run(["gcc", *extra, *flags, "-o", str(binary), *map(str, sources)],
                             capture_output=True, text=True)
        if ran.returncode and name == "tsan" and "sanitize" in ran.stderr + ran.stdout:
            built[name] = None      # no ThreadSanitizer runtime here
            continue
        assert ran.returncode == 0, ran.stderr
        built[name] = binary
    return built


def run_stress(binary, *args):
    ran = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0 and ran.stdout.startswith("ok:"), ran.stdout + ran.stderr
    assert "WARNING: ThreadSanitizer" not in ran.stderr, ran.stderr
    return ran.stdout


@pytest.mark.parametrize("inclusion", INCLUSIONS)
def test_four_threads_at_once_stay_coherent_and_add_up(stress, inclusion):
    # 4 cores, 2000 rounds of 100 accesses each, checked between rounds.
    for seed in (1, 2):
        out = run_stress(stress["plain"], 4, 2000, 100, inclusion, seed)
    # Both paths ran: "... N line accesses lock-free, M locked ..."
    assert " lock-free, " in out and " 0 line accesses lock-free" not in out


@pytest.mark.parametrize("inclusion", ["none", "inclusive"])
def test_four_threads_at_once_race_on_no_plain_word(stress, inclusion):
    if stress["tsan"] is None:
        pytest.skip("gcc cannot build with -fsanitize=thread here")
    run_stress(stress["tsan"], 4, 300, 100, inclusion, 3)
