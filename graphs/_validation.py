"""Input checks shared by the graph analyses: a square, finite, non-negative, row-stochastic matrix."""

from __future__ import annotations

import math

from spectral.backend import array_namespace


def row_stochastic_tolerance(dtype_eps: float) -> float:
    """Row-sum tolerance ``4 sqrt(eps(dtype))`` (DESIGN 3.5 (a), exact algebra).

    A row normalised in floating point sums to 1 within about ``n eps``; ``4 sqrt(eps)``
    (6e-8 in float64, 1.4e-3 in float32) accepts that for every n below 10^7 and still
    rejects a matrix that was never normalised.
    """
    return 4.0 * math.sqrt(dtype_eps)


def check_row_stochastic(A, *, name: str = "A"):
    """Validate an attention matrix and return its array namespace.

    Raises
    ------
    ValueError
        If ``A`` is not a square 2-D real array, contains NaN or infinities, has negative
        entries, or has a row sum farther than ``4 sqrt(eps(dtype))`` from 1. The message names
        ``name`` and the allowed range.
    """
    xp = array_namespace(A)
    shape = tuple(A.shape)
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] < 1:
        raise ValueError(f"{name} must be a square (n, n) matrix with n >= 1, got shape {shape}")
    if not xp.isdtype(A.dtype, "real floating"):
        raise ValueError(f"{name} must have a real floating dtype, got {A.dtype}")
    if not bool(xp.all(xp.isfinite(A))):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    if bool(xp.any(A < 0)):
        raise ValueError(f"{name} entries must be in [0, 1] (non-negative), got min {float(xp.min(A))!r}")
    tol = row_stochastic_tolerance(float(xp.finfo(A.dtype).eps))
    dev = float(xp.max(xp.abs(xp.sum(A, axis=1) - 1.0)))
    if dev > tol:
        raise ValueError(
            f"{name} must be row-stochastic: every row sum in [1 - {tol:.2g}, 1 + {tol:.2g}], "
            f"got a row sum off by {dev:.3g}"
        )
    return xp
