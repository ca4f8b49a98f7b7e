"""Normalisations of score matrices: row (N_R), anisotropic, Sinkhorn, symmetric conjugate.

A score matrix ``C`` (``C[i, j]`` = score of query ``i`` for key ``j``, nonnegative)
becomes an attention matrix by normalisation.  This module implements the four
normalisations the papers use; all are array-API clean (the namespace comes from
the input, so CuPy arrays stay on the GPU) and none crosses the host boundary
except to name a bad row in an error message.

References
----------
FNA: "Fractional neural attention" (``../shared/papers/fractional-neural-attention.txt``),
eqs. (16)-(18) (row normalisation N_R) and (33) (symmetric conjugate).
DRIFT: "Attention as drift-diffusion" (``attention-drift-diffusion-metric.txt``),
Coifman-Lafon a-normalisation.
"""

from __future__ import annotations

import warnings
from math import isfinite as math_isfinite
from math import sqrt as math_sqrt
from dataclasses import dataclass
from typing import Any

import numpy as np

from spectral.backend import array_namespace, to_numpy

__all__ = [
    "SinkhornConvergenceWarning",
    "SinkhornResult",
    "anisotropic_normalize",
    "row_normalize",
    "sinkhorn",
    "symmetric_conjugate",
]


class SinkhornConvergenceWarning(RuntimeWarning):
    """Sinkhorn scaling stopped at ``max_iter`` before reaching ``tol``."""


def _check_shape_dtype(C: Any, *, name: str, square: bool):
    """Rank, shape and dtype checks of a score matrix; return its namespace."""
    xp = array_namespace(C)
    shape = tuple(getattr(C, "shape", ()))
    if len(shape) != 2:
        raise ValueError(f"{name} must be a 2-D score matrix of shape (n, m), got shape {shape}")
    if shape[0] < 1 or shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got shape {shape}")
    if square and shape[0] != shape[1]:
        raise ValueError(f"{name} must be square (n, n), got shape {shape}")
    if C.dtype not in (xp.float32, xp.float64):
        raise ValueError(f"{name} must have a real floating dtype (float32 or float64), got {C.dtype}")
    return xp


@dataclass(frozen=True)
class _ScoreStats:
    """What one validation pass over ``C`` learned (0-d arrays stay on the device)."""

    cmin: Any  # min(C), NaN if C has a NaN
    cmax: Any  # max(C), NaN if C has a NaN
    defect: float | None  # max|C - C^T| / max|C| (symmetry scan only)


def _raise_if_bad_entries(cmin, cmax, name: str) -> None:
    """NaN/inf and negative entries from the min and max alone (both propagate NaN)."""
    lo, hi = float(cmin), float(cmax)
    if not (math_isfinite(lo) and math_isfinite(hi)):
        raise ValueError(f"{name} must be finite; it contains NaN or inf")
    if lo < 0:
        raise ValueError(f"{name} must be nonnegative (scores, not logits); its minimum is {lo:.3g}")


