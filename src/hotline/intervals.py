"""The intervals hotline reports, both 95%: the Student-t interval of a mean
over independent measurements (repeated runs of a claim, the windows of a
sampled simulation), and, for figures whose mean is no normal variable (a
rank over a few runs), the percentile bootstrap interval of the mean."""

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
# The bootstrap's resamples and the seed of their draw: fixed, so that the
# same measurements give the same interval on every machine and every run.
RESAMPLES = 10_000
BOOTSTRAP_SEED = 20021129


def half_width(sd, n):
    """Half the interval's width for sample standard deviations sd of n
    measurements each (numbers or arrays alike; 0 where n < 2)."""
    n = np.asarray(n, dtype=float)
    t = stats.t.ppf((1 + CONFIDENCE) / 2, np.maximum(n - 1, 1))
    return np.where(n > 1, t * np.asarray(sd, dtype=float) / np.sqrt(np.maximum(n, 1)), 0.0)


def bootstrap(values) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of `values`: the
    values resampled with replacement RESAMPLES times (drawn from
    BOOTSTRAP_SEED), and the middle CONFIDENCE of the resamples' means.
    It never leaves the range the values span, so an interval of places
    holds only places the runs gave; over five values it runs narrower
    than the mean's spread over many repeats would, the known bias of a
    bootstrap of few."""
    values = np.asarray(values, dtype=float)
    draws = np.random.default_rng(BOOTSTRAP_SEED).integers(
        0, values.size, size=(RESAMPLES, values.size))
    means = values[draws].mean(axis=1)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)
