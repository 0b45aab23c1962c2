"""What an experiment's results directory holds and who may write it, below
both the experiment runner (experiment/) and the sweep workflow (sweep/),
which read and write it alike:

  layout.py  where each file is, in the experiment's directory
  done.py    what done means for a run: the one place that decides what is
             made again
  lock.py    one writer at a time in an experiment's directory
"""
