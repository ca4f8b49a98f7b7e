"""Diffusion maps of attention matrices: coordinates, left/right eigenvectors, diffusion distances.

For symmetric scores ``C`` (``Q = K``) the attention matrix ``A = D^-1 C`` is diagonalised through
its symmetric conjugate (FNA eqs. 33-35): with ``D^-1/2 C D^-1/2 = V Lambda V^T``, the right
eigenvectors ``psi_j`` and the left eigenvectors ``phi_j`` are bi-orthonormal and
``A^tau = sum_j lambda_j^tau psi_j phi_j^T`` (eq. 20). The diffusion map
``Psi_tau = (lambda_1^tau psi_1, ..., lambda_m^tau psi_m)`` (eq. 19) embeds the points so that
Euclidean distance equals the diffusion distance of eq. (36) (eq. 37) -- in the
stationary-probability normalisation. With the paper's literal normalisation (eq. 35, unit ``v_j``)
the two sides of eq. (37) differ by the constant factor ``sqrt(sum_ij C_ij)`` (ledger FNA-9).

Density normalisation (Coifman & Lafon): ``diffusion_map(C, a=...)`` first forms
``C^(a) = Q^-a C Q^-a`` with the degrees ``Q = C 1``, which is symmetric again, and maps
``A^(a) = D_a^-1 C^(a)`` the same way (``a = 0``: the graph Laplacian; ``1/2``: Fokker-Planck;
``1``: Laplace-Beltrami). The exponent is written ``a`` as everywhere in the toolkit
(:func:`spectral.anisotropic_normalize`, :func:`spectral.heat_markov`): ``alpha`` is the order of the
fractional kernels here.

References
----------
"Fractional neural attention" (FNA), eqs. (19), (20), (33)-(37). Coifman & Lafon, "Diffusion maps",
Appl. Comput. Harmon. Anal. 21 (2006).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from spectral.backend import array_namespace
from spectral.display import array_summary, leading_values, result_repr
from spectral.eigen import markov_spectrum
from spectral.memory import check_dense_memory, memory_device
from spectral.scores import check_row_stochastic, checked_row_sums, scan_scores, symmetry_tolerance
from spectral.spectrum import Spectrum
from spectral.validation import InputError, check_int, check_option, check_real

__all__ = ["DiffusionMap", "diffusion_distance", "diffusion_map"]

NORMALIZATIONS = ("probability", "paper")


@dataclass(frozen=True, repr=False)
class DiffusionMap:
    """Diffusion-map coordinates and the eigen-decomposition behind them.

    Attributes
    ----------
    coordinates : array of shape (n, m)
        ``Psi_tau(x_i) = (lambda_1^tau psi_1(x_i), ..., lambda_m^tau psi_m(x_i))`` (FNA eq. 19).
    eigenvalues : array of shape (m + 1,)
        ``lambda_0 = 1 >= lambda_1 >= ... >= lambda_m`` (descending) of ``A^(a)``.
    psi : array of shape (n, m + 1)
        Right eigenvectors of ``A^(a)`` (``psi_0`` constant).
    phi : array of shape (n, m + 1)
        Left eigenvectors, ``phi^T psi = I`` (bi-orthonormal, eq. 35 / Methods).
    stationary : array of shape (n,)
        ``phi_0``: the stationary probability ``pi = D_a / sum D_a`` ("probability") or the
        paper's ``D_a^1/2 v_0 = D_a / sqrt(sum D_a)`` ("paper").
    tau : float
        Diffusion time.
    normalization : str
        ``"probability"`` (``psi_k^T diag(pi) psi_l = delta_kl``, ``psi_0 = 1``) or
        ``"paper"`` (eq. 35 literally: ``psi = D^-1/2 v``, ``phi = D^1/2 v``, unit ``v``).
    degrees : array of shape (n,)
        Row sums ``D_a`` of ``C^(a)`` (of ``C`` when ``a = 0``).
    spectrum : Spectrum
        The Markov spectrum of ``A^(a)`` (method, residual, components).
    a : float
        The density-normalisation exponent.
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
    a: float = 0.0

    def __repr__(self) -> str:
        return result_repr(
            self, n=int(self.coordinates.shape[0]), n_components=int(self.coordinates.shape[1]),
            a=f"{self.a:g}", tau=f"{self.tau:g}", normalization=repr(self.normalization),
            eigenvalues=leading_values(self.eigenvalues), method=repr(self.spectrum.method),
            coordinates=array_summary(self.coordinates),
        )

    def transition_matrix(self, tau=None):
        """``sum_j lambda_j^tau psi_j phi_j^T`` over the kept pairs (FNA eq. 20).

        With all ``n`` pairs (``n_components = n - 1``) this is ``(A^(a))^tau`` exactly; with
        fewer it is the rank-``m+1`` truncation.  Builds a dense ``(n, n)`` array.
        """
        tau = self.tau if tau is None else _check_tau(tau, self.eigenvalues)
        xp = array_namespace(self.psi)
        n = self.psi.shape[0]
        check_dense_memory(n, dtype=self.psi.dtype, copies=2, what="reconstructed A^tau",
                           alternative="work with the coordinates (or psi, phi) instead of the dense matrix",
                           device=memory_device(self.psi))
        lam = _power(self.eigenvalues, tau, xp)
        return (self.psi * lam[None, :]) @ self.phi.T


