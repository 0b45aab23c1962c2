"""Every workload at smoke scale, all in one boot on 4 vCPUs, checked from
its own summary line against the parameters it was given."""

from pathlib import Path

import pytest

from hotline.disk_image import build_image
from hotline.kernel.build import build_kernel
from hotline.simulate import guest_log, scratch_disks
from hotline.simulate.command_line import kernel_command_line
from hotline.simulate.qemu import simulator as qemu
from hotline.specs import load_system
from hotline.workloads import available_workloads, load_workload
from tests.conftest import require_tools

pytestmark = pytest.mark.boot


def check_forkstorm(summary, params):
    assert summary["loops_completed"] == params["instances"] * params["iterations"]


def check_lmbench_lite(summary, params):
    n = params["iterations"]
    tests = summary["tests"]
    assert list(tests) == ["fork", "exec", "pipe", "ctx", "null", "segv", "fpe"][:params["first"]]
    assert all(t["iterations"] == n for t in tests.values())
    # System calls each test makes per iteration, by reading the program.
    assert tests["fork"]["syscalls"] == 2 * n                        # fork, wait4
    if params["first"] == 1:
        return
    assert tests["exec"]["syscalls"] == 3 * n                        # + execve
    assert tests["pipe"]["syscalls"] == 2 + 1 + 4 * n + 1            # 2 pipes, fork, 4 rw, wait
    p = params["processes"]
    assert tests["ctx"]["syscalls"] == p + (p - 1) + 2 * n * p + (p - 1)
    assert tests["null"]["syscalls"] == n
    assert tests["segv"]["syscalls"] == 2 + 2 * n                    # mmap, sigaction
    assert tests["fpe"]["syscalls"] == 1 + 2 * n                     # sigaction


def check_scriptstorm(summary, params):
    assert summary["scripts_run"] == params["scripts"]
    assert summary["cases_passed"] == 6 * params["scripts"] and summary["cases_failed"] == 0


def dumped_runs(pages: int, fragmented: bool) -> list[int]:
    """The lengths of the dumped runs, by a second implementation of the
    program's generator: alternating 1-10 dumped and 1-52 excluded pages."""
    if not fragmented:
        return [pages]
    state, runs, p = 12345, [], 0

    def lcg():
        nonlocal state
        state = (state * 1103515245 + 12345) & 0xFFFFFFFF
        return state >> 16

    while p < pages:
        dumped, excluded = 1 + lcg() % 10, 1 + lcg() % 52
        runs.append(min(dumped, pages - p))
        p = min(p + dumped + excluded, pages)
    return runs


