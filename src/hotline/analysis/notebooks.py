"""Running the notebooks of analysis/ headless against a results directory:
papermill injects the directory into each notebook's `parameters` cell and
executes it; nbconvert writes the executed notebook as HTML.  Outputs go to
RESULTS_DIR/analysis/, next to the results they were made from."""

from pathlib import Path

from hotline import paths
from hotline.analysis.results import Results
from hotline.console import phase, say
from hotline.errors import HotlineError

NOTEBOOKS = paths.REPO / "analysis"
# claims first: it is the page the others are evidence for.
ORDER = ["claims", "rmap", "unlock_page", "lru_batching", "dumpcopy", "microbench"]


def notebooks() -> list[Path]:
    found = {p.stem: p for p in NOTEBOOKS.glob("*.ipynb")}
    return [found[name] for name in ORDER if name in found] + \
        [p for name, p in sorted(found.items()) if name not in ORDER]


def analyse(results_dir: Path) -> dict[str, Path]:
    """Execute every notebook against results_dir; {name: HTML page}.  A
    notebook that raises stops the analysis with its error."""
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    results_dir = results_dir.resolve()
    Results(results_dir)  # refuses a directory that is not gathered results
    out = results_dir / "analysis"
    out.mkdir(exist_ok=True)
    # No page of an earlier analysis may outlive a failed one.
    for notebook in notebooks():
        (out / f"{notebook.stem}.html").unlink(missing_ok=True)
    pages = {}
    for notebook in notebooks():
        executed, page = out / notebook.name, out / f"{notebook.stem}.html"
        with phase(f"notebook {notebook.stem}"):
            try:
                papermill.execute_notebook(str(notebook), str(executed), cwd=str(NOTEBOOKS),
                                           parameters={"results_dir": str(results_dir)},
                                           progress_bar=False, kernel_name="python3",
                                           # Quiet ipykernel's warning that its
                                           # local TCP sockets are unencrypted.
                                           extra_arguments=["--IPKernelApp.log_level=ERROR"])
            except papermill.PapermillExecutionError as e:
                raise HotlineError(f"notebook {notebook.name} failed at cell {e.exec_count}: "
                                   f"{e.ename}: {e.evalue} (executed copy: {executed})") from None
        html, _ = HTMLExporter().from_notebook_node(nbformat.read(executed, as_version=4))
        page.write_text(html)
        pages[notebook.stem] = page
    say(f"analysis written to {out}")
    return pages
