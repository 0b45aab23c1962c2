"""Simulation backends: each boots a kernel and disk image on a system spec,
leaves the guest's console log in the run directory and turns the
simulator's outputs into the results tables.  One package per backend
(qemu/, gem5/), each behind the interface of backend.py; what they share
is here: the kernel command line (command_line), the guest's log
(guest_log) and running a simulator under watch (supervise)."""

import importlib

from hotline.errors import HotlineError
from hotline.specs import BACKENDS


def get_backend(name: str):
    """The Backend (simulate/backend.py) of the package simulate/NAME/: the
    one place a backend is chosen by its name."""
    if name not in BACKENDS:
        raise HotlineError(f"unknown backend '{name}'; available: {', '.join(BACKENDS)}")
    return importlib.import_module(f"hotline.simulate.{name}").BACKEND
