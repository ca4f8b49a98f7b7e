"""Diffusion maps of attention matrices: coordinates, left/right eigenvectors, diffusion distances.

For symmetric scores ``C`` (``Q = K``) the attention matrix ``A = D^-1 C`` is
diagonalised through its symmetric conjugate (FNA eqs. 33-35): with
``D^-1/2 C D^-1/2 = V Lambda V^T``, the right eigenvectors ``psi_j`` and the left
eigenvectors ``phi_j`` are bi-orthonormal and ``A^tau = sum_j lambda_j^tau psi_j phi_j^T``
(eq. 20).  The diffusion map ``Psi_tau = (lambda_1^tau psi_1, ..., lambda_m^tau psi_m)``
(eq. 19) embeds the points so that Euclidean distance equals the diffusion
distance of eq. (36) (eq. 37) -- in the stationary-probability normalisation.  With
the paper's literal normalisation (eq. 35, unit ``v_j``) the two sides of eq. (37)
differ by the constant factor ``sqrt(sum_ij C_ij)`` (CLAIMS FNA-9).

References
----------
FNA: "Fractional neural attention" (``../shared/papers/fractional-neural-attention.txt``),
eqs. (19), (20), (33)-(37).  Coifman & Lafon, "Diffusion maps" (2006).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from spectral.backend import array_namespace
from spectral.eigen import Spectrum, _dtype_name, markov_spectrum
from spectral.memory import check_dense_memory
from spectral.normalize import _check_scores

__all__ = ["NORMALIZATIONS", "DiffusionMap", "diffusion_distance", "diffusion_map"]

NORMALIZATIONS = ("probability", "paper")


@dataclass(frozen=True)
class DiffusionMap:
    """Diffusion-map coordinates and the eigen-decomposition behind them.

    Attributes
    ----------
    coordinates : array of shape (n, m)
        ``Psi_tau(x_i) = (lambda_1^tau psi_1(x_i), ..., lambda_m^tau psi_m(x_i))`` (FNA eq. 19).
    eigenvalues : array of shape (m + 1,)
        ``lambda_0 = 1 >= lambda_1 >= ... >= lambda_m`` (descending).
    psi : array of shape (n, m + 1)
        Right eigenvectors of ``A`` (``psi_0`` constant).
    phi : array of shape (n, m + 1)
        Left eigenvectors, ``phi^T psi = I`` (bi-orthonormal, eq. 35 / Methods).
    stationary : array of shape (n,)
        ``phi_0``: the stationary probability ``pi = D / sum D`` ("probability") or the
        paper's ``D^1/2 v_0 = D / sqrt(sum D)`` ("paper").
    tau : float
        Diffusion time.
    normalization : str
        ``"probability"`` (``psi_k^T diag(pi) psi_l = delta_kl``, ``psi_0 = 1``) or
        ``"paper"`` (eq. 35 literally: ``psi = D^-1/2 v``, ``phi = D^1/2 v``, unit ``v``).
    degrees : array of shape (n,)
        Row sums ``D`` of ``C``.
    spectrum : Spectrum
        The Markov spectrum used (method, residual, components).
    """

    coordinates: Any
    eigenvalues: Any
    psi: Any
    phi: Any
    stationary: Any
    tau: float
    normalization: str
    degrees: Any
    spectrum: Spectrum

    def transition_matrix(self, tau=None):
        """``sum_j lambda_j^tau psi_j phi_j^T`` over the kept pairs (FNA eq. 20).

        With all ``n`` pairs (``n_components = n - 1``) this is ``A^tau`` exactly; with
        fewer it is the rank-``m+1`` truncation.  Builds a dense ``(n, n)`` array.
        """
        tau = self.tau if tau is None else _check_tau(tau, self.eigenvalues)
        xp = array_namespace(self.psi)
        n = self.psi.shape[0]
        check_dense_memory(n, dtype=_dtype_name(self.psi.dtype), copies=2, what="reconstructed A^tau")
        lam = _power(self.eigenvalues, tau, xp)
        return (self.psi * lam[None, :]) @ self.phi.T


def _check_tau(tau, eigenvalues=None) -> float:
    if isinstance(tau, bool) or not isinstance(tau, (int, float, np.integer, np.floating)):
        raise ValueError(f"tau must be a finite number > 0, got {tau!r}")
    tau = float(tau)
    if not (tau > 0 and math.isfinite(tau)):
        raise ValueError(f"tau must be a finite number > 0, got {tau!r}")
    if eigenvalues is not None and not float(tau).is_integer():
        xp = array_namespace(eigenvalues)
        if bool(xp.any(eigenvalues < 0)):
            raise ValueError(
                f"tau must be an integer when eigenvalues are negative (lambda^tau is not real), got tau={tau}"
            )
    return tau


def _power(lam, tau: float, xp):
    """``lam ** tau`` with the sign kept for integer ``tau`` (negative eigenvalues)."""
    if float(tau).is_integer():
        return lam ** int(tau)
    return lam**tau


def diffusion_map(
    C,
    *,
    n_components,
    tau=1.0,
    normalization="probability",
    method="auto",
    strict=False,
    max_memory=None,
    rng=None,
):
    """Diffusion-map coordinates ``Psi_tau`` of the attention matrix ``A = D^-1 C``.

    Parameters
    ----------
    C : array of shape (n, n)
        Symmetric, nonnegative, finite scores (``Q = K``; FNA Assumptions 1 and 2).
    n_components : int
        Number ``m`` of nontrivial coordinates, ``1 <= m <= n - 1``.
    tau : float > 0
        Diffusion time (an integer if ``A`` has negative eigenvalues).
    normalization : {"probability", "paper"}
        ``"probability"``: ``phi_0 = pi = D / sum D`` and ``psi_k^T diag(pi) psi_l = delta_kl``,
        the normalisation in which ``|Psi_tau(x_i) - Psi_tau(x_j)|`` is the diffusion
        distance (eqs. 36-37).  ``"paper"``: eq. (35) literally (unit ``v_j``).
    method, strict, max_memory, rng
        Passed to :func:`spectral.eigen.markov_spectrum` (``k = n_components + 1``,
        ``vectors=True``).

    Returns
    -------
    DiffusionMap

    Raises
    ------
    ValueError
        Bad or non-symmetric ``C``, ``n_components`` outside ``[1, n-1]``, bad ``tau`` or
        ``normalization``.

    Notes
    -----
    With :math:`D^{-1/2} C D^{-1/2} v_j = \\lambda_j v_j` and :math:`S = \\sum_i D_i`:

    .. math::

        \\text{probability: } \\psi_j = \\sqrt{S} D^{-1/2} v_j, \\quad
        \\phi_j = D^{1/2} v_j / \\sqrt{S}; \\qquad
        \\text{paper: } \\psi_j = D^{-1/2} v_j, \\quad \\phi_j = D^{1/2} v_j .

    In both, :math:`\\phi_i^T \\psi_j = \\delta_{ij}`.  Only the probability normalisation
    makes :math:`\\psi_0 = 1` and :math:`\\phi_0 = \\pi` a probability vector; with the paper's,
    the squared diffusion distance (weight :math:`1/\\phi_0`) equals
    :math:`\\sqrt{S}\\,\\lVert\\Psi_\\tau(x_i) - \\Psi_\\tau(x_j)\\rVert^2` (CLAIMS FNA-9).

    References
    ----------
    FNA eqs. (19), (20), (33)-(37).

    Examples
    --------
    >>> import numpy as np
    >>> C = np.exp(-np.subtract.outer(np.arange(5.0), np.arange(5.0)) ** 2)
    >>> dm = diffusion_map(C, n_components=2)
    >>> dm.coordinates.shape, bool(np.allclose(dm.psi[:, 0], 1.0))
    ((5, 2), True)
    """
    if normalization not in NORMALIZATIONS:
        raise ValueError(
            f"normalization must be one of {', '.join(repr(v) for v in NORMALIZATIONS)}; got {normalization!r}"
        )
    xp = _check_scores(C, square=True)
    n = C.shape[0]
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)):
        raise ValueError(f"n_components must be an integer in [1, n-1] = [1, {n - 1}], got {n_components!r}")
    m = int(n_components)
    if not (1 <= m <= n - 1):
        raise ValueError(f"n_components must be in [1, n-1] = [1, {n - 1}], got {m}")
    _check_tau(tau)
    spec = markov_spectrum(C, m + 1, method=method, vectors=True, strict=strict, max_memory=max_memory, rng=rng)
    if not spec.symmetric:
        raise ValueError("C must be symmetric (Q = K) for a diffusion map (real spectrum, FNA eq. 33)")
    lam = spec.eigenvalues
    tau = _check_tau(tau, lam[1:])
    v = spec.conjugate_vectors
    d = spec.degrees
    total = xp.sum(d)
    sq = xp.sqrt(d)
    if normalization == "probability":
        root = xp.sqrt(total)
        psi = v * (root / sq)[:, None]
        phi = v * (sq / root)[:, None]
        stationary = d / total
    else:
        psi = v / sq[:, None]
        phi = v * sq[:, None]
        stationary = d / xp.sqrt(total)
    coords = psi[:, 1:] * _power(lam[1:], tau, xp)[None, :]
    return DiffusionMap(
        coordinates=coords,
        eigenvalues=lam,
        psi=psi,
        phi=phi,
        stationary=stationary,
        tau=tau,
        normalization=normalization,
        degrees=d,
        spectrum=spec,
    )


def _stationary_of(A, xp):
    """Stationary probability of a row-stochastic ``A``: ``pi A = pi``, ``sum pi = 1``.

    Solves ``(A^T - I) pi = 0`` with the last equation replaced by ``sum pi = 1``
    (unique for an irreducible chain); O(n^3).
    """
    n = A.shape[0]
    M = A.T - xp.eye(n, dtype=A.dtype)
    M = xp.concat([M[:-1, :], xp.ones((1, n), dtype=A.dtype)], axis=0)
    rhs = xp.concat([xp.zeros((n - 1,), dtype=A.dtype), xp.ones((1,), dtype=A.dtype)])
    msg = "A has no unique positive stationary distribution (reducible chain?); pass stationary= explicitly"
    try:
        pi = xp.linalg.solve(M, rhs)
    except (ValueError, ArithmeticError, RuntimeError) as exc:  # numpy LinAlgError is a ValueError
        raise ValueError(f"{msg} ({exc})") from exc
    tol = 4 * math.sqrt(float(xp.finfo(A.dtype).eps))
    if not bool(xp.all(xp.isfinite(pi))) or float(xp.min(pi)) < -tol or float(
        xp.max(xp.abs(pi @ A - pi))
    ) > tol * float(xp.max(xp.abs(pi))):
        raise ValueError(msg)
    return pi


def diffusion_distance(A, tau, *, stationary=None, squared=False):
    """All-pairs diffusion distances ``D_tau(x_i, x_j)`` from powers of ``A`` (FNA eq. 36).

    Parameters
    ----------
    A : array of shape (n, n)
        Row-stochastic attention matrix (row sums 1 within ``4 sqrt(eps)``).
    tau : int >= 1
        Number of steps; ``p(tau, . | x_i)`` is row ``i`` of ``A^tau``.
    stationary : array of shape (n,), optional
        ``phi_0`` in the weight ``w = 1 / phi_0``.  Default: the stationary probability
        of ``A`` (solved from ``pi A = pi``, ``sum pi = 1``); pass
        ``DiffusionMap.stationary`` to use the paper's normalisation.
    squared : bool
        Return ``D_tau^2`` instead of ``D_tau``.

    Returns
    -------
    array of shape (n, n)
        Symmetric, zero diagonal.

    Raises
    ------
    ValueError
        ``A`` not square, not finite, negative or not row-stochastic; ``tau`` not an
        integer ``>= 1``; ``stationary`` of the wrong shape or not positive; no unique
        stationary distribution when ``stationary`` is not given.

    Notes
    -----
    .. math:: D_\\tau^2(x_i, x_j) = \\sum_y (p(\\tau, y | x_i) - p(\\tau, y | x_j))^2 / \\phi_0(y).

    Computed from explicit differences in blocks of rows (no ``|a|^2 + |b|^2 - 2 a.b``
    cancellation, which loses all digits for nearby points at large ``tau``):
    O(n^3) operations; four dense ``(n, n)`` arrays plus a ``2^22``-element block,
    checked by the memory guard (:func:`spectral.memory.check_dense_memory`) first.

    References
    ----------
    FNA eq. (36); Coifman & Lafon (2006).

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.5, 0.5], [0.25, 0.75]])
    >>> D = diffusion_distance(A, 1)
    >>> bool(D[0, 1] > 0 and D[0, 0] == 0)
    True
    """
    if isinstance(tau, bool) or not isinstance(tau, (int, np.integer)) or tau < 1:
        raise ValueError(f"tau must be an integer >= 1 (steps of A), got {tau!r}")
    xp = _check_scores(A, square=True, name="A")
    n = A.shape[0]
    # A^tau, the squaring base, the weighted rows W and the result (plus a 2^22-element block)
    check_dense_memory(n, dtype=_dtype_name(A.dtype), copies=4, what="diffusion distances")
    tol = 4 * math.sqrt(float(xp.finfo(A.dtype).eps))
    dev = float(xp.max(xp.abs(xp.sum(A, axis=1) - 1.0)))
    if dev > tol:
        raise ValueError(f"A must be row-stochastic (max |row sum - 1| = {dev:.3g} > {tol:.3g}); use row_normalize")
    if stationary is None:
        pi = _stationary_of(A, xp)
    else:
        pi = stationary
        if tuple(getattr(pi, "shape", ())) != (n,):
            raise ValueError(f"stationary must have shape ({n},), got {tuple(getattr(pi, 'shape', ()))}")
        if not bool(xp.all(pi > 0)) or not bool(xp.all(xp.isfinite(pi))):
            raise ValueError("stationary must be finite and positive (weight 1/phi_0)")
    P = _matrix_power(A, int(tau), xp)
    W = P / xp.sqrt(pi)[None, :]
    block = max(1, (1 << 22) // max(n * n, 1))
    rows = []
    Wb = xp.reshape(W, (1, n, n))
    for i0 in range(0, n, block):
        i1 = min(n, i0 + block)
        diff = xp.reshape(W[i0:i1, :], (i1 - i0, 1, n)) - Wb
        rows.append(xp.sum(diff * diff, axis=2))
    D2 = rows[0] if len(rows) == 1 else xp.concat(rows, axis=0)
    return D2 if squared else xp.sqrt(D2)


def _matrix_power(A, p: int, xp):
    """``A^p`` by binary exponentiation (``xp.matmul`` only)."""
    result = None
    base = A
    while p:
        if p & 1:
            result = base if result is None else result @ base
        p >>= 1
        if p:
            base = base @ base
    return result
