"""Sinkhorn scaling to a doubly stochastic matrix: the toolkit's one implementation.

Sinkformers (Sander, Ablin, Blondel & Peyre, AISTATS 2022) replace the row-wise SoftMax of attention by
Sinkhorn's algorithm, which makes the attention matrix doubly stochastic; so does Sinkhorn attention in
the Transformer PDE (Castin, Ablin, Carrillo & Peyre, arXiv 2501.18322). :func:`sinkhorn_normalize` is the
public entry point, with two iterations:

* ``method="symmetric"`` (the default): for a symmetric kernel ``C`` (the Gaussian kernel
  ``exp(-|x_i - x_j|^2 / (2 eps))``, or a dot-product kernel ``exp(<x_i, x_j> / eps)``, whose Sinkhorn
  normalisations coincide because diagonal factors are absorbed by the scaling) the doubly stochastic
  matrix is ``P = diag(d) C diag(d)`` with a single positive vector ``d``, computed by the damped
  symmetric iteration ``d <- sqrt(d / (C d))`` (Knight 2008): linear convergence at rate at most 1/2 for
  a positive semi-definite kernel, whatever its width;
* ``method="alternating"``: the classic Sinkhorn-Knopp iteration ``r <- 1 / (C c)``, ``c <- 1 / (C^T r)``
  for any square nonnegative matrix with total support (non-symmetric scores ``<Q x_i, K x_j>``), giving
  ``P = diag(r) C diag(c)``; batched over leading axes ``(..., n, n)`` and warm-started from an earlier
  column scaling (``start=``), as a flow that scales a similar matrix at every step needs.

Both iterate on a stored kernel into which large scalings are folded (so no entry leaves the
floating-point range), pass to updates in the log domain where an entry would underflow, and accept the
log-kernel (scores) itself (``log_domain=True``) when ``exp`` of the scores overflows. Every array stays in
the namespace of the input (NumPy, CuPy, any array-API library); the host sees one scalar per residual
check. :func:`spectral.sinkhorn` (:mod:`spectral.normalize`) is the alternating method under its first
name and defaults.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from spectral.floor.arrays import like_array
from spectral.floor.backend import array_namespace, to_numpy
from spectral.floor.display import array_summary, result_repr
from spectral.scores import check_scores, checked_row_sums, scan_scores, symmetry_tolerance
from spectral.floor.validation import InputError, check_int, check_option, check_real

__all__ = ["METHODS", "SinkhornConvergenceWarning", "SinkhornResult", "SinkhornScaling", "sinkhorn_normalize"]

#: ``"symmetric"``: ``P = D C D``, one vector (symmetric kernels); ``"alternating"``: ``P = diag(r) C diag(c)``
#: by alternating row and column scaling (any square nonnegative matrix with total support, batched).
METHODS = ("symmetric", "alternating")

#: A correction vector ``v`` with ``max |log v|`` beyond this is folded into the stored kernel (absorption):
#: the entries ``v_i K_ij v_j`` stay within ``e^(+-2 ABSORB)`` of the stored ones, far from over- or underflow.
ABSORB = 30.0


class SinkhornConvergenceWarning(RuntimeWarning):
    """Sinkhorn scaling stopped at ``max_iter`` before reaching ``tol``."""


@dataclass(frozen=True, repr=False, init=False)
class SinkhornScaling:
    """Outcome of :func:`sinkhorn_normalize`.

    Attributes
    ----------
    matrix : array of shape (..., n, n)
        ``P = diag(row_scaling) C diag(col_scaling)``: each row and column summing to 1 within
        ``residual`` (symmetric with ``method="symmetric"``).
    row_scaling, col_scaling : array of shape (..., n)
        The positive vectors ``r`` and ``c`` (the same vector ``d`` with ``method="symmetric"``); with
        log-domain input they can overflow where their logarithms are beyond the floating-point range.
    log_row_scaling, log_col_scaling : array of shape (..., n)
        ``log r`` and ``log c``, always finite.
    iterations : int
        Updates performed: symmetric updates ``d <- sqrt(d / (C d))`` (0 when the starting point already
        met ``tol``), or alternating sweeps (a row and a column scaling each).
    converged : bool
        Whether the row-sum residual reached ``tol`` within ``max_iter`` updates.
    residuals : tuple of float
        The convergence history: the row-sum residual ``max_i |(P 1)_i - 1|`` (over the batch) at each check:
        symmetric, before each update and at the end (``len(residuals) == iterations + 1``); alternating,
        after every ``check_every``-th sweep and the last (the columns then sum to 1 exactly).
    method : str
        ``"symmetric"`` or ``"alternating"``.
    residual : float
        ``max(max_i |row sum_i - 1|, max_j |column sum_j - 1|)`` of ``matrix`` (computed on first access).
    scaling, log_scaling : array of shape (n,)
        ``method="symmetric"`` only: the vector ``d`` and ``log d``.

    The constructor also takes the symmetric result's first form, ``SinkhornScaling(matrix=P, scaling=d,
    log_scaling=log_d, iterations=k, converged=True, residual=r, residuals=(...))`` (``scaling`` for both
    ``row_scaling`` and ``col_scaling``; ``residual`` given instead of computed).
    """

    matrix: Any
    row_scaling: Any
    col_scaling: Any
    log_row_scaling: Any
    log_col_scaling: Any
    iterations: int
    converged: bool
    residuals: tuple[float, ...]
    method: str

    def __init__(self, matrix, row_scaling=None, col_scaling=None, log_row_scaling=None, log_col_scaling=None,
                 iterations: int = 0, converged: bool = False, residuals: tuple[float, ...] = (),
                 method: str = "symmetric", *, scaling=None, log_scaling=None, residual: float | None = None):
        row_scaling = scaling if row_scaling is None else row_scaling
        col_scaling = row_scaling if col_scaling is None else col_scaling
        log_row_scaling = log_scaling if log_row_scaling is None else log_row_scaling
        log_col_scaling = log_row_scaling if log_col_scaling is None else log_col_scaling
        values = dict(matrix=matrix, row_scaling=row_scaling, col_scaling=col_scaling, log_row_scaling=log_row_scaling,
                      log_col_scaling=log_col_scaling, iterations=iterations, converged=converged,
                      residuals=tuple(residuals), method=method)
        for name, value in values.items():
            object.__setattr__(self, name, value)
        if residual is not None:  # given: the cached property is not computed
            object.__setattr__(self, "residual", float(residual))

    @functools.cached_property
    def residual(self) -> float:
        """``max(max_i |row sum_i - 1|, max_j |column sum_j - 1|)`` of ``matrix`` (over the batch)."""
        xp = array_namespace(self.matrix)
        P = self.matrix
        return max(float(xp.max(xp.abs(xp.sum(P, axis=-1) - 1.0))), float(xp.max(xp.abs(xp.sum(P, axis=-2) - 1.0))))

    @property
    def scaling(self):
        """The vector ``d`` of ``P = diag(d) C diag(d)`` (``method="symmetric"``)."""
        if self.method != "symmetric":
            raise AttributeError("the alternating scaling has two vectors: row_scaling and col_scaling")
        return self.row_scaling

    @property
    def log_scaling(self):
        """``log d``, always finite (``method="symmetric"``)."""
        if self.method != "symmetric":
            raise AttributeError("the alternating scaling has two vectors: log_row_scaling and log_col_scaling")
        return self.log_row_scaling

    def __repr__(self) -> str:
        return result_repr(self, matrix=array_summary(self.matrix), iterations=self.iterations,
                           converged=self.converged, residual=f"{self.residual:.3g}")


#: The result of :func:`spectral.sinkhorn`: :class:`SinkhornScaling` under its first name (one class, one algorithm).
SinkhornResult = SinkhornScaling


def sinkhorn_normalize(C, *, method: str = "symmetric", log_domain: bool = False, tol: float = 1e-12,
                       max_iter: int = 1000, check_every: int = 1, start=None,
                       check_input: bool = True) -> SinkhornScaling:
    """Doubly stochastic scaling ``P = diag(r) C diag(c)`` of a nonnegative matrix (``r = c = d`` when symmetric).

    Parameters
    ----------
    C : array of shape (n, n), or (..., n, n) with ``method="alternating"``
        Finite, nonnegative, any array-API namespace. ``"symmetric"``: symmetric (within
        ``4 sqrt(eps)`` relative) with a positive diagonal; ``"alternating"``: no zero row or column
        (convergence needs total support, true for every positive matrix). With ``log_domain=True``, the
        log-kernel (scores): no NaN or ``+inf``, ``-inf`` for a zero kernel entry (``"symmetric"``: off the
        diagonal and mirrored; ``"alternating"``: every row and column keeps a finite entry).
    method : {"symmetric", "alternating"}
        The iteration (module docstring): one vector for a symmetric kernel, or alternating row and
        column scaling of any square matrix (a batch of them).
    log_domain : bool
        Whether ``C`` holds log-kernel values. Scores whose exponentials overflow (``1e3`` and more)
        are scaled without ever forming ``exp(C)``.
    tol : float in (0, 1)
        Stop when every row sum of ``P`` is within ``tol`` of 1 (float32 input: ``tol >= 1e-5``; with
        ``"alternating"`` the columns then sum to 1 exactly).
    max_iter : int >= 1
        Most updates (symmetric updates, or alternating sweeps).
    check_every : int >= 1
        ``"alternating"``: compute the row-sum residual (one more matrix-vector product, and a host
        synchronisation on a GPU) after every this many sweeps. ``"symmetric"`` gets its residual from
        its update's own product and needs ``1``.
    start : array of shape (..., n) or SinkhornScaling, optional
        A warm start: positive, finite column scaling ``c`` (``"alternating"``) or scaling ``d``
        (``"symmetric"``), e.g. that of a similar matrix scaled before; a :class:`SinkhornScaling` gives
        its own. Default: ``c = 1`` (alternating), ``d = (C 1)^(-1/2)`` (symmetric).
    check_input : bool
        Validate ``C`` (one pass over it, and its row and column sums). ``False`` is for callers that
        built ``C`` themselves (e.g. ``exp`` of finite scores shifted by their row maxima): a matrix
        that breaks the rules then gives a non-converged result, not an error.

    Returns
    -------
    SinkhornScaling
        ``matrix``, ``row_scaling``, ``col_scaling`` (and their logarithms), ``iterations``, ``converged``,
        ``residual``, the history ``residuals``, and for ``"symmetric"`` ``scaling`` and ``log_scaling``;
        ``converged=False`` with a :class:`SinkhornConvergenceWarning` when ``max_iter`` is reached first.

    Raises
    ------
    spectral.floor.validation.InputError
        ``C`` of the wrong shape or dtype, with NaN or inf (``+inf`` or NaN in log-domain), a negative
        entry, a zero row or column (``"alternating"``), a non-positive diagonal entry or asymmetry
        (``"symmetric"``); a bad ``method``, ``tol``, ``max_iter``, ``check_every`` or ``start``.

    Notes
    -----
    Symmetric: start from ``d_0 = (C 1)^(-1/2)`` and store ``K = diag(d_0) C diag(d_0)``, whose entries
    are at most 1 (``C_ij <= min(D_i, D_j)``); in log-domain ``log d_0 = -logsumexp_j(C_ij) / 2`` and
    ``K`` is formed from ``C_ij + log d_0i + log d_0j <= 0``, so nothing overflows. Then iterate on a
    correction ``v`` (``d = d_0 v``, ``v_0 = 1``)

    .. math:: v \\leftarrow \\sqrt{v / (K v)},

    the geometric mean of ``v`` and the plain Sinkhorn update ``1 / (K v)`` (which alone oscillates with
    period 2 on a symmetric matrix). One update costs one matrix-vector product; the residual comes from
    the same product. In ``u = log d`` the update is ``u <- (u - log(C e^u)) / 2``, whose linearisation at
    the solution is ``delta <- (I - P) delta / 2``: the error contracts by ``|1 - lambda| / 2`` along each
    eigenvector of ``P`` with eigenvalue ``lambda``, so linearly at rate ``(1 - lambda_min(P)) / 2 <= 1/2``
    whenever ``P`` is positive semi-definite (every Gaussian kernel), whatever the bandwidth and ``n``.

    Alternating: from ``c_0 = 1`` (or ``start``), each sweep sets

    .. math:: r \\leftarrow 1 / (K c), \\qquad c \\leftarrow 1 / (K^T r),

    after which the columns of ``diag(r) K diag(c)`` sum to 1 exactly; the residual is that of the
    rows. It contracts at ``lambda_2(P)^2`` per sweep, which tends to 1 as a kernel narrows (where the
    symmetric iteration keeps its rate). ``K`` is ``C`` itself until a correction leaves
    ``e^(+-30)`` (checked with the residual); it is then folded into ``K`` (log-domain input: ``K =
    exp(C + log r + log c)``, the rows first shifted by their maxima). A correction that overflows
    between two checks sends the iteration back to the last check, in log-domain updates
    (``log r = -logsumexp_j(C_ij + log c_j)``, then the columns alike), until the updates are small.

    References
    ----------
    Sinkhorn & Knopp (1967); Knight, "The Sinkhorn-Knopp algorithm: convergence and applications",
    SIAM J. Matrix Anal. Appl. 30 (2008); Schmitzer, "Stabilized sparse scaling algorithms for entropy
    regularized transport problems", SIAM J. Sci. Comput. 41 (2019) (absorption); Sander, Ablin, Blondel &
    Peyre, "Sinkformers: Transformers with doubly stochastic attention", AISTATS 2022 (arXiv 2110.11773).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0, 1, 5)[:, None]
    >>> res = sinkhorn_normalize(np.exp(-(x - x.T) ** 2 / 0.1))
    >>> res.converged, bool(np.allclose(res.matrix.sum(axis=0), 1.0)), bool(np.allclose(res.matrix, res.matrix.T))
    (True, True, True)
    >>> res = sinkhorn_normalize(np.array([[2.0, 1.0], [1.0, 3.0]]) ** 3, method="alternating", tol=1e-12)
    >>> res.converged, bool(np.allclose(res.matrix.sum(axis=1), 1.0))
    (True, True)
    """
    method = check_option("method", method, METHODS)
    tol = check_real("tol", tol, low=0.0, high=1.0, low_open=True, high_open=True)
    max_iter = check_int("max_iter", max_iter, low=1)
    check_every = check_int("check_every", check_every, low=1)
    if not isinstance(log_domain, (bool, np.bool_)):
        raise InputError(f"log_domain must be True or False, got {log_domain!r}")
    if not isinstance(check_input, (bool, np.bool_)):
        raise InputError(f"check_input must be True or False, got {check_input!r}")
    if method == "symmetric":
        if check_every != 1:
            raise InputError(f"check_every = {check_every} with method='symmetric': its residual comes from the "
                             "update's own product, every update (check_every=1)")
        shape = tuple(getattr(C, "shape", ()))
        if len(shape) > 2:
            raise InputError(f"method='symmetric' scales one (n, n) matrix, got shape {shape}: use "
                             "method='alternating' for a batch")
        if check_input:
            xp = _check_log_kernel(C) if log_domain else _check_kernel(C)
        else:
            xp = array_namespace(C)
        return _symmetric(C, xp, log_domain=bool(log_domain), tol=tol, max_iter=max_iter,
                          start=_start(start, C, xp, "symmetric", bool(check_input)))
    if check_input:
        xp = _check_log_matrices(C) if log_domain else _check_matrices(C)
    else:
        xp = array_namespace(C)
    return _alternating(C, xp, log_domain=bool(log_domain), tol=tol, max_iter=max_iter, check_every=check_every,
                        start=_start(start, C, xp, "alternating", bool(check_input)))


# -- input ------------------------------------------------------------------------------------------------
def _diagonal(C, xp):
    n = C.shape[0]
    return xp.reshape(C, (n * n,))[:: n + 1]


def _check_kernel(C):
    """A symmetric, finite, nonnegative kernel with a positive diagonal; return its namespace."""
    xp, stats = scan_scores(C, square=True, symmetry=True)
    if stats.defect > symmetry_tolerance(C.dtype):
        raise InputError(f"C must be symmetric for the symmetric Sinkhorn scaling D C D (max|C - C^T| / max|C| = "
                         f"{stats.defect:.3g} > 4 sqrt(eps) = {symmetry_tolerance(C.dtype):.3g}); use "
                         "method='alternating' for a non-symmetric matrix")
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


def _batch_shape(C, what: str):
    """Namespace of a ``(..., n, n)`` stack of real floating matrices (``n >= 1``)."""
    xp = array_namespace(C)
    shape = tuple(getattr(C, "shape", ()))
    if len(shape) < 2 or shape[-1] != shape[-2] or shape[-1] < 1 or 0 in shape:
        raise InputError(f"C must be a square (n, n) {what} or a stack (..., n, n) of them, got shape {shape}")
    if C.dtype not in (xp.float32, xp.float64):
        raise InputError(f"C must have a real floating dtype (float32 or float64), got {C.dtype}")
    return xp


def _first_bad(bad, shape) -> str:
    """``"row 3"`` or ``"row 3 of matrix (1, 0)"`` for the first True entry of ``bad`` (shape ``(..., n)``)."""
    idx = np.unravel_index(int(np.flatnonzero(to_numpy(bad).ravel())[0]), shape)
    where = f" {int(idx[-1])}"
    return where + (f" of matrix {tuple(int(i) for i in idx[:-1])}" if len(idx) > 1 else "")


def _check_matrices(C):
    """Nonnegative, finite ``(..., n, n)`` with no zero (or subnormal) row or column sum; return the namespace."""
    if len(getattr(C, "shape", ())) == 2:  # one matrix: the checks (and messages) of every score matrix
        xp = check_scores(C, square=True)
        checked_row_sums(C)
        checked_row_sums(C, axis=0, what="column")
        return xp
    xp = _batch_shape(C, "score matrix")
    n = int(C.shape[-1])
    check_scores(xp.reshape(C, (-1, n)))  # finite, nonnegative: one pass over the stack
    top = xp.max(xp.max(C, axis=-1), axis=-1)[..., None] * xp.finfo(C.dtype).smallest_normal
    for axis, what in ((-1, "row"), (-2, "column")):
        bad = xp.sum(C, axis=axis) <= top
        if bool(xp.any(bad)):
            raise InputError(f"C has a {what} with zero (or subnormal) sum, {what}{_first_bad(bad, bad.shape)}; every "
                             f"{what} sum must exceed finfo.smallest_normal * max of its matrix (no doubly stochastic "
                             "scaling exists)")
    return xp


def _check_log_matrices(L):
    """Log-kernels ``(..., n, n)``: no NaN or +inf, a finite entry in every row and column; return the namespace."""
    xp = _batch_shape(L, "array of log-kernel values (scores)")
    if bool(xp.any(xp.isnan(L))) or bool(xp.any(L == math.inf)):
        raise InputError("C (log-kernel values) must not contain NaN or +inf (-inf is a zero kernel entry)")
    finite = xp.isfinite(L)
    for axis, what in ((-1, "row"), (-2, "column")):
        bad = ~xp.any(finite, axis=axis)
        if bool(xp.any(bad)):
            raise InputError(f"C (log-kernel values) has a {what} of -inf only (a zero {what} of the kernel), "
                             f"{what}{_first_bad(bad, bad.shape)}: no doubly stochastic scaling exists")
    return xp


def _start(start, C, xp, method: str, check: bool):
    """The warm start ``(scaling, None)`` from an array or ``(None, log scaling)`` from a result; None without one."""
    if start is None:
        return None
    from_result = isinstance(start, SinkhornScaling)
    s = like_array(start.log_col_scaling if from_result else start, "start", like=C)
    want = tuple(int(v) for v in C.shape[:-1])
    if tuple(int(v) for v in s.shape) != want:
        what = "column scaling c" if method == "alternating" else "scaling d"
        raise InputError(f"start must have shape {want} (the {what} of C), got {tuple(int(v) for v in s.shape)}")
    if from_result:
        return None, s
    if check and not bool(xp.all(s > 0)):
        raise InputError("start must be positive (a scaling vector)")
    return s, None


# -- the symmetric iteration ------------------------------------------------------------------------------
def _symmetric(C, xp, *, log_domain, tol, max_iter, start):
    n = int(C.shape[0])
    if start is not None:  # warm start: log-domain updates until the step is small, then the stored kernel
        L, K, v = (C if log_domain else _log_of(C, xp)), None, None
        u = start[1] if start[1] is not None else xp.log(start[0])
    elif log_domain:
        L, K, v = C, None, None
        u = -_logsumexp_rows(L, xp) / 2
    else:
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
            L = C if log_domain else (L if L is not None else _log_of(C, xp))
            u, K = u + xp.log(v), None
            continue
        history.append(_residual(v * w, xp))
        if history[-1] <= tol or it == max_iter:
            break
        v = xp.sqrt(v / w)
        it += 1
        if float(xp.max(xp.abs(xp.log(v)))) > ABSORB:  # fold v into the stored kernel
            u = u + xp.log(v)
            if log_domain or start is not None:
                K = _absorbed(L, u, xp)
            else:
                K *= v[:, None]
                K *= v[None, :]
            v = xp.ones((n,), dtype=C.dtype)
    converged = history[-1] <= tol
    if not converged:
        _warn(max_iter, "updates", history[-1], tol)
    K *= v[:, None]
    K *= v[None, :]
    log_d = u + xp.log(v)
    with np.errstate(over="ignore"):  # log-domain scalings beyond the floating-point range: inf (the logs are finite)
        d = xp.exp(log_d)
    return SinkhornScaling(matrix=K, row_scaling=d, col_scaling=d, log_row_scaling=log_d, log_col_scaling=log_d,
                           iterations=it, converged=converged, residuals=tuple(history), method="symmetric")


# -- the alternating iteration ----------------------------------------------------------------------------
def _matvec(K, c):
    """``K c`` over the last axis (a batch of matrix-vector products)."""
    if K.ndim == 2:
        return K @ c
    return (K @ c[..., None])[..., 0]


def _vecmat(r, K):
    """``r^T K`` (the column sums of ``diag(r) K``), batched."""
    if K.ndim == 2:
        return r @ K
    return (r[..., None, :] @ K)[..., 0, :]


def _alternating(C, xp, *, log_domain, tol, max_iter, check_every, start):
    """Sinkhorn-Knopp sweeps on the stored kernel ``K = diag(e^a) C diag(e^b)`` with corrections ``r``, ``c``."""
    ones = xp.ones(tuple(int(s) for s in C.shape[:-1]), dtype=C.dtype)
    L = C if log_domain else None  # the log-kernel, once needed
    a = b = None  # log-scalings folded into K (None: none yet)
    K = c = r = None
    if log_domain:  # log-domain updates until they are small, then sweeps on K = exp(L + a + b)
        b = xp.zeros_like(ones) if start is None else (start[1] if start[1] is not None else xp.log(start[0]))
    else:
        K = C
        c = ones if start is None else (start[0] if start[0] is not None else xp.exp(start[1]))
        if start is not None and start[0] is None and not bool(xp.all(xp.isfinite(c))):
            raise InputError("start: the column scaling of that result overflows outside the log domain (pass "
                             "log_domain=True with the scores)")
    history: list[float] = []
    it = 0
    last = (it, K, a, b, c)  # the state at the last check (arrays are never changed in place)
    log_mode = bool(log_domain)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # NumPy: an overflow is caught at the check
        while True:
            if log_mode:  # log r = -logsumexp_j(L_ij + log c_j), then the columns alike
                a_new = -_logsumexp(L + b[..., None, :], -1, xp)
                b_new = -_logsumexp(L + a_new[..., :, None], -2, xp)
                step = math.inf if a is None else float(xp.max(xp.abs(b_new - b)))
                a, b = a_new, b_new
                it += 1
                done = it % check_every == 0 or it == max_iter
                if done:
                    history.append(float(xp.max(xp.abs(xp.exp(a + _logsumexp(L + b[..., None, :], -1, xp)) - 1.0))))
                if done and (not math.isfinite(history[-1]) or history[-1] <= tol or it == max_iter):
                    K, r, c = _absorbed2(L, a, b, xp), ones, ones
                    break
                if step <= 1.0:  # near the solution: on to sweeps on the stored kernel
                    K, c, log_mode = _absorbed2(L, a, b, xp), ones, False
                    last = (it, K, a, b, c)
                continue
            r = 1.0 / _matvec(K, c)
            c = 1.0 / _vecmat(r, K)  # the columns of diag(r) K diag(c) now sum to 1
            it += 1
            if not (it % check_every == 0 or it == max_iter):
                continue
            residual = float(xp.max(xp.abs(r * _matvec(K, c) - 1.0)))
            if not math.isfinite(residual):  # a scaling over- or underflowed since the last check: from there, in logs
                it, K, a, b, c = last
                L = L if L is not None else _log_of(C, xp)
                b = xp.log(c) if b is None else b + xp.log(c)
                a, log_mode = None, True
                continue
            history.append(residual)
            if residual <= tol or it == max_iter:
                break
            if max(float(xp.max(xp.abs(xp.log(r)))), float(xp.max(xp.abs(xp.log(c))))) > ABSORB:  # fold into K
                a = xp.log(r) if a is None else a + xp.log(r)
                b = xp.log(c) if b is None else b + xp.log(c)
                K = _absorbed2(L, a, b, xp) if L is not None else r[..., :, None] * K * c[..., None, :]
                c = ones
            last = (it, K, a, b, c)
    converged = history[-1] <= tol
    if not converged:
        _warn(max_iter, "sweeps", history[-1], tol)
    P = r[..., :, None] * K * c[..., None, :]
    log_r, log_c = xp.log(r), xp.log(c)
    with np.errstate(over="ignore"):  # log-domain scalings beyond the floating-point range: inf (the logs are finite)
        row = r if a is None else xp.exp(a + log_r)
        col = c if b is None else xp.exp(b + log_c)
    return SinkhornScaling(matrix=P, row_scaling=row, col_scaling=col,
                           log_row_scaling=log_r if a is None else a + log_r,
                           log_col_scaling=log_c if b is None else b + log_c,
                           iterations=it, converged=converged, residuals=tuple(history), method="alternating")


# -- shared pieces ----------------------------------------------------------------------------------------
def _warn(max_iter, what, residual, tol):
    warnings.warn(f"sinkhorn_normalize stopped after max_iter={max_iter} {what} with residual {residual:.3g} > "
                  f"tol={tol:.3g}", SinkhornConvergenceWarning, stacklevel=4)


def _logsumexp(L, axis, xp):
    """``log sum exp(L)`` along ``axis``, stable (every row or column has a finite entry)."""
    top = xp.max(L, axis=axis, keepdims=True)
    return xp.squeeze(top, axis=axis) + xp.log(xp.sum(xp.exp(L - top), axis=axis))


def _logsumexp_rows(L, xp):
    """``log sum_j exp(L_ij)`` per row, stable (every row has a finite entry)."""
    top = xp.max(L, axis=1)
    return top + xp.log(xp.sum(xp.exp(L - top[:, None]), axis=1))


def _absorbed(L, u, xp):
    """The stored symmetric kernel ``exp(L_ij + u_i + u_j)``."""
    return xp.exp(L + u[:, None] + u[None, :])


def _absorbed2(L, a, b, xp):
    """The stored kernel ``exp(L_ij + a_i + b_j)`` (batched)."""
    return xp.exp(L + a[..., :, None] + b[..., None, :])


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