def _check_tau(tau, eigenvalues=None) -> float:
    tau = check_real("tau", tau, low=0.0, low_open=True)
    if eigenvalues is not None and not float(tau).is_integer():
        xp = array_namespace(eigenvalues)
        if bool(xp.any(eigenvalues < 0)):
            raise InputError(
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
    a=0.0,
    tau=1.0,
    normalization="probability",
    method="auto",
    strict=False,
    max_memory=None,
    rng=None,
):
    """Diffusion-map coordinates ``Psi_tau`` of the attention matrix ``A^(a) = D_a^-1 C^(a)``.

    Parameters
    ----------
    C : array of shape (n, n)
        Symmetric, nonnegative, finite scores (``Q = K``; FNA Assumptions 1 and 2).
    n_components : int
        Number ``m`` of nontrivial coordinates, ``1 <= m <= n - 1``.
    a : float in [0, 1]
        Density normalisation (Coifman & Lafon's alpha): ``C^(a) = Q^-a C Q^-a`` with
        ``Q = C 1``. ``0``: plain attention ``D^-1 C`` (graph Laplacian); ``1/2``: Fokker-Planck;
        ``1``: Laplace-Beltrami (the sampling density drops out). See Notes for the limits.
    tau : float > 0
        Diffusion time (an integer if ``A^(a)`` has negative eigenvalues).
    normalization : {"probability", "paper"}
        ``"probability"``: ``phi_0 = pi = D_a / sum D_a`` and ``psi_k^T diag(pi) psi_l = delta_kl``,
        the normalisation in which ``|Psi_tau(x_i) - Psi_tau(x_j)|`` is the diffusion
        distance (eqs. 36-37).  ``"paper"``: eq. (35) literally (unit ``v_j``).
    method, strict, max_memory, rng
        Passed to :func:`spectral.markov_spectrum` (``k = n_components + 1``, ``vectors=True``).

    Returns
    -------
    DiffusionMap

    Raises
    ------
    spectral.validation.InputError
        Bad or non-symmetric ``C``, ``n_components`` outside ``[1, n-1]``, bad ``a``, ``tau`` or
        ``normalization``.
    spectral.memory.DenseMemoryError
        ``a > 0`` and no room for ``C^(a)``, or the eigensolver's dense work does not fit.

    Notes
    -----
    With :math:`D_a^{-1/2} C^{(a)} D_a^{-1/2} v_j = \\lambda_j v_j` and :math:`S = \\sum_i D_{a,i}`:

    .. math::

        \\text{probability: } \\psi_j = \\sqrt{S} D_a^{-1/2} v_j, \\quad
        \\phi_j = D_a^{1/2} v_j / \\sqrt{S}; \\qquad
        \\text{paper: } \\psi_j = D_a^{-1/2} v_j, \\quad \\phi_j = D_a^{1/2} v_j .

    In both, :math:`\\phi_i^T \\psi_j = \\delta_{ij}`.  Only the probability normalisation
    makes :math:`\\psi_0 = 1` and :math:`\\phi_0 = \\pi` a probability vector; with the paper's,
    the squared diffusion distance (weight :math:`1/\\phi_0`) equals
    :math:`\\sqrt{S}\\,\\lVert\\Psi_\\tau(x_i) - \\Psi_\\tau(x_j)\\rVert^2` (ledger FNA-9).

    Generator scaling, for the heat kernel ``C = exp(-|x_i - x_j|^2 / (2 eps))`` of points drawn
    from a density ``p`` on a manifold, as ``n -> infinity`` and then ``eps -> 0`` (Coifman & Lafon
2006, written in this kernel convention; the test suite measures it on the circle):

    .. math::

        \\frac{2 (1 - \\lambda_j)}{\\varepsilon} \\to \\mu_j, \\qquad
        -\\bigl(\\Delta + 2 (1 - a) \\nabla \\log p \\cdot \\nabla\\bigr) f_j = \\mu_j f_j,

    so ``2 (1 - lambda_j) / eps`` approximates the eigenvalues of ``-Delta`` (Laplace-Beltrami)
    at ``a = 1`` whatever ``p``, of ``-(Delta + grad log p . grad)`` (Fokker-Planck) at ``a = 1/2``
    and of ``-(Delta + 2 grad log p . grad)`` at ``a = 0``; the stationary law of ``A^(a)`` is
    proportional to ``p^(1 - 2a)``. With ``exp(-d^2 / eps)`` (other libraries' convention) the factor
    is 4 instead of 2.

    References
    ----------
    FNA eqs. (19), (20), (33)-(37); Coifman & Lafon (2006).

    Examples
    --------
    Ten points on a line, the heat kernel at ``eps = 0.5``, two coordinates:

    >>> import numpy as np
    >>> from spectral import diffusion_map, heat_kernel
    >>> x = np.linspace(0.0, 3.0, 10)
    >>> C = heat_kernel(np.abs(x[:, None] - x[None, :]), eps=0.5)
    >>> dm = diffusion_map(C, n_components=2, a=0.5)
    >>> dm.coordinates.shape, bool(np.allclose(dm.psi[:, 0], 1.0))
    ((10, 2), True)
    >>> round(float(dm.eigenvalues[0]), 12), bool(dm.eigenvalues[1] < 1.0)
    (1.0, True)

    The first coordinate orders the points along the line (up to its sign):

    >>> order = np.argsort(dm.coordinates[:, 0])
    >>> order.tolist() in (list(range(10)), list(range(9, -1, -1)))
    True
    """
    normalization = check_option("normalization", normalization, NORMALIZATIONS)
    a = check_real("a", a, low=0.0, high=1.0)
    xp, stats = scan_scores(C, square=True, symmetry=True)
    n = C.shape[0]
    if n < 2:
        raise InputError(f"C must be at least 2 x 2, got shape {tuple(C.shape)}")
    if stats.defect > symmetry_tolerance(C.dtype):
        raise InputError(
            f"C must be symmetric (Q = K) for a diffusion map (real spectrum, FNA eq. 33): "
            f"max|C - C^T| / max|C| = {stats.defect:.3g} > 4 sqrt(eps) = {symmetry_tolerance(C.dtype):.3g}"
        )
    m = check_int("n_components", n_components, low=1, high=n - 1)
    _check_tau(tau)
    if a > 0.0:
        check_dense_memory(n, dtype=C.dtype, copies=1, max_bytes=max_memory, limit_name="max_memory",
                           what="density-normalised scores C^(a)",
                           alternative="use a=0 (no copy of C) or fewer points", device=memory_device(C))
        w = checked_row_sums(C, cmax=stats.cmax) ** (-a)
        C = w[:, None] * C * w[None, :]
    spec = markov_spectrum(C, m + 1, method=method, vectors=True, strict=strict, max_memory=max_memory, rng=rng)
    if not spec.symmetric:
        raise InputError("C must be symmetric (Q = K) for a diffusion map (real spectrum, FNA eq. 33)")
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
        a=a,
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
        raise InputError(f"{msg} ({exc})") from exc
    tol = 4 * math.sqrt(float(xp.finfo(A.dtype).eps))
    if not bool(xp.all(xp.isfinite(pi))) or float(xp.min(pi)) < -tol or float(
        xp.max(xp.abs(pi @ A - pi))
    ) > tol * float(xp.max(xp.abs(pi))):
        raise InputError(msg)
    return pi


