"""What determines a run's result, and so its key: the conditions known
before anything is built (system, workload, backend settings, command
line, repeat), then those with the kernel, guest image and plugin builds."""

from hotline import simulate, specs
from hotline.disk_image import DiskImage
from hotline.experiment.planning import PlannedRun
from hotline.hashing import hash_file, hash_json, short
from hotline.kernel.build import Kernel
from hotline.simulate.command_line import kernel_command_line
from hotline.simulate.backend import Tool


def command_line(run: PlannedRun, spec: specs.ExperimentSpec) -> str:
    backend = simulate.get_backend(spec.backend)
    return kernel_command_line([(run.workload, dict(run.params))], spec.root,
                               markers=backend.markers, clocksource=backend.clocksource)


def run_conditions(run: PlannedRun, spec: specs.ExperimentSpec,
                   system: specs.SystemSpec) -> dict:
    """The part of a run's inputs known before anything is built: all but the
    kernel, the guest image and the plugin (which the sweep workflow tracks
    by their cache keys)."""
    backend = simulate.get_backend(spec.backend)
    return {
        "system": {"name": run.system, "sha256": hash_file(specs.system_path(run.system)),
                   "spec": system.model_dump()},
        "workload": {"name": run.workload, "scale": run.scale, "params": dict(run.params)},
        "backend": {"name": spec.backend, "mode": backend.mode(spec),
                    **backend.settings(spec, system, run.repeat), **backend.identity()},
        "root": spec.root,
        "kernel_command_line": command_line(run, spec),
        "repeat": run.repeat,
    }


def run_inputs(run: PlannedRun, spec: specs.ExperimentSpec, system: specs.SystemSpec,
               kernel: Kernel, image: DiskImage, tool: Tool | None) -> dict:
    """Everything that determines a run's result; its hash is the run's key."""
    kernel_info = kernel.info()
    inputs = run_conditions(run, spec, system)
    # The root is named with the image it comes from.
    del inputs["root"]
    # Under the name run keys have always had it.
    inputs["backend"]["plugin"] = tool.manifest() if tool else None
    return {
        "kernel": {"variant": run.variant, "key": kernel.key,
                   "version": kernel_info["kernel_version"],
                   "source": kernel_info["inputs"]["source"],
                   "outputs": kernel_info["outputs"]},
        "guest_image": {"key": image.key, "root": spec.root,
                        "sha256": image.info()["sha256" if spec.root == "disk"
                                               else "initramfs_sha256"]},
        **inputs,
    }


def recorded_conditions(inputs: dict) -> dict:
    """The run_conditions() a run's recorded inputs (run_inputs(), in its
    manifest) were made with: what run_inputs() adds taken out again, so
    that a run directory can be compared with the run planned now."""
    inputs = inputs if isinstance(inputs, dict) else {}
    backend = inputs.get("backend")
    return {
        "system": inputs.get("system"),
        "workload": inputs.get("workload"),
        "backend": {k: v for k, v in backend.items() if k != "plugin"}
        if isinstance(backend, dict) else backend,
        "root": (inputs.get("guest_image") or {}).get("root")
        if isinstance(inputs.get("guest_image"), dict) else None,
        "kernel_command_line": inputs.get("kernel_command_line"),
        "repeat": inputs.get("repeat"),
    }


def other_conditions(manifest: dict, planned: str) -> str | None:
    """What of a run directory's manifest differs from the run's planned
    conditions (their short hash, `planned`, as the sweep has it), or None: a folder copied from
    another experiment with the same run id is not this run's result."""
    made = recorded_conditions(manifest.get("inputs"))
    if short(hash_json(made)) == planned:
        return None
    return (f"run {manifest.get('run_id')!r} was made with other conditions than the spec "
            "plans now (system, workload, backend settings, command line or repeat: a run "
            "folder copied from another experiment, or a spec changed since)")
