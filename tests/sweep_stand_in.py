"""Stand-in for the sweep workflow's steps (HOTLINE_SWEEP_STEP), so that
the workflow, the engine and their failure paths are tested in seconds:
the real step code (hotline.sweep.step) with the builds and the simulation
replaced.  A "simulation" sleeps STAND_IN_SLEEP seconds (or, with
STAND_IN_UNTIL, until that file exists) and writes a run directory as
experiment.execute() does (manifest, guest.log, one table);
run ids containing any of STAND_IN_FAIL's comma-separated words fail with
a reason, those containing STAND_IN_CRASH's die without a record, those
containing STAND_IN_HOLD's never end (a hung simulator, until the step is
killed).  Every step appends what it did to the STAND_IN_JOURNAL file.
"""

import json
import os
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from hotline import sealed
from hotline.disk_image import planned_image
from hotline.experiment import RunResult
from hotline.hashing import hash_json
from hotline.kernel.build import planned_kernel
from hotline.simulate import get_backend
from hotline.sweep import step
from made_runs import inputs_of  # beside this script: its directory is on sys.path

FAILURE = "the guest kernel panicked or oopsed"


def journal(*words) -> None:
    with open(os.environ["STAND_IN_JOURNAL"], "a") as f:
        f.write(" ".join([f"{time.time():.3f}", *map(str, words)]) + "\n")


def matches(run_id: str, variable: str) -> bool:
    return any(w and w in run_id for w in os.environ.get(variable, "").split(","))


def make(marker: Path, *words) -> None:
    """A build: only journaled when it makes something (the run steps look
    the builds up too)."""
    if not marker.exists():
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("{}")
        journal(*words)


def build_kernel(variant, source=None, jobs=None):
    kernel = planned_kernel(variant, source)
    make(kernel.directory / "kernel.json", "kernel", variant, f"jobs={jobs}")
    return kernel


def build_image():
    image = planned_image()
    make(image.directory / "image.json", "image")
    return image


def build_tool(spec):
    tool = get_backend(spec.backend).planned_tool(spec)
    if tool:
        make(tool.path, tool.kind, tool.name)
    return tool


def execute(run, spec, spec_path, kernel, image, tool, out_dir, rerun):
    final = out_dir / run.run_id
    # The conditions as execute() records them (in its inputs), which
    # done.judge compares with the run planned; the stand-in's key is theirs.
    inputs = inputs_of(run, spec)
    key = f"key-of-{run.run_id}-{hash_json(inputs)}"
    if not rerun and (final / "manifest.json").is_file() and \
            json.loads((final / "manifest.json").read_text()).get("key") == key:
        journal("reuse", run.run_id)
        return RunResult(run.run_id, final, None, reused=True)
    journal("start", run.run_id, "rerun" if rerun else "")
    if matches(run.run_id, "STAND_IN_CRASH"):
        os._exit(3)
    work = out_dir / f".{run.run_id}.running"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    time.sleep(float(os.environ.get("STAND_IN_SLEEP", "1")))
    while os.environ.get("STAND_IN_UNTIL") and not Path(os.environ["STAND_IN_UNTIL"]).exists():
        time.sleep(0.1)
    while matches(run.run_id, "STAND_IN_HOLD"):
        time.sleep(1)
    failure = FAILURE if matches(run.run_id, "STAND_IN_FAIL") else None
    (work / "guest.log").write_text("hotline: done\n")
    manifest = {"run_id": run.run_id, "key": key, "inputs": inputs,
                "status": "failed" if failure else "ok", "failure": failure,
                "created": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
                "wall_seconds": 1.5, "guest": {"summary": {"repeat": run.repeat}}}
    if not failure:
        pd.DataFrame({"run": [run.run_id] * 2, "pc": [1, 2], "count": [10, run.repeat]}) \
            .to_parquet(work / "misses.parquet", index=False)
    # As execute() lists them: what done.damage() checks the folder against.
    manifest["files"] = sealed.describe(work)
    (work / "manifest.json").write_text(json.dumps(manifest))
    target = final.with_name(final.name + ".failed") if failure else final
    shutil.rmtree(target, ignore_errors=True)
    work.rename(target)
    journal("end", run.run_id)
    return RunResult(run.run_id, target, failure)


step.build_kernel, step.build_image, step.build_tool = build_kernel, build_image, build_tool
step.execute = execute

if __name__ == "__main__":
    sys.exit(step.main())
