"""Sweeps on a workflow engine (Snakemake): an experiment spec becomes a
workflow of kernel builds, the guest image and plugin builds, one step per
simulation run and a gathering step, so that only missing or outdated
results are made, independent runs go in parallel, locally or on a Slurm
cluster, and an interrupted sweep resumes where it stopped.

  workflow.py  the spec as the workflow sees it: steps, their files, resources
  step.py      the command each step runs (python -m hotline.sweep.step ...)
  gather.py    every run's result in one index and one set of tables
  progress.py  the console's view of a running sweep
  engine.py    ./hotline run: Snakemake started, watched and summarised

What the experiment's directory holds, what makes a run done and the lock
on the directory are hotline.records', which experiment/ shares.
"""
