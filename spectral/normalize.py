"""Normalisations of score matrices: row (N_R), anisotropic, Sinkhorn, symmetric conjugate.

A score matrix ``C`` (``C[i, j]`` = score of query ``i`` for key ``j``, nonnegative)
becomes an attention matrix by normalisation.  This module implements the four
normalisations the papers use (the Sinkhorn scaling itself is :mod:`spectral.bistochastic`'s;
:func:`sinkhorn` is its alternating method under its first name); all are array-API clean (the
namespace comes from the input, so CuPy arrays stay on the GPU) and none crosses the host boundary
except to name a bad row in an error message.

Input checks live in :mod:`spectral.scores`.

References
----------
"Fractional neural attention" (FNA), eqs. (16)-(18) (row normalisation N_R) and (33) (symmetric
conjugate). "Attention as drift-diffusion" (DRIFT), the Coifman-Lafon a-normalisation.
"""

from __future__ import annotations

from spectral.bistochastic import SinkhornConvergenceWarning, SinkhornResult, sinkhorn_normalize
from spectral.scores import check_scores, checked_row_sums, scan_scores, symmetry_tolerance
from spectral.floor.validation import InputError, check_real

__all__ = [
    "SinkhornConvergenceWarning",
    "anisotropic_normalize",
    "row_normalize",
    "sinkhorn",
    "symmetric_conjugate",
]


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
    spectral.floor.validation.InputError
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
    check_scores(C)
    d = checked_row_sums(C)
    return C / d[:, None]


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
    spectral.floor.validation.InputError
        Bad ``C`` (see :func:`row_normalize`; also non-square), or ``a`` outside [0, 1].

    Notes
    -----
    With degrees :math:`d_i = \\sum_j C_{ij}`,

    .. math:: C^{(a)}_{ij} = C_{ij} / (d_i^a d_j^a), \\qquad A^{(a)} = N_R(C^{(a)}).

    The limit operator has the density ``rho`` replaced by ``rho^(1-a)``: ``(1/eps)(A^(a) - I)``
    tends to ``(1/2)(Delta + 2 (1 - a) <grad log rho, grad>)`` for the heat kernel
    ``exp(-d^2 / (2 eps))`` (Coifman & Lafon 2006).

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
    a = check_real("a", a, low=0.0, high=1.0)
    check_scores(C, square=True)
    d = checked_row_sums(C)
    w = d ** (-a)
    Ca = w[:, None] * C * w[None, :]
    return row_normalize(Ca)


def sinkhorn(C, *, tol=1e-10, max_iter=10000, check_every=10):
    """Sinkhorn-Knopp scaling of a square nonnegative matrix to a doubly stochastic one.

    The alternating method of :func:`spectral.sinkhorn_normalize` under its first name and defaults:
    ``sinkhorn(C, tol=tol, max_iter=max_iter, check_every=check_every)`` is
    ``sinkhorn_normalize(C, method="alternating", tol=tol, max_iter=max_iter, check_every=check_every)``
    (the same iteration, numbers and result; no second implementation).

    Parameters
    ----------
    C : array of shape (n, n) or (..., n, n)
        Nonnegative, finite scores with no zero row or column.  Convergence needs
        total support (true for any positive matrix, e.g. every FNA or heat kernel).
    tol : float in (0, 1)
        Stop when the largest deviation of a row sum from 1 is ``<= tol`` (the columns then sum to 1).
    max_iter : int >= 1
        Maximum number of sweeps (one sweep = row scaling then column scaling).
    check_every : int >= 1
        Evaluate the residual (a host synchronisation on GPU) every this many sweeps.

    Returns
    -------
    SinkhornScaling (also named SinkhornResult)
        ``matrix = diag(row_scaling) C diag(col_scaling)``, ``iterations`` (sweeps), ``converged``,
        ``residual`` (rows and columns of ``matrix``), ``residuals`` (the row residual at each check);
        ``converged=False`` (with a :class:`SinkhornConvergenceWarning`) when ``max_iter`` is reached first.

    Raises
    ------
    spectral.floor.validation.InputError
        Bad ``C`` (non-square, NaN/inf, negative, a zero row or column), bad ``tol``,
        ``max_iter`` or ``check_every``.

    Notes
    -----
    Alternating updates :math:`r \\leftarrow 1 / (C c)`, :math:`c \\leftarrow 1 / (C^T r)` from
    :math:`c = 1`; after each sweep the column sums of :math:`\\mathrm{diag}(r) C \\mathrm{diag}(c)`
    are exactly 1 and the residual is that of the row sums.  For symmetric ``C`` the limit is symmetric
    (``r = c``) up to a scalar; :func:`spectral.sinkhorn_normalize` with its default
    ``method="symmetric"`` reaches it with one vector, at a rate that does not degrade as the kernel narrows.

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
    return sinkhorn_normalize(C, method="alternating", tol=tol, max_iter=max_iter, check_every=check_every)


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
    spectral.floor.validation.InputError
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
    xp, stats = scan_scores(C, square=True, symmetry=True)  # validation + symmetry, one pass
    defect = stats.defect
    if defect > symmetry_tolerance(C.dtype):
        raise InputError(
            f"C must be symmetric for the symmetric conjugate (max|C - C^T| / max|C| = {defect:.3g} "
            f"> 4 sqrt(eps) = {symmetry_tolerance(C.dtype):.3g}); use row_normalize and the "
            "non-symmetric spectrum instead"
        )
    d = checked_row_sums(C, cmax=stats.cmax)
    s = 1.0 / xp.sqrt(d)
    S = C * s[:, None]  # (C_ij s_i) s_j: one n x n temporary instead of two
    S *= s[None, :]
    return S, d
