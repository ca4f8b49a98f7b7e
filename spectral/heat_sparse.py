"""Heat-kernel attention at scale: sparse (cutoff) and streamed Markov operators with error bounds.

The heat-kernel attention step of the DRIFT paper is ``S^(a) f`` with
``W_ij = exp(-|x_i - x_j|^2 / (2 eps))`` (ambient distance, diagonal kept), degrees ``q = W 1`` and
the Coifman-Lafon family ``S^(a) = rownorm(D^-a W D^-a)`` (``a = 0``: plain attention ``D^-1 W``).
Three paths share one interface (:class:`HeatMarkov`):

* ``"dense"``: the full matrix (memory guarded by :func:`spectral.floor.memory.check_dense_memory`);
* ``"sparse"``: entries with ``|x_i - x_j| <= cutoff sqrt(eps)`` (SciPy ``cKDTree`` on the host,
  :func:`spectral.heat_kernel_sparse`), with a rigorous truncation bound;
* ``"streamed"``: :class:`spectral.KernelOperator`, recomputing blocks of rows in each product
  (memory ``O(block_rows n)``; runs on the inputs' namespace, e.g. CuPy).

The dense and streamed paths take distances from :func:`spectral.floor.distance.pairwise_sq_distance`
(coordinate by coordinate: no cancellation for nearby points).

Truncation bound (``a = 0``). For row ``i`` let ``k_i`` be the kept mass and ``r_i`` the dropped mass,
``r_i <= (n - nnz_i) exp(-cutoff^2 / 2)``. Then for every ``f``

.. math:: |S f - \\tilde S f|_i = \\frac{|R_i k_i - K_i r_i|}{k_i (k_i + r_i)} \\le 2 \\|f\\|_\\infty \\frac{r_i}{k_i},

so ``max_i 2 r_i / k_i`` bounds the error of one step relative to ``||f||_inf`` and, divided by
``eps``, the error of the generator ``(S - I)/eps``. For ``a > 0`` the degrees are truncated too and
the reported number is the first-order estimate ``(1 + 2a)`` times the ``a = 0`` bound.

References
----------
"Attention as drift-diffusion" (DRIFT), Theorems 2-3; Coifman & Lafon, "Diffusion maps" (2006).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from spectral.floor.backend import array_namespace, to_numpy
from spectral.floor.display import array_summary, result_repr
from spectral.floor.distance import pairwise_sq_distance
from spectral.heat import heat_kernel, heat_kernel_sparse
from spectral.floor.memory import check_dense_memory, memory_device
from spectral.operators import KernelOperator
from spectral.floor.validation import InputError, check_int, check_option, check_real, check_reals

__all__ = ["HeatMarkov", "heat_markov", "shell_truncation_bound", "truncation_bound"]

METHODS = ("dense", "sparse", "streamed")


def gaussian_tail_mass(cutoff, dim) -> float:
    """Mass of the Gaussian ``exp(-|z|^2 / (2 eps))`` in ``R^dim`` beyond radius ``cutoff sqrt(eps)``.

    ``P(chi^2_dim > cutoff^2)``: the continuum (n -> infinity, flat) version of the dropped fraction;
    e.g. 2.0e-9 (dim 1) and 1.5e-8 (dim 2) for ``cutoff = 6``.
    """
    from scipy.special import gammaincc

    cutoff = check_real("cutoff", cutoff, low=0.0, low_open=True)
    dim = check_int("dim", dim, low=1)
    return float(gammaincc(dim / 2.0, cutoff**2 / 2.0))


def truncation_bound(nnz_per_row, kept_mass, n_cols, *, cutoff) -> float:
    """Rigorous bound ``max_i 2 r_i / k_i`` on ``|S f - S_trunc f| / ||f||_inf`` (module docstring).

    Parameters
    ----------
    nnz_per_row : array of shape (n,)
        Stored entries per row of the truncated kernel.
    kept_mass : array of shape (n,)
        Row sums of the truncated kernel (``>= 1`` when the diagonal is kept).
    n_cols : int
        Number of columns (keys).
    cutoff : float
        Radius in units of ``sqrt(eps)``; each dropped entry is ``< exp(-cutoff^2 / 2)``.
    """
    cutoff = check_real("cutoff", cutoff, low=0.0, low_open=True)
    n_cols = check_int("n_cols", n_cols, low=1)
    nnz = np.asarray(nnz_per_row, dtype=float)
    kept = np.asarray(kept_mass, dtype=float)
    for name, value in (("nnz_per_row", nnz), ("kept_mass", kept)):  # an infinite row sum made the bound 0
        if not np.all(np.isfinite(value)):
            raise InputError(f"{name} must contain only finite values (no NaN or inf)")
    dropped = (n_cols - nnz) * math.exp(-(cutoff**2) / 2.0)
    return float(np.max(2.0 * dropped / kept))


def shell_truncation_bound(x, kept_mass, *, eps, cutoff, shells=(0.25, 0.5, 1.0, 2.0)) -> float:
    """Tighter rigorous bound ``max_i 2 r_i / k_i`` from neighbour counts in shells beyond the cutoff.

    With ``n_i(R)`` the number of points within ``R`` of ``x_i`` and radii
    ``R_0 = cutoff sqrt(eps) < R_1 < ...`` (``R_m = (cutoff + shells[m-1]) sqrt(eps)``),
    ``r_i <= sum_m (n_i(R_{m+1}) - n_i(R_m)) exp(-R_m^2 / (2 eps)) + (n - n_i(R_last)) exp(-R_last^2 / (2 eps))``.
    Costs one ``cKDTree`` count per extra radius (host).

    Parameters
    ----------
    x : array of shape (n, D)
        The points (moved to the host).
    kept_mass : array of shape (n,)
        Row sums of the truncated kernel.
    eps, cutoff : float
        As in :func:`heat_markov`.
    shells : tuple of float
        Extra radii in units of ``sqrt(eps)`` beyond the cutoff (increasing, > 0).
    """
    from scipy.spatial import cKDTree

    eps = check_real("eps", eps, low=0.0, low_open=True)
    cutoff = check_real("cutoff", cutoff, low=0.0, low_open=True)
    shells = check_reals("shells", shells, low=0.0, low_open=True)
    xh = np.asarray(to_numpy(x), dtype=np.float64)
    n = xh.shape[0]
    tree = cKDTree(xh)
    radii = [cutoff] + [cutoff + s for s in shells]
    counts = [np.asarray(tree.query_ball_point(xh, r * math.sqrt(eps), return_length=True), dtype=float)
              for r in radii]
    dropped = np.zeros(n)
    for m in range(len(radii) - 1):
        dropped += (counts[m + 1] - counts[m]) * math.exp(-(radii[m] ** 2) / 2.0)
    dropped += (n - counts[-1]) * math.exp(-(radii[-1] ** 2) / 2.0)
    return float(np.max(2.0 * dropped / np.asarray(kept_mass, dtype=float)))


def _euclidean(xa, xb):
    """Euclidean distances ``|x_i - y_j|`` (coordinate by coordinate, accurate for nearby points)."""
    xp = array_namespace(xa, xb)
    return xp.sqrt(pairwise_sq_distance(xa, xb))


@dataclass(frozen=True, repr=False)
class HeatMarkov:
    """Heat-kernel attention ``S^(a)`` on points ``x`` (see :func:`heat_markov`).

    Attributes
    ----------
    method : str
        ``"dense"``, ``"sparse"`` or ``"streamed"``.
    eps, a, cutoff : float
        Bandwidth, Coifman-Lafon exponent, cutoff (``inf`` for dense/streamed).
    degrees : array of shape (n,)
        ``q = W 1`` (truncated for the sparse path).
    truncation_bound : float
        Bound on ``max_i |S f - S_trunc f|_i / ||f||_inf`` (0 for the exact paths).
    nnz : int
        Stored entries (``n^2`` for dense/streamed).
    """

    method: str
    eps: float
    a: float
    cutoff: float
    degrees: Any
    truncation_bound: float
    nnz: int
    _op: Any
    _colw: Any
    _rows: Any

    def __repr__(self) -> str:
        return result_repr(self, method=repr(self.method), eps=f"{self.eps:.6g}", a=f"{self.a:.6g}",
                           cutoff=f"{self.cutoff:.6g}", nnz=self.nnz, truncation_bound=f"{self.truncation_bound:.3g}",
                           degrees=array_summary(self.degrees))

    def apply(self, f):
        """``S^(a) f`` for ``f`` of shape (n,) or (n, k)."""
        xp = array_namespace(f) if self.method != "sparse" else np
        if self.method == "sparse":
            f = np.asarray(to_numpy(f))
        col = self._colw if f.ndim == 1 else self._colw[:, None]
        rows = self._rows if f.ndim == 1 else self._rows[:, None]
        num = self._op @ (col * f)
        return xp.asarray(num) / rows

    def generator(self, f):
        """``(S^(a) f - f) / eps`` (DRIFT: converges to (1/2)(Delta f + 2(1-a) <grad log p, grad f>))."""
        return (self.apply(f) - f) / self.eps


def heat_markov(x, *, eps, a=0.0, method="sparse", cutoff=6.0, block_rows=None, max_bytes=None) -> HeatMarkov:
    """Build heat-kernel attention ``S^(a) = rownorm(D^-a W D^-a)`` on the points ``x``.

    Parameters
    ----------
    x : array of shape (n, D)
        Points in the ambient space.
    eps : float
        Bandwidth ``> 0`` of ``W = exp(-|x_i - x_j|^2 / (2 eps))``.
    a : float in [0, 1]
        Coifman-Lafon exponent (0: attention ``D^-1 W``).
    method : {"dense", "sparse", "streamed"}
        Storage strategy (module docstring). ``"sparse"`` crosses the host boundary.
    cutoff : float
        Sparse path only: radius in units of ``sqrt(eps)``.
    block_rows : int, optional
        Streamed path: rows per block (default from :class:`spectral.KernelOperator`).
    max_bytes : int, optional
        Dense path: memory limit for the guard.

    Returns
    -------
    HeatMarkov

    Raises
    ------
    spectral.floor.validation.InputError
        Bad ``method``, ``eps``, ``a``, ``cutoff`` or ``block_rows``; ``x`` not 2-d.
    spectral.floor.memory.DenseMemoryError
        ``method="dense"`` beyond the memory limit.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0.0, 1.0, 50)[:, None]
    >>> S = heat_markov(x, eps=0.01, method="dense")
    >>> bool(np.allclose(S.apply(np.ones(50)), 1.0))
    True
    """
    method = check_option("method", method, METHODS)
    eps = check_real("eps", eps, low=0.0, low_open=True)
    a = check_real("a", a, low=0.0, high=1.0)
    cutoff = check_real("cutoff", cutoff, low=0.0, low_open=True)  # radius in units of sqrt(eps)
    if block_rows is not None:
        block_rows = check_int("block_rows", block_rows, low=1)
    if max_bytes is not None:
        max_bytes = check_real("max_bytes", max_bytes, low=0.0, low_open=True)
    xp = array_namespace(x)
    if getattr(x, "ndim", 0) != 2:
        raise InputError(f"x must be a 2-d array of points (n, D), got shape {getattr(x, 'shape', None)}")
    n = x.shape[0]
    bound = 0.0
    if method == "sparse":
        scores = heat_kernel_sparse(x, eps=eps, cutoff=cutoff)
        op = scores.matrix
        q = scores.row_sums()
        nnz_rows = np.diff(op.indptr)
        bound = truncation_bound(nnz_rows, q, n, cutoff=cutoff) * (1.0 + 2.0 * a)
        nnz = int(op.nnz)
        one = np.ones(n)
    elif method == "dense":
        check_dense_memory(n, n, dtype="float64", max_bytes=max_bytes, what="dense heat-kernel matrix",
                           alternative="use method='sparse' (within a cutoff) or method='streamed' (nothing stored)",
                           device=memory_device(x))
        op = heat_kernel(_euclidean(x, x), eps=eps)
        q = xp.sum(op, axis=1)
        nnz = n * n
        one = xp.ones(n, dtype=x.dtype)
        cutoff = math.inf
    else:
        op = KernelOperator(x, kernel=lambda d: heat_kernel(d, eps=eps), distance=_euclidean, block_rows=block_rows)
        q = op.row_sums()
        nnz = n * n
        one = xp.ones(n, dtype=x.dtype)
        cutoff = math.inf
    colw = q ** (-a) if a else one
    rows = op @ colw if a else q
    return HeatMarkov(method=method, eps=float(eps), a=float(a), cutoff=float(cutoff), degrees=q,
                      truncation_bound=bound, nnz=nnz, _op=op, _colw=colw, _rows=rows)
