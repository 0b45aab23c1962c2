"""stats.txt in gem5 v24.0's text format (src/base/stats/text.cc), written
here by hand: two region dumps and gem5's own dump at exit; and a measuring
run's output directory of a gem5 built without hotline's extension, read
into gem5's own statistics."""

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from hotline import paths, specs
from hotline.errors import HotlineError
from hotline.simulate.gem5 import checkpoints, params, simulator, stats


def line(name, value, desc="a statistic (Count)", pdf=None):
    """One statistic as gem5 prints it: name padded to 40, value right-aligned
    in 12, for vector elements percentage and cumulative in 10 each."""
    text = f"{name:<40} {value:>12}"
    if pdf is not None:
        text += f" {pdf[0]:>10} {pdf[1]:>10}"
    return f"{text} # {desc}"


def dump(stat_lines):
    return "\n".join(["", stats.BEGIN, ""] + stat_lines + ["", stats.END, ""])


def core_lines(cpu, index, scale):
    ch = "board.cache_hierarchy"
    core = f"board.processor.cores{index}.core"
    return [
        line(f"{ch}.l1dcaches{index}.demandAccesses::cpu{cpu}.data", 1000 * scale,
             pdf=("100.00%", "100.00%")),
        line(f"{ch}.l1dcaches{index}.demandAccesses::total", 1000 * scale),
        line(f"{ch}.l1dcaches{index}.demandMisses::total", 50 * scale),
        line(f"{ch}.l1dcaches{index}.demandMissLatency::total", 150000 * scale,
             "number of demand (read+write) miss ticks (Tick)"),
        line(f"{ch}.l1dcaches{index}.demandAvgMissLatency::total", "3000.000000"),
        line(f"{ch}.l1icaches{index}.demandAccesses::total", 800 * scale),
        line(f"{ch}.l1icaches{index}.demandMisses::total", 8 * scale),
        line(f"{ch}.l2caches{index}.demandAccesses::total", 58 * scale),
        line(f"{ch}.l2caches{index}.demandMisses::total", 20 * scale),
        line(f"{ch}.l2caches{index}.demandMissLatency::total", 400000 * scale),
        line(f"{ch}.l2caches{index}.demandMissRate::total", "nan"),
        line(f"{core}.lsq0.forwLoads", 30 * scale),
        line(f"{core}.lsq0.rescheduledLoads", 3 * scale),
        line(f"{core}.commitStats0.numInsts", 5000 * scale),
        line(f"{core}.numCycles", 9000 * scale),
        line(f"{core}.lsq0.loadToUse::samples", 100),
        line(f"{core}.lsq0.loadToUse::0-9", 90, pdf=("90.00%", "90.00%")),
    ]


def stats_text(cpus=2, index=lambda cpu: cpu):
    header = [line("simSeconds", "0.000100", "Number of seconds simulated (Second)"),
              line("simTicks", 100000000),
              line("hostSeconds", "12.50", "Real time elapsed on the host (Second)"),
              line("hostInstRate", 80000, "Simulator instruction rate (inst/s) "
                   "((Count/Second))")]
    region = header + [l for cpu in range(cpus) for l in core_lines(cpu, index(cpu), 1)]
    final = header + [l for cpu in range(cpus) for l in core_lines(cpu, index(cpu), 3)]
    return dump(region) + dump(final)


def test_parse_dumps():
    dumps = stats.parse_dumps(stats_text())
    assert len(dumps) == 2
    assert dumps[0]["simSeconds"] == 0.0001
    assert dumps[0]["board.cache_hierarchy.l1dcaches1.demandMisses::total"] == 50
    assert dumps[0]["board.cache_hierarchy.l1dcaches0.demandAccesses::cpu0.data"] == 1000
    assert math.isnan(dumps[0]["board.cache_hierarchy.l2caches0.demandMissRate::total"])
    assert dumps[1]["board.processor.cores1.core.lsq0.forwLoads"] == 90


def test_long_table_and_regions(tmp_path):
    path = tmp_path / "stats.txt"
    path.write_text(stats_text())
    long = stats.read_stats(path, "run-1", regions=1)
    assert list(long.columns) == ["run", "dump", "region", "name", "value"]
    assert sorted(set(zip(long.dump, long.region))) == [(0, 0), (1, -1)]
    assert (long.run == "run-1").all()


def test_core_summary(tmp_path):
    path = tmp_path / "stats.txt"
    path.write_text(stats_text())
    summary = stats.core_summary(stats.read_stats(path, "run-1", regions=1))
    assert summary.cpu.tolist() == [0, 1] and (summary.region == 0).all()
    row = summary.iloc[1].to_dict()
    assert row["l1d_accesses"] == 1000 and row["l1d_misses"] == 50
    assert row["l1d_miss_latency_ticks"] == 150000
    assert row["l1i_accesses"] == 800 and row["l1i_misses"] == 8
    assert row["l2_accesses"] == 58 and row["l2_misses"] == 20
    assert row["l2_miss_latency_ticks"] == 400000
    assert row["lsq_forwarded_loads"] == 30 and row["lsq_rescheduled_loads"] == 3
    assert row["committed_insts"] == 5000 and row["cycles"] == 9000
    assert row["sim_seconds"] == 0.0001 and row["host_seconds"] == 12.5
    assert row["host_inst_rate"] == 80000


