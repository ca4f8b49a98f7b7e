"""Checks of score and attention matrices: one validation pass, checked row sums, symmetry, stochasticity.

A score matrix ``C`` (``C[i, j]`` = score of query ``i`` for key ``j``) must be 2-D, real floating,
finite and nonnegative; an attention matrix ``A`` is in addition row-stochastic. The normalisations,
the eigensolvers, the diffusion maps and the graph analyses all check their input here. The checks are
array-API clean and read the matrix in blocks (a 0-d result per block stays on the device); only an
error message crosses the host boundary to name a bad row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from spectral.floor.backend import array_namespace, dtype_name, to_numpy
from spectral.floor.validation import InputError

__all__ = ["check_row_stochastic"]

#: Elements per block in the blocked validation passes (32 MiB of float64).
BLOCK_ELEMENTS = 1 << 22
#: Tile side of the symmetric scan on the host.  Measured (numpy, 2 cores, n = 2000 / 5000 /
#: 10000): 64: 16 / 93 / 438 ms; 128: 10 / 66 / 281 ms; 256: 10 / 74 / 268 ms; the row-block
#: comparison with a strided transpose it replaces took 47 / 356 ms at n = 2000 / 5000.
TILE_HOST = 128
#: Tile side on other namespaces (GPU): larger tiles, fewer kernel launches.
TILE_DEVICE = 2048


def _eps(dtype) -> float:
    return float(np.finfo(np.dtype(dtype_name(dtype))).eps)


def symmetry_tolerance(dtype) -> float:
    """Relative asymmetry accepted as round-off: ``4 sqrt(eps(dtype))`` (exact algebra).

    Kernels amplify the round-off of computed distances: on a circle grid with scale 1e-4 the
    geodesic ``d(x, y)`` and ``d(y, x)`` differ by ~1 ulp of 2 pi, i.e. ~1e-11 relative in
    ``Phi(d/s)``, far above 100 eps but far below 1e-8.
    """
    return 4.0 * math.sqrt(_eps(dtype))


def row_stochastic_tolerance(dtype) -> float:
    """Row-sum tolerance ``4 sqrt(eps(dtype))`` of an attention matrix (exact algebra).

    A row normalised in floating point sums to 1 within about ``n eps``; ``4 sqrt(eps)`` (6e-8 in
    float64, 1.4e-3 in float32) accepts that for every n below 10^7 and still rejects a matrix that
    was never normalised.
    """
    return 4.0 * math.sqrt(_eps(dtype))


def _check_shape_dtype(C: Any, *, name: str, square: bool):
    """Rank, shape and dtype checks of a score matrix; return its namespace."""
    if C is not None and not isinstance(C, (int, float)) and not (hasattr(C, "shape") and hasattr(C, "dtype")):
        # a list or a string has no namespace: say what is wanted instead of array_namespace's TypeError
        raise InputError(f"{name} must be a 2-D score matrix (a NumPy, CuPy or array-API array, or a scipy.sparse "
                         f"matrix where accepted), got {type(C).__name__}: pass numpy.asarray(...) of the scores")
    xp = array_namespace(C)
    shape = tuple(getattr(C, "shape", ()))
    if len(shape) != 2:
        raise InputError(f"{name} must be a 2-D score matrix of shape (n, m), got shape {shape}")
    if shape[0] < 1 or shape[1] < 1:
        raise InputError(f"{name} must have at least one row and one column, got shape {shape}")
    if square and shape[0] != shape[1]:
        raise InputError(f"{name} must be square (n, n), got shape {shape}")
    if C.dtype not in (xp.float32, xp.float64):
        raise InputError(f"{name} must have a real floating dtype (float32 or float64), got {C.dtype}")
    return xp


@dataclass(frozen=True)
class ScoreStats:
    """What one validation pass over ``C`` learned (0-d arrays stay on the device).

    Attributes
    ----------
    cmin, cmax : 0-d array
        ``min(C)`` and ``max(C)``.
    defect : float or None
        ``max|C - C^T| / max|C|`` (symmetry scan only).
    """

    cmin: Any
    cmax: Any
    defect: float | None

    def __repr__(self) -> str:
        return f"ScoreStats(cmin={float(self.cmin):.3g}, cmax={float(self.cmax):.3g}, defect={self.defect!r})"


def _raise_if_bad_entries(cmin, cmax, name: str) -> None:
    """NaN/inf and negative entries from the min and max alone (both propagate NaN)."""
    lo, hi = float(cmin), float(cmax)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise InputError(f"{name} must be finite; it contains NaN or inf")
    if lo < 0:
        raise InputError(f"{name} must be nonnegative (scores, not logits); its minimum is {lo:.3g}")


def _row_blocks(n: int, m: int):
    """``(start, stop)`` row ranges of about :data:`BLOCK_ELEMENTS` entries each."""
    rows = max(1, BLOCK_ELEMENTS // max(m, 1))
    for start in range(0, n, rows):
        yield start, min(n, start + rows)


def _tile_scan(C, xp):
    """``(min(C), max(C), max|C - C^T|)`` of a square ``C`` in one tiled pass (0-d arrays)."""
    n = C.shape[0]
    b = TILE_HOST if xp is np else TILE_DEVICE
    cmin = cmax = worst = None
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf gives NaN: refused by the caller
        for i0 in range(0, n, b):
            i1 = min(n, i0 + b)
            for j0 in range(i0, n, b):
                j1 = min(n, j0 + b)
                upper = C[i0:i1, j0:j1]
                lower = C[j0:j1, i0:i1]
                diff = upper - lower.T
                tmin = xp.minimum(xp.min(upper), xp.min(lower))
                tmax = xp.maximum(xp.max(upper), xp.max(lower))
                tworst = xp.maximum(xp.max(diff), -xp.min(diff))  # max|diff| without an abs pass
                if cmin is None:
                    cmin, cmax, worst = tmin, tmax, tworst
                else:
                    cmin, cmax = xp.minimum(cmin, tmin), xp.maximum(cmax, tmax)
                    worst = xp.maximum(worst, tworst)
    return cmin, cmax, worst


def scan_scores(C: Any, *, name: str = "C", square: bool = False, symmetry: bool = False):
    """Validate a score matrix in one pass; return ``(xp, ScoreStats)``.

    Finite and nonnegative entries are read off ``min(C)`` and ``max(C)`` (NaN propagates through
    both; +inf shows in the max, -inf in the min), so the pass makes no boolean temporaries.
    ``symmetry=True`` (square ``C``) walks ``C`` in square tiles ``(I, J)``, ``I <= J``, and compares
    each with the transposed mirror tile: both tiles fit in cache, every entry is read once, and the
    same pass gives min, max and the symmetry defect ``max|C - C^T| / max|C|`` (the value of
    :func:`symmetry_defect`).

    Raises
    ------
    spectral.floor.validation.InputError
        Not 2-D, empty, not square (``square`` or ``symmetry``), not float32/float64, NaN/inf or
        negative entries.
    """
    xp = _check_shape_dtype(C, name=name, square=square or symmetry)
    if symmetry:
        cmin, cmax, worst = _tile_scan(C, xp)
    else:
        cmin = cmax = worst = None
        for start, stop in _row_blocks(C.shape[0], C.shape[1]):
            block = C[start:stop, :]
            bmin, bmax = xp.min(block), xp.max(block)
            cmin = bmin if cmin is None else xp.minimum(cmin, bmin)
            cmax = bmax if cmax is None else xp.maximum(cmax, bmax)
    _raise_if_bad_entries(cmin, cmax, name)
    defect = None
    if symmetry:
        scale = max(float(cmax), -float(cmin))
        defect = 0.0 if scale == 0.0 else float(worst) / scale
    return xp, ScoreStats(cmin=cmin, cmax=cmax, defect=defect)


def check_scores(C: Any, *, name: str = "C", square: bool = False):
    """Validate a score matrix (see :func:`scan_scores`); return its namespace."""
    return scan_scores(C, name=name, square=square)[0]


def symmetry_defect(C) -> float:
    """``max|C - C^T| / max|C|`` of a square matrix (0 for an exactly symmetric one); one tiled pass."""
    xp = array_namespace(C)
    cmin, cmax, worst = _tile_scan(C, xp)
    scale = max(float(cmax), -float(cmin))
    if scale == 0.0:
        return 0.0
    return float(worst) / scale


def checked_row_sums(C, *, name: str = "C", axis: int = 1, what: str = "row", cmax=None):
    """Row (or column, ``axis=0``) sums of a validated ``C``; raise naming the first (near-)zero one.

    A sum ``<= finfo(dtype).smallest_normal * max(C)`` is refused: such a row is zero up to
    subnormal numbers, so normalising it divides by (nearly) nothing. ``cmax``: ``max(C)`` when a
    validation pass already has it (saves a pass over ``C``).
    """
    xp = array_namespace(C)
    sums = xp.sum(C, axis=axis)
    threshold = xp.finfo(C.dtype).smallest_normal * (xp.max(C) if cmax is None else cmax)
    bad = sums <= threshold
    if bool(xp.any(bad)):
        idx = np.flatnonzero(to_numpy(bad))
        raise InputError(
            f"{name} has {idx.size} {what}(s) with zero (or subnormal) sum, first at {what} {int(idx[0])}; "
            f"every {what} sum must exceed finfo.smallest_normal * max({name}) (an isolated point: enlarge the "
            "kernel scale or keep the diagonal)"
        )
    return sums


def check_row_stochastic(A, *, name: str = "A"):
    """Validate an attention matrix (square, finite, nonnegative, row sums 1); return its namespace.

    Raises
    ------
    spectral.floor.validation.InputError
        Not a square 2-D float32/float64 array, NaN or inf, negative entries, or a row sum farther
        than :func:`row_stochastic_tolerance` from 1. The message names ``name`` and the range.
    """
    xp, _ = scan_scores(A, name=name, square=True)
    tol = row_stochastic_tolerance(A.dtype)
    dev = float(xp.max(xp.abs(xp.sum(A, axis=1) - 1.0)))
    if dev > tol:
        raise InputError(
            f"{name} must be row-stochastic: every row sum in [1 - {tol:.2g}, 1 + {tol:.2g}], "
            f"got a row sum off by {dev:.3g} (use row_normalize)"
        )
    return xp
