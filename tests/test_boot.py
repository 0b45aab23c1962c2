"""End to end: build (or reuse) the baseline kernel and the disk image, boot
4 vCPUs under QEMU and check from the guest's own output that 4 CPUs came up
and the fork storm finished its iterations; then the failure paths."""

import json
from pathlib import Path

import pandas as pd
import pytest

from hotline import paths
from hotline.disk_image import build_image
from hotline.experiment import run_experiment
from hotline.kernel.build import build_kernel
from hotline.report.render import write_report
from hotline.simulate import guest_log
from hotline.simulate.command_line import kernel_command_line
from hotline.simulate.qemu import simulator as qemu
from hotline.workloads import available_workloads, load_workload
from tests.conftest import require_tools

pytestmark = pytest.mark.boot
DEMO = paths.CONFIGS / "experiments" / "demo.toml"


@pytest.fixture(scope="module", autouse=True)
def tools():
    require_tools("qemu-system-x86_64", "make", "gcc", "mke2fs")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOTLINE_RESULTS", str(tmp_path_factory.mktemp("results")))
        first = run_experiment(DEMO)
        again = run_experiment(DEMO)
    assert len(first) == 1
    return first[0], again[0]


def test_four_cpus_and_the_fork_storm_completed(demo):
    run, _ = demo
    assert run.failure is None, run.failure
    log = (run.directory / "guest.log").read_text()
    assert "smp: Brought up 1 node, 4 CPUs" in log
    assert "hotline: cpus-online=0-3 count=4" in log
    smoke = load_workload("forkstorm").scales["smoke"]
    summary = json.loads(log.split("hotline-summary: ")[1].splitlines()[0])
    assert summary["instances"] == smoke["instances"]
    assert summary["iterations"] == smoke["iterations"]
    assert summary["loops_completed"] == smoke["instances"] * smoke["iterations"]


def test_manifest_names_every_input(demo):
    run, _ = demo
    manifest = json.loads((run.directory / "manifest.json").read_text())
    inputs = manifest["inputs"]
    assert manifest["status"] == "ok" and manifest["wall_seconds"] > 0
    assert inputs["kernel"]["variant"] == "baseline"
    assert inputs["kernel"]["version"].startswith("6.1.")
    assert len(inputs["kernel"]["outputs"]["bzImage"]) == 64
    assert inputs["guest_image"]["root"] == "initramfs"
    assert len(inputs["guest_image"]["sha256"]) == 64
    assert inputs["system"]["name"] == "skylake-4core" and inputs["system"]["spec"]["cpus"] == 4
    assert inputs["workload"] == {"name": "forkstorm", "scale": "smoke",
                                  "params": load_workload("forkstorm").scales["smoke"]}
    assert inputs["backend"]["version"].startswith("QEMU emulator version 10.")
    assert inputs["backend"]["mode"] == "deterministic"
    assert "nokaslr" in inputs["kernel_command_line"]
    assert "exec qemu-system-x86_64 " in (run.directory / "command.sh").read_text()


def test_unchanged_run_is_reused(demo):
    run, again = demo
    assert again.reused and again.directory == run.directory


def test_layout_facts_of_the_built_kernel():
    layout = json.loads((build_kernel("baseline").directory / "layout.json").read_text())
    assert layout["sizeof"] == 64
    fields = {f["name"]: f for f in layout["fields"] if f["primary"]}
    assert fields["flags"]["offset"] == 0 and fields["flags"]["size"] == 8
    assert fields["_refcount"]["size"] == 4
    assert layout["flag_bits"]["PG_locked"] == 0
    assert layout["symbols"]["vmemmap_base"] == "0xffffea0000000000"


def boot(tmp_path, root, append, mode="deterministic", cpus=2):
    kernel, image = build_kernel("baseline"), build_image()
    cmd = qemu.command(bzimage=kernel.bzimage, image=image, root=root, cpus=cpus,
                       memory_mib=256, cpu_model="max,la57=off", mode=mode,
                       append=append, serial_log=Path(guest_log.FILE))
    names = [w.split("=", 1)[1] for w in append.split() if w.startswith("hotline.workload=")]
    return qemu.run(cmd, tmp_path, cpus=cpus, workloads=names[0].split(","), timeout_s=300,
                    label="test boot")


def test_parallel_mode_boots_four_cpus(tmp_path):
    params = {"instances": 4, "iterations": 3}
    outcome = boot(tmp_path, "initramfs", kernel_command_line([("forkstorm", params)]),
                   mode="parallel", cpus=4)
    assert outcome.failure is None, outcome.failure
    assert outcome.report.cpus_online == 4
    assert outcome.report.summaries["forkstorm"]["loops_completed"] == 12


