"""The gem5 backend's translation of system specs and runs into what
configs/gem5/hotline_boot.py and hotline_measure.py are given, checked value by value, and its
checks that need no gem5 binary."""

import dataclasses
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from hotline import paths, specs
from hotline.errors import HotlineError
from hotline.experiment import load_spec
from hotline.simulate.command_line import kernel_command_line
from hotline.simulate.gem5 import params
from hotline.simulate.gem5 import simulator as gem5

APPEND = kernel_command_line([("forkstorm", {"instances": 4, "iterations": 10})], "disk",
                             markers="m5")


def translate(system: specs.SystemSpec) -> dict:
    """The measuring run's parameters as the JSON the script reads."""
    machine = params.machine(system, vmlinux=Path("/k/vmlinux"),
                             disk_image=Path("/i/disk.img"), kernel_args=APPEND)
    return params.run_params.to_dict(params.measure_params(system, machine, Path("/c/cpt")))


def with_gem5(system: specs.SystemSpec, **settings) -> specs.SystemSpec:
    return system.model_copy(update={"gem5": specs.Gem5Settings(**settings)})


# gem5's own defaults for a Cache's clusivity and write-back of clean lines,
# which the L1s keep.
GEM5_DEFAULTS = {"clusivity": "mostly_incl", "writeback_clean": False}


def test_skylake_classic_caches():
    p = translate(specs.load_system("skylake-4core"))
    assert p["machine"]["cpus"] == 4 and p["machine"]["clock"] == "3GHz"
    assert p["roi_cpu"] == "o3"
    c = p["caches"]
    assert c["kind"] == "classic" and c["line_bytes"] == 64
    # Load-to-use 4 / 12 / 42 cycles: each level adds its step over the one above.
    assert c["l1d"] == {"size": "32KiB", "assoc": 8, "tag_latency": 4, "data_latency": 4,
                        "response_latency": 1, "mshrs": 16, "tgts_per_mshr": 20,
                        **GEM5_DEFAULTS}
    assert c["l1i"]["size"] == "32KiB" and c["l1i"]["tag_latency"] == 4
    assert c["l2"] == {"size": "256KiB", "assoc": 4, "tag_latency": 8, "data_latency": 8,
                       "response_latency": 1, "mshrs": 20, "tgts_per_mshr": 12,
                       "clusivity": "mostly_incl", "writeback_clean": False}
    assert c["l3"] == {"size": "8MiB", "assoc": 16, "tag_latency": 30, "data_latency": 30,
                       "response_latency": 1, "mshrs": 32, "tgts_per_mshr": 16,
                       "clusivity": "mostly_incl", "writeback_clean": False}
    assert p["machine"]["memory"]["kind"] == "ddr4-2400"
    assert p["machine"]["memory"]["size"] == "1024MiB"
    assert p["miss_profile"]["l1d_lines"] == 512 and "traces" not in p
    assert p["checkpoint_dir"] == "/c/cpt"


def test_pentium3_has_no_l3():
    c = translate(specs.load_system("pentium3-4way"))["caches"]
    assert c["l3"] is None
    assert c["l1d"]["size"] == "16KiB" and c["l1d"]["assoc"] == 4
    assert c["l2"]["size"] == "512KiB" and c["l2"]["tag_latency"] == 7   # 10 - 3


def test_kernel_image_and_command_line():
    p = translate(specs.load_system("skylake-4core"))["machine"]
    assert p["vmlinux"] == "/k/vmlinux" and p["disk_image"] == "/i/disk.img"
    args = p["kernel_args"]
    for word in ("console=ttyS0", "root=/dev/sda", "ro", "init=/init", "nokaslr", "no5lvl",
                 "hotline.markers=m5", "hotline.workload=forkstorm",
                 "hotline.arg.forkstorm.instances=4", "hotline.arg.forkstorm.iterations=10",
                 "lpj=7999923"):
        assert word in args
    assert "rdinit=/init" not in args


def test_exclusive_l3_is_mostly_exclusive():
    system = specs.load_system("skylake-4core")
    system = system.model_copy(update={"caches": system.caches.model_copy(
        update={"inclusion": "exclusive"})})
    c = translate(system)["caches"]
    assert c["l3"]["clusivity"] == "mostly_excl"
    assert c["l2"]["writeback_clean"] is True


