"""The hotline-cache plugin's output contract, without booting a guest: QEMU
runs the real plugin on an empty machine (-M none: no CPU, so no records but
one `roi` line per configured CPU) and quits at once, which is enough to
see what the plugin writes at exit and what it does when it cannot.

  - What Python spells of the C side (the names of outcomes, access kinds
    and inclusion policies; the ctypes mirrors of the model's structs)
    agrees with what the C code says, read from the plugin's output header
    and from the cache model's library.  These tests fail when one side
    changes without the other.
  - A write that fails fails the run: QEMU exits non-zero with one line
    naming the file, and leaves no file that could pass for a result.
"""

import os
import re
import subprocess
import typing
from pathlib import Path

import pytest

from hotline import paths, specs
from hotline.results import schema
from hotline.simulate.qemu import cachemodel, plugin_output, plugins
from tests.conftest import require_tools

SYSTEM = "skylake-4core"


@pytest.fixture(scope="module")
def plugin():
    require_tools("gcc", "qemu-system-x86_64")
    return plugins.build_plugin("hotline-cache")


def run_plugin(plugin, out: Path, options: list[str] | None = None):
    """QEMU with the plugin on a machine with no CPU, quit from the monitor."""
    system = specs.load_system(SYSTEM)
    argument = plugin.qemu_argument(out, plugins.cache_options(system) if options is None
                                    else options)
    return subprocess.run(["qemu-system-x86_64", "-M", "none", "-display", "none",
                           "-nodefaults", "-monitor", "stdio", "-plugin", argument],
                          input="quit\n", capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def output(plugin, tmp_path_factory):
    out = tmp_path_factory.mktemp("contract") / "hotline-cache.out"
    ran = run_plugin(plugin, out)
    assert ran.returncode == 0, ran.stderr
    return plugin_output.read(out)


# ---- names: one home each, in C -------------------------------------------

def test_the_plugin_writes_a_complete_output_the_reader_accepts(output):
    system = specs.load_system(SYSTEM)
    assert output["roi"]["cpu"].tolist() == list(range(system.cpus))
    assert output["options"] == plugins.cache_options(system)


def test_the_outcome_names_in_the_output_are_the_cache_models(output):
    assert tuple(output["outcomes"]) == cachemodel.names().outcomes


def test_python_counts_as_misses_exactly_the_outcomes_c_has_beyond_not_reached_and_hit(output):
    # enum cm_outcome: CM_NOT_REACHED, CM_HIT, then one value per cause of
    # a miss.  A new cause in C must reach the tables, or this fails.
    not_reached, hit, *causes = output["outcomes"]
    assert (not_reached, hit) == ("not-reached", "hit")
    assert list(schema.CAUSES) == causes


def test_the_tables_kinds_are_the_plugins(output):
    # The tables' kind column is the plugin's names as written; Python
    # tells instruction fetches apart by the name "fetch".
    assert list(schema.KINDS) == output["kinds"]
    assert "fetch" in output["kinds"]


def test_the_specs_inclusion_policies_are_the_cache_models():
    require_tools("gcc")
    allowed = typing.get_args(specs.Caches.model_fields["inclusion"].annotation)
    assert set(allowed) == set(cachemodel.names().inclusions)


@pytest.mark.parametrize("inclusion", typing.get_args(
    specs.Caches.model_fields["inclusion"].annotation))
def test_the_plugin_takes_each_inclusion_policy_the_specs_allow(plugin, tmp_path, inclusion):
    options = [o if not o.startswith("inclusion=") else f"inclusion={inclusion}"
               for o in plugins.cache_options(specs.load_system(SYSTEM))]
    ran = run_plugin(plugin, tmp_path / "out", options)
    assert ran.returncode == 0, ran.stderr


def test_the_plugin_refuses_an_inclusion_policy_the_model_does_not_name(plugin, tmp_path):
    options = [o if not o.startswith("inclusion=") else "inclusion=1"
               for o in plugins.cache_options(specs.load_system(SYSTEM))]
    ran = run_plugin(plugin, tmp_path / "out", options)
    assert ran.returncode != 0 and "bad option 'inclusion=1'" in ran.stderr


# ---- options: a number is digits, and nothing else (options.c) -------------

@pytest.mark.parametrize("bad", [
    "cpus=4x", "memory=-1", "vmemmap=-1", "cpu_number=12x", "quantum=-1", "phase= 5",
    "page_size=+64", "peer=99999999999999999999999", "sb=56:64x", "sb=-1:64", "sb=56",
    "sb=56:", "l1d=-32768:8:4", "l1d=32768:8:4x", "l2=262144:4", "l3=8388608: 16:42",
])
def test_the_plugin_refuses_a_sign_or_trailing_text_in_a_number(plugin, tmp_path, bad):
    key = bad.split("=")[0] + "="
    options = [o for o in plugins.cache_options(specs.load_system(SYSTEM))
               if not o.startswith(key)] + [bad]
    out = tmp_path / "out"
    ran = run_plugin(plugin, out, options)
    assert ran.returncode != 0 and f"hotline-cache: bad option '{bad}'\n" in ran.stderr
    assert not out.exists()


def test_the_plugin_takes_decimal_and_hex_numbers(plugin, tmp_path):
    options = plugins.cache_options(specs.load_system(SYSTEM)) + [
        "vmemmap=0xffffea0000000000", "page_size=64", "cpu=guest", "cpu_number=0x1f000"]
    out = tmp_path / "out"
    ran = run_plugin(plugin, out, options)
    assert ran.returncode == 0, ran.stderr
    assert plugin_output.read(out)["options"] == options


def test_the_format_doc_shows_the_header_the_plugin_writes(output):
    doc = (paths.REPO / "docs" / "hotline-cache-format.md").read_text()
    assert f"    # kinds {' '.join(output['kinds'])}\n" in doc
    assert f"    # outcomes {' '.join(output['outcomes'])}\n" in doc
    assert f"# hotline-cache {plugin_output.VERSION} " in doc


def test_the_ctypes_mirrors_match_the_c_structs():
    require_tools("gcc")
    layout = cachemodel.c_layout()
    assert {m[0] for m in layout} == set(cachemodel.MIRRORS)
    assert cachemodel.layout_mismatch(layout) is None


def test_a_layout_mismatch_is_named():
    # What loading the library says if cachemodel.h moves a member.
    c = cachemodel.ctypes_layout() - {("cm_result", "cycles", 8, 4)} | \
        {("cm_result", "cycles", 12, 4)}
    assert cachemodel.layout_mismatch(c) == \
        "C has cm_result.cycles at 12, 4 bytes; ctypes has cm_result.cycles at 8, 4 bytes"


# ---- a failed write fails the run -------------------------------------------

def last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def test_a_write_to_a_full_device_fails_the_run(plugin):
    # /dev/full: opening succeeds, every write fails with ENOSPC.
    ran = run_plugin(plugin, Path("/dev/full"))
    assert ran.returncode == 1
    assert last_line(ran.stderr) == \
        "hotline-cache: cannot write /dev/full: No space left on device; its counts are lost"
    assert Path("/dev/full").is_char_device()     # not removed: it is no regular file


@pytest.fixture
def full_tmpfs(tmp_path):
    """A 64 KiB tmpfs filled to the last block, with room for new (empty)
    files: the install-time probe succeeds, writing the output fails."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (the /dev/full test covers the rest)")
    mount = tmp_path / "small"
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        fd = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:     # ENOSPC: full
            pass
        finally:
            os.close(fd)
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_fails_the_run_and_leaves_no_output(plugin, full_tmpfs):
    out = full_tmpfs / "hotline-cache.out"
    ran = run_plugin(plugin, out)
    assert ran.returncode == 1
    assert re.fullmatch(rf"hotline-cache: cannot write {out}: No space left on device; "
                        r"its counts are lost", last_line(ran.stderr))
    assert not out.exists()


# ---- what a plugin links ----------------------------------------------------

@pytest.mark.parametrize("name, links_model", [
    ("hotline-cache", True), ("roi-count", False), ("empty", False)])
def test_only_a_plugin_that_includes_the_cache_model_links_it(name, links_model):
    require_tools("gcc", "nm")
    symbols = subprocess.run(["nm", str(plugins.build_plugin(name).path)], check=True,
                             capture_output=True, text=True).stdout
    # cm_access itself is taken into its caller (-flto); this one is noinline.
    assert (" access_line_unthreaded\n" in symbols) == links_model


# ---- the floor plugins (bench/plugin_overhead.py) ---------------------------

@pytest.mark.parametrize("options, complaint", [
    ([], None), (["insn=on"], None), (["insn=off"], None),
    (["insn=yes"], "callbacks: unknown option 'insn=yes' (expected out=FILE or insn=on|off)"),
])
def test_the_callbacks_floor_takes_insn_on_or_off_only(tmp_path, options, complaint):
    require_tools("qemu-system-x86_64")
    ran = run_plugin(plugins.build_plugin("callbacks"), tmp_path / "callbacks.out", options)
    assert ran.returncode == (0 if complaint is None else 1), ran.stderr
    assert complaint is None or complaint in ran.stderr


# ---- quantum= and phase= (quantum.c) ----------------------------------------

@pytest.mark.parametrize("extra, complaint", [
    (["phase=5"], "phase= needs quantum="),
    (["quantum=100", "phase=400"], "phase= must be below quantum= x cpus="),
    (["quantum=100", "phase=399"], None),
    (["quantum=100", "phase=0"], None),
])
def test_the_plugin_takes_a_phase_below_one_period_of_the_turns(plugin, tmp_path, extra,
                                                                 complaint):
    # skylake-4core: cpus=4, so a period of 4 x 100 virtual nanoseconds.
    options = plugins.cache_options(specs.load_system(SYSTEM)) + ["cpu=guest"] + extra
    out = tmp_path / "out"
    ran = run_plugin(plugin, out, options)
    if complaint is None:
        assert ran.returncode == 0, ran.stderr
    else:
        assert ran.returncode != 0 and f"hotline-cache: {complaint}" in ran.stderr
        assert not out.exists()
