"""The one kind of interval hotline reports: the 95% Student-t interval of
a mean over independent measurements (repeated runs of a claim, the
windows of a sampled simulation)."""

import numpy as np
from scipy import stats

CONFIDENCE = 0.95


def half_width(sd, n):
    """Half the interval's width for sample standard deviations sd of n
    measurements each (numbers or arrays alike; 0 where n < 2)."""
    n = np.asarray(n, dtype=float)
    t = stats.t.ppf((1 + CONFIDENCE) / 2, np.maximum(n - 1, 1))
    return np.where(n > 1, t * np.asarray(sd, dtype=float) / np.sqrt(np.maximum(n, 1)), 0.0)

