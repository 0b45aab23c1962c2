"""The QEMU backend: QEMU 10.0's full-system TCG emulation (simulator), the
TCG plugins that instrument it (plugins; the C sources are in plugins/),
the hotline-cache plugin's output (plugin_output) turned into the results
tables (cache_tables), and the plugins' cache model driven from Python
(cachemodel)."""

import math
from pathlib import Path

from hotline.console import phase, say
from hotline.errors import HotlineError
from hotline.specs import load_system
from hotline.simulate import guest_log, scratch_disks
from hotline.simulate.backend import Backend, Job, Outcome
from hotline.simulate.qemu import plugins, simulator
from hotline.simulate.qemu.cache_tables import write_tables
from hotline.workloads import load_workload

# Memory a simulation needs beyond the guest's: QEMU with its translation
# cache and the Python that watches it (measured: 415 MB for QEMU with
# hotline-cache on the smoke fork storm); with hotline-cache, the results
# tables, built in memory from the plugin's output after QEMU ends (2.9 GB
# for the LRU writers at smoke scale, 0.9 GB for the fork storm).
QEMU_OVERHEAD_MIB = 1024
CACHE_TABLES_OVERHEAD_MIB = 4096


# Instructions per vCPU turn in deterministic mode unless the spec says
# otherwise: where the fork storm's coherence figures stopped moving
# (docs/interleaving.md, bench/results/quantum_convergence.json).
DEFAULT_QUANTUM = 10_000
# How the model sees the turns of one quantum unless the spec says: woven
# block by block, as CPUs running at the same moment (weave.c).
DEFAULT_INTERLEAVE = "block"


def _turns_bounded(spec) -> bool:
    """Whether the spec's runs can have bounded turns: the timer lives in
    hotline-cache, and only round-robin TCG takes turns."""
    return spec.qemu.mode == "deterministic" and spec.qemu.plugin == "hotline-cache"


def _golden_step(n: int) -> int:
    """The step nearest n/phi that has no factor in common with n: walking
    0, step, 2 step, ... modulo n visits every residue once, each new one
    in the largest gap left (the three-gap theorem)."""
    step = max(round(n / 1.6180339887498949), 1)
    while math.gcd(step, n) != 1:
        step += 1
    return step


