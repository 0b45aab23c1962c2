"""The runs an experiment spec asks for: every kernel variant x workload x
system x repeat of each of its cross products, each once; and the spec as
every command reads it."""

from dataclasses import dataclass
from pathlib import Path

from hotline import simulate, specs
from hotline.workloads import load_workload


@dataclass(frozen=True)
class PlannedRun:
    variant: str
    system: str
    workload: str
    scale: str
    params: tuple[tuple[str, int], ...]
    overrides: tuple[tuple[str, int], ...]
    repeat: int

    @property
    def run_id(self) -> str:
        label = "-".join([self.workload, self.scale] + [f"{k}{v}" for k, v in self.overrides])
        return f"{self.variant}--{label}--{self.system}--r{self.repeat}"


def load_spec(path: Path) -> specs.ExperimentSpec:
    """An experiment spec as specs.py checks it, then as its backend does
    (a plugin it does not have, a root it cannot boot): every command that
    reads a spec reads it here."""
    spec = specs.load_experiment(path)
    simulate.get_backend(spec.backend).check_spec(spec, path)
    return spec


def plan(spec: specs.ExperimentSpec) -> list[PlannedRun]:
    """Every run of the spec, in order, each once (groups may overlap)."""
    runs = {}
    for group in spec.groups():
        for variant in group.variants:
            for ref in group.workloads:
                params = load_workload(ref.name).resolve_params(ref.scale, ref.params)
                for system in group.systems:
                    for repeat in range(spec.repeats):
                        run = PlannedRun(variant, system, ref.name, ref.scale,
                                         tuple(sorted(params.items())),
                                         tuple(sorted(ref.params.items())), repeat)
                        runs.setdefault(run.run_id, run)
    return list(runs.values())


def repeats(spec: specs.ExperimentSpec) -> str:
    """The spec's repeats, and what makes them differ (or that nothing does)."""
    if spec.repeats == 1:
        return "1 repeat"
    how = simulate.get_backend(spec.backend).perturbation(spec)
    return f"{spec.repeats} repeats, " + (f"differing by {how}" if how else
                                        "identical (nothing varies them in this mode)")
