"""Cache keys change exactly when an input changes."""

from pathlib import Path

import pytest

from hotline.hashing import hash_json
from hotline.kernel import build, config, variants
from hotline.kernel.source import KernelSource

pytestmark = pytest.mark.skipif(not config.DEBIAN_CONFIG.is_file(),
                                reason="linux-config-6.1 not installed")
SOURCE = KernelSource(Path("/src"), {"kind": "tarball", "sha256": "ab" * 32,
                                     "kernel_version": "6.1.0"})


@pytest.fixture
def variant_dir(tmp_path, monkeypatch):
    d = tmp_path / "v"
    d.mkdir()
    (d / "series").write_text("0001-a.patch\n")
    (d / "0001-a.patch").write_text("--- a/x\n+++ b/x\n")
    monkeypatch.setattr(variants, "VARIANTS", tmp_path)
    return d


def key(source=SOURCE):
    return hash_json(build.kernel_inputs("v", source))


def test_same_inputs_same_key(variant_dir):
    assert key() == key()


def test_patch_content_changes_the_key(variant_dir):
    before = key()
    (variant_dir / "0001-a.patch").write_text("--- a/x\n+++ b/x\n@@ changed\n")
    assert key() != before


def test_config_fragment_changes_the_key(variant_dir):
    before = key()
    (variant_dir / "config").write_text("CONFIG_HZ_1000=y\n")
    assert key() != before


def test_base_fragment_and_debian_values_change_the_key(variant_dir, tmp_path, monkeypatch):
    before = key()
    base = tmp_path / "base.config"
    base.write_text(config.BASE_FRAGMENT.read_text() + "CONFIG_EXTRA=y\n")
    monkeypatch.setattr(config, "BASE_FRAGMENT", base)
    after_base = key()
    assert after_base != before
    options = tmp_path / "options"
    options.write_text(config.DEBIAN_MATCHED.read_text() + "SMP\n")
    monkeypatch.setattr(config, "DEBIAN_MATCHED", options)
    assert key() != after_base


def test_source_identity_changes_the_key(variant_dir):
    other = KernelSource(Path("/src"), dict(SOURCE.identity, sha256="cd" * 32))
    assert key(other) != key()


def test_included_series_changes_the_key(variant_dir):
    (variant_dir / "0002-b.patch").write_text("--- a/y\n+++ b/y\n")
    (variant_dir / "shared").write_text("0001-a.patch\n0002-b.patch\n")
    (variant_dir / "series").write_text("include shared\n")
    before = key()
    # The same patches in another order: only the included series differs.
    (variant_dir / "shared").write_text("0002-b.patch\n0001-a.patch\n")
    assert key() != before
