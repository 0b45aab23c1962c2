"""Running the notebooks of analysis/ headless against a results directory:
papermill injects the directory into each notebook's `parameters` cell and
executes it; nbconvert writes the executed notebook as HTML.  Outputs go to
RESULTS_DIR/analysis/, next to the results they were made from.

A notebook that declares `more_results` in its parameters cell also gets
further results, each under a label: the same experiment on gem5 ("gem5"),
on another machine ("QEMU, 32-byte lines"), the committed expected results
(EXPECTED, which the demo gives).  The claims page sets each beside the
first as a column; an evidence notebook (rmap, unlock_page, ...) reads them
through ResultSets, which shows each of its sections from the first results
where they have what it compares, else from the first further results that
do, the first results' own runs beside them.  A notebook whose metadata says
{"hotline": {"hide_code": true}} is written as HTML without its code cells'
input: a page for readers."""

import warnings
from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

from hotline import outputs, paths
from hotline.analysis.claims.common import chain_code
from hotline.analysis.claims_page import column_label, where
from hotline.analysis.results import Results
from hotline.console import phase, say
from hotline.errors import HotlineError
from hotline.specs import BACKENDS

NOTEBOOKS = paths.REPO / "analysis"
# claims first: it is the page the others are evidence for.
ORDER = ["claims", "rmap", "unlock_page", "lru_batching", "dumpcopy", "microbench"]


def notebooks() -> list[Path]:
    found = {p.stem: p for p in NOTEBOOKS.glob("*.ipynb")}
    return [found[name] for name in ORDER if name in found] + \
        [p for name, p in sorted(found.items()) if name not in ORDER]


MORE_PARAMETER = "more_results"
# The expected results of the artifact, committed: the claims page of a run
# that makes few of the claims' runs (the demo) shows them beside its own, and
# its evidence notebooks the variants its own runs lack (ResultSets).
EXPECTED = {"expected: claims-smoke (committed)": paths.REPO / "analysis" / "smoke-results",
            "expected: claims-o3-tiny, gem5 O3 (committed)":
                paths.REPO / "analysis" / "o3-tiny-results",
            "expected: claims-seed-forkstorm, seed scale (committed)":
                paths.REPO / "analysis" / "seed-forkstorm-results",
            "expected: claims-32b, 32-byte lines (committed)":
                paths.REPO / "analysis" / "32b-smoke-results",
            "expected: claims-gem5 and claims-gem5-c3, timing cores (committed)":
                paths.REPO / "analysis" / "gem5-smoke-results",
            "expected: claims-o3-tiny-32b, gem5 O3 on 32-byte lines (committed)":
                paths.REPO / "analysis" / "o3-tiny-32b-results",
            "expected: claims-lru-replacement, page replacement (committed)":
                paths.REPO / "analysis" / "lru-replacement-results",
            "expected: claims-gem5-lru-replacement, page replacement on gem5 (committed)":
                paths.REPO / "analysis" / "gem5-lru-replacement-results"}


def column_results(label: str, directory: Path) -> Results:
    """The results of a further column; a column labelled with a backend's
    name (--gem5's is "gem5") holds that backend's runs only, or is refused
    in one line."""
    results = Results(directory)
    if label in BACKENDS and results.backends != [label]:
        made_by = " and ".join(results.backends) or "no backend (no run succeeded)"
        raise HotlineError(f"{directory}: its runs were made by {made_by}; the {label} column "
                           f"takes the results of an experiment run with backend = "
                           f"\"{label}\"")
    return results


# The column that tells apart the rows of two sets of results in one section.
RESULTS_COLUMN = "results"


