"""Builds kept in the cache are made whole or not at all (hotline/cached.py),
and that is written once: no other module spells the staging suffix."""

import re
import threading
import time

import pytest

from hotline import cached, paths
from hotline.cached import staged


def test_a_finished_build_replaces_the_old_one(tmp_path):
    final = tmp_path / "kernel-abc"
    final.mkdir()
    (final / "old").write_text("old")
    with staged(final) as staging:
        assert staging.name == "kernel-abc.partial" and not list(staging.iterdir())
        (staging / "bzImage").write_text("new")
        assert (final / "old").exists()             # untouched until the end
    assert sorted(p.name for p in final.iterdir()) == ["bzImage"]
    assert not (tmp_path / "kernel-abc.partial").exists()


@pytest.mark.parametrize("keep", [True, False])
def test_a_failed_build_is_never_the_final_directory(tmp_path, keep):
    final = tmp_path / "checkpoint-1"
    with pytest.raises(RuntimeError):
        with staged(final, keep_failed=keep) as staging:
            (staging / "build.log").write_text("error: ...")
            raise RuntimeError("make failed")
    assert not final.exists()
    assert (tmp_path / "checkpoint-1.partial" / "build.log").exists() == keep


def test_the_next_build_starts_from_an_empty_staging(tmp_path):
    final = tmp_path / "image"
    (tmp_path / "image.partial").mkdir()
    (tmp_path / "image.partial" / "stale").write_text("from a killed build")
    with staged(final) as staging:
        assert not list(staging.iterdir())
    assert final.is_dir()


def test_only_outputs_spells_the_staging_suffix():
    spelled = [str(p.relative_to(paths.REPO)) for p in (paths.REPO / "src").rglob("*.py")
               if p.name != "outputs.py" and re.search(r"""["']\.partial["']""", p.read_text())]
    assert spelled == []


def test_a_second_builder_waits_and_then_reuses_the_first_ones_build(tmp_path, monkeypatch):
    """Two processes needing the same plugin: the second waits for the
    first's lock, then finds its build instead of emptying its staging
    and compiling again."""
    from hotline.simulate.qemu import plugins
    monkeypatch.setattr(paths, "cache_dir", lambda: tmp_path)
    sources, flags = [paths.REPO / "plugins" / "empty.c"], ["-O2", "-shared", "-fPIC"]
    _, so = plugins._shared_object("empty", sources, flags)
    holding, done = threading.Event(), threading.Event()

    def first_builder():
        with cached.exclusive(so.parent):
            holding.set()
            time.sleep(0.5)
            so.parent.mkdir(parents=True)
            so.write_text("the first builder's")
        done.set()

    thread = threading.Thread(target=first_builder)
    thread.start()
    assert holding.wait(10)
    plugins._build_shared_object("empty", sources, flags)
    thread.join()
    assert done.is_set() and so.read_text() == "the first builder's"