def test_one_core_has_unnumbered_names(tmp_path):
    # gem5 numbers SimObject vector elements only when there are two or more.
    path = tmp_path / "stats.txt"
    path.write_text(stats_text(cpus=1, index=lambda cpu: ""))
    summary = stats.core_summary(stats.read_stats(path, "r", regions=1))
    assert summary.cpu.tolist() == [0] and summary.l2_misses.tolist() == [20]


def test_timing_cpu_has_no_lsq_figures(tmp_path):
    path = tmp_path / "stats.txt"
    path.write_text("\n".join(l for l in stats_text().splitlines() if ".lsq0." not in l))
    summary = stats.core_summary(stats.read_stats(path, "r", regions=1))
    assert summary.lsq_forwarded_loads.isna().all()


def test_too_few_dumps(tmp_path):
    path = tmp_path / "stats.txt"
    path.write_text(stats_text())
    with pytest.raises(HotlineError, match="2 stats dump"):
        stats.read_stats(path, "r", regions=3)
    with pytest.raises(HotlineError, match="no stats file"):
        stats.read_stats(tmp_path / "none.txt", "r", regions=1)


def run_without_extension(run_dir: Path, system: str, line: str = ""):
    """A measuring run's outputs as gem5 leaves them (one region, its stats
    dump and gem5's at exit, and where `line` is given the script's line
    saying the extension is missing, printed into gem5.log and written to
    its file) and its parameters."""
    spec = specs.load_system(system)
    machine = params.machine(spec, vmlinux=Path("/k/vmlinux"), disk_image=Path("/i/disk.img"),
                             kernel_args="console=ttyS0")
    measure = params.measure_params(spec, machine, Path("/c/cpt"))
    out = run_dir / simulator.OUTDIR
    out.mkdir(parents=True)
    (out / params.ROI_FILE).write_text(json.dumps({"regions": [{"begin": 10, "end": 20}]}))
    (out / "stats.txt").write_text(stats_text())
    (run_dir / simulator.LOG).write_text("gem5 version 24.0.0.1\n" +
                                         (f"hotline-gem5: {line}\n" if line else ""))
    if line:
        (out / params.run_params.NO_EXTENSION_FILE).write_text(line + "\n")
    return measure


def test_a_run_without_the_extension_gives_gem5s_statistics_and_says_so(tmp_path, capsys):
    # The O3 run on classic caches asks for both of the extension's profiles.
    line = params.run_params.no_extension(["HotlineCycleProfile", "HotlineMissProfile"],
                                          "/h/configs/gem5/extras")
    measure = run_without_extension(tmp_path, "pentium3-4way-o3", line)
    assert measure.miss_profile is not None and measure.cycle_profile is not None
    tables, account = simulator.collect(tmp_path, "run-1", measure, tmp_path / "no-kernel",
                                        checkpoints.Checkpoint("key", tmp_path / "cpt"))
    # gem5's own statistics, and the results table they fill; no misses,
    # no cycles, and no kernel read to name them.
    assert tables == {"roi": tmp_path / "roi.parquet"}
    assert pd.read_parquet(tmp_path / "roi.parquet")["instructions"].tolist() == [5000, 5000]
    assert pd.read_parquet(tmp_path / "gem5_core_stats.parquet")["l1d_misses"].tolist() == \
        [50, 50]
    assert (tmp_path / "gem5_stats.parquet").exists()
    # No rapw table either: gem5 runs make none (gem5_core_stats has the O3
    # LSQ's rescheduled loads).
    for name in ("gem5_misses_raw", "misses", "coherence", "cycles", "region_cycles", "rapw"):
        assert not (tmp_path / f"{name}.parquet").exists(), name
    # The one line: what the extension adds and how to build it, as the
    # build section of docs/gem5.md builds it; said, and kept in the account.
    assert "the miss profile (misses by instruction, data field and cause)" in line
    assert "the cycle profile (O3 cycles by instruction)" in line
    assert "scons EXTRAS=/h/configs/gem5/extras build/X86/gem5.opt" in line
    documented = "scons EXTRAS=/path/to/hotline/configs/gem5/extras build/X86/gem5.opt"
    assert documented in (paths.REPO / "docs" / "gem5.md").read_text()
    assert documented in params.run_params.build_extension("/path/to/hotline/configs/gem5/extras")
    assert capsys.readouterr().err.splitlines() == [f"hotline: run-1: {line}"]
    assert account["without_extension"] == line
    assert account["misses_from"] == "not measured: gem5 built without hotline's extension"
    assert account["cycle_profile"] == "not measured: gem5 built without hotline's extension"


def test_missing_profiles_of_a_gem5_with_the_extension_fail_the_run(tmp_path):
    # Without the script's line, a run that wrote no miss profile is broken.
    measure = run_without_extension(tmp_path, "pentium3-4way-timing")
    with pytest.raises(HotlineError, match="missing; gem5 wrote 0 of 1 miss profiles"):
        simulator.collect(tmp_path, "run-1", measure, tmp_path / "no-kernel",
                          checkpoints.Checkpoint("key", tmp_path / "cpt"))