def test_ruby_mesi_two_level():
    p = translate(with_gem5(specs.load_system("pentium3-4way"), caches="ruby-mesi-two-level"))
    # No L3: the shared L2 is the private L2s' total, one bank per core.
    assert p["caches"] == {"kind": "ruby-mesi-two-level", "line_bytes": 64,
                           "l1i_size": "16KiB", "l1i_assoc": 4, "l1d_size": "16KiB",
                           "l1d_assoc": 4, "l2_size": "2MiB", "l2_assoc": 8,
                           "num_l2_banks": 4}
    assert p["miss_profile"] is None
    p = translate(with_gem5(specs.load_system("skylake-4core"), caches="ruby-mesi-two-level"))
    assert (p["caches"]["l2_size"], p["caches"]["l2_assoc"]) == ("8MiB", 16)


def test_simple_memory_and_timing_cpu():
    p = translate(with_gem5(specs.load_system("skylake-4core"), memory="simple",
                            roi_cpu="timing", clock_ghz=2.5))
    assert p["machine"]["memory"] == {"kind": "simple", "size": "1024MiB", "latency": "100ns",
                                      "latency_var": "0ns", "bandwidth": "32GiB/s"}  # 250 / 2.5
    assert p["machine"]["clock"] == "2.5GHz" and p["roi_cpu"] == "timing"


def test_o3_runs_get_the_core_and_the_cycle_profile():
    # pentium3-4way-o3's [core] is the P6's (DESIGN.md): 3 wide, 40 ROB
    # entries, 20 in the reservation station, 16 loads and 12 stores.
    p = translate(specs.load_system("pentium3-4way-o3"))
    assert p["core"] == {"width": 3, "rob_entries": 40, "iq_entries": 20, "lq_entries": 16,
                         "sq_entries": 12}
    assert p["cycle_profile"] == params.CYCLE_PROFILE
    assert "{region}" in p["cycle_profile"] and "{cpu}" in p["cycle_profile"]
    # Timing cores have neither; Ruby has no probe points the profile reads.
    p = translate(specs.load_system("pentium3-4way-timing"))
    assert p["core"] is None and p["cycle_profile"] is None
    p = translate(with_gem5(specs.load_system("pentium3-4way-o3"), caches="ruby-mesi-two-level"))
    assert p["core"] is not None and p["cycle_profile"] is None


def test_classic_caches_get_the_miss_profile_of_their_geometry():
    # pentium3-4way: 16 KiB L1D and 512 KiB L2 of 64-byte lines.
    p = translate(specs.load_system("pentium3-4way-timing"))
    assert p["miss_profile"] == {"path": params.MISS_PROFILE, "l1d_lines": 256,
                                 "l2_lines": 8192, "user_space_end": 0x800000000000}
    p = translate(with_gem5(specs.load_system("pentium3-4way-o3"), caches="ruby-mesi-two-level"))
    assert p["miss_profile"] is None


SAMPLED = {"interval_cycles": 1_000_000, "warmup_micro_ops": 20_000, "measure_micro_ops": 10_000}


def test_a_sampled_o3_run_profiles_windows_not_regions():
    p = translate(with_gem5(specs.load_system("pentium3-4way-o3"), clock_ghz=1.0,
                            sampling=SAMPLED))
    # A window ends whatever its cores do: 50 cycles a micro-op of it.
    assert p["sampling"] == {**SAMPLED, "cap_cycles": 50 * 30_000,
                             "path": params.SAMPLED_PROFILE, "retire_path": params.RETIRE_COUNT}
    assert all(f"{{{k}}}" in params.SAMPLED_PROFILE for k in ("region", "sample", "cpu"))
    # The whole region's micro-ops, per core and kind of core.
    assert all(f"{{{k}}}" in params.RETIRE_COUNT for k in ("region", "cpu", "core"))
    assert p["cycle_profile"] is None
    # Atomic accesses notify no cache probe point: no misses are counted.
    assert p["miss_profile"] is None
    assert p["core"]["width"] == 3
    assert translate(specs.load_system("pentium3-4way-o3"))["sampling"] is None


@pytest.mark.parametrize("settings, complaint", [
    ({"roi_cpu": "timing", "sampling": SAMPLED}, "sampling needs roi_cpu"),
    ({"caches": "ruby-mesi-two-level", "sampling": SAMPLED}, "sampling needs roi_cpu"),
    ({"sampling": {**SAMPLED, "measure_micro_ops": 0}}, "greater than or equal to 1"),
    ({"sampling": {**SAMPLED, "interval_cycles": 0}}, "greater than or equal to 1"),
    # The window was once counted in cycles.
    ({"sampling": {**SAMPLED, "measure_cycles": 10_000}}, "measure_cycles"),
])
def test_sampling_where_it_cannot_apply_is_refused(settings, complaint):
    with pytest.raises(ValueError, match=complaint):
        specs.Gem5Settings(**settings)


