"""An experiment spec as the sweep workflow (workflow/Snakefile) sees it: the
steps, the files each makes and needs, and what each asks of a machine.

The workflow's working directory is the experiment's results directory,
laid out as records/layout.py says.  A run is tracked by the record of an attempt
at it: the one done.next_record() names, its latest if that succeeded, a
new one if it failed or there is none.

Builds are tracked by the file that marks each complete in the cache
(kernel.json, image.json, NAME.so), in a directory named by the build's key:
changed inputs are a new path, so the build is missing and every run that
uses it is outdated.  What else decides a run's result (system spec,
workload parameters, QEMU version, mode, command line) is hashed into the
run step's `conditions` parameter, which Snakemake compares with the one it
recorded (its "params" rerun trigger).  The run's own key check in
execute() stays the last word: a step that Snakemake re-runs for a reason
that does not change the key reuses the result.  What makes a run done is
records/done.py's to say.
"""

import dataclasses
import math
import os
from dataclasses import dataclass
from pathlib import Path

from hotline import paths, simulate, specs
from hotline.disk_image import build_seconds_here as image_seconds_here, planned_image
from hotline.errors import HotlineError
from hotline.experiment import load_spec, other_conditions, plan, run_conditions
from hotline.hashing import hash_json, short
from hotline.kernel.build import build_seconds_here as kernel_seconds_here, planned_kernel
from hotline.records.done import next_record
from hotline.records.layout import RECORD, STEP_LOG, parse_record_name

SNAKEFILE = paths.REPO / "workflow" / "Snakefile"
PROFILES = paths.REPO / "profiles"
# A run is killed after the spec's timeout_s; the step also boots, writes
# tables and may wait for the file system.
RUNTIME_MARGIN_MIN = 15


@dataclass(frozen=True)
class RunStep:
    run_id: str
    record_name: str          # the attempt the workflow wants (done.next_record)
    variant: str
    workload: str
    system: str
    needs: tuple[str, ...]    # the build markers the run uses
    conditions: str           # hash of experiment.run_conditions()
    threads: int
    mem_mb: int
    runtime: int              # minutes

    @property
    def record(self) -> str:
        return RECORD.format(record=self.record_name)

    @property
    def log(self) -> str:
        return STEP_LOG.format(record=self.record_name)


@dataclass(frozen=True)
class Sweep:
    spec_path: Path
    spec: specs.ExperimentSpec
    out_dir: Path
    kernels: dict[str, str]   # variant -> its kernel.json in the cache
    image: str                # image.json in the cache
    tool: str | None          # the backend's build the runs load (QEMU: NAME.so), in the cache
    tool_label: str           # "plugin NAME"
    runs: tuple[RunStep, ...]

    @property
    def name(self) -> str:
        return self.spec_path.stem

    def run(self, name: str) -> RunStep:
        """A run's step, by its run id or the name of a record of it."""
        run_id, _ = parse_record_name(name)
        for step in self.runs:
            if step.run_id == run_id:
                return step
        raise HotlineError(f"{self.spec_path} plans no run '{run_id}'")

    def foreign(self, run_id: str):
        """The check that a run directory's manifest is this planned run's
        (done.judge's `foreign`)."""
        conditions = self.run(run_id).conditions
        return lambda manifest: other_conditions(manifest, conditions)

    def with_wanted_records(self, redo: frozenset[str] = frozenset()) -> "Sweep":
        """The same sweep, each run wanting the record done.next_record()
        names now (after records were set aside or removed, or, in a dry
        run, for the runs in `redo` that would be)."""
        return dataclasses.replace(self, runs=tuple(
            dataclasses.replace(step, record_name=next_record(
                self.out_dir, step.run_id, step.run_id in redo))
            for step in self.runs))

    def unbuilt(self) -> list[tuple[str, list[float]]]:
        """The guest image and kernels the runs need that are not in the
        cache yet, each with how long builds of its kind took on this
        machine (seconds, newest first; empty where none was measured here)."""
        missing = [] if Path(self.image).exists() else [("disk image", image_seconds_here())]
        kernel_seconds = kernel_seconds_here()
        return missing + [(f"kernel {variant}", kernel_seconds)
                          for variant, marker in self.kernels.items() if not Path(marker).exists()]

    def builds(self) -> dict[str, str]:
        """Each build's label and marker file, in the order they are needed."""
        builds = {"image": self.image}
        builds |= {f"kernel {v}": marker for v, marker in self.kernels.items()}
        if self.tool:
            builds[self.tool_label] = self.tool
        return builds


def experiment_dir(spec_path: Path) -> Path:
    return (paths.results_dir() / spec_path.stem).resolve()


def load_sweep(spec_path: Path, kernel_source: str | None = None,
               redo: frozenset[str] = frozenset()) -> Sweep:
    """The sweep of one spec.  It reads every input's hash but builds (and
    unpacks) nothing.  `redo`: runs a dry run found not done (done.judge),
    whose next attempt is wanted although their records say ok."""
    spec_path = Path(spec_path).resolve()
    spec = load_spec(spec_path)
    backend = simulate.get_backend(spec.backend)
    backend.check(spec, spec_path)
    runs = plan(spec)
    # The variants and systems of the planned runs, in order (a spec's lists
    # need not be all there is to run).
    variants = list(dict.fromkeys(r.variant for r in runs))
    systems = {name: specs.load_system(name) for name in dict.fromkeys(r.system for r in runs)}
    # Absolute and resolved: Snakemake matches them against the build rules'
    # patterns, and the build steps check they made exactly these.
    kernels = {v: str((planned_kernel(v, kernel_source).directory / "kernel.json").resolve())
               for v in variants}
    image_marker = str((planned_image().directory / "image.json").resolve())
    tool = backend.planned_tool(spec)
    tool_label = f"{tool.kind} {tool.name}" if tool else ""
    tool = str(tool.path.resolve()) if tool else None
    out_dir = experiment_dir(spec_path)
    steps = []
    for run in runs:
        system = systems[run.system]
        needs = (kernels[run.variant], image_marker) + ((tool,) if tool else ())
        steps.append(RunStep(
            run_id=run.run_id, record_name=next_record(out_dir, run.run_id, run.run_id in redo),
            variant=run.variant, workload=run.workload, system=run.system, needs=needs,
            conditions=short(hash_json(run_conditions(run, spec, system))),
            # What a simulation asks of a machine is its backend's to say.
            threads=backend.threads(spec, system),
            mem_mb=backend.memory_mib(spec, system),
            runtime=math.ceil(spec.timeout_s / 60) + RUNTIME_MARGIN_MIN))
    for path in (spec_path, out_dir, image_marker, tool, *kernels.values()):
        if path and ("{" in str(path) or "}" in str(path)):
            raise HotlineError(f"{path}: Snakemake reads braces in a path as a wildcard: move "
                               "the spec, or set HOTLINE_RESULTS or HOTLINE_CACHE, to a path "
                               "without them")
    return Sweep(spec_path, spec, out_dir, kernels, image_marker, tool, tool_label,
                 tuple(steps))


def usable_cores() -> int:
    return len(os.sched_getaffinity(0))
