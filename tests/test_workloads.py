"""Every workload at smoke scale, all in one boot on 4 vCPUs, checked from
its own summary line against the parameters it was given."""

from pathlib import Path

import pytest

from hotline.disk_image import build_image
from hotline.kernel.build import build_kernel
from hotline.simulate import qemu
from hotline.workloads import available_workloads, load_workload
from tests.conftest import require_tools

pytestmark = pytest.mark.boot


def check_forkstorm(summary, params):
    assert summary["loops_completed"] == params["instances"] * params["iterations"]


def check_lmbench_lite(summary, params):
    n = params["iterations"]
    tests = summary["tests"]
    assert list(tests) == ["fork", "exec", "pipe", "ctx", "null", "segv", "fpe"]
    assert all(t["iterations"] == n for t in tests.values())
    # System calls each test makes per iteration, by reading the program.
    assert tests["fork"]["syscalls"] == 2 * n                        # fork, wait4
    assert tests["exec"]["syscalls"] == 3 * n                        # + execve
    assert tests["pipe"]["syscalls"] == 2 + 1 + 4 * n + 1            # 2 pipes, fork, 4 rw, wait
    p = params["processes"]
    assert tests["ctx"]["syscalls"] == p + (p - 1) + 2 * n * p + (p - 1)
    assert tests["null"]["syscalls"] == n
    assert tests["segv"]["syscalls"] == 2 + 2 * n                    # mmap, sigaction
    assert tests["fpe"]["syscalls"] == 1 + 2 * n                     # sigaction


CHECKS = {"forkstorm": check_forkstorm, "lmbench-lite": check_lmbench_lite}


def test_every_workload_has_a_check():
    assert sorted(CHECKS) == available_workloads()


def test_all_workloads_at_smoke_scale_in_one_boot(tmp_path):
    require_tools("qemu-system-x86_64", "make", "gcc", "mke2fs")
    names = available_workloads()
    params = {name: load_workload(name).resolve_params("smoke", {}) for name in names}
    kernel, image = build_kernel("baseline"), build_image()
    cmd = qemu.command(bzimage=kernel.bzimage, image=image, root="initramfs", cpus=4,
                       memory_mib=512, cpu_model="max,la57=off", mode="deterministic",
                       append=qemu.kernel_command_line(list(params.items())),
                       serial_log=Path(qemu.SERIAL_LOG))
    outcome = qemu.run(cmd, tmp_path, cpus=4, workloads=names, timeout_s=900,
                       label="all workloads")
    assert outcome.failure is None, outcome.failure
    for name in names:
        summary = outcome.report.summaries[name]
        for key, value in params[name].items():
            assert summary[key] == value
        CHECKS[name](summary, params[name])