def test_boot_from_the_ide_disk(tmp_path):
    """The disk path (ATA_PIIX, SCSI disk, ext4 root), as gem5's X86Board boots."""
    params = {"instances": 2, "iterations": 3}
    outcome = boot(tmp_path, "disk", kernel_command_line([("forkstorm", params)], root="disk"))
    assert outcome.failure is None, outcome.failure
    log = (tmp_path / "guest.log").read_text()
    assert "EXT4-fs (sda): mounted filesystem" in log
    assert outcome.report.summaries["forkstorm"]["loops_completed"] == 6


def test_unknown_workload_stops_the_guest_with_a_message(tmp_path):
    outcome = boot(tmp_path, "initramfs", kernel_command_line([("no-such-workload", {})]))
    assert outcome.failure == ("the guest reported: unknown workload 'no-such-workload'; "
                               f"known: {' '.join(available_workloads())}")


def test_panic_fails_the_run(tmp_path):
    append = kernel_command_line([("forkstorm", {})], root="disk")
    outcome = boot(tmp_path, "disk", append.replace("root=/dev/sda", "root=/dev/sdz"))
    assert outcome.failure == "the guest kernel panicked or oopsed"


def test_deterministic_mode_repeats_the_region_of_interest_exactly(tmp_path, monkeypatch):
    """Two deterministic runs of the fork storm count the same instructions,
    loads and stores of all vCPUs inside the region of interest (roi-count
    plugin), and give bit-identical results tables (hotline-cache)."""
    monkeypatch.setenv("HOTLINE_RESULTS", str(tmp_path / "results"))
    outputs = {}
    for plugin, output in (("roi-count", "roi-count.out"), ("hotline-cache", "misses.parquet")):
        spec = tmp_path / f"{plugin}.toml"
        spec.write_text('description = "determinism"\nvariants = ["baseline"]\n'
                        'systems = ["skylake-4core"]\n'
                        'workloads = [{ name = "forkstorm", scale = "smoke" }]\n'
                        f'[qemu]\nplugin = "{plugin}"\n')
        outputs[plugin] = []
        for _ in range(2):
            (result,) = run_experiment(spec, rerun=True)
            assert result.failure is None, result.failure
            outputs[plugin].append((result.directory / output).read_bytes())
    lines = outputs["roi-count"][0].decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("roi 0 insns=")
    counts = dict(field.split("=") for field in lines[0].split()[2:])
    # 40 loops of fork+exec of cat and wc: well over a million instructions.
    # QEMU executes a rep-prefixed string instruction one iteration at a
    # time, so even clear_page's rep stosq makes one store per instruction
    # executed: fewer loads, and fewer stores, than instructions.
    assert int(counts["insns"]) > 1_000_000
    assert 0 < int(counts["loads"]) < int(counts["insns"])
    assert 0 < int(counts["stores"]) < int(counts["insns"])
    assert outputs["roi-count"][1] == outputs["roi-count"][0]
    assert outputs["hotline-cache"][1] == outputs["hotline-cache"][0]


def test_the_demo_report_names_kernel_instructions_and_page_flags(demo):
    """The report of the demo's fork storm: the top L1D and L2 instructions
    are kernel functions with source lines, and page->flags misses are
    listed by instruction and cause."""
    run, _ = demo
    text, text_path, html_path = write_report(run.directory)
    assert text_path.read_text() == text and "<table" in html_path.read_text()
    misses = pd.read_parquet(run.directory / "misses.parquet")
    kernel_l1d = misses[(misses["level"] == "L1D") & (misses["space"] == "kernel")]
    assert kernel_l1d["count"].sum() > 0
    assert (kernel_l1d["symbol"] != "").mean() > 0.99
    assert (kernel_l1d["source_line"].str.contains(r"\.[chS]:\d+")).mean() > 0.9
    flags = misses[(misses["object"] == "struct page") & (misses["field"] == "flags")]
    assert flags["count"].sum() > 0
    for title in ("Top 25 instructions by L1D misses", "Top 25 instructions by L2 misses",
                  "struct page by field", "page->flags: the instructions that miss",
                  "page->flags: who stole it", "Reads after partial writes"):
        assert title in text
    busiest = kernel_l1d.groupby("symbol")["count"].sum().idxmax()
    assert f"{busiest}: annotated" in text
