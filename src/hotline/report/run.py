"""A run as the report's commands read it: its manifest, its results tables
and the kernel build it ran (symbols, disassembly, struct page's layout).
Every command of report/ (report, annotate, diff, export) starts here, so
that a damaged or failed run is refused the same way by all of them."""

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from hotline import paths
from hotline.errors import HotlineError
from hotline.inputs import read_text
from hotline.kernel.build import kernel_dir
from hotline.records import manifest as run_record
from hotline.records.done import damage, latest_attempt
from hotline.records.layout import record_path, run_id_of
from hotline.report import tables as rt
from hotline.results.objects import announced_objects
from hotline.results.symbols import Symbolizer
from hotline.simulate import guest_log


def find_run(name: str) -> Path:
    """A run directory, given as a path or as a run id under the results tree."""
    path = Path(name)
    if run_record.exists(path):
        return path
    found = sorted(paths.results_dir().glob(f"*/{name}/{run_record.FILE}"))
    if len(found) == 1:
        return found[0].parent
    if found:
        raise HotlineError(f"run id '{name}' is in {len(found)} experiments "
                           f"({', '.join(str(f.parent) for f in found)}); give the directory")
    raise HotlineError(f"no run '{name}': give a run directory (with a {run_record.FILE}) or the "
                       f"id of a run under {paths.results_dir()}")


def redo(run_dir: Path) -> str:
    """How to have a damaged run made again."""
    run_id = run_id_of(run_dir.name)
    record = run_dir.parent / record_path(run_id, max(latest_attempt(run_dir.parent, run_id), 1))
    return (f"delete {run_dir}" + (f" and {record}" if record.exists() else "") +
            " and run its experiment again (or run it with --rerun)")


def read_run(run_dir: Path, tables: tuple[str, ...] = ("misses",)) -> run_record.Manifest:
    """A run's manifest, if the run is whole and has `tables`; a one-line
    error saying why not otherwise."""
    try:
        manifest = run_record.read(run_dir)
    except HotlineError as e:
        raise HotlineError(f"{e}: the run is damaged: {redo(run_dir)}") from None
    if manifest.status == "failed":
        raise HotlineError(f"{run_dir}: the run failed: {manifest.failure}; a failed "
                           f"run has no tables to report (its guest log: "
                           f"{run_dir / guest_log.FILE})")
    if problem := damage(run_dir):
        raise HotlineError(f"{problem}: the run is damaged: {redo(run_dir)}")
    made = manifest.tables
    if "misses" in tables and "misses" not in made:
        if "sampled_cycles" in made:
            raise HotlineError(f"{run_dir} is a sampled run (SMARTS windows): it has estimates "
                               "of each instruction's time, no miss tables; set it beside an "
                               f"exact run: ./hotline annotate EXACT_RUN FUNCTION --sampled "
                               f"{run_dir}")
        raise HotlineError(f"{run_dir} has no results tables: the report needs a run made "
                           "with [qemu] plugin = \"hotline-cache\"")
    if missing := [t for t in tables if t not in made]:
        raise HotlineError(f"{run_dir} has no {missing[0]} table: give a run that made one")
    return manifest


def header(record: run_record.Manifest) -> list[tuple[str, str]]:
    """(name, value) lines that say what a run was."""
    manifest = record.raw
    inputs = manifest["inputs"]
    w = inputs["workload"]
    backend = inputs["backend"]
    plugin = f", plugin {backend['plugin']['name']}" if backend.get("plugin") else ""
    return [("run", manifest["run_id"]),
            ("kernel", f"{inputs['kernel']['variant']} (Linux {inputs['kernel']['version']}, "
                       f"build {inputs['kernel']['key'][:16]})"),
            ("system", f"{inputs['system']['name']}, {inputs['system']['spec']['cpus']} CPUs"),
            ("workload", f"{w['name']} {w['scale']} "
                         + " ".join(f"{k}={v}" for k, v in sorted(w["params"].items()))),
            ("backend", f"{backend['name']}: {backend['version']}, {backend['mode']} mode"
                        f"{plugin}"),
            ("hotline", manifest["hotline"]["revision"])]


@dataclass
class Run:
    """One run with what the report needs of it."""
    directory: Path
    manifest: run_record.Manifest
    tables: rt.RunTables
    kernel: Path            # the kernel build's directory

    @classmethod
    def read(cls, run_dir: Path) -> "Run":
        manifest = read_run(run_dir)
        tables = rt.RunTables.read(run_dir, f"the run is damaged: {redo(run_dir)}",
                                   made=set(manifest.tables))
        try:
            kernel = kernel_dir(manifest.raw)
            header(manifest)
            run = cls(run_dir, manifest, tables, kernel)
            try:
                run.cpus, run.line_bytes  # numbers, or the manifest is not one hotline wrote
            except HotlineError as e:
                raise HotlineError(f"{e}: {redo(run_dir)}") from None
        except (KeyError, TypeError, ValueError) as e:
            raise HotlineError(f"{manifest.where}: not a manifest the report can "
                               f"read ({type(e).__name__}: {e}; written by another version "
                               f"of hotline?): {redo(run_dir)}") from None
        return run

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def variant(self) -> str:
        return self.manifest.variant

    @property
    def cpus(self) -> int:
        return self.manifest.cpus

    @property
    def line_bytes(self) -> int:
        return self.manifest.line_bytes

    @cached_property
    def symbolizer(self) -> Symbolizer:
        return Symbolizer(self.kernel / "vmlinux")

    @cached_property
    def disassembly(self) -> rt.Disassembly:
        return rt.Disassembly(self.symbolizer, self.tables.instructions)

    @cached_property
    def layout(self) -> dict:
        """The build's struct page facts (layout.json)."""
        return json.loads(read_text(self.kernel / "layout.json"))

    @cached_property
    def kernel_symbols(self) -> dict[str, int]:
        """Address of every symbol in the build's System.map, by name (the
        first, where a name repeats)."""
        starts: dict[str, int] = {}
        for line in read_text(self.kernel / "System.map").splitlines():
            fields = line.split()
            if len(fields) == 3:
                starts.setdefault(fields[2], int(fields[0], 16))
        return starts

    @cached_property
    def object_starts(self) -> dict[str, int]:
        """Start address of every named data object: the dynamic ones the
        kernel announced in this run's log, then the symbol table's."""
        log = (self.directory / guest_log.FILE).read_text(errors="replace") \
            if (self.directory / guest_log.FILE).is_file() else ""
        return {**self.kernel_symbols, **{o.name: o.start for o in announced_objects(log)}}
