"""What the tests share: fixtures, and helpers several test modules use (a
spec that is valid, a run with the simulator replaced, the sweep's sandbox
with stand-in steps, how a cachebench table is read, whether GEM5 has this
checkout's extension, the committed smoke results, the ./hotline commands
a document names, a misses table's totals as pprof should have them).  Test modules import helpers from here or from
tests/made_runs.py (the claims' hand-made tables: tests/claim_tables.py), not from another test
module."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from hotline import cli, experiment, paths, simulate, specs
from hotline.errors import HotlineError
from hotline.experiment import execution
from hotline.figures import Picture
from hotline.records.manifest import Manifest
from hotline.report import render
from hotline.results import schema
from hotline.results.schema import CAUSES
from hotline.simulate import guest_log
from hotline.simulate.backend import Outcome

GOOD = """
description = "test"
variants = ["baseline"]
systems = ["skylake-4core"]
workloads = [{ name = "forkstorm", scale = "smoke" }]
"""


def fails(capsys, *argv) -> str:
    """./hotline ARGV: exit status 1 and one line, `hotline: error: ...`."""
    assert cli.main(list(argv)) == 1
    err = capsys.readouterr().err
    assert err.startswith("hotline: error: ") and err.count("\n") == 1, err
    return err


def rejected(tmp_path, text) -> str:
    path = tmp_path / "exp.toml"
    path.write_text(text)
    with pytest.raises(HotlineError) as e:
        experiment.load_spec(path)
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message


@pytest.fixture
def tmp_results(tmp_path, monkeypatch):
    """Run directories go to a temporary place, build artifacts stay cached."""
    results = tmp_path / "results"
    monkeypatch.setenv("HOTLINE_RESULTS", str(results))
    return results


def require_tools(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (./hotline test installs them)")


def run_twice(spec_text: str, tmp) -> list[list]:
    """A spec run twice from scratch, each time into a results tree of its
    own (for bit-identical comparisons): per time, its run directories in
    the order the spec plans them."""
    from hotline.experiment import run_experiment
    require_tools("qemu-system-x86_64", "make", "gcc")
    spec = tmp / "spec.toml"
    spec.write_text(spec_text)
    times = []
    with pytest.MonkeyPatch.context() as mp:
        for i in range(2):
            mp.setenv("HOTLINE_RESULTS", str(tmp / f"results-{i}"))
            results = run_experiment(spec, rerun=True)
            assert all(r.failure is None for r in results), [r.failure for r in results]
            times.append([r.directory for r in results])
    return times


@pytest.fixture
def repo():
    return paths.REPO


# ---- a run with the simulator replaced -----------------------------------------

# The results tables of a run made with hotline-cache (simulate/qemu/cache_tables.py).
TABLES = {name: list(columns) for name, columns in schema.TABLES.items()}


class Stand_in:
    """experiment.execute() with the simulator replaced: one run of GOOD."""

    def __init__(self, tmp_path, monkeypatch, text=GOOD):
        self.spec_path = tmp_path / "exp.toml"
        self.spec_path.write_text(text)
        self.spec = specs.load_experiment(self.spec_path)
        (self.run,) = experiment.plan(self.spec)
        self.out = tmp_path / "out"
        self.simulated = 0
        monkeypatch.setattr(execution, "run_inputs", lambda *args: {"inputs": 1})
        monkeypatch.setattr(simulate.get_backend("qemu"), "run", self.simulate)

    def simulate(self, job):
        self.simulated += 1
        (job.work / "guest.log").write_text("hotline: done\n")
        report = guest_log.GuestReport(summaries={job.workload: {"workload": job.workload}})
        return Outcome(None, report, 1.0)

    def execute(self, rerun=False):
        return experiment.execute(self.run, self.spec, self.spec_path, None, None, None,
                                  self.out, rerun)


# ---- the sweep with stand-in steps (tests/sweep_stand_in.py) -----------------

SWEEP_SPEC = """
description = "sweep test"
variants = ["baseline"]
systems = ["skylake-4core", "pentium3-4way"]
workloads = [{ name = "forkstorm", scale = "smoke" }, { name = "lmbench-lite", scale = "smoke" }]
timeout_s = 600
"""
STAND_IN = Path(__file__).with_name("sweep_stand_in.py")


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A cache, results tree and kernel source of its own (a tiny git tree:
    the kernel's key is all the workflow needs of it), and the stand-in
    steps.  Returns the spec's path."""
    source = tmp_path / "linux"
    (source / "mm").mkdir(parents=True)
    (source / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n"
                                     "EXTRAVERSION =\n")
    (source / "mm" / "memory.c").write_text("")
    git = ["git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(source)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "tree"], check=True)
    monkeypatch.setenv("HOTLINE_KERNEL_SOURCE", str(source))
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HOTLINE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("HOTLINE_SWEEP_STEP", f"{sys.executable} {STAND_IN}")
    monkeypatch.setenv("STAND_IN_JOURNAL", str(tmp_path / "journal"))
    monkeypatch.setenv("STAND_IN_SLEEP", "0.2")
    spec = tmp_path / "sweeptest.toml"
    spec.write_text(SWEEP_SPEC + "repeats = 1\n")
    return spec


def journal(spec: Path) -> list[list[str]]:
    path = spec.with_name("journal")
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def started(spec: Path, after: float = 0) -> list[str]:
    return [w[2] for w in journal(spec) if w[1] == "start" and float(w[0]) >= after]


def out_dir(spec: Path) -> Path:
    return Path(os.environ["HOTLINE_RESULTS"]) / spec.stem


# ---- cachebench's tables -------------------------------------------------------

def within(table, functions, name, column="pc"):
    start, size = functions[name]
    return table[(table[column] >= start) & (table[column] < start + size)]


def busiest(tables, functions, name, kind):
    """The `kind` instruction of function `name` with the most accesses (its
    loop's), as (pc, accesses)."""
    insns = within(tables["instructions"], functions, name)
    insns = insns[insns["kind"] == kind]
    top = insns.loc[insns["accesses"].idxmax()]
    return int(top["pc"]), int(top["accesses"])


# ---- gem5 ----------------------------------------------------------------------

def extension_built() -> bool:
    """Whether GEM5 was built with this checkout's extension (configs/gem5/
    extras): every object its SConscript builds."""
    binary = os.environ.get("GEM5", "")
    if not binary:
        return False
    built = open(binary, "rb").read()
    objects = re.findall(r"sim_objects=\['(\w+)'\]",
                         (paths.CONFIGS / "gem5" / "extras" / "SConscript").read_text())
    assert objects, "no sim_objects in configs/gem5/extras/SConscript"
    return all(name.encode() in built for name in objects)


# ---- the committed smoke results -----------------------------------------------

SMOKE = paths.REPO / "analysis" / "smoke-results"


def copy_gathered(dest, ignore=None):
    """SMOKE as a run gathers it: without the pages analysed from it, which
    are committed beside the tables as the expected results (analysis/)."""
    def skip(folder, names):
        own = ["analysis"] if Path(folder) == SMOKE else []
        return own + (list(ignore(folder, names)) if ignore else [])
    shutil.copytree(SMOKE, dest, ignore=skip)
    return dest


# ---- docs and reports -----------------------------------------------------------

def command_lines(text: str) -> list[str]:
    """The arguments of every line that is a ./hotline command (in a code
    block, a shell prompt or a comment), continuation lines joined, a
    trailing comment or a prose ": ..." cut off, and a usage line's
    [optional] parts given."""
    lines, found = text.splitlines(), []
    for i, line in enumerate(lines):
        command = line.lstrip("#$ \t")
        if not command.startswith("./hotline "):
            continue
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1] + " " + lines[i].lstrip("#$ \t")
        command = re.sub(r"(\s#|:\s).*$", "", command.removeprefix("./hotline "))
        found.append(command.replace("[", "").replace("]", "").strip())
    return found