def test_the_32_byte_twin_differs_only_in_its_lines():
    wide, narrow = (specs.load_system(n) for n in ("pentium3-4way-o3", "pentium3-4way-o3-32b"))
    assert (wide.caches.line_bytes, narrow.caches.line_bytes) == (64, 32)
    assert wide.model_dump(exclude={"caches", "description"}) == \
        narrow.model_dump(exclude={"caches", "description"})
    assert translate(narrow)["caches"]["line_bytes"] == 32


@pytest.mark.parametrize("width", [0, 9])
def test_a_core_wider_than_the_profile_can_split_is_refused(width):
    with pytest.raises(ValueError, match="width"):
        specs.Core(width=width)


def test_kvm_boot_refused_with_reason():
    with pytest.raises(HotlineError, match="address-based m5ops"):
        translate(with_gem5(specs.load_system("skylake-4core"), boot_cpu="kvm"))


def test_memory_above_x86board_limit_refused():
    system = specs.load_system("skylake-4core").model_copy(update={"memory_mib": 4096})
    with pytest.raises(HotlineError, match="3072 MiB"):
        translate(system)


def test_params_round_trip_through_the_scripts_definition():
    """What the host writes is what the scripts' loader accepts, unchanged."""
    p = translate(specs.load_system("skylake-4core"))
    again = params.run_params.from_dict(params.run_params.MeasureParams, json.loads(json.dumps(p)))
    assert params.run_params.to_dict(again) == p


def test_scripts_refuse_parameters_off_the_definition():
    p = translate(specs.load_system("skylake-4core"))
    bad = json.loads(json.dumps(p))
    bad["machine"]["cpus"] = True                          # TOML's true is not a CPU count
    with pytest.raises(params.run_params.ParamsError, match=r"machine\.cpus"):
        params.run_params.from_dict(params.run_params.MeasureParams, bad)
    bad = json.loads(json.dumps(p))
    bad["roi_cpu"] = "atomic"
    with pytest.raises(params.run_params.ParamsError, match="roi_cpu"):
        params.run_params.from_dict(params.run_params.MeasureParams, bad)
    bad = json.loads(json.dumps(p))
    bad["schema"] = 1
    with pytest.raises(params.run_params.ParamsError, match="schema 1"):
        params.run_params.from_dict(params.run_params.MeasureParams, bad)


def test_gem5_command_line():
    # No debug flag or debug file: a measuring run turns on no debug output.
    assert gem5.command(Path("/opt/gem5/build/X86/gem5.opt")) == [
        "/opt/gem5/build/X86/gem5.opt", "--outdir=gem5", "--listener-mode=off",
        str(paths.CONFIGS / "gem5" / "hotline_measure.py"), "--params", "gem5-params.json"]


def test_missing_gem5_names_the_variable(monkeypatch):
    monkeypatch.delenv("GEM5", raising=False)
    with pytest.raises(HotlineError, match=r"needs GEM5: .*gem5\.opt.*v24\.0.*building"):
        gem5.gem5_binary()
    monkeypatch.setenv("GEM5", "/nonexistent/gem5.opt")
    with pytest.raises(HotlineError, match="not an executable file"):
        gem5.gem5_binary()


def test_gem5_experiment_fails_before_building(monkeypatch, tmp_results):
    from hotline.experiment import run_experiment
    monkeypatch.delenv("GEM5", raising=False)
    with pytest.raises(HotlineError, match="GEM5"):
        run_experiment(paths.CONFIGS / "experiments" / "forkstorm-gem5.toml")


def write_spec(tmp_path, text: str) -> Path:
    path = tmp_path / "x.toml"
    path.write_text('description = "x"\nvariants = ["baseline"]\nsystems = ["skylake-4core"]\n'
                    'workloads = [{ name = "forkstorm", scale = "smoke" }]\n' + text)
    return path


def test_spec_gem5_needs_disk_root(tmp_path):
    with pytest.raises(HotlineError, match='root = "disk"'):
        load_spec(write_spec(tmp_path, 'backend = "gem5"\n'))
    with pytest.raises(HotlineError, match="key 'qemu': the settings of backend \"qemu\""):
        load_spec(write_spec(
            tmp_path, 'backend = "gem5"\nroot = "disk"\n[qemu]\nplugin = "roi-count"\n'))
    assert load_spec(write_spec(tmp_path, 'backend = "gem5"\nroot = "disk"\n'))