class ResultSets:
    """The results an evidence notebook reads: the first (results_dir), and
    the further ones it takes ({label: directory}, its `more_results`),
    each read once.  Each section of the notebook asks section() for what
    it compares."""

    def __init__(self, first: Results, more: dict[str, str | Path]):
        self.first = first
        self.more = {label: Path(directory) for label, directory in more.items()}
        self._read: dict[str, Results] = {}
        # The first results by their folder's name ("demo"), which no further
        # results' label may take.
        name = first.directory.resolve().name
        self.first_label = name if name not in self.more else where(first.directory)

    def further(self, label: str) -> Results:
        if label not in self._read:
            self._read[label] = Results(self.more[label])
        return self._read[label]

    def section(self, workload: str, variants: list[str] | None = None,
                tables: tuple[str, ...] = ()) -> "Section":
        """What a section comparing `variants` (None: the runs of any) on
        `workload`, from runs that made `tables`, shows: the first results
        where they have a run of every variant; else the first further
        results that do, with the first results' own runs of those variants
        beside them; else the first results, as they are."""
        lacking = _lacking(self.first, workload, variants, tables)
        if lacking:
            for label in self.more:
                if not _lacking(self.further(label), workload, variants, tables):
                    return self._drawn_from(label, workload, variants, tables, lacking)
        return Section({self.first_label: self.first})

    def _drawn_from(self, label: str, workload: str, variants: list[str] | None,
                    tables: tuple[str, ...], lacking: list[str]) -> "Section":
        """The section from the further results `label`, its first line
        saying so, and the first results' own runs of the variants beside."""
        further, own = self.further(label), self.first_label
        has = [v for v in variants or [] if v not in lacking]
        shown = "Variants" if variants else "Runs"
        heading = (f"**{shown} from {label}** ({where(further.directory)}, "
                   f"{_systems(further, workload)}): ")
        if has:
            heading += (f"{own} has {', '.join(has)} only, whose runs "
                        f"({_systems(self.first, workload)}) are beside them, labelled *{own}* "
                        f"in the column `{RESULTS_COLUMN}`: another set of results, to compare "
                        "within a set.")
            return Section({own: self.first, label: further}, heading)
        of = f" of {', '.join(variants)}" if variants else ""
        # The tables are named where they are what the first results lack.
        made = f" that made {', '.join(tables)}" if tables and \
            _lacking(self.first, workload, variants, ()) != lacking else ""
        return Section({label: further}, f"{heading}{own} has no {workload} runs{of}{made}.")