def _scan_scores(C: Any, *, name: str = "C", square: bool = False, symmetry: bool = False):
    """Validate a score matrix in one pass; return ``(xp, _ScoreStats)``.

    Finite and nonnegative entries are read off ``min(C)`` and ``max(C)`` (NaN
    propagates through both; +inf shows in the max, -inf in the min), so the pass
    makes no boolean temporaries.  ``symmetry=True`` (square ``C``) walks ``C`` in
    square tiles ``(I, J)``, ``I <= J``, and compares each with the transposed mirror
    tile: both tiles fit in cache, every entry is read once, and the same pass gives
    min, max and the symmetry defect ``max|C - C^T| / max|C|`` (exactly the value
    of :func:`_symmetry_defect`).
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
    return xp, _ScoreStats(cmin=cmin, cmax=cmax, defect=defect)


def _check_scores(C: Any, *, name: str = "C", square: bool = False):
    """Validate a score matrix; return its namespace.

    Raises ``ValueError`` (naming ``name``) for a wrong rank/shape, a
    non-floating dtype, NaN/inf or negative entries.
    """
    return _scan_scores(C, name=name, square=square)[0]


#: Elements per block in the blocked validation passes (32 MiB of float64).
_BLOCK_ELEMENTS = 1 << 22
#: Tile side of the symmetric scan on the host.  Measured (numpy, 2 cores, n = 2000 / 5000 /
#: 10000): 64: 16 / 93 / 438 ms; 128: 10 / 66 / 281 ms; 256: 10 / 74 / 268 ms; the row-block
#: comparison with a strided transpose it replaces took 47 / 356 ms at n = 2000 / 5000.
_TILE_HOST = 128
#: Tile side on other namespaces (GPU): larger tiles, fewer kernel launches.
_TILE_DEVICE = 2048


def _row_blocks(n: int, m: int):
    """``(start, stop)`` row ranges of about ``_BLOCK_ELEMENTS`` entries each."""
    rows = max(1, _BLOCK_ELEMENTS // max(m, 1))
    for start in range(0, n, rows):
        yield start, min(n, start + rows)


def _tile_scan(C, xp):
    """``(min(C), max(C), max|C - C^T|)`` of a square ``C`` in one tiled pass (0-d arrays)."""
    n = C.shape[0]
    b = _TILE_HOST if xp is np else _TILE_DEVICE
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


def _row_sums_checked(C, xp, *, name: str = "C", axis: int = 1, what: str = "row", cmax=None):
    """Row (or column) sums of a validated ``C``; raise naming the first (near-)zero one.

    A sum ``<= finfo(dtype).smallest_normal * max(C)`` is refused: such a row is zero up to
    subnormal numbers, so normalising it divides by (nearly) nothing.  ``cmax``: ``max(C)``
    when a validation pass already has it (saves a pass over ``C``).
    """
    sums = xp.sum(C, axis=axis)
    threshold = xp.finfo(C.dtype).smallest_normal * (xp.max(C) if cmax is None else cmax)
    bad = sums <= threshold
    if bool(xp.any(bad)):
        idx = np.flatnonzero(to_numpy(bad))
        raise ValueError(
            f"{name} has {idx.size} {what}(s) with zero (or subnormal) sum, first at {what} {int(idx[0])}; "
            f"every {what} sum must exceed finfo.smallest_normal * max({name}) (an isolated point: enlarge the "
            "kernel scale or keep the diagonal)"
        )
    return sums


def row_normalize(C):
    """Row normalisation ``N_R(C) = D^-1 C`` with ``D = diag(C 1)``.

    Parameters
    ----------
    C : array of shape (n, m)
        Nonnegative, finite scores (square or rectangular), any array-API namespace.

    Returns
    -------
    array of shape (n, m)
        Row-stochastic attention matrix, same namespace, device and dtype as ``C``.

    Raises
    ------
    ValueError
        If ``C`` is not 2-D, not real floating, has NaN/inf or negative entries,
        or a row sum is ``<= finfo(dtype).smallest_normal * max(C)`` (the message names the row).

    Notes
    -----
    .. math:: A_{ij} = C_{ij} / \\sum_k C_{ik}

    References
    ----------
    FNA eqs. (16)-(18): the attention matrix ``A = N_R(C)``.

    Examples
    --------
    >>> import numpy as np
    >>> row_normalize(np.array([[1.0, 3.0], [2.0, 2.0]]))
    array([[0.25, 0.75],
           [0.5 , 0.5 ]])
    """
    xp = _check_scores(C)
    d = _row_sums_checked(C, xp)
    return C / d[:, None]


def _check_exponent(a) -> float:
    if isinstance(a, bool) or not isinstance(a, (int, float, np.integer, np.floating)):
        raise ValueError(f"a must be a real number in [0, 1], got {a!r}")
    a = float(a)
    if not (0.0 <= a <= 1.0):
        raise ValueError(f"a must be in [0, 1], got {a!r}")
    return a


def anisotropic_normalize(C, a):
    """Coifman-Lafon a-normalisation ``rownorm(D^-a C D^-a)``.

    Parameters
    ----------
    C : array of shape (n, n)
        Nonnegative, finite, square scores (usually a symmetric kernel matrix).
    a : float in [0, 1]
        ``0`` gives ``N_R(C)``; ``1/2`` the Fokker-Planck normalisation; ``1``
        removes the sampling density from the limit operator (Laplace-Beltrami).

    Returns
    -------
    array of shape (n, n)
        The row-stochastic matrix ``A^(a)``.

    Raises
    ------
    ValueError
        Bad ``C`` (see :func:`row_normalize`; also non-square), or ``a`` outside [0, 1].

    Notes
    -----
    With degrees :math:`d_i = \\sum_j C_{ij}`,

    .. math:: C^{(a)}_{ij} = C_{ij} / (d_i^a d_j^a), \\qquad A^{(a)} = N_R(C^{(a)}).

    The limit operator has the density ``rho`` replaced by ``rho^(1-a)`` (DESIGN.md 3.1, 3.3).

    References
    ----------
    Coifman & Lafon, "Diffusion maps" (2006); DRIFT section on the a-family.

    Examples
    --------
    >>> import numpy as np
    >>> C = np.array([[2.0, 1.0], [1.0, 1.0]])
    >>> bool(np.allclose(anisotropic_normalize(C, 0).sum(axis=1), 1.0))
    True
    """
    a = _check_exponent(a)
    xp = _check_scores(C, square=True)
    d = _row_sums_checked(C, xp)
    w = d ** (-a)
    Ca = w[:, None] * C * w[None, :]
    return row_normalize(Ca)


@dataclass(frozen=True)
class SinkhornResult:
    """Outcome of :func:`sinkhorn`.

    Attributes
    ----------
    matrix : array of shape (n, n)
        ``diag(row_scaling) C diag(col_scaling)``, doubly stochastic up to ``residual``.
    row_scaling, col_scaling : array of shape (n,)
        The positive scalings ``r`` and ``c``.
    iterations : int
        Number of (row, column) scaling sweeps performed.
    converged : bool
        ``residual <= tol``.
    residual : float
        ``max(max_i |row sum_i - 1|, max_j |col sum_j - 1|)`` of ``matrix``.
    """

    matrix: Any
    row_scaling: Any
    col_scaling: Any
    iterations: int
    converged: bool
    residual: float


def _check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _check_tol(tol, name: str = "tol") -> float:
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number in (0, 1), got {tol!r}")
    tol = float(tol)
    if not (0.0 < tol < 1.0):
        raise ValueError(f"{name} must be in (0, 1), got {tol!r}")
    return tol


def sinkhorn(C, *, tol=1e-10, max_iter=10000, check_every=10):
    """Sinkhorn-Knopp scaling of a square nonnegative matrix to a doubly stochastic one.

    Parameters
    ----------
    C : array of shape (n, n)
        Nonnegative, finite scores with no zero row or column.  Convergence needs
        total support (true for any positive matrix, e.g. every FNA or heat kernel).
    tol : float in (0, 1)
        Stop when the largest deviation of a row or column sum from 1 is ``<= tol``.
    max_iter : int >= 1
        Maximum number of sweeps (one sweep = row scaling then column scaling).
    check_every : int >= 1
        Evaluate the residual (a host synchronisation on GPU) every this many sweeps.

    Returns
    -------
    SinkhornResult
        ``converged=False`` (with a :class:`SinkhornConvergenceWarning`) when
        ``max_iter`` is reached first.

    Raises
    ------
    ValueError
        Bad ``C`` (non-square, NaN/inf, negative, a zero row or column), bad ``tol``,
        ``max_iter`` or ``check_every``.

    Notes
    -----
    Alternating updates :math:`r \\leftarrow 1 / (C c)`, :math:`c \\leftarrow 1 / (C^T r)`;
    after each sweep the column sums of :math:`\\mathrm{diag}(r) C \\mathrm{diag}(c)`
    are exactly 1 and the residual is that of the row sums.  For symmetric ``C`` the
    limit is symmetric (``r = c``) up to a scalar.

    References
    ----------
    Sinkhorn & Knopp (1967); the bistochastic attention normalisation discussed in DRIFT.

    Examples
    --------
    >>> import numpy as np
    >>> res = sinkhorn(np.array([[2.0, 1.0], [1.0, 3.0]]))
    >>> res.converged, bool(np.allclose(res.matrix.sum(axis=0), 1.0))
    (True, True)
    """
    tol = _check_tol(tol)
    max_iter = _check_positive_int(max_iter, "max_iter")
    check_every = _check_positive_int(check_every, "check_every")
    xp = _check_scores(C, square=True)
    _row_sums_checked(C, xp)
    _row_sums_checked(C, xp, axis=0, what="column")
    n = C.shape[0]
    c = xp.ones((n,), dtype=C.dtype)
    r = c
    residual = float("inf")
    it = 0
    while it < max_iter:
        r = 1.0 / (C @ c)
        c = 1.0 / (r @ C)
        it += 1
        if it % check_every == 0 or it == max_iter:
            row = r * (C @ c)
            residual = float(xp.max(xp.abs(row - 1.0)))
            if residual <= tol:
                break
    converged = residual <= tol
    if not converged:
        warnings.warn(
            f"sinkhorn stopped after max_iter={max_iter} sweeps with residual {residual:.3g} > tol={tol:.3g}",
            SinkhornConvergenceWarning,
            stacklevel=2,
        )
    P = r[:, None] * C * c[None, :]
    residual = max(
        float(xp.max(xp.abs(xp.sum(P, axis=1) - 1.0))),
        float(xp.max(xp.abs(xp.sum(P, axis=0) - 1.0))),
    )
    return SinkhornResult(matrix=P, row_scaling=r, col_scaling=c, iterations=it, converged=converged, residual=residual)


def _symmetry_defect(C, xp) -> float:
    """``max|C - C^T| / max|C|`` (0 for an exactly symmetric matrix); one tiled pass."""
    cmin, cmax, worst = _tile_scan(C, xp)
    scale = max(float(cmax), -float(cmin))
    if scale == 0.0:
        return 0.0
    return float(worst) / scale


def symmetry_tolerance(dtype, xp) -> float:
    """Relative asymmetry accepted as round-off: ``4 sqrt(eps(dtype))`` (STYLE.md 3.7a).

    Kernels amplify the round-off of computed distances: on a circle grid with
    scale 1e-4 the geodesic ``d(x, y)`` and ``d(y, x)`` differ by ~1 ulp of 2 pi,
    i.e. ~1e-11 relative in ``Phi(d/s)``, far above 100 eps but far below 1e-8.
    """
    return 4.0 * math_sqrt(float(xp.finfo(dtype).eps))


def symmetric_conjugate(C):
    """Symmetric conjugate ``S = D^-1/2 C D^-1/2`` of ``A = D^-1 C`` and the degrees ``D``.

    Parameters
    ----------
    C : array of shape (n, n)
        Symmetric (within ``4 sqrt(eps)`` relative), nonnegative, finite scores (``Q = K``:
        FNA Assumptions 1 and 2).

    Returns
    -------
    S : array of shape (n, n)
        Symmetric matrix similar to ``A = D^-1 C`` (``A = D^-1/2 S D^1/2``), so
        ``A`` has the real eigenvalues of ``S``.
    degrees : array of shape (n,)
        Row sums ``d_i = sum_j C_ij``.

    Raises
    ------
    ValueError
        Bad ``C`` (see :func:`row_normalize`), non-square, or not symmetric:
        ``max|C - C^T| > 4 sqrt(eps) max|C|``.

    Notes
    -----
    .. math:: \\hat A = D^{-1/2} C D^{-1/2}, \\quad A = D^{-1/2} \\hat A D^{1/2}.

    If :math:`\\hat A = V \\Lambda V^T`, the right eigenvectors of ``A`` are
    :math:`\\psi_j = D^{-1/2} v_j` and the left ones :math:`\\phi_j = D^{1/2} v_j`.

    References
    ----------
    FNA eqs. (33) and (35).

    Examples
    --------
    >>> import numpy as np
    >>> S, d = symmetric_conjugate(np.array([[2.0, 1.0], [1.0, 1.0]]))
    >>> d
    array([3., 2.])
    """
    xp, stats = _scan_scores(C, square=True, symmetry=True)  # validation + symmetry, one pass
    defect = stats.defect
    if defect > symmetry_tolerance(C.dtype, xp):
        raise ValueError(
            f"C must be symmetric for the symmetric conjugate (max|C - C^T| / max|C| = {defect:.3g} "
            f"> 4 sqrt(eps) = {symmetry_tolerance(C.dtype, xp):.3g}); use row_normalize and the "
            "non-symmetric spectrum instead"
        )
    d = _row_sums_checked(C, xp, cmax=stats.cmax)
    s = 1.0 / xp.sqrt(d)
    S = C * s[:, None]  # (C_ij s_i) s_j: one n x n temporary instead of two
    S *= s[None, :]
    return S, d
