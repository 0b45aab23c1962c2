"""Checks on the gem5 build, made before the standard library is imported,
so that a build that cannot run hotline's config says why in one line
instead of a traceback from inside the stdlib."""

from __future__ import annotations

import os
import sys

from m5.defines import buildEnv

# gem5 v24's stdlib reads the build's Ruby protocol (gem5.runtime.
# get_runtime_coherence_protocol) even when the config uses classic caches.
KNOWN_PROTOCOLS = {"mi_example", "moesi_hammer", "garnet_standalone", "moesi_cmp_token",
                   "mesi_two_level", "moesi_amd_base", "mesi_three_level_htm",
                   "mesi_three_level", "gpu_viper", "chi"}


def fail(message: str) -> None:
    """One line on stderr that hotline's runner shows, then exit status 3."""
    print(f"hotline-gem5: error: {message}", file=sys.stderr)
    sys.exit(3)


def check_build(*, ruby_protocol_needed: str | None) -> None:
    if not (buildEnv.get("USE_X86_ISA") or buildEnv.get("TARGET_ISA") == "x86"):
        fail("this gem5 was built without the X86 ISA; build build/X86/gem5.opt")
    protocol = str(buildEnv.get("PROTOCOL", "")).lower()
    if protocol not in KNOWN_PROTOCOLS:
        fail(f"this gem5 was built without a Ruby protocol (PROTOCOL={protocol or 'none'}); "
             "gem5 v24's standard library needs one even with classic caches: build "
             "build/X86/gem5.opt with the default build_opts/X86 (MESI_Two_Level)")
    if ruby_protocol_needed and protocol != ruby_protocol_needed:
        fail(f"the system spec asks for Ruby {ruby_protocol_needed}, this gem5 was built "
             f"with {protocol}")


def load_params(kind, path: str):
    """The run's parameters, checked against run_params' definition."""
    from hotline_gem5.run_params import ParamsError, load
    try:
        return load(kind, path)
    except (OSError, ValueError, ParamsError) as e:
        fail(f"{path}: {e}")


def check_files(machine) -> None:
    from hotline_gem5.run_params import MAX_SCRATCH_DISKS
    if len(machine.scratch_disks) > MAX_SCRATCH_DISKS:
        fail(f"{len(machine.scratch_disks)} scratch disks: X86Board's IDE controller takes "
             f"at most {MAX_SCRATCH_DISKS} beside the root disk")
    for path in (machine.vmlinux, machine.disk_image, *machine.scratch_disks):
        if not os.path.isfile(path):
            fail(f"no such file: {path}")
