"""What the notebooks in analysis/ share: reading an experiment's gathered
results (results.py), the modelled cost measures (cost.py), and running the
notebooks headless (notebooks.py)."""