def diffusion_distance(A, tau, *, stationary=None, squared=False):
    """All-pairs diffusion distances ``D_tau(x_i, x_j)`` from powers of ``A`` (FNA eq. 36).

    Parameters
    ----------
    A : array of shape (n, n)
        Row-stochastic attention matrix (row sums 1 within ``4 sqrt(eps)``), e.g.
        ``row_normalize(C)`` or ``anisotropic_normalize(C, a)``.
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
    spectral.validation.InputError
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
    tau = check_int("tau", tau, low=1)
    xp = check_row_stochastic(A)
    n = A.shape[0]
    # A^tau, the squaring base, the weighted rows W and the result (plus a 2^22-element block)
    check_dense_memory(n, dtype=A.dtype, copies=4, what="all-pairs diffusion distances",
                       alternative="use diffusion_map coordinates (Euclidean distance between them is the "
                                   "diffusion distance, truncated to n_components)", device=memory_device(A))
    if stationary is None:
        pi = _stationary_of(A, xp)
    else:
        pi = stationary
        if tuple(getattr(pi, "shape", ())) != (n,):
            raise InputError(f"stationary must have shape ({n},), got {tuple(getattr(pi, 'shape', ()))}")
        if not bool(xp.all(pi > 0)) or not bool(xp.all(xp.isfinite(pi))):
            raise InputError("stationary must be finite and positive (weight 1/phi_0)")
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