class Qemu(Backend):
    name = "qemu"
    markers = "nop"
    # TCG's TSC counts the one virtual clock all vCPUs share (instructions
    # in deterministic mode, the host's TSC in parallel mode), so it is
    # synchronized, but the kernel cannot tell and would read the HPET.
    clocksource = "tsc"
    # In deterministic mode a waiter's PAUSE ends its turn (one spin per
    # contended lock by construction); in parallel mode its spins count the
    # host's scheduling (docs/kernel-counters.md).
    contends_as_hardware = False

    def check_spec(self, spec, path: Path) -> None:
        run = spec.qemu
        if run.plugin is not None and run.plugin not in plugins.available_plugins():
            raise HotlineError(f"{path}: key 'qemu.plugin': unknown plugin '{run.plugin}'; "
                               f"available: {', '.join(plugins.available_plugins())}")
        if run.quantum is not None and not _turns_bounded(spec):
            raise HotlineError(f"{path}: key 'qemu.quantum': bounds the vCPU turns of "
                               "deterministic mode, through the hotline-cache plugin: set mode = "
                               "\"deterministic\" and plugin = \"hotline-cache\", or remove it")
        if run.interleave == "block" and not self.quantum(spec):
            raise HotlineError(f"{path}: key 'qemu.interleave': \"block\" weaves the turns of a "
                               "quantum: set a quantum above 0 (deterministic mode, plugin = "
                               "\"hotline-cache\"), or remove it")

        if self.quantum(spec) and spec.repeats > 1:
            for group in spec.groups():
                for name in group.systems or spec.systems:
                    distinct = self.distinct_phases(spec, load_system(name))
                    if spec.repeats > distinct:
                        raise HotlineError(
                            f"{path}: key 'repeats': {spec.repeats} repeats, but on system "
                            f"'{name}' the vCPU turns have only {distinct} distinct phases "
                            "(quantum x cpus), so repeats would be the same run: ask for at "
                            f"most {distinct}, or a larger quantum")

    def check(self, spec, path: Path) -> None:
        pass

    def mode(self, spec) -> str:
        return spec.qemu.mode

    def settings(self, spec, system, repeat: int) -> dict:
        # Each only if set, so that runs without it keep the key they had.
        quantum, phase = self.quantum(spec), self.phase(spec, system, repeat)
        interleave = self.interleave(spec)
        return {**({"quantum": quantum} if quantum else {}),
                **({"phase": phase} if phase else {}),
                **({"interleave": interleave} if interleave != "turn" else {})}

    def perturbation(self, spec) -> str | None:
        if spec.qemu.mode == "parallel":
            return "the host's thread timing (not repeatable)"
        if self.quantum(spec):
            return "the phase of the vCPU turns (the repeat's phase in its record)"
        return None

    @staticmethod
    def quantum(spec) -> int:
        """Instructions per vCPU turn as the run will have them; 0: QEMU's own."""
        if not _turns_bounded(spec):
            return 0
        return DEFAULT_QUANTUM if spec.qemu.quantum is None else spec.qemu.quantum

    @classmethod
    def interleave(cls, spec) -> str:
        """How the model sees the vCPUs' turns (weave.c): "turn" wherever
        the turns are not bounded, since the weave's windows are the
        quantum's."""
        if not cls.quantum(spec):
            return "turn"
        return spec.qemu.interleave or DEFAULT_INTERLEAVE

    @classmethod
    def phase(cls, spec, system, repeat: int) -> int:
        """Virtual nanoseconds by which the turns' deadlines of this repeat
        come earlier (quantum.c's phase=): none for the first repeat, and
        for repeat r the r-th step of a golden-ratio walk around the
        period (quantum x cpus), which visits each phase in (0, period)
        once before any twice: distinct for every repeat below the period
        (check_spec refuses more), spread evenly for a few, fixed by the
        repeat's index alone, so that adding repeats changes none before."""
        period = cls.quantum(spec) * system.cpus
        if repeat == 0 or period < 2:
            return 0
        return 1 + repeat * _golden_step(period - 1) % (period - 1)

    @classmethod
    def distinct_phases(cls, spec, system) -> int:
        """How many repeats of the spec on this system can differ by phase."""
        return max(cls.quantum(spec) * system.cpus, 1)

    def identity(self) -> dict:
        return {"version": simulator.qemu_version()}

    def planned_tool(self, spec) -> plugins.Plugin | None:
        return plugins.planned_plugin(spec.qemu.plugin) if spec.qemu.plugin else None

    def build_tool(self, spec) -> plugins.Plugin | None:
        return plugins.build_plugin(spec.qemu.plugin) if spec.qemu.plugin else None

    # A run's record leaves out a setting at its default, so that runs made
    # before the setting existed keep their keys (settings()).
    _RECORDED_DEFAULTS = {"quantum": None, "phase": 0, "interleave": "turn"}

    def recorded(self, settings: dict, name: str):
        return settings.get(name, self._RECORDED_DEFAULTS.get(name))

    def threads(self, spec, system) -> int:
        # Round-robin TCG runs every vCPU on one thread; multi-threaded TCG
        # one thread per vCPU.
        return system.cpus if spec.qemu.mode == "parallel" else 1

    def memory_mib(self, spec, system) -> int:
        if spec.qemu.plugin == "hotline-cache":
            return system.memory_mib + CACHE_TABLES_OVERHEAD_MIB
        return system.memory_mib + QEMU_OVERHEAD_MIB

    def run(self, job: Job) -> Outcome:
        outcome = self._simulate(job)
        if outcome.failure is None and job.tool and job.tool.name == "hotline-cache":
            with phase(f"run {job.run_id}: results tables"):
                try:
                    outcome.tables = write_tables(job.work, job.kernel.directory, job.run_id)
                except (OSError, ValueError) as e:
                    outcome.failure = f"the plugin's output could not be made into tables: {e}"
        return outcome

    def _simulate(self, job: Job) -> Outcome:
        # QEMU runs in the run directory and names its outputs relative to
        # it, so command.sh stays valid after the directory is renamed.
        spec, system, plugin, work = job.spec, job.system, job.tool, job.work
        quantum, phase = self.quantum(spec), self.phase(spec, system, job.repeat)
        interleave = self.interleave(spec)
        scratch = load_workload(job.workload).scratch_disks
        disks = scratch_disks.make(work, scratch.count(job.params),
                                         scratch.size_mib(job.params)) if scratch else ()
        cmd = simulator.command(
            bzimage=job.kernel.bzimage, image=job.image, root=spec.root, cpus=system.cpus,
            memory_mib=system.memory_mib, cpu_model=system.qemu.cpu_model, mode=spec.qemu.mode,
            append=job.append, serial_log=Path(guest_log.FILE),
            plugin_args=(plugin.qemu_argument(
                Path(f"{plugin.name}.out"),
                plugins.plugin_options(plugin.name, system, job.kernel.directory, spec.qemu.mode,
                                       quantum, phase, interleave)),)
            if plugin else (), scratch_disks=disks)
        turns = (f", turns of at most {quantum} instructions" if quantum else "") + \
                (f" at phase {phase}" if phase else "") + \
                (", woven block by block" if interleave == "block" else "")
        say(f"run {job.run_id}: booting {system.cpus} vCPUs ({spec.qemu.mode} mode{turns})")
        try:
            return simulator.run(cmd, work, cpus=system.cpus, workloads=[job.workload],
                                 timeout_s=spec.timeout_s, label=f"run {job.run_id}",
                                 clocksource=self.clocksource)
        finally:
            # What the workload wrote is not a result, and can be gigabytes.
            for disk in disks:
                (work / disk).unlink(missing_ok=True)


BACKEND = Qemu()