class Section:
    """The results one section shows: one set, or two (the further results
    that have the variants, and the first results' own runs of some of
    them), whose rows the column `results` labels.  `keys` is what to group
    by before a section's own labels: [] for one set, ["results"] for two."""

    def __init__(self, sets: dict[str, Results], heading: str = ""):
        self.sets = sets
        self.heading = heading
        self.keys = [RESULTS_COLUMN] if len(sets) > 1 else []

    def say(self) -> None:
        """The section's first line, where it shows other results than the
        first: which, and why."""
        if self.heading:
            display(Markdown(self.heading))

    def _labelled(self, frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
        if not self.keys:
            return next(iter(frames.values()))
        return pd.concat([frame.assign(**{RESULTS_COLUMN: label})[
            [RESULTS_COLUMN, *frame.columns]] for label, frame in frames.items()],
            ignore_index=True)

    def table(self, name: str) -> pd.DataFrame:
        return self._labelled({label: r.table(name) for label, r in self.sets.items()})

    def counters(self) -> pd.DataFrame:
        return self._labelled({label: r.counters() for label, r in self.sets.items()})

    def chain_code(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The chain functions' code in the kernels of frame's runs, as
        committed results keep it or from the kernels' builds
        (claims.common.chain_code)."""
        return self._labelled({label: chain_code(r, set(frame["run"] if not self.keys
                                                        else _of_set(frame, label)["run"]))
                               for label, r in self.sets.items()})

    @property
    def ok(self) -> pd.DataFrame:
        return self._labelled({label: r.ok for label, r in self.sets.items()})

    def made(self, name: str, frame: pd.DataFrame) -> pd.Series:
        """Which rows of frame are of runs that made the table `name` (a run
        id names a run within its own set of results)."""
        if not self.keys:
            [results] = self.sets.values()
            return frame["run"].isin(results.runs_with(name))
        made = {(label, run) for label, results in self.sets.items()
                for run in results.runs_with(name)}
        return pd.Series([key in made for key in zip(frame[RESULTS_COLUMN], frame["run"])],
                         index=frame.index, dtype=bool)

    def each(self, *frames: pd.DataFrame):
        """Per set of results: {} (one set) or {"results": its label}, and its
        rows of each frame (by the column `results`, or the index level,
        which is dropped); with two sets, a set with no rows in the first
        frame is left out."""
        if not self.keys:
            yield {}, *frames
            return
        for label in self.sets:
            parts = [_of_set(frame, label) for frame in frames]
            if not parts[0].empty:
                yield {RESULTS_COLUMN: label}, *parts


def _of_set(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    if RESULTS_COLUMN in frame.columns:
        return frame[frame[RESULTS_COLUMN] == label]
    rows = frame.index.get_level_values(RESULTS_COLUMN) == label
    return frame[rows].droplevel(RESULTS_COLUMN)


def _lacking(results: Results, workload: str, variants: list[str] | None,
             tables: tuple[str, ...]) -> list[str]:
    """The variants (["any"] for None) of which results has no successful
    run on workload that made every one of tables."""
    ok = results.ok
    runs = ok[ok["workload"] == workload]
    for table in tables:
        runs = runs[runs["run_id"].isin(results.runs_with(table))]
    if variants is None:
        return [] if len(runs) else ["any"]
    return [v for v in variants if v not in set(runs["variant"])]


def _systems(results: Results, workload: str) -> str:
    """The systems of the successful runs of workload: "on pentium3-4way"."""
    ok = results.ok
    return "on " + ", ".join(sorted(set(ok[ok["workload"] == workload]["system"])))


def _remove_pages(out: Path) -> None:
    if out.is_dir():
        for notebook in notebooks():
            try:
                (out / f"{notebook.stem}.html").unlink(missing_ok=True)
            except OSError as e:
                raise outputs.cannot_write(out / f"{notebook.stem}.html", e) from None


def analyse(results_dir: Path, gem5_dir: Path | None = None,
            more: dict[str, Path] | None = None) -> dict[str, Path]:
    """Execute every notebook against results_dir (and, where a notebook
    takes them, gem5_dir as "gem5" and the `more` results under their
    labels); {name: HTML page}.  A notebook that raises stops the analysis
    with its error."""
    more = {label: d.resolve() for label, d in (more or {}).items()}
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    results_dir = results_dir.resolve()
    out = results_dir / "analysis"
    # No page of an earlier analysis may outlive results that changed since
    # (refused here), nor a failed analysis; a refused argument (a --gem5 or
    # --more that is not results) leaves the pages of the last one alone.
    try:
        main = column_label(Results(results_dir).backends)
    except HotlineError:
        _remove_pages(out)
        raise
    if gem5_dir is not None:
        more = {"gem5": gem5_dir.resolve(), **more}
    for label, directory in more.items():
        if label == main:
            raise HotlineError(f"the label {label!r} names the first results' column "
                               f"({results_dir}); give the others labels of their own")
        column_results(label, directory)
    _remove_pages(out)
    outputs.make_dir(out)
    pages = {}
    for notebook in notebooks():
        executed, page = out / notebook.name, out / f"{notebook.stem}.html"
        parameters = {"results_dir": str(results_dir)}
        if MORE_PARAMETER in papermill.inspect_notebook(str(notebook)):
            parameters[MORE_PARAMETER] = {label: str(d) for label, d in more.items()}
        failed = None
        # Written whole or not at all (a full disk leaves no empty notebook);
        # a notebook that fails is kept, to be read at the cell that failed.
        with phase(f"notebook {notebook.stem}"), outputs.replacing(executed) as partial, \
                warnings.catch_warnings():
            # The staging name's suffix is not .ipynb, which papermill warns of.
            warnings.filterwarnings("ignore", message="The specified file")
            try:
                papermill.execute_notebook(str(notebook), str(partial), cwd=str(NOTEBOOKS),
                                           parameters=parameters,
                                           progress_bar=False, kernel_name="python3",
                                           # Quiet ipykernel's warning that its
                                           # local TCP sockets are unencrypted.
                                           extra_arguments=["--IPKernelApp.log_level=ERROR"])
            except papermill.PapermillExecutionError as e:
                failed = e
        if failed:
            raise HotlineError(f"notebook {notebook.name} failed at cell {failed.exec_count}: "
                               f"{failed.ename}: {failed.evalue} (executed copy: {executed})")
        node = nbformat.read(executed, as_version=4)
        hide = bool(node.metadata.get("hotline", {}).get("hide_code"))
        html, _ = HTMLExporter(exclude_input=hide, exclude_input_prompt=hide,
                               exclude_output_prompt=hide).from_notebook_node(node)
        outputs.write_text(page, html, sync=False)
        pages[notebook.stem] = page
    say(f"analysis written to {out}")
    return pages
