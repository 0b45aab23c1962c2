"""Spec parsing and validation: every bad spec is rejected before anything is
built, with one line naming the file, the key and what is allowed."""

import pytest

from hotline import paths, specs
from hotline.errors import HotlineError
from hotline.experiment import load_spec
from tests.conftest import GOOD


def write(tmp_path, text, name="exp.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def reject(tmp_path, text) -> str:
    path = write(tmp_path, text)
    with pytest.raises(HotlineError) as e:
        load_spec(path)
    message = str(e.value)
    assert "\n" not in message
    assert str(path) in message
    return message


def test_every_shipped_spec_is_valid():
    for path in (paths.CONFIGS / "experiments").glob("*.toml"):
        load_spec(path)
    for name in specs.available_systems():
        specs.load_system(name)


def test_good_spec_defaults(tmp_path):
    spec = specs.load_experiment(write(tmp_path, GOOD))
    assert spec.qemu.mode == "deterministic"
    assert spec.backend == "qemu"
    assert spec.repeats == 1


def test_unknown_top_level_key_names_allowed_keys(tmp_path):
    message = reject(tmp_path, GOOD + "colour = 'red'\n")
    assert "unknown key 'colour'" in message
    assert "variants" in message and "workloads" in message


def test_unknown_nested_key_names_allowed_keys(tmp_path):
    text = GOOD.replace('scale = "smoke"', 'scale = "smoke", speed = 3')
    message = reject(tmp_path, text)
    assert "workloads.0.speed" in message
    assert "allowed here: name, params, scale" in message


def test_missing_field(tmp_path):
    message = reject(tmp_path, GOOD.replace('variants = ["baseline"]\n', ""))
    assert "missing key 'variants'" in message


def test_unknown_variant(tmp_path):
    message = reject(tmp_path, GOOD.replace('"baseline"', '"no-such-variant"'))
    assert "unknown variant 'no-such-variant'" in message
    assert "baseline" in message


def test_unknown_system(tmp_path):
    message = reject(tmp_path, GOOD.replace('"skylake-4core"', '"vax"'))
    assert "unknown system 'vax'" in message and "pentium3-4way" in message


def test_unknown_workload_scale_and_parameter(tmp_path):
    assert "unknown workload 'nope'" in reject(tmp_path, GOOD.replace('"forkstorm"', '"nope"'))
    assert "unknown scale 'huge'" in reject(tmp_path, GOOD.replace('"smoke"', '"huge"'))
    text = GOOD.replace('scale = "smoke"', 'scale = "smoke", params = { forks = 2 }')
    assert "unknown parameter 'forks'" in reject(tmp_path, text)
    text = GOOD.replace('scale = "smoke"', 'scale = "smoke", params = { instances = 0 }')
    assert "'instances' = 0 is outside 1..64" in reject(tmp_path, text)


def test_bad_mode_and_toml(tmp_path):
    assert "key 'qemu.mode'" in reject(tmp_path, GOOD + '[qemu]\nmode = "fast"\n')
    assert "not valid TOML" in reject(tmp_path, GOOD + "variants = [\n")


@pytest.mark.parametrize("line", ['mode = "parallel"', 'plugin = "hotline-cache"', "quantum = 0",
                                  'interleave = "turn"'])
def test_a_qemu_setting_outside_its_table_says_where_it_goes(tmp_path, line):
    key, value = (part.strip() for part in line.split("="))
    message = reject(tmp_path, GOOD + line + "\n")
    assert message == (f"{tmp_path / 'exp.toml'}: key '{key}': a setting of the QEMU backend, in "
                       f"its table: write it under [qemu] (`[qemu]` then `{key} = {value}`)")
    spec = specs.load_experiment(write(tmp_path, GOOD + "[qemu]\n" + line + "\n"))
    assert str(getattr(spec.qemu, key)) == value.strip('"')


SYSTEM = """
description = "test machine"
cpus = 4
memory_mib = 512
[caches]
l1i = { size_kib = 32, assoc = 8, latency_cycles = 4 }
l1d = { size_kib = 32, assoc = 8, latency_cycles = 4 }
l2 = { size_kib = 256, assoc = 4, latency_cycles = 12 }
[latency]
memory_cycles = 200
cache_to_cache_cycles = 60
"""


def load_system_text(tmp_path, monkeypatch, text):
    (tmp_path / "systems").mkdir(exist_ok=True)
    (tmp_path / "systems" / "t.toml").write_text(text)
    monkeypatch.setattr(paths, "CONFIGS", tmp_path)
    return specs.load_system("t")


def test_system_geometry(tmp_path, monkeypatch):
    system = load_system_text(tmp_path, monkeypatch, SYSTEM)
    assert system.caches.l3 is None and system.store_buffer.entries == 32


@pytest.mark.parametrize("bad, why", [
    # 48 KiB / (8 ways x 64 B) = 96 sets: not a power of two.
    ("l1d = { size_kib = 48, assoc = 8, latency_cycles = 4 }", "power-of-two number of sets"),
    # 1 KiB cannot hold 32 ways of 64 B lines (2 KiB).
    ("l1d = { size_kib = 1, assoc = 32, latency_cycles = 4 }", "power-of-two number of sets"),
    ("l1d = { size_kib = 32, assoc = 0, latency_cycles = 4 }", "l1d.assoc"),
])
def test_impossible_cache_geometry(tmp_path, monkeypatch, bad, why):
    text = SYSTEM.replace("l1d = { size_kib = 32, assoc = 8, latency_cycles = 4 }", bad)
    with pytest.raises(HotlineError, match=why):
        load_system_text(tmp_path, monkeypatch, text)


def test_line_size_must_be_power_of_two(tmp_path, monkeypatch):
    text = SYSTEM.replace("[caches]", "[caches]\nline_bytes = 48")
    with pytest.raises(HotlineError, match="line_bytes 48"):
        load_system_text(tmp_path, monkeypatch, text)


def test_scratch_disk_size_leaves_room_for_ext4():
    from hotline.workloads import load_workload
    scratch = load_workload("lruwriters").scratch_disks
    params = {"writers": 6, "file_mib": 1000}
    assert scratch.count(params) == 6
    assert scratch.size_mib(params) == 1000 * 11 // 10 + 64


def test_also_groups_add_their_own_cross_products(tmp_path):
    from hotline.experiment import plan
    spec = tmp_path / "groups.toml"
    spec.write_text('description = "groups"\nvariants = ["baseline"]\n'
                    'systems = ["skylake-4core"]\n'
                    'workloads = [{ name = "forkstorm", scale = "smoke" }]\n'
                    '[[also]]\nsystems = ["skylake-4core", "pentium3-4way"]\n'
                    '[[also]]\nworkloads = [{ name = "cachebench", scale = "smoke" }]\n')
    runs = [(r.variant, r.workload, r.system) for r in plan(specs.load_experiment(spec))]
    # The first group's run is not repeated by the second, which contains it.
    assert runs == [("baseline", "forkstorm", "skylake-4core"),
                    ("baseline", "forkstorm", "pentium3-4way"),
                    ("baseline", "cachebench", "skylake-4core")]


# One matrix at two scales: a spec's scale, and a spec that includes another.

def test_the_spec_scale_fills_the_workloads_that_name_none(tmp_path):
    from hotline.experiment import plan
    text = GOOD.replace('scale = "smoke"', 'params = { instances = 2 }') + \
        'scale = "smoke"\n[[also]]\nworkloads = [{ name = "cachebench" }, ' \
        '{ name = "roimarkers", scale = "default" }]\n'
    runs = [(r.workload, r.scale) for r in plan(specs.load_experiment(write(tmp_path, text)))]
    assert runs == [("forkstorm", "smoke"), ("cachebench", "smoke"), ("roimarkers", "default")]
    # Without one, workloads are at default scale, as before there was a key.
    text = GOOD.replace(', scale = "smoke"', "")
    assert plan(specs.load_experiment(write(tmp_path, text)))[0].scale == "default"
    assert "key 'scale': Input should be a valid string, not 2" in reject(tmp_path,
                                                                          GOOD + "scale = 2\n")


def test_claims_default_is_claims_smoke_at_default_scale():
    from hotline.experiment import plan
    experiments = paths.CONFIGS / "experiments"
    smoke = specs.load_experiment(experiments / "claims-smoke.toml")
    default = specs.load_experiment(experiments / "claims-default.toml")
    assert (smoke.scale, default.scale) == ("smoke", "default")
    assert default.timeout_s > smoke.timeout_s
    as_default = [r.run_id.replace("-smoke", "-default") for r in plan(smoke)]
    assert [r.run_id for r in plan(default)] == as_default and len(as_default) == 25


def test_an_included_spec_is_the_base_and_the_including_keys_win(tmp_path):
    write(tmp_path, GOOD.replace(', scale = "smoke"', "") + "repeats = 2\n", "base.toml")
    spec = specs.load_experiment(write(tmp_path, 'include = "base.toml"\nscale = "smoke"\n'
                                       'description = "bigger"\n'))
    assert (spec.description, spec.scale, spec.repeats) == ("bigger", "smoke", 2)
    assert spec.workloads[0].scale == "smoke"


def test_an_including_spec_changes_only_the_qemu_settings_it_gives(tmp_path):
    write(tmp_path, GOOD + '[qemu]\nplugin = "hotline-cache"\nquantum = 1000\n', "base.toml")
    spec = specs.load_experiment(write(tmp_path, 'include = "base.toml"\n[qemu]\nquantum = 0\n'))
    assert (spec.qemu.plugin, spec.qemu.quantum) == ("hotline-cache", 0)


@pytest.mark.parametrize("base, include, what", [
    (None, '"nope.toml"', "nope.toml: no such file"),
    (None, "3", "the file name of an experiment spec beside it, not 3"),
    ('include = "exp.toml"\n' + GOOD, '"base.toml"', "includes another spec"),
    (GOOD.replace("baseline", "no-such"), '"base.toml"', "unknown variant 'no-such'"),
])
def test_a_bad_include_names_the_key_and_the_included_file(tmp_path, base, include, what):
    if base is not None:
        write(tmp_path, base, "base.toml")
    message = reject(tmp_path, f"include = {include}\n")
    assert message.startswith(f"{tmp_path / 'exp.toml'}: key 'include': ") and what in message


def test_a_system_extends_another(tmp_path, monkeypatch):
    """Only the keys given change; nested tables merge key by key."""
    systems = tmp_path / "systems"
    systems.mkdir()
    base = (paths.CONFIGS / "systems" / "skylake-4core.toml").read_text()
    (systems / "base.toml").write_text(base)
    (systems / "big-l2.toml").write_text(
        'extends = "base"\ndescription = "d"\n[caches]\nl2 = { size_kib = 512, assoc = 8, '
        'latency_cycles = 14 }\n[gem5]\nroi_cpu = "timing"\n')
    (systems / "loop-a.toml").write_text('extends = "loop-b"\n')
    (systems / "loop-b.toml").write_text('extends = "loop-a"\n')
    (systems / "orphan.toml").write_text('extends = "nowhere"\n')
    monkeypatch.setattr(paths, "CONFIGS", tmp_path)
    original, derived = specs.load_system("base"), specs.load_system("big-l2")
    assert derived.caches.l2.size_kib == 512 and derived.caches.l2.assoc == 8
    assert derived.caches.l1d == original.caches.l1d and derived.caches.l3 == original.caches.l3
    assert derived.gem5.roi_cpu == "timing" and derived.gem5.clock_ghz == original.gem5.clock_ghz
    assert derived.memory_mib == original.memory_mib and derived.description == "d"
    with pytest.raises(HotlineError, match=r"loop-a.toml: key 'extends': .*in turn"):
        specs.load_system("loop-a")
    with pytest.raises(HotlineError, match=r"orphan.toml: key 'extends': unknown system 'nowhere'"):
        specs.load_system("orphan")


def test_skylake_timing_is_skylake_with_timing_cpus():
    timing, o3 = specs.load_system("skylake-4core-timing"), specs.load_system("skylake-4core")
    assert timing.gem5.roi_cpu == "timing" and o3.gem5.roi_cpu == "o3"
    assert timing.caches == o3.caches and timing.memory_mib == o3.memory_mib
