"""Results tables: what a run's raw counters become, one schema for every
backend (schema.py), with instructions and data addresses attributed to
symbols, source lines and data objects of the run's own kernel."""
