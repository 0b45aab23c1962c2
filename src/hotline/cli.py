"""hotline: build patched Linux kernels and a workload disk image, boot them on
simulated multi-core x86 machines, and record every run with its inputs."""

import argparse
import os
import sys
from pathlib import Path

from hotline import paths
from hotline.console import say
from hotline.errors import HotlineError, guarded

DEMO_SPEC = paths.CONFIGS / "experiments" / "demo.toml"


def cmd_run(args) -> int:
    from hotline.sweep.engine import run_sweep
    return run_sweep(Path(args.spec), jobs=args.jobs, profile=args.profile, rerun=args.rerun,
                     dry_run=args.dry_run, kernel_source=args.kernel_source)


def cmd_check(args) -> int:
    from hotline.experiment import repeats
    from hotline.sweep.workflow import load_sweep
    # Every check `run` makes before building, the backend's own included.
    sweep = load_sweep(Path(args.spec), args.kernel_source)
    say(f"{args.spec}: valid, {len(sweep.runs)} run(s), {repeats(sweep.spec)}")
    for line in _unbuilt_lines(sweep.unbuilt()):
        say(line)
    for r in sweep.runs:
        print(r.run_id)
    return 0


def _unbuilt_lines(unbuilt: list[tuple[str, list[float]]]) -> list[str]:
    """What `run` builds before its runs, each with the time the newest
    build of its kind took here (ccache makes a kernel build after the
    first one faster), and the sum."""
    from hotline.console import elapsed
    if not unbuilt:
        return ["every kernel and the guest image the runs need are built"]
    measured = [seconds[0] for _, seconds in unbuilt if seconds]
    total = (f"about {elapsed(sum(measured))}" if len(measured) == len(unbuilt) else
             f"more than {elapsed(sum(measured))}" if measured else "time not measured here")
    spreads = {("kernel" if label.startswith("kernel ") else label): seconds
               for label, seconds in unbuilt if len(seconds) > 1}
    spread = "".join(f"; the {len(s)} {kind} builds here took {elapsed(min(s))} to "
                     f"{elapsed(max(s))}" for kind, s in spreads.items())
    return [f"to build before the runs: {len(unbuilt)} build(s), {total} (each as long as the "
            f"newest of its kind built here{spread})",
            *(f"  {label}: " + (f"about {elapsed(seconds[0])}" if seconds
                                else "not measured here yet") for label, seconds in unbuilt)]


def cmd_demo(args) -> int:
    from hotline.records.lock import claim
    # Held until the notebooks are written: the index and the pages are the
    # demo's results too.
    with claim(paths.results_dir() / DEMO_SPEC.stem, "hotline demo"):
        return _demo(args)


def _demo(args) -> int:
    from hotline.analysis.notebooks import EXPECTED, analyse
    from hotline.experiment import run_experiment
    from hotline.report.render import PICTURES, write_report
    from hotline.simulate import guest_log
    from hotline.sweep.gather import gather
    results = run_experiment(DEMO_SPEC, rerun=True, kernel_source=args.kernel_source)
    for r in results:
        if r.failure:
            continue
        log = (r.directory / guest_log.FILE).read_text(errors="replace").splitlines()
        wanted = ("hotline:", "hotline-summary:")
        print(f"\n{r.run_id} ({r.directory})")
        for line in log:
            if line.lstrip().startswith(wanted) or "smp: Brought up" in line:
                print(f"  {line.strip()}")
        text, text_path, html_path = write_report(r.directory)
        print(f"\n{text}")
        say(f"report written to {text_path} and {html_path}; its pictures in "
            f"{r.directory / PICTURES} (PNG, SVG)")
        _screenshot(html_path, r.directory / "report.png")
    if any(r.failure for r in results):
        return 1
    # The notebooks on the demo's own results: most claims need runs the demo
    # does not make (configs/experiments/claims-*.toml), and say so; the
    # claims page shows the committed results' verdicts beside them, and the
    # other notebooks take the variants the demo lacks from them.
    out_dir = paths.results_dir() / DEMO_SPEC.stem
    gather(DEMO_SPEC, out_dir)
    pages = analyse(out_dir, more=EXPECTED)
    say(f"claims page: {pages['claims']}")
    return 0


