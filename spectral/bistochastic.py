"""Symmetric Sinkhorn scaling of a symmetric kernel: ``P = D C D`` with one vector, doubly stochastic.

Sinkformers (Sander, Ablin, Blondel & Peyre, AISTATS 2022) replace the row-wise SoftMax of attention by
Sinkhorn's algorithm, which makes the attention matrix doubly stochastic. For a symmetric kernel ``C``
(the Gaussian kernel ``exp(-|x_i - x_j|^2 / (2 eps))``, or a dot-product kernel ``exp(<x_i, x_j> / eps)``,
whose Sinkhorn normalisations coincide because diagonal factors are absorbed by the scaling) the
doubly stochastic matrix is ``P = diag(d) C diag(d)`` with a single positive vector ``d``: this module
computes it by the damped symmetric iteration ``d <- sqrt(d / (C d))`` (Knight 2008), in a
stabilised form that never forms a number larger than the largest kernel entry.

:func:`sinkhorn_normalize` is the public entry point; the alternating (row, column) Sinkhorn-Knopp
iteration for any square matrix is :func:`spectral.sinkhorn`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from spectral.backend import array_namespace, to_numpy
from spectral.display import array_summary, result_repr
from spectral.normalize import SinkhornConvergenceWarning
from spectral.scores import scan_scores, symmetry_tolerance
from spectral.validation import InputError, check_int, check_real

__all__ = ["SinkhornScaling", "sinkhorn_normalize"]

#: A correction vector ``v`` with ``max |log v|`` beyond this is folded into the stored kernel (absorption):
#: the entries ``v_i K_ij v_j`` stay within ``e^(+-2 ABSORB)`` of the stored ones, far from over- or underflow.
ABSORB = 30.0


@dataclass(frozen=True, repr=False)
class SinkhornScaling:
    """Outcome of :func:`sinkhorn_normalize`.

    Attributes
    ----------
    matrix : array of shape (n, n)
        ``P = diag(scaling) C diag(scaling)``: symmetric, each row and column summing to 1 within ``residual``.
    scaling : array of shape (n,)
        The positive vector ``d`` (``exp(log_scaling)``; with log-domain input it can overflow where
        ``log_scaling`` is beyond the floating-point range: use ``log_scaling`` there).
    log_scaling : array of shape (n,)
        ``log d``, always finite.
    iterations : int
        Number of scaling updates performed (0 when the starting point already met ``tol``).
    converged : bool
        Whether the row-sum residual reached ``tol`` within ``max_iter`` updates.
    residual : float
        ``max(max_i |row sum_i - 1|, max_j |column sum_j - 1|)`` of ``matrix``.
    residuals : tuple of float
        The row-sum residual ``max_i |(P 1)_i - 1|`` before each update and at the end
        (``len(residuals) == iterations + 1``): the convergence history.
    """

    matrix: Any
    scaling: Any
    log_scaling: Any
    iterations: int
    converged: bool
    residual: float
    residuals: tuple[float, ...]

    def __repr__(self) -> str:
        return result_repr(self, matrix=array_summary(self.matrix), iterations=self.iterations,
                           converged=self.converged, residual=f"{self.residual:.3g}")


def _diagonal(C, xp):
    n = C.shape[0]
    return xp.reshape(C, (n * n,))[:: n + 1]


def _check_kernel(C):
    """A symmetric, finite, nonnegative kernel with a positive diagonal; return (xp, row sums)."""
    xp, stats = scan_scores(C, square=True, symmetry=True)
    if stats.defect > symmetry_tolerance(C.dtype):
        raise InputError(f"C must be symmetric for the symmetric Sinkhorn scaling D C D (max|C - C^T| / max|C| = "
                         f"{stats.defect:.3g} > 4 sqrt(eps) = {symmetry_tolerance(C.dtype):.3g}); use "
                         "spectral.sinkhorn for a non-symmetric matrix")
    diag = _diagonal(C, xp)
    if not bool(xp.all(diag > 0)):
        idx = int(np.flatnonzero(to_numpy(diag) <= 0)[0])
        raise InputError(f"C must have a positive diagonal (every C[i, i] > 0: a symmetric nonnegative matrix with a "
                         f"positive diagonal has total support, so D C D exists and is unique); C[{idx}, {idx}] = "
                         f"{float(diag[idx]):.3g}")
    return xp


def _check_log_kernel(L):
    """Log-kernel (scores): real floating, no NaN or +inf, -inf only off the diagonal, symmetric."""
    xp = array_namespace(L)
    shape = tuple(getattr(L, "shape", ()))
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] < 1:
        raise InputError(f"C must be a square 2-D array of log-kernel values (scores), got shape {shape}")
    if L.dtype not in (xp.float32, xp.float64):
        raise InputError(f"C must have a real floating dtype (float32 or float64), got {L.dtype}")
    if bool(xp.any(xp.isnan(L))) or bool(xp.any(L == math.inf)):
        raise InputError("C (log-kernel values) must not contain NaN or +inf (-inf is a zero kernel entry)")
    diag = _diagonal(L, xp)
    if not bool(xp.all(xp.isfinite(diag))):
        idx = int(np.flatnonzero(~np.isfinite(to_numpy(diag)))[0])
        raise InputError(f"C (log-kernel values) must have a finite diagonal (a positive kernel diagonal: total "
                         f"support); C[{idx}, {idx}] = -inf")
    zero = L == -math.inf
    if bool(xp.any(zero != xp.permute_dims(zero, (1, 0)))):
        raise InputError("C (log-kernel values) must be symmetric: its -inf entries are not mirrored")
    finite = xp.where(zero, xp.zeros_like(L), L)
    scale = max(1.0, float(xp.max(xp.abs(finite))))
    defect = float(xp.max(xp.abs(finite - xp.permute_dims(finite, (1, 0)))))
    if defect > symmetry_tolerance(L.dtype) * scale:
        raise InputError(f"C (log-kernel values) must be symmetric: max|C - C^T| = {defect:.3g} > 4 sqrt(eps) "
                         f"max(1, max|C|) = {symmetry_tolerance(L.dtype) * scale:.3g}")
    return xp


def sinkhorn_normalize(C, *, log_domain: bool = False, tol: float = 1e-12, max_iter: int = 1000) -> SinkhornScaling:
    """Doubly stochastic ``P = diag(d) C diag(d)`` of a symmetric kernel, with one positive vector ``d``.

    Parameters
    ----------
    C : array of shape (n, n)
        A symmetric (within ``4 sqrt(eps)`` relative), finite, nonnegative kernel with a positive
        diagonal, any array-API namespace; with ``log_domain=True``, the log-kernel (scores, e.g.
        ``<x_i, x_j> / eps``): finite except ``-inf`` off the diagonal (a zero kernel entry), symmetric.
    log_domain : bool
        Whether ``C`` holds log-kernel values. Scores whose exponentials overflow (``1e3`` and more)
        are scaled without ever forming ``exp(C)``.
    tol : float in (0, 1)
        Stop when every row sum of ``P`` is within ``tol`` of 1 (float32 input: ``tol >= 1e-5``).
    max_iter : int >= 1
        Most scaling updates.

    Returns
    -------
    SinkhornScaling
        ``matrix``, ``scaling``, ``log_scaling``, ``iterations``, ``converged``, ``residual`` and the
        history ``residuals``; ``converged=False`` with a :class:`~spectral.normalize.SinkhornConvergenceWarning`
        when ``max_iter`` is reached first.

    Raises
    ------
    spectral.validation.InputError
        ``C`` not square, not real floating, with NaN or inf (``+inf`` or NaN in log-domain), a
        negative entry, a non-positive diagonal entry, or not symmetric; ``tol`` outside (0, 1);
        ``max_iter`` below 1.

    Notes
    -----
    Start from ``d_0 = (C 1)^(-1/2)`` and store ``K = diag(d_0) C diag(d_0)``, whose entries are at most
    1 (``C_ij <= min(D_i, D_j)``); in log-domain ``log d_0 = -logsumexp_j(C_ij) / 2`` and ``K`` is formed
    from ``C_ij + log d_0i + log d_0j <= 0``, so nothing overflows. Then iterate on a correction ``v``
    (``d = d_0 v``, ``v_0 = 1``)

    .. math:: v \\leftarrow \\sqrt{v / (K v)},

    the geometric mean of ``v`` and the plain Sinkhorn update ``1 / (K v)`` (which alone oscillates with
    period 2 on a symmetric matrix). A ``v`` beyond ``e^(+-30)`` is folded into ``K``. One update costs one
    matrix-vector product; the residual comes from the same product.

    Convergence: in ``u = log d`` the update is ``u <- (u - log(C e^u)) / 2``, whose linearisation at
    the solution is ``delta <- (I - P) delta / 2``: the error contracts by ``|1 - lambda| / 2`` along each
    eigenvector of ``P`` with eigenvalue ``lambda``, so linearly at rate ``(1 - lambda_min(P)) / 2 <= 1/2``
    whenever ``P`` is positive semi-definite (every Gaussian kernel), whatever the bandwidth and ``n``;
    the alternating Sinkhorn-Knopp iteration contracts at ``lambda_2(P)^2`` per sweep instead, which tends
    to 1 as the kernel narrows.

    References
    ----------
    Sinkhorn & Knopp (1967); Knight, "The Sinkhorn-Knopp algorithm: convergence and applications",
    SIAM J. Matrix Anal. Appl. 30 (2008); Sander, Ablin, Blondel & Peyre, "Sinkformers: Transformers
    with doubly stochastic attention", AISTATS 2022 (arXiv 2110.11773).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0, 1, 5)[:, None]
    >>> res = sinkhorn_normalize(np.exp(-(x - x.T) ** 2 / 0.1))
    >>> res.converged, bool(np.allclose(res.matrix.sum(axis=0), 1.0)), bool(np.allclose(res.matrix, res.matrix.T))
    (True, True, True)
    """
    tol = check_real("tol", tol, low=0.0, high=1.0, low_open=True, high_open=True)
    max_iter = check_int("max_iter", max_iter, low=1)
    n = C.shape[0] if hasattr(C, "shape") and len(C.shape) == 2 else 0
    if log_domain:
        xp = _check_log_kernel(C)
        L, K, v = C, None, None
        u = -_logsumexp_rows(L, xp) / 2
    else:
        xp = _check_kernel(C)
        L = None
        d0 = 1.0 / xp.sqrt(xp.sum(C, axis=1))
        u = xp.log(d0)
        K = C * d0[:, None]
        K *= d0[None, :]
        v = xp.ones((n,), dtype=C.dtype)
    tiny = float(xp.finfo(C.dtype).smallest_normal)
    history: list[float] = []
    it = 0
    while True:
        if K is None:  # log-domain update: u <- (u - logsumexp_j(L_ij + u_j)) / 2
            r = _logsumexp_rows(L + u[None, :], xp)
            history.append(_residual(xp.exp(u + r), xp))
            if history[-1] <= tol or it == max_iter:
                K, v = _absorbed(L, u, xp), xp.ones((n,), dtype=C.dtype)
                break
            step = -(u + r) / 2
            u = u + step
            it += 1
            if float(xp.max(xp.abs(step))) <= 1.0:  # near the solution: continue on the stored kernel
                K, v = _absorbed(L, u, xp), xp.ones((n,), dtype=C.dtype)
            continue
        w = K @ v
        if not bool(xp.all(w > tiny)):  # entries of K underflowed where P is not small: go to the log domain
            L = C if log_domain else _log_of(C, xp)
            u, K = u + xp.log(v), None
            continue
        history.append(_residual(v * w, xp))
        if history[-1] <= tol or it == max_iter:
            break
        v = xp.sqrt(v / w)
        it += 1
        if float(xp.max(xp.abs(xp.log(v)))) > ABSORB:  # fold v into the stored kernel
            u = u + xp.log(v)
            if log_domain:
                K = _absorbed(L, u, xp)
            else:
                K *= v[:, None]
                K *= v[None, :]
            v = xp.ones((n,), dtype=C.dtype)
    converged = history[-1] <= tol
    if not converged:
        warnings.warn(f"sinkhorn_normalize stopped after max_iter={max_iter} updates with residual {history[-1]:.3g} "
                      f"> tol={tol:.3g}", SinkhornConvergenceWarning, stacklevel=2)
    K *= v[:, None]
    K *= v[None, :]
    log_d = u + xp.log(v)
    residual = max(float(xp.max(xp.abs(xp.sum(K, axis=1) - 1.0))), float(xp.max(xp.abs(xp.sum(K, axis=0) - 1.0))))
    return SinkhornScaling(matrix=K, scaling=xp.exp(log_d), log_scaling=log_d, iterations=it, converged=converged,
                           residual=residual, residuals=tuple(history))


def _logsumexp_rows(L, xp):
    """``log sum_j exp(L_ij)`` per row, stable (every row has a finite entry)."""
    top = xp.max(L, axis=1)
    return top + xp.log(xp.sum(xp.exp(L - top[:, None]), axis=1))


def _absorbed(L, u, xp):
    """The stored kernel ``exp(L_ij + u_i + u_j)``."""
    return xp.exp(L + u[:, None] + u[None, :])


def _log_of(C, xp):
    """``log C`` with ``-inf`` for zero entries (no warning)."""
    positive = C > 0
    return xp.where(positive, xp.log(xp.where(positive, C, xp.ones_like(C))), xp.full_like(C, -math.inf))


def _residual(row_sums, xp) -> float:
    """``max_i |row_sums_i - 1|``; a non-finite value is a bug (the inputs admitted cannot produce it)."""
    value = float(xp.max(xp.abs(row_sums - 1.0)))
    if not math.isfinite(value):
        raise FloatingPointError(f"sinkhorn_normalize: the row-sum residual became {value}")
    return value