def check_dumpcopy(summary, params):
    page, pages = 4096, params["file_mib"] * 256
    runs = dumped_runs(pages, params["filter"] != 0)
    buf, window = params["buffer_kib"] * 1024, params["window_kib"] * 1024
    assert params["map_whole_windows"] == 0   # the smoke scale maps run by run
    assert summary["pages"] == pages and summary["pages_dumped"] == sum(runs)
    ceil = lambda a, b: -(-a // b)
    assert summary["read"] == {"reads": sum(ceil(r * page, buf) for r in runs), "mmaps": 0,
                               "munmaps": 0, "writes": sum(ceil(r * page, buf) for r in runs),
                               "bytes": sum(runs) * page}
    mmaps = sum(ceil(r * page, window) for r in runs)
    assert summary["mmap"]["mmaps"] == mmaps and summary["mmap"]["munmaps"] == mmaps
    assert summary["mmap"]["bytes"] == sum(runs) * page


def check_cachebench(summary, params):
    sweep_small, sweep_large, pingpong, falseshare, storeload = summary["tests"]
    for sweep, kib in ((sweep_small, params["small_kib"]), (sweep_large, params["large_kib"])):
        assert sweep["accesses"] == params["passes"] * kib * 1024 // params["stride"]
    assert pingpong["final_turn"] == params["handoffs"]
    assert falseshare["counters"] == [params["iterations"]] * 2
    assert storeload["iterations"] == params["iterations"]


def check_lruwriters(summary, params):
    assert summary["bytes_written"] == params["writers"] * params["file_mib"] << 20
    # The smoke writers' 64 MiB fit in the boot's 512 MiB: nothing reclaimed.
    assert summary["pages_reclaimed"] == 0


def check_roimarkers(summary, params):
    # Five loops of n iterations load the word just after setting one of its
    # bytes to (uint8_t)i, the rest zero: three loops of A, which sets byte
    # 1: (i & 255) << 8, and two of B, which sets byte 2: (i & 255) << 16.
    n = params["iterations"]
    assert summary["checksum"] == sum(3 * ((i & 255) << 8) + 2 * ((i & 255) << 16)
                                      for i in range(n))


def check_groundtruth(summary, params):
    # One line per pattern of the chosen groups (all three at smoke scale),
    # none skipped: the guest has CPUs 0 and 1 to pin to.
    groups = {"forwarding", "drain", "sharing"}
    patterns = summary["patterns"]
    assert {p["group"] for p in patterns} == {g for g in groups if params[g]}
    assert all("skipped" not in p for p in patterns)
    for p in patterns:
        assert len(p["cycles"]) == len(p["baseline_cycles"]) == params["rounds"]


CHECKS = {"forkstorm": check_forkstorm, "lruwriters": check_lruwriters,
          "lmbench-lite": check_lmbench_lite,
          "scriptstorm": check_scriptstorm, "dumpcopy": check_dumpcopy,
          "cachebench": check_cachebench, "roimarkers": check_roimarkers,
          "groundtruth": check_groundtruth}


def test_every_workload_has_a_check():
    assert sorted(CHECKS) == available_workloads()


def test_all_workloads_at_smoke_scale_in_one_boot(tmp_path):
    require_tools("qemu-system-x86_64", "make", "gcc", "mke2fs")
    names = available_workloads()
    params = {name: load_workload(name).resolve_params("smoke", {}) for name in names}
    kernel, image = build_kernel("baseline"), build_image()
    # Scratch disks are named /dev/vda, vdb, ... from the first: one workload
    # of a boot may have them.
    (disk_user,) = [n for n in names if load_workload(n).scratch_disks]
    scratch = load_workload(disk_user).scratch_disks
    disks = scratch_disks.make(tmp_path, scratch.count(params[disk_user]),
                                    scratch.size_mib(params[disk_user]))
    cmd = qemu.command(bzimage=kernel.bzimage, image=image, root="initramfs", cpus=4,
                       memory_mib=512, cpu_model="max,la57=off", mode="deterministic",
                       append=kernel_command_line(list(params.items())),
                       serial_log=Path(guest_log.FILE), scratch_disks=disks)
    outcome = qemu.run(cmd, tmp_path, cpus=4, workloads=names, timeout_s=900,
                       label="all workloads")
    assert outcome.failure is None, outcome.failure
    for name in names:
        summary = outcome.report.summaries[name]
        for key, value in params[name].items():
            assert summary[key] == value
        CHECKS[name](summary, params[name])


def test_writers_that_write_more_than_memory_make_the_kernel_reclaim(tmp_path):
    """Seed 001's load is page replacement: two writers of 64 MiB in the
    64 MiB guest of pentium3-4way-64m must reclaim at least what the page
    cache cannot hold, the written pages beyond the guest's memory
    (128 - 64 MiB = 16,384 pages of 4 KiB), and report it."""
    require_tools("qemu-system-x86_64", "make", "gcc", "mke2fs")
    memory_mib = load_system("pentium3-4way-64m").memory_mib
    writers = load_workload("lruwriters")
    params = writers.resolve_params("smoke", {"writers": 2, "file_mib": memory_mib})
    kernel, image = build_kernel("baseline"), build_image()
    disks = scratch_disks.make(tmp_path, writers.scratch_disks.count(params),
                               writers.scratch_disks.size_mib(params))
    cmd = qemu.command(bzimage=kernel.bzimage, image=image, root="initramfs", cpus=4,
                       memory_mib=memory_mib, cpu_model="max,la57=off", mode="parallel",
                       append=kernel_command_line([("lruwriters", params)]),
                       serial_log=Path(guest_log.FILE), scratch_disks=disks)
    outcome = qemu.run(cmd, tmp_path, cpus=4, workloads=["lruwriters"], timeout_s=900,
                       label="lruwriters in 64 MiB")
    assert outcome.failure is None, outcome.failure
    summary = outcome.report.summaries["lruwriters"]
    assert summary["bytes_written"] == 2 * memory_mib << 20
    assert summary["pages_reclaimed"] >= memory_mib << 20 >> 12