def _screenshot(page: Path, png: Path) -> None:
    """The page as Chromium renders it, if Chromium is installed."""
    from hotline.report import browser
    if browser.chromium() is None:
        say(f"no screenshot of {page.name}: chromium is not installed")
        return
    try:
        shown = browser.render(page, png)
    except HotlineError as e:
        say(f"no screenshot of {page.name}: {e}")
        return
    say(browser.summary(page, shown))


def cmd_report(args) -> int:
    from hotline.report.render import write_report
    from hotline.report.run import find_run
    text, text_path, html_path = write_report(find_run(args.run))
    print(text)
    say(f"report written to {text_path} and {html_path}")
    return 0


def cmd_annotate(args) -> int:
    from hotline.report.annotate import write_annotation
    from hotline.report.run import find_run
    text, text_path, html_path = write_annotation(
        find_run(args.run), args.function, find_run(args.sampled) if args.sampled else None)
    print(text)
    say(f"annotation written to {text_path} and {html_path}")
    return 0


def cmd_diff(args) -> int:
    from hotline.report.diff import diff, sides, write_diff
    a, b = sides(args.runs, args.workload, args.system)
    result = diff(a, b)
    text, text_path, html_path = write_diff(result, Path(args.out) if args.out else None)
    print(text)
    for note in result.unpaired:
        say(f"warning: {note}")
    say(f"diff written to {text_path} and {html_path}")
    return 0


def cmd_export(args) -> int:
    from hotline.report.pprof import export_run
    from hotline.report.run import find_run
    path = export_run(find_run(args.run), Path(args.output) if args.output else None)
    say(f"pprof profile written to {path}; browse it with: go tool pprof -http=: {path}")
    return 0


def cmd_analyse(args) -> int:
    from hotline.analysis.notebooks import analyse
    # --gem5 is the column "gem5"; --more's labels are the others'.
    taken = {"gem5"} if args.gem5 else set()
    more = {}
    for item in args.more:
        label, sep, directory = item.partition("=")
        if not (sep and label.strip() and directory):
            raise HotlineError(f"--more {item!r}: give LABEL=RESULTS, e.g. "
                               "--more \"QEMU, 32-byte lines=results/claims-32b\"")
        if label.strip() in more or label.strip() in taken:
            raise HotlineError(f"--more {item!r}: the label {label.strip()!r} is taken")
        more[label.strip()] = Path(directory)
    pages = analyse(Path(args.results), Path(args.gem5) if args.gem5 else None, more)
    for name, page in pages.items():
        print(f"{name}: {page}")
    return 0


def cmd_lab(args) -> int:
    from hotline.analysis.notebooks import NOTEBOOKS
    jupyter = Path(sys.executable).with_name("jupyter")
    os.execv(str(jupyter), [str(jupyter), "lab", f"--notebook-dir={NOTEBOOKS}", *args.lab_args])


def cmd_build_kernel(args) -> int:
    from hotline.kernel.build import build_kernel
    print(build_kernel(args.variant, args.kernel_source).directory)
    return 0


def cmd_build_image(args) -> int:
    from hotline.disk_image import build_image
    print(build_image().path)
    return 0


def cmd_test(args) -> int:
    from hotline.disk_image import build_image
    from hotline.kernel.build import build_kernel
    pytest_args = list(args.pytest_args)
    if args.unit:
        # Nothing that boots, installs a Debian root or starts Slurm (those
        # run in the whole suite, and in CI); -m replaces pyproject's.
        pytest_args += ["-m", "not boot and not fresh_root and not slurm and not allvariants"]
    else:
        # The boot tests need the baseline kernel and the image; building
        # them here, before pytest captures the console, shows the progress.
        build_image()
        build_kernel("baseline")
    os.chdir(paths.REPO)
    os.execv(sys.executable, [sys.executable, "-m", "pytest", *pytest_args])