def expected_totals(m: pd.DataFrame) -> dict[str, int]:
    """Per sample type, from the table by a plain groupby."""
    totals = {}
    for level, at in m.groupby("level"):
        totals[f"{level}-misses"] = int(at["count"].sum())
        totals[f"{level}-cycles"] = int(at["cycles"].sum())
        for cause in CAUSES:
            totals[f"{level}-{cause}"] = int(at.loc[at["cause"] == cause, "count"].sum())
    return totals


def go_pprof_raw(path) -> tuple[list[str], list[int]]:
    """Sample type names and their sums, as go tool pprof -raw reads them."""
    out = subprocess.run(["go", "tool", "pprof", "-raw", str(path)], capture_output=True,
                         text=True, check=True, timeout=600).stdout
    lines = out.splitlines()
    start = lines.index("Samples:")
    types = [t.split("/")[0] for t in lines[start + 1].split()]
    sums = [0] * len(types)
    for line in lines[start + 2:]:
        m = re.match(r"^\s*((?:\d+\s+)*\d+): ", line)
        if m is None:
            if line and not line.startswith(" "):
                break
            continue
        for i, v in enumerate(m.group(1).split()):
            sums[i] += int(v)
    return types, sums


# A hand-made report: its run's manifest, and the report's kinds of section.
MANIFEST = Manifest({
    "run_id": "baseline--forkstorm-smoke--skylake-4core--r0", "hotline": {"revision": "abc"},
    "inputs": {"kernel": {"variant": "baseline", "version": "6.1.192", "key": "0" * 64},
               "system": {"name": "skylake-4core", "spec": {"cpus": 4}},
               "workload": {"name": "forkstorm", "scale": "smoke", "params": {"instances": 4}},
               "backend": {"name": "qemu", "version": "QEMU 10.0.2", "mode": "deterministic"}}})
# What a wide row of the report looks like: an instruction and its partial writes.
WIDE = pd.DataFrame({"where": ["folio_unlock+0x8"], "instruction": [
    "lock andb $0xfe,(%rdi)    [partial writes: 3,351 as the store, loaded by "
    "page_cpupid_xchg_last+0x4 1,192; page_cpupid_xchg_last+0x2a 1,192; "
    "shmem_file_read_iter+0x86 202; 5 more]"], **{f"column {n}": [n * 1000] for n in range(20)}})


def report_sections() -> list[render.Section]:
    """The report's kinds of section: with pictures, without, and many
    alike (the shared lines)."""
    picture = Picture("top-l1d", "t", b"\x89PNG", b"<svg/>")
    return [render.Section("Misses by level", "note", pd.DataFrame({"level": ["L1D"]})),
            render.Section("Top 25 instructions by L1D misses", "note", WIDE, [picture]),
            render.Section("Top 25 instructions by L2 misses", "note", WIDE),
            render.Section("page->flags: the instructions that miss", "note", WIDE),
            render.Section("Shared cache lines (c2c)", "note", WIDE),
            *(render.Section(f"Shared line struct page+{n:#x}", "note", WIDE)
              for n in (0, 0x40)),
            render.Section("Reads after partial writes", "note", pd.DataFrame())]
