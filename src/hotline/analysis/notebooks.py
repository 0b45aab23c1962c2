"""Running the notebooks of analysis/ headless against a results directory:
papermill injects the directory into each notebook's `parameters` cell and
executes it; nbconvert writes the executed notebook as HTML.  Outputs go to
RESULTS_DIR/analysis/, next to the results they were made from.

A notebook that declares `more_results` in its parameters cell (the
claims page) also gets further results to set beside the first, each under
a label: the same experiment on gem5 ("gem5"), on another machine ("QEMU,
32-byte lines"), ...  A notebook whose metadata says {"hotline": {"hide_code": true}} is
written as HTML without its code cells' input: a page for readers."""

import warnings
from pathlib import Path

from hotline import outputs, paths
from hotline.analysis.claims_page import column_label
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
# that makes few of the claims' runs (the demo) shows them beside its own.
EXPECTED = {"expected: claims-smoke (committed)": paths.REPO / "analysis" / "smoke-results",
            "expected: claims-o3-tiny, gem5 O3 (committed)":
                paths.REPO / "analysis" / "o3-tiny-results",
            "expected: claims-seed-forkstorm, seed scale (committed)":
                paths.REPO / "analysis" / "seed-forkstorm-results",
            "expected: claims-32b, 32-byte lines (committed)":
                paths.REPO / "analysis" / "32b-smoke-results",
            "expected: claims-gem5, LRU writers on gem5 (committed)":
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