def command_line() -> argparse.ArgumentParser:
    """hotline's commands and their options."""
    parser = argparse.ArgumentParser(prog="hotline", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    source_help = "kernel tarball or git tree instead of Debian's linux-source-6.1 " \
                  "(default: $HOTLINE_KERNEL_SOURCE)"

    p = sub.add_parser("demo", help="build, boot and run the demo experiment (fork storm, 4 CPUs)")
    p.add_argument("--kernel-source", help=source_help)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("test", help="run the test suite (arguments go to pytest)")
    p.add_argument("--unit", action="store_true",
                   help="only the tests that boot nothing, install no Debian root and start "
                        "no Slurm (minutes, no kernel build)")
    p.set_defaults(func=cmd_test)

    p = sub.add_parser("run", help="run an experiment spec (configs/experiments/*.toml) as a "
                       "Snakemake workflow: locally, or on a cluster with --profile")
    p.add_argument("spec")
    p.add_argument("--jobs", type=int, help="locally: cores to use, one simulation each "
                   "(default: all); with --profile: jobs submitted at once (default: "
                   "the profile's)")
    p.add_argument("--profile", help="Snakemake profile: a directory, or a name in profiles/ "
                   "(slurm)")
    p.add_argument("--dry-run", action="store_true",
                   help="show the steps that would run, run none")
    p.add_argument("--rerun", action="store_true", help="run again even if inputs are unchanged")
    p.add_argument("--kernel-source", help=source_help)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("report", help="report a run's misses by instruction, field and cause "
                       "(text and HTML, written into the run directory)")
    p.add_argument("run", help="run directory, or run id under the results tree")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("annotate", help="one function of a run, perf annotate style: source "
                       "lines with their instructions and each instruction's misses (text and "
                       "HTML, written into the run directory's annotate/)")
    p.add_argument("run", help="run directory, or run id under the results tree")
    p.add_argument("function", help="kernel function (symbol), e.g. folio_unlock")
    p.add_argument("--sampled", metavar="RUN",
                   help="a sampled gem5 O3 run of the same kernel (SMARTS windows): its "
                        "estimate of each instruction's share, with the 95%% interval, beside")
    p.set_defaults(func=cmd_annotate)

    p = sub.add_parser("diff", help="two runs side by side, perf diff style: misses and "
                       "modelled cycles per function and instruction, and the difference")
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="RUN_A RUN_B (directories or run ids), or EXPERIMENT VARIANT_A "
                   "VARIANT_B (a gathered results directory and two variants or run ids)")
    p.add_argument("--workload", help="with an experiment: the workload of both runs")
    p.add_argument("--system", help="with an experiment: the system of both runs")
    p.add_argument("--out", help="directory for diff.txt, diff.html and pictures/ (default: "
                   "RESULTS/diff/A--vs--B)")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("export", help="export a run's misses for other tools: --pprof, "
                       "pprof's profile format (go tool pprof -http=: FILE)")
    p.add_argument("--pprof", action="store_true", required=True,
                   help="write pprof's profile format (the one format so far)")
    p.add_argument("run", help="run directory, or run id under the results tree")
    p.add_argument("-o", "--output", help="file to write (default: RUN/misses.pb.gz)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("analyse", help="execute the notebooks of analysis/ against a gathered "
                       "results directory; HTML pages in RESULTS/analysis/")
    p.add_argument("results", help="e.g. results/claims-smoke")
    p.add_argument("--gem5", metavar="GEM5_RESULTS", help="the same experiment's results on "
                   "gem5, for the claims page's gem5 column (e.g. results/claims-smoke-gem5)")
    p.add_argument("--more", metavar="LABEL=RESULTS", action="append", default=[],
                   help="more results for a column of the claims page of their own, under "
                   "LABEL (e.g. \"QEMU, 32-byte lines=results/claims-32b\"); repeatable")
    p.set_defaults(func=cmd_analyse)

    p = sub.add_parser("lab", help="JupyterLab on analysis/ in the project's environment "
                       "(arguments after -- go to jupyter lab)")
    p.set_defaults(func=cmd_lab)

    p = sub.add_parser("check", help="validate an experiment spec, list its runs and the "
                       "builds they need that are not made yet")
    p.add_argument("spec")
    p.add_argument("--kernel-source", help=source_help)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("build-kernel", help="build (or reuse) one kernel variant")
    p.add_argument("variant")
    p.add_argument("--kernel-source", help=source_help)
    p.set_defaults(func=cmd_build_kernel)

    p = sub.add_parser("build-image", help="build (or reuse) the workload disk image")
    p.set_defaults(func=cmd_build_image)
    return parser


def main(argv=None) -> int:
    parser = command_line()
    # Arguments hotline does not know go to pytest (test) or jupyter (lab).
    args, extra = parser.parse_known_args(argv)
    if extra and args.command not in ("test", "lab"):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.pytest_args = args.lab_args = [a for a in extra if a != "--"]
    try:
        return guarded(lambda: args.func(args))
    except KeyboardInterrupt:
        print("hotline: interrupted", file=sys.stderr)
        return 130
