"""The gem5 backend: hotline's experiment on gem5's X86Board (simulator),
what a run's configuration script is told (params), and readers for what
gem5 leaves in its output directory: stats.txt (stats) and the tables of
hotline's gem5 extension (miss_profile, cycle_profile, retire_count).  The
scripts that run inside gem5 are configs/gem5/."""

import dataclasses
from pathlib import Path

from hotline.errors import HotlineError
from hotline.simulate.backend import Backend, Job, Outcome
from hotline.simulate.gem5 import checkpoints, params, simulator
from hotline.workloads import load_workload

# Memory a simulation needs beyond the guest's: gem5's object graph and
# the tables read after it ends.
GEM5_OVERHEAD_MIB = 4096


class Gem5(Backend):
    name = "gem5"
    markers = "m5"
    # gem5's PC has no HPET, whose lock is the shared line a QEMU guest's
    # own choice of clocksource adds; the kernel's choice stands.
    clocksource = None
    contends_as_hardware = True

    def check_spec(self, spec, path: Path) -> None:
        # gem5's X86Board boots from the IDE disk.
        if spec.root != "disk":
            raise HotlineError(f"{path}: key 'root': backend \"gem5\" boots from the disk "
                               "image: set root = \"disk\"")

    def check(self, spec, path: Path) -> None:
        simulator.check_experiment(spec, path)

    def identity(self) -> dict:
        return {"version": simulator.gem5_version(), "gem5_config": simulator.config_hash()}

    def settings(self, spec, system, repeat: int) -> dict:
        # Only for the runs it perturbs, so that a single run keeps the key
        # it had before repeats were perturbed.
        jitter = params.perturbation(system, repeat, spec.repeats)
        return {"perturbation": {"memory_latency_var": jitter.latency_var,
                                 "seed": jitter.seed}} if jitter else {}

    def perturbation(self, spec) -> str | None:
        return (f"a jitter of up to {params.JITTER} on every memory access, gem5's generator "
                "seeded with the repeat's index plus one, the first repeat's too")

    def threads(self, spec, system) -> int:
        return 1    # gem5 simulates every CPU on one thread

    def memory_mib(self, spec, system) -> int:
        return system.memory_mib + GEM5_OVERHEAD_MIB

    def run(self, job: Job) -> Outcome:
        need = load_workload(job.workload).scratch_disks
        scratch = checkpoints.ScratchImages(need.count(job.params), need.size_mib(job.params)) \
            if need else None
        outcome, account = simulator.simulate(
            job.work, run_id=job.run_id, system=job.system, kernel_dir=job.kernel.directory,
            kernel_key=job.kernel.key, vmlinux=job.kernel.vmlinux, disk_image=job.image.path,
            image_key=job.image.key, append=job.append, workloads=[job.workload],
            timeout_s=job.spec.timeout_s, repeat=job.repeat, repeats=job.spec.repeats,
            scratch=scratch)
        # simulate() also turns gem5's outputs into the tables; the account
        # says what it read (regions, misses).
        return dataclasses.replace(outcome, account=account)


BACKEND = Gem5()
