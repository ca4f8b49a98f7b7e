"""Transitional: the older validators still imported by ``manifolds.densities`` and ``manifolds.operators``.

The toolkit validates through :mod:`spectral.validation` and :func:`manifolds.points.as_points`; the
other manifolds modules already do. This file goes once those two modules switch (their tests match
the messages below, so the functions are kept as they were).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from .points import as_points

__all__ = [
    "as_generator",
    "check_dim",
    "check_positive_int",
    "check_nonnegative_int",
    "check_real",
    "as_points",
]


def check_positive_int(value, name: str) -> int:
    """Return ``value`` as an int if it is an integer >= 1, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def check_nonnegative_int(value, name: str) -> int:
    """Return ``value`` as an int if it is an integer >= 0, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return int(value)


def check_dim(dim) -> int:
    """Intrinsic dimension: an integer >= 1."""
    if isinstance(dim, bool) or not isinstance(dim, Integral) or dim < 1:
        raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
    return int(dim)


def check_real(value, name: str, *, low=-math.inf, high=math.inf, low_open=False, high_open=False) -> float:
    """Return ``value`` as a float if it is a finite real in the given interval.

    The interval is ``[low, high]`` with each end open when ``low_open`` /
    ``high_open`` is set; the error message prints it in that notation.
    """
    lo = "(" if low_open or low == -math.inf else "["
    hi = ")" if high_open or high == math.inf else "]"
    rng_txt = f"{lo}{low}, {high}{hi}"
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real number in {rng_txt}, got {value!r}")
    v = float(value)
    too_low = v <= low if low_open else v < low
    too_high = v >= high if high_open else v > high
    if too_low or too_high:
        raise ValueError(f"{name} must be in {rng_txt}, got {v!r}")
    return v


def as_generator(rng) -> np.random.Generator:
    """Normalise ``rng`` (None, int seed or ``numpy.random.Generator``) to a Generator (SPEC 7).

    ``None`` gives a fresh, OS-seeded generator; no global state is used.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, Integral) and not isinstance(rng, bool) and rng >= 0):
        return np.random.default_rng(rng)
    raise ValueError(f"rng must be None, an integer seed >= 0 or a numpy.random.Generator, got {rng!r}")
