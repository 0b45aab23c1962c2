"""hotline: build patched Linux kernels and a workload disk image, boot them on
simulated multi-core x86 machines, and record every run with its inputs."""

import argparse
import os
import sys
from pathlib import Path

from hotline import paths
from hotline.console import say
from hotline.errors import HotlineError

DEMO_SPEC = paths.CONFIGS / "experiments" / "demo.toml"


def cmd_run(args) -> int:
    from hotline.experiment import run_experiment
    results = run_experiment(Path(args.spec), rerun=args.rerun, kernel_source=args.kernel_source)
    return 1 if any(r.failure for r in results) else 0


def cmd_check(args) -> int:
    from hotline.experiment import plan
    from hotline.specs import load_experiment
    runs = plan(load_experiment(Path(args.spec)))
    say(f"{args.spec}: valid, {len(runs)} run(s)")
    for r in runs:
        print(r.run_id)
    return 0


def cmd_demo(args) -> int:
    from hotline.experiment import run_experiment
    results = run_experiment(DEMO_SPEC, rerun=True, kernel_source=args.kernel_source)
    for r in results:
        if r.failure:
            continue
        log = (r.directory / "guest.log").read_text(errors="replace").splitlines()
        wanted = ("hotline:", "hotline-summary:")
        print(f"\n{r.run_id} ({r.directory})")
        for line in log:
            if line.lstrip().startswith(wanted) or "smp: Brought up" in line:
                print(f"  {line.strip()}")
        for out in sorted(r.directory.glob("*.out")):
            for line in out.read_text().splitlines():
                print(f"  {out.stem}: {line}")
    return 1 if any(r.failure for r in results) else 0


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
        pytest_args += ["-m", "not boot"]
    else:
        # The boot tests need the baseline kernel and the image; building
        # them here, before pytest captures the console, shows the progress.
        build_image()
        build_kernel("baseline")
    os.chdir(paths.REPO)
    os.execv(sys.executable, [sys.executable, "-m", "pytest", *pytest_args])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="hotline", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    source_help = "kernel tarball or git tree instead of Debian's linux-source-6.1 " \
                  "(default: $HOTLINE_KERNEL_SOURCE)"

    p = sub.add_parser("demo", help="build, boot and run the demo experiment (fork storm, 4 CPUs)")
    p.add_argument("--kernel-source", help=source_help)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("test", help="run the test suite (arguments go to pytest)")
    p.add_argument("--unit", action="store_true",
                   help="only the tests that boot nothing (no kernel build)")
    p.set_defaults(func=cmd_test)

    p = sub.add_parser("run", help="run an experiment spec (configs/experiments/*.toml)")
    p.add_argument("spec")
    p.add_argument("--rerun", action="store_true", help="run again even if inputs are unchanged")
    p.add_argument("--kernel-source", help=source_help)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("check", help="validate an experiment spec and list its runs")
    p.add_argument("spec")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("build-kernel", help="build (or reuse) one kernel variant")
    p.add_argument("variant")
    p.add_argument("--kernel-source", help=source_help)
    p.set_defaults(func=cmd_build_kernel)

    p = sub.add_parser("build-image", help="build (or reuse) the workload disk image")
    p.set_defaults(func=cmd_build_image)

    # Arguments hotline does not know go to pytest, for `test` only.
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "test":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.pytest_args = extra
    try:
        return args.func(args)
    except HotlineError as e:
        print(f"hotline: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("hotline: interrupted", file=sys.stderr)
        return 130
