"""With a gem5 binary (GEM5): the config scripts inside gem5, and a small
fork storm end to end on X86Board: booted once to a checkpoint, measured
from it, and measured again from the same checkpoint with other caches.
Skipped without GEM5; the gem5 boot takes minutes, so the fork storm runs 2
loops of 2 iterations."""

import collections
import json
import os
import subprocess

import pandas as pd
import pytest

from hotline import paths, specs
from hotline.analysis import sampling
from hotline.experiment import run_experiment
from hotline.hashing import hash_file
from hotline.report.render import write_report
from hotline.simulate.gem5 import checkpoints, cycle_profile, params as gem5_params
from hotline.simulate.gem5 import simulator as gem5
from tests.conftest import extension_built

pytestmark = pytest.mark.skipif(
    not os.environ.get("GEM5"), reason="GEM5 is not set: path to a gem5.opt built for X86 (v24.0)")

BOOT = paths.CONFIGS / "gem5" / "hotline_boot.py"
real_available = specs.available_systems


def gem5_script(script, params: dict, cwd) -> subprocess.CompletedProcess:
    (cwd / "p.json").write_text(json.dumps(params))
    return subprocess.run([str(gem5.gem5_binary()), "--outdir=out", "--listener-mode=off",
                           str(script), "--params", "p.json"],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def boot_params(tmp_path, **machine) -> dict:
    m = gem5_params.machine(specs.load_system("skylake-4core"), vmlinux=tmp_path / "no-vmlinux",
                            disk_image=tmp_path / "no-disk.img", kernel_args="console=ttyS0")
    p = gem5_params.run_params.to_dict(gem5_params.boot_params(m, tmp_path / "cpt"))
    p["machine"].update(machine)
    return p


def test_boot_script_fails_cleanly_on_a_missing_kernel(tmp_path):
    result = gem5_script(BOOT, boot_params(tmp_path), tmp_path)
    assert result.returncode != 0, result.stdout + result.stderr
    assert "hotline-gem5: error: no such file" in result.stderr


def test_scripts_check_their_parameters_in_one_line(tmp_path):
    result = gem5_script(BOOT, boot_params(tmp_path, cpus="4"), tmp_path)
    assert result.returncode != 0
    assert "hotline-gem5: error: p.json: BootParams.machine.cpus: expected an integer" \
        in result.stderr


def test_measure_script_needs_a_checkpoint(tmp_path):
    for name in ("no-vmlinux", "no-disk.img"):
        (tmp_path / name).write_text("")
    system = specs.load_system("skylake-4core")
    m = gem5_params.machine(system, vmlinux=tmp_path / "no-vmlinux",
                            disk_image=tmp_path / "no-disk.img", kernel_args="console=ttyS0")
    p = gem5_params.run_params.to_dict(gem5_params.measure_params(system, m, tmp_path / "cpt"))
    result = gem5_script(gem5.SCRIPT, p, tmp_path)
    assert result.returncode != 0
    assert "hotline-gem5: error: no checkpoint in" in result.stderr


SPEC = '''description = "tiny fork storm on gem5"
backend = "gem5"
root = "disk"
variants = ["baseline"]
systems = ["{system}"]
workloads = [{{ name = "forkstorm", scale = "smoke", params = {{ instances = 2, iterations = 2 }} }}]
timeout_s = 43200
'''


@pytest.mark.boot
def test_fork_storm_boots_once_and_measures_twice(tmp_path, tmp_results, monkeypatch):
    # Checkpoints of this test's own (an absolute path replaces the cache's
    # folder): the first run must boot, even when an earlier test run left one.
    monkeypatch.setattr(checkpoints, "CHECKPOINTS", tmp_path / "gem5-checkpoints")
    spec = tmp_path / "forkstorm-gem5-tiny.toml"
    spec.write_text(SPEC.format(system="skylake-4core-timing"))
    [run] = run_experiment(spec)
    assert run.failure is None, run.failure
    manifest = json.loads((run.directory / "manifest.json").read_text())
    assert manifest["guest"]["summary"]["loops_completed"] == 4
    # The boot happened in this run, and the guest log holds it and the region.
    assert (run.directory / "boot" / "guest.log").exists()
    log = (run.directory / "guest.log").read_text()
    assert "hotline: cpus-online=0-3 count=4" in log and "hotline-summary:" in log
    core = pd.read_parquet(run.directory / "gem5_core_stats.parquet")
    assert sorted(core.cpu) == [0, 1, 2, 3]
    assert (core.l1d_accesses > 0).any() and (core.committed_insts > 0).any()
    if extension_built():
        check_the_miss_profile(run, manifest)
    else:
        # gem5's own statistics only, said in one line (docs/gem5.md,
        # "Without the extension").
        assert set(manifest["tables"]) == {"roi"}
        assert manifest["account"]["misses_from"].startswith("not measured")
        assert manifest["account"]["without_extension"].startswith(
            gem5_params.run_params.NO_EXTENSION)
        assert not (run.directory / "gem5_misses_raw.parquet").exists()

    # The same machine with another L2 restores the same checkpoint: no boot.
    other = tmp_path / "skylake-4core-big-l2.toml"
    other.write_text('extends = "skylake-4core-timing"\n'
                     '[caches]\nl2 = { size_kib = 512, assoc = 8, latency_cycles = 14 }\n')
    real_path = specs.system_path
    monkeypatch.setattr(specs, "system_path",
                        lambda name: other if name == other.stem else real_path(name))
    monkeypatch.setattr(specs, "available_systems",
                        lambda: sorted([other.stem, *real_available()]))
    rerun = tmp_path / "forkstorm-gem5-tiny-big-l2.toml"
    rerun.write_text(SPEC.format(system=other.stem))
    [again] = run_experiment(rerun)
    assert again.failure is None, again.failure
    assert not (again.directory / "boot").exists()
    assert json.loads((again.directory / "manifest.json").read_text())["account"]["checkpoint"] \
        == manifest["account"]["checkpoint"]


def check_the_miss_profile(run, manifest):
    raw = pd.read_parquet(run.directory / "gem5_misses_raw.parquet")
    assert set(raw.level) <= {"L1D", "L2"} and (raw.level == "L1D").any()
    assert (raw.pc >= 0xFFFFFFFF80000000).any()    # the fork storm is mostly kernel time
    misses = pd.read_parquet(run.directory / "misses.parquet")
    flags = misses[(misses.object == "struct page") & (misses.field == "flags")]
    assert flags["count"].sum() > 0, "no miss on page->flags"
    # Counted inside gem5, the L1D's misses are gem5's own count of the
    # misses the L1Ds sent below (their MSHR misses, per command: the
    # demand total leaves the locked reads out), with the deferred writes
    # an MSHR sent again added and the upgrades a core's own L2 granted
    # taken out (docs/causes.md), over all cores: the two corrections are
    # counted per region, not per core.
    assert manifest["account"]["misses_from"] == "miss profile"
    summary = json.loads((run.directory / "gem5_miss_summary.json").read_text())
    stats = pd.read_parquet(run.directory / "gem5_stats.parquet")
    sent = stats["name"].str.fullmatch(
        r"board\.cache_hierarchy\.l1dcaches\d\.\w+\.mshrMisses::total")
    sent = int(stats.loc[sent & (stats["region"] >= 0), "value"].sum())
    assert raw.loc[raw.level == "L1D", "count"].sum() == \
        sent + summary["deferred_writes"] - summary["own_l2_upgrades"]
    # The miss profile classified every L1D miss, and found some lines
    # taken by another core's write.
    l1d = misses[misses.level == "L1D"]
    assert set(l1d.cause) <= {"compulsory", "capacity", "conflict", "coherence", "upgrade"}
    assert l1d.loc[l1d.cause == "coherence", "count"].sum() > 0
    coherence = pd.read_parquet(run.directory / "coherence.parquet")
    assert (coherence.cpu != coherence.thief_cpu).all() and coherence["count"].sum() == \
        l1d.loc[l1d.cause == "coherence", "count"].sum()
    # The report reads it as a QEMU run's: top instructions with symbols and
    # source lines, page->flags by instruction; what gem5 does not measure
    # is said to be so.
    assert set(manifest["tables"]) == {"misses", "coherence", "roi"}
    text, _, html = write_report(run.directory)
    assert "Top 25 instructions by L1D misses" in text and "page->flags: the instructions" in text
    top = text.split("Top 25 instructions by L1D misses")[1].split("Top 25 instructions by L2")[0]
    assert "+0x" in top and ".c:" in top, top[:2000]
    assert "Not measured: backend gem5 does not record reads after partial writes" in text


LRU_SPEC = '''description = "two LRU writers on gem5"
backend = "gem5"
root = "disk"
variants = ["baseline"]
systems = ["skylake-4core-timing"]
workloads = [{ name = "lruwriters", scale = "smoke", params = { writers = 2, file_mib = 4 } }]
timeout_s = 43200
'''


@pytest.mark.boot
def test_the_lru_writers_write_their_scratch_disks_on_gem5(tmp_path, tmp_results, monkeypatch):
    """The boot makes the writers' blank disks beside the checkpoint and
    mounts them; the restored run writes its files through them (into the
    copy-on-write layer: the images stay as the boot left them) and the
    kernel's LRU-lock counters come back."""
    monkeypatch.setattr(checkpoints, "CHECKPOINTS", tmp_path / "gem5-checkpoints")
    spec = tmp_path / "lruwriters-gem5.toml"
    spec.write_text(LRU_SPEC)
    [run] = run_experiment(spec)
    assert run.failure is None, run.failure
    manifest = json.loads((run.directory / "manifest.json").read_text())
    assert manifest["guest"]["summary"]["bytes_written"] == 2 * 4 << 20
    assert manifest["guest"]["counters"]["counters"]["lru_lock"] > 0
    [checkpoint] = (d for d in (tmp_path / "gem5-checkpoints").iterdir() if d.is_dir())
    images = sorted(checkpoint.glob("scratch-*.img"))
    assert [i.name for i in images] == ["scratch-0.img", "scratch-1.img"]
    measured = json.loads((run.directory / gem5.PARAMS_FILE).read_text())
    assert measured["machine"]["scratch_disks"] == [str(i) for i in images]
    booted = json.loads((run.directory / "boot" / "boot-params.json").read_text())
    assert len(booted["machine"]["scratch_disks"]) == 2
    # Restored again: what the first restore wrote did not reach the images.
    before = [hash_file(i) for i in images]
    monkeypatch.setenv("HOTLINE_RESULTS", str(tmp_path / "again"))
    [again] = run_experiment(spec)
    assert again.failure is None, again.failure
    assert not (again.directory / "boot").exists()
    assert [hash_file(i) for i in images] == before
    assert json.loads((again.directory / "manifest.json").read_text())["guest"]["summary"] \
        ["bytes_written"] == 2 * 4 << 20



NO_EXTENSION = pytest.mark.skipif(
    not extension_built(), reason="GEM5 was built without hotline's extension: build gem5 with "
                                  "EXTRAS=configs/gem5/extras (docs/gem5.md)")


def tiny_run(system: str, tmp):
    """The tiny fork storm on `system`, its run directory."""
    spec = tmp / f"forkstorm-gem5-tiny-{system}.toml"
    spec.write_text(SPEC.format(system=system))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOTLINE_RESULTS", str(tmp / "results"))
        [run] = run_experiment(spec)
    assert run.failure is None, run.failure
    return run


@pytest.fixture(scope="module")
def o3_run(tmp_path_factory):
    """The tiny fork storm on the P6-shaped O3 cores (pentium3-4way-o3)."""
    return tiny_run("pentium3-4way-o3", tmp_path_factory.mktemp("o3"))


@pytest.mark.boot
@NO_EXTENSION
def test_o3_cycle_profile_charges_every_cycle_once(o3_run):
    run = o3_run
    manifest = json.loads((run.directory / "manifest.json").read_text())
    assert {"cycles", "region_cycles"} <= set(manifest["tables"])
    cycles = pd.read_parquet(run.directory / "cycles.parquet")
    regions = pd.read_parquet(run.directory / "region_cycles.parquet")
    # The sum rule, per core and region: charged cycles + halted = the region's.
    charged = cycles.groupby(["region", "cpu"])["cycles"].sum()
    for _, r in regions.iterrows():
        assert charged.loc[(r.region, r.cpu)] + r.halted_cycles == \
            pytest.approx(r.cycles, rel=1e-12)
    # The unhalted cycles are the cycles gem5's O3 core itself ticked: its
    # numCycles counts every tick and none of the cycles it spent quiesced
    # (src/cpu/o3/cpu.cc: activateContext adds those to quiesceCycles only),
    # a region's stats being reset at its start.  Within 0.5% of the region:
    # a wake-up's cycle may fall on either side.
    ticked = pd.read_parquet(run.directory / "gem5_core_stats.parquet").set_index(
        ["region", "cpu"])["cycles"]
    for _, r in regions.iterrows():
        assert abs(r.cycles - r.halted_cycles - ticked.loc[(r.region, r.cpu)]) <= \
            0.005 * r.cycles, (r.region, r.cpu, r.cycles, r.halted_cycles)
    # Committed instructions per core, counted by the extension from commit's
    # probe points, are gem5's own statistic (committedInsts) for the regions.
    roi = pd.read_parquet(run.directory / "roi.parquet").set_index("cpu")["instructions"]
    assert cycles.groupby("cpu")["instructions"].sum().to_dict() == roi.to_dict()
    # The sampled view saw the same time: one sample per period of the
    # unhalted cycles (each core's last partial period gives none).
    regions = regions.set_index(["region", "cpu"]).sort_index()
    expected = (regions["cycles"] - regions["halted_cycles"]) // regions["sample_period"]
    samples = cycles.groupby(["region", "cpu"])["samples"].sum().reindex(expected.index,
                                                                        fill_value=0)
    assert (samples - expected).abs().max() <= 1
    # The fork storm is kernel time, and the report annotates its busiest
    # kernel function with time beside misses.
    kernel = cycles[cycles["pc"] >= 0xFFFFFFFF80000000]
    assert kernel["cycles"].sum() > cycles["cycles"].sum() / 2
    busiest = kernel.groupby("symbol")["cycles"].sum().idxmax()
    from hotline.report.annotate import write_annotation
    text, _, _ = write_annotation(run.directory, busiest)
    assert "Time (gem5 O3, exact):" in text and "'next'" in text and "'skid'" in text


@pytest.fixture(scope="module")
def sampled_run(tmp_path_factory):
    """The same tiny fork storm sampled (pentium3-4way-o3-sampled: after
    every 80,000 atomic cycles an O3 window, each core 8,000 micro-ops of
    warm-up, then 8,000 measured)."""
    return tiny_run("pentium3-4way-o3-sampled", tmp_path_factory.mktemp("sampled"))


@pytest.mark.boot
@NO_EXTENSION
def test_each_window_measures_the_micro_ops_it_was_given(sampled_run):
    """A window is counted in micro-ops: a core measures the system spec's
    micro-ops, or up to width - 1 more (the rest of its last cycle's
    commits), unless it fell asleep first (its table then has halted
    cycles, or none if its sleep ended the window: at most one core a
    window) or was asleep throughout (nothing measured).  Every table adds
    up (cycle_profile.read checks it)."""
    system = specs.load_system("pentium3-4way-o3-sampled")
    measure, width = system.gem5.sampling.measure_micro_ops, system.core.width
    tables = sorted((sampled_run.directory / "gem5" / "cycles").glob("region*.sample*.csv"))
    manifest = json.loads((sampled_run.directory / "manifest.json").read_text())["account"]
    assert len(tables) == manifest["sampled_windows"] * system.cpus
    full, short = 0, collections.Counter()
    for path in tables:
        meta, rows = cycle_profile.read(path)
        measured = int(rows["micro_ops"].sum())
        assert measured < measure + width, path
        full += measured >= measure
        if meta["halted_cycles"] == 0 and 0 < measured < measure:
            short[path.name.split(".cpu")[0]] += 1
    assert full > len(tables) // 3
    if not manifest["sampled_windows_capped"]:
        assert max(short.values(), default=0) <= 1, short


def dtb_misses_per_kilo_op(run, cores: str) -> float:
    """The data TLB's misses per 1,000 committed micro-ops of `cores`
    ("cores", or a sampled run's "o3cores") over the run's regions."""
    stats = pd.read_parquet(run.directory / "gem5_stats.parquet")
    stats = stats[(stats["region"] >= 0) &
                  stats["name"].str.startswith(f"board.processor.{cores}")]

    def total(pattern):
        return stats.loc[stats["name"].str.fullmatch(pattern), "value"].sum()
    return 1000 * total(r".*\.mmu\.dtb\.(?:rd|wr)Misses") / \
        total(r".*\.core\.commitStats0\.numOps")


@pytest.mark.boot
@NO_EXTENSION
def test_a_window_starts_with_its_atomic_cores_tlb_entries(o3_run, sampled_run):
    """gem5 empties a core's TLBs when it is switched out; the translation
    carry (configs/gem5/extras/translation_carry.hh) moves the entries
    across each switch, so the windows' O3 cores miss in their data TLB
    about as often per micro-op as the exact run's cores do.  Without the
    carry, at smoke scale, they missed 2.9 times as often (baseline-nomemcg:
    1.89 against 0.64 a thousand micro-ops); the bound of 1.5 was set
    before the first run with the carry."""
    windows = dtb_misses_per_kilo_op(sampled_run, "o3cores")
    exact = dtb_misses_per_kilo_op(o3_run, "cores")
    assert windows <= 1.5 * exact, (windows, exact)


@pytest.mark.boot
@NO_EXTENSION
def test_the_windows_estimate_the_sampled_runs_own_micro_ops(sampled_run):
    """The estimate's first half on the execution it came from: the top 20
    instructions by the micro-ops the sampled run itself committed (its
    atomic and O3 cores, counted by the retire counts) lie within the
    windows' 95% intervals of their micro-op share, but for at most 3 (with
    20 independent 95% intervals, 4 or more misses happen 1.6% of the
    time).  The counts fall short of gem5's statistic only by the atomic
    cores' faulting micro-ops."""
    manifest = json.loads((sampled_run.directory / "manifest.json").read_text())["account"]
    assert 0.99 * manifest["region_micro_ops"] <= manifest["counted_micro_ops"] <= \
        manifest["region_micro_ops"]
    sampled = pd.read_parquet(sampled_run.directory / "sampled_cycles.parquet").set_index("pc")
    missed = sampling.micro_ops_outside(sampled, manifest["counted_micro_ops"])
    assert len(missed) <= sampling.ALLOWED_OUTSIDE, missed


@pytest.mark.boot
@NO_EXTENSION
def test_the_windows_time_a_micro_op_as_the_exact_run_does(o3_run, sampled_run):
    """The second half, across the two executions: the top 20 instructions
    of the exact profile, by cycles, take the cycles per micro-op there
    that the windows' 95% intervals give them, but for at most 3.  3 on
    2026-11-28 with the TLBs carried across the switches (4 with empty
    TLBs, the windows 4% slow a micro-op); 2 with the windows pooled and
    the branch predictors warmed (session 26).  At smoke scale it still
    fails: 6 to 9 of 20 outside, 3 on pte-chain-inpage's 64-byte lines
    (docs/gem5.md)."""
    sampled = pd.read_parquet(sampled_run.directory / "sampled_cycles.parquet").set_index("pc")
    missed = sampling.time_outside(sampled, pd.read_parquet(o3_run.directory / "cycles.parquet"))
    assert len(missed) <= sampling.ALLOWED_OUTSIDE, missed


@pytest.mark.boot
@NO_EXTENSION
def test_the_sampled_profile_finds_the_exact_ones_top_instructions(o3_run, sampled_run):
    """The two halves together, across the two executions: the top 20
    instructions of the exact profile, by share of the unhalted cycles, lie
    within their sampled 95% intervals, but for at most 3.  2 on 2026-11-28
    with the TLBs carried (9 in sessions 18 and 20 with fixed-cycle
    windows, 6 in session 23 with empty TLBs); 1 with the windows pooled
    and the branch predictors warmed (session 26), and 0 to 4 in seven
    sampled runs at smoke scale (three kernels, both line sizes), where it
    had failed (docs/gem5.md)."""
    sampled = pd.read_parquet(sampled_run.directory / "sampled_cycles.parquet").set_index("pc")
    assert (sampled["windows"] > 100).all()
    manifest = json.loads((sampled_run.directory / "manifest.json").read_text())
    assert manifest["account"]["sampled_windows"] == sampled["windows"].iloc[0]
    missed = sampling.shares_outside(sampled, pd.read_parquet(o3_run.directory /
                                                              "cycles.parquet"))
    assert len(missed) <= sampling.ALLOWED_OUTSIDE, missed
