"""Simulation backends: each boots a kernel and disk image on a system spec
and leaves a guest log in the run directory."""