def test_more_scratch_disks_than_the_ide_controller_takes_refused(tmp_path, monkeypatch):
    """X86Board's IDE controller has four places: the root disk and three
    scratch disks.  Two writers (smoke) run; four (default) are refused
    before anything is built, saying how many fit."""
    fake = shutil.copy("/bin/true", tmp_path / "gem5.opt")   # a program: GEM5 is checked
    monkeypatch.setenv("GEM5", str(fake))
    spec_path = tmp_path / "x.toml"
    text = ('description = "x"\nbackend = "gem5"\nroot = "disk"\n'
            'variants = ["baseline"]\nsystems = ["pentium3-4way"]\n'
            'workloads = [{{ name = "lruwriters", scale = "{scale}" }}]\n')
    spec_path.write_text(text.format(scale="smoke"))
    gem5.check_experiment(specs.load_experiment(spec_path), spec_path)
    spec_path.write_text(text.format(scale="default"))
    with pytest.raises(HotlineError, match=r"writers = 4 needs 4 scratch disks; gem5's X86Board "
                                           r"takes at most 3 beside its root disk"):
        gem5.check_experiment(specs.load_experiment(spec_path), spec_path)


def test_a_checkpoint_with_scratch_disks_names_them_by_count_and_size():
    """The boot makes the scratch disks and the checkpoint keeps what it
    wrote to them: their count and size are in the key (another size is
    another checkpoint), their paths are not (the boot's are in its staging
    directory, a restore's in the checkpoint's), and the parameters carry
    the paths to gem5's scripts."""
    from hotline.simulate.gem5 import checkpoints
    system = specs.load_system("pentium3-4way-timing")
    machine = params.machine(system, vmlinux=Path("/k/vmlinux"), disk_image=Path("/i/disk.img"),
                             kernel_args=APPEND)

    def key(scratch):
        inputs = checkpoints.checkpoint_inputs(machine, kernel_key="K", image_key="I",
                                               gem5_identity="g", scratch=scratch)
        assert "scratch_disks" not in inputs["machine"]
        return inputs, checkpoints.planned_checkpoint(inputs).key

    plain, two, bigger = (key(s) for s in (None, checkpoints.ScratchImages(2, 99),
                                           checkpoints.ScratchImages(2, 200)))
    assert "scratch_disks" not in plain[0]
    assert two[0]["scratch_disks"] == {"count": 2, "size_mib": 99}
    assert len({plain[1], two[1], bigger[1]}) == 3
    with_disks = dataclasses.replace(machine,
                                     scratch_disks=["/c/scratch-0.img", "/c/scratch-1.img"])
    assert key(None)[1] == plain[1]     # the paths are not in the key
    written = params.run_params.to_dict(params.boot_params(with_disks, Path("/c/cpt")))
    assert written["machine"]["scratch_disks"] == ["/c/scratch-0.img", "/c/scratch-1.img"]
    read = params.run_params.from_dict(params.run_params.BootParams, written)
    assert read.machine.scratch_disks == ["/c/scratch-0.img", "/c/scratch-1.img"]


def test_checkpoint_inputs_name_the_machine_without_its_file_paths():
    """A checkpoint's key: the machine as the boot script reads it, but the
    kernel and image by their build keys; the O3 and timing variants of one
    machine share it."""
    from hotline.simulate.gem5 import checkpoints
    keys = set()
    for name in ("pentium3-4way-timing", "pentium3-4way-o3"):
        system = specs.load_system(name)
        machine = params.machine(system, vmlinux=Path(f"/k/{name}/vmlinux"),
                                 disk_image=Path("/i/disk.img"), kernel_args=APPEND)
        inputs = checkpoints.checkpoint_inputs(machine, kernel_key="K", image_key="I",
                                               gem5_identity="gem5 binary sha256:0")
        assert "vmlinux" not in inputs["machine"] and "disk_image" not in inputs["machine"]
        assert inputs["machine"]["cpus"] == 4 and inputs["machine"]["clock"] == "1GHz"
        keys.add(checkpoints.planned_checkpoint(inputs).key)
    assert len(keys) == 1


