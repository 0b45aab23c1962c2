"""Kernel configuration: fragments, Debian-matched values, and the check that
Kconfig kept every requested option."""

import lzma

import pytest

from hotline.errors import HotlineError
from hotline.kernel import config


def test_parse_config_reads_set_and_unset_options():
    text = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_HZ=250\nCONFIG_S=\"x y\"\n# comment\n"
    assert config.parse_config(text) == {"A": "y", "B": "n", "HZ": "250", "S": '"x y"'}


def test_format_fragment_round_trips():
    options = {"A": "y", "B": "n", "HZ": "250"}
    assert config.parse_config(config.format_fragment(options)) == options


def test_later_fragment_wins():
    assert config.requested_options([{"A": "y", "B": "y"}, {"B": "n"}]) == {"A": "y", "B": "n"}


def test_dropped_options_treats_absent_as_not_set():
    final = {"A": "y", "HZ": "250"}
    assert config.dropped_options({"A": "y", "GONE": "n", "HZ": "250"}, final) == []
    problems = config.dropped_options({"A": "n", "MEMCG": "y", "HZ": "1000"}, final)
    assert problems == ["CONFIG_A: requested n, got y",
                        "CONFIG_MEMCG: requested y, got absent",
                        "CONFIG_HZ: requested 1000, got 250"]


def test_debian_matched_takes_debian_values(tmp_path):
    debian = tmp_path / "config.xz"
    with lzma.open(debian, "wt") as f:
        f.write("CONFIG_MEMCG=y\n# CONFIG_LRU_GEN_ENABLED is not set\nCONFIG_HZ=250\nCONFIG_X=y\n")
    options = tmp_path / "options"
    options.write_text("# comment\nMEMCG\n\nLRU_GEN_ENABLED  # trailing comment\nHZ\n")
    assert config.debian_matched(options, debian) == {
        "MEMCG": "y", "LRU_GEN_ENABLED": "n", "HZ": "250"}
    options.write_text("MEMCG\nNO_SUCH_OPTION\n")
    with pytest.raises(HotlineError, match="NO_SUCH_OPTION does not appear"):
        config.debian_matched(options, debian)


@pytest.mark.skipif(not config.DEBIAN_CONFIG.is_file(), reason="linux-config-6.1 not installed")
def test_project_fragments_do_not_contradict_each_other():
    """The base fragment sets no memory-management option that Debian's
    values would silently override (the base file promises it leaves them)."""
    base = config.read_config(config.BASE_FRAGMENT)
    matched = config.debian_matched()
    assert set(base) & set(matched) == set()
    # What the measurement relies on (DESIGN.md): no relocation, DWARF, symbols.
    assert base["RANDOMIZE_BASE"] == "n" and base["RELOCATABLE"] == "n"
    assert base["DEBUG_INFO_DWARF5"] == "y" and base["KALLSYMS"] == "y"
    assert int(base["NR_CPUS"]) >= 8
    assert matched["SPARSEMEM_VMEMMAP"] == "y"
