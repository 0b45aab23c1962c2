"""hotline's components for gem5 v24.0's standard library: the cache
hierarchy with hotline's profiles, the region-of-interest exit handlers, and
the build checks.
Imported by configs/gem5/hotline_boot.py and hotline_measure.py, inside
gem5's Python; run_params.py also by hotline itself."""