@pytest.mark.parametrize("log, reason", [
    ("gem5 started\nAttributeError: Class X has no parameter y\n\nAt:\n  src/python/m5/main.py(669): "
     "main\n", "AttributeError: Class X has no parameter y"),
    ("info: ok\ngem5.opt: src/mem/packet.hh:605: bool f(): Assertion `isRequest()' failed.\n"
     "Program aborted at tick 1\n--- BEGIN LIBC BACKTRACE ---\n/x(f+0x1)[0x2]\n",
     "gem5.opt: src/mem/packet.hh:605: bool f(): Assertion `isRequest()' failed."),
    ("hotline-gem5: error: no checkpoint in cpt\n", "no checkpoint in cpt"),
    ("warn: No dot file generated.\nsrc/cpu/o3/fetch.cc:113: fatal: fetch buffer size (64 "
     "bytes) is greater than the cache block size (32 bytes)\nMemory Usage: 795744 KBytes\n",
     "src/cpu/o3/fetch.cc:113: fatal: fetch buffer size (64 bytes) is greater than the cache "
     "block size (32 bytes)"),
    ("just a line\n", "just a line"),
])
def test_a_failed_gem5_run_is_said_in_gem5s_own_words(tmp_path, log, reason):
    from hotline.simulate.gem5.checkpoints import last_error
    (tmp_path / "gem5.log").write_text(log)
    assert last_error(tmp_path / "gem5.log") == reason


def test_the_checkpoint_key_hashes_exactly_the_boots_own_files():
    # The boot script and the hotline_gem5 modules it imports, directly or
    # through each other: a module it needs left out of BOOT_FILES would
    # restore a stale checkpoint after a change, and a measuring run's file
    # in it would boot again for nothing.
    import ast
    from hotline.simulate.gem5 import checkpoints
    seen, todo = set(), ["hotline_boot.py"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        tree = ast.parse((checkpoints.CONFIGS / name).read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.module or \
                    not node.module.startswith("hotline_gem5"):
                continue
            modules = [f"hotline_gem5.{a.name}" for a in node.names] \
                if node.module == "hotline_gem5" else [node.module]
            todo += [m.replace(".", "/") + ".py" for m in modules]
    assert seen == set(checkpoints.BOOT_FILES)


def test_every_repeat_jitters_the_memory_with_its_own_seed_and_a_single_run_none():
    system = specs.load_system("pentium3-4way-o3")
    machine = params.machine(system, vmlinux=Path("/k/vmlinux"),
                             disk_image=Path("/i/disk.img"), kernel_args=APPEND)
    single, first, third = (params.run_params.to_dict(params.measure_params(
        system, machine, Path("/c/cpt"), repeat, repeats))
        for repeat, repeats in ((0, 1), (0, 5), (2, 5)))
    assert single["perturbation"] is None
    # The first of several repeats is perturbed as the others are, so that
    # no repeat is the unperturbed run.
    assert first["perturbation"] == {"seed": 1, "latency_var": params.JITTER}
    assert third["perturbation"] == {"seed": 3, "latency_var": params.JITTER}
    # Everything else as the single run's: the same checkpoint restores.
    assert {**third, "perturbation": None} == single
    # The run's key has the perturbation only where there is one, so that a
    # single run's key is what it was before repeats were perturbed.
    from hotline.simulate.gem5 import BACKEND
    one, five = (SimpleNamespace(repeats=n) for n in (1, 5))
    assert BACKEND.settings(one, system, 0) == {}
    assert BACKEND.settings(five, system, 0) == {
        "perturbation": {"memory_latency_var": params.JITTER, "seed": 1}}
    assert BACKEND.settings(five, system, 2) == {
        "perturbation": {"memory_latency_var": params.JITTER, "seed": 3}}


def test_repeats_on_memory_that_cannot_jitter_are_refused(tmp_path, monkeypatch):
    # skylake-4core-timing runs gem5's DDR4 model, which has no latency to jitter.
    assert specs.load_system("skylake-4core-timing").gem5.memory == "ddr4-2400"
    monkeypatch.setenv("GEM5", str(shutil.copy("/bin/true", tmp_path / "gem5.opt")))
    spec = tmp_path / "s.toml"
    spec.write_text('description = "d"\nbackend = "gem5"\nroot = "disk"\n'
                    'variants = ["baseline"]\nsystems = ["skylake-4core-timing"]\n'
                    'workloads = [{ name = "forkstorm", scale = "smoke" }]\nrepeats = 3\n')
    with pytest.raises(HotlineError, match='only fixed-latency memory takes: give the system '
                                           'memory = "simple"'):
        gem5.check_experiment(load_spec(spec), spec)
    spec.write_text(spec.read_text().replace("repeats = 3", "repeats = 1"))
    gem5.check_experiment(load_spec(spec), spec)
