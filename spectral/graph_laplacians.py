r"""Graph Laplacians of eps-graphs, k-NN graphs and Gaussian kernels, normalised to ``-Delta``.

For ``n`` i.i.d. points with density value ``p`` on an ``m``-dimensional manifold, each construction is
scaled so that for uniform sampling it converges to the positive Laplace-Beltrami operator ``-Delta``
(eigenvalues ``l (l + m - 1)`` on the unit sphere S^m):

* **eps-graph** (Calder & Garcia Trillos, ACHA 2022, "Improved spectral convergence rates for graph
  Laplacians on eps-graphs and k-NN graphs", arXiv 1910.13476; Garcia Trillos, Gerlach, Hein &
  Slepcev, FoCM 2020, arXiv 1801.10108): ``W_ij = 1{|x_i - x_j| <= eps}`` (``i != j``, ambient
  distance) and

  .. math:: L = \frac{2}{\sigma_\eta\, p\, n\, \varepsilon^{m+2}} (D - W), \qquad
            \sigma_\eta = \int_{B_1 \subset \mathbb R^m} z_1^2\, dz = \frac{\alpha_m}{m + 2},

  with ``alpha_m = pi^(m/2) / Gamma(m/2 + 1)`` the volume of the unit ball. Derivation: for smooth
  ``u``, ``sum_j W_ij (u_i - u_j) ~ n p int_{|z| <= eps} (u(x) - u(x + z)) dz = -(n p / 2) Delta u
  int_{|z| <= eps} z_1^2 dz = -(n p sigma_eta eps^(m+2) / 2) Delta u`` (the first-order term
  integrates to zero). The random-walk form divides by the degree ``n p alpha_m eps^m`` instead:
  ``L_rw = 2 (m + 2) / eps^2 (I - D^-1 W)``.
* **k-NN graph** (the same paper): ``W_ij = 1`` when ``x_j`` is among the ``k`` nearest neighbours of
  ``x_i`` (the point itself excluded) or ``x_i`` among those of ``x_j`` (symmetrised by the maximum).
  The k-NN radius of a uniform sample is ``eps_k = (k / (n p alpha_m))^(1/m)`` (``k`` points expected in
  the ball), and ``L = 2 / (sigma_eta p n eps_k^(m+2)) (D - W)`` as for the eps-graph.
* **Gaussian kernel** (Cheng & Wu, ACHA 2022, "Eigen-convergence of Gaussian kernelized graph
  Laplacian by manifold heat interpolation", arXiv 2101.09875): ``W_ij = eps^(-m/2) h(|x_i - x_j|^2 /
  eps)`` with ``h(r) = exp(-r/4) / (4 pi)^(m/2)`` (diagonal kept), whose moments are
  ``m_0 = int h(|u|^2) du = 1`` and ``m_2 = int h(|u|^2) u_1^2 du = 2`` (a Gaussian of variance 2 per
  coordinate). Then ``L_un = (D - W) / ((m_2 / 2) eps p n)`` and ``L_rw = (I - D^-1 W) / (eps m_2 /
  (2 m_0))``; the density-corrected Laplacian is ``L_rw`` of ``W~ = D^-1 W D^-1``, which converges to
  ``-Delta`` for any smooth positive density (Coifman & Lafon's ``a = 1``).

Eigenpairs (:meth:`GraphLaplacian.eigenpairs`): the unnormalised ``L`` is symmetric; the random-walk
forms solve ``(D - W) v = (lambda / c) D v`` through the symmetric ``D^-1/2 W D^-1/2``, and their
eigenvectors are orthonormal in the degree-weighted inner product ``sum_i D_ii u_i v_i``
(:attr:`GraphLaplacian.inner_weights`), which approximates ``n p`` times the volume measure.

Paths (``method``): ``"sparse"`` (eps and k-NN graphs: SciPy ``cKDTree`` neighbour search and CSR
matrices on the host), ``"dense"`` (the Gaussian kernel as an ``n x n`` array in the namespace of the
points, memory guarded) and ``"streamed"`` (every graph matrix-free: each product recomputes the
weights block by block in the namespace of the points, memory ``O(block n)``; the way to ``n = 2^20``
on a GPU, where the neighbour lists of ``k = n^(2/3)`` would not fit).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from spectral.floor.arrays import as_float_array
from spectral.floor.backend import (
    array_namespace,
    eigsh,
    is_cupy_array,
    is_numpy_namespace,
    linear_operator,
    to_numpy,
)
from spectral.floor.distance import pairwise_sq_distance
from spectral.floor.memory import check_dense_memory, check_memory
from spectral.floor.validation import InputError, check_int, check_option, check_real

__all__ = ["GraphLaplacian", "PatternMatrix", "ball_volume", "gaussian_moments", "graph_laplacian", "indicator_moment",
           "knn_radius"]

GRAPHS = ("eps", "knn", "gaussian")
NORMALIZATIONS = ("unnormalized", "random_walk", "density_corrected")
METHODS = ("auto", "sparse", "dense", "streamed")

#: Bytes per stored pair of a sparse graph while it is built (cKDTree pair lists of int64, the CSR arrays
#: of float64 data and int32 indices, and the transposed copy of the symmetrisation): an estimate for the
#: memory guard, from the array sizes (24 + 12 + 12).
SPARSE_BYTES_PER_PAIR = 48

#: Elements per block of the streamed products (``block x n`` temporaries: distances, mask, weights).
STREAM_BLOCK_ELEMENTS = 2**22


def ball_volume(m: int) -> float:
    """Volume ``alpha_m = pi^(m/2) / Gamma(m/2 + 1)`` of the unit ball in R^m."""
    m = check_int("m", m, low=1)
    return math.pi ** (m / 2) / math.gamma(m / 2 + 1)


def indicator_moment(m: int) -> float:
    """``sigma_eta = int_{B_1} z_1^2 dz = alpha_m / (m + 2)``: the constant of the eps-graph Laplacian.

    ``int_{B_1} |z|^2 dz = m alpha_m int_0^1 r^(m+1) dr = m alpha_m / (m + 2)`` and by symmetry each of the
    ``m`` coordinates carries one ``m``-th of it.
    """
    m = check_int("m", m, low=1)
    return ball_volume(m) / (m + 2)


def gaussian_moments(m: int) -> tuple[float, float]:
    """``(m_0, m_2)`` of Cheng & Wu's ``h(r) = exp(-r/4) / (4 pi)^(m/2)``: ``(1, 2)`` in every dimension.

    ``h(|u|^2)`` is the density of a centred Gaussian with variance 2 per coordinate, so its mass is 1
    and its second moment per coordinate is 2.
    """
    check_int("m", m, low=1)
    return 1.0, 2.0


def knn_radius(k: int, n: int, density: float, m: int) -> float:
    """``eps_k = (k / (n p alpha_m))^(1/m)``: the radius whose ball holds ``k`` of ``n`` points of density ``p``."""
    k = check_int("k", k, low=1)
    n = check_int("n", n, low=2)
    density = check_real("density", density, low=0.0, low_open=True)
    return (k / (n * density * ball_volume(m))) ** (1.0 / check_int("m", m, low=1))


@dataclasses.dataclass(frozen=True, eq=False)
class GraphLaplacian:
    """A graph Laplacian normalised to ``-Delta`` (module docstring), ready for its low eigenpairs.

    Attributes
    ----------
    graph : {"eps", "knn", "gaussian"}
    normalization : {"unnormalized", "random_walk", "density_corrected"}
    method : {"sparse", "dense", "streamed"}
    n, m : int
        Number of points and manifold dimension used in the constants.
    eps : float
        The bandwidth: the eps-graph radius, the k-NN radius ``eps_k`` (``knn``) or the Gaussian ``eps``.
    k : int or None
        Neighbours per point (``knn``).
    scale : float
        ``c`` with ``L = c (D - W)`` (unnormalised) or ``L = c (I - D^-1 W)`` (random walk).
    weights : object
        The graph ``W`` before any density correction: a :class:`PatternMatrix` (sparse path; ``.tocsr()``
        gives a SciPy array), the dense array, or ``None`` (streamed path).
    degrees : array of shape (n,)
        ``D_ii = sum_j W_ij`` of the matrix the Laplacian is built from (``W~`` when density-corrected).
    apply : callable
        ``apply(V) -> W V`` (``W~ V`` when density-corrected) for a block of vectors (every path).
    edges : int
        Number of non-zero weights (directed pairs; ``n^2`` for the Gaussian).
    radii : array of shape (n,) or None
        The k-NN graph's radii: the distance of each point to its ``k``-th nearest other point.
    """

    graph: str
    normalization: str
    method: str
    n: int
    m: int
    eps: float
    k: int | None
    scale: float
    weights: Any
    degrees: Any
    apply: Any
    edges: int
    radii: Any = None

    @property
    def inner_weights(self):
        """``None`` (Euclidean) for the unnormalised Laplacian, the degrees for the random-walk forms."""
        return None if self.normalization == "unnormalized" else self.degrees

    def eigenpairs(self, count: int, *, tol: float = 1e-10):
        """The ``count`` smallest eigenvalues (ascending) and their eigenvectors ``(n, count)``.

        Eigenvectors are orthonormal in :attr:`inner_weights` (Euclidean, or degree-weighted).
        Lanczos (:func:`spectral.floor.backend.eigsh`) on ``s I - c (D - W)`` with ``s >= 2 c max D``
        (Gershgorin: the shift makes the wanted eigenvalues the largest) for the unnormalised form,
        and on ``D^-1/2 W D^-1/2`` (largest eigenvalues ``1 - lambda / c``) for the random-walk forms.
        """
        count = check_int("count", count, low=1, high=self.n - 1)
        tol = check_real("tol", tol, low=0.0)
        xp = array_namespace(self.degrees)
        d = self.degrees
        n = self.n
        if self.normalization == "unnormalized":
            shift = 2.0 * self.scale * float(xp.max(d))
            c = self.scale

            def matvec(v):
                v = _as_2d(xp, v)
                return (shift - c * d[:, None]) * v + c * self.apply(v)
        else:
            s = 1.0 / xp.sqrt(d)

            def matvec(v):
                v = _as_2d(xp, v)
                return s[:, None] * self.apply(s[:, None] * v)

        if is_numpy_namespace(xp) or is_cupy_array(d):
            def product(v):
                return _squeeze(xp, matvec(v), v)
            block = matvec
        else:  # another array-API namespace: SciPy's Lanczos vectors cross the host boundary each product
            def block(v):
                return np.asarray(to_numpy(matvec(xp.asarray(v, dtype=d.dtype))))

            def product(v):
                return _squeeze(np, block(v), v)
        op = linear_operator((n, n), product, dtype=np.float64, like=d, matmat=block)
        # a fixed start vector: ARPACK's own random start depends on the calls before it in the process
        v0 = np.random.default_rng(0).standard_normal(n)
        vals, vecs = eigsh(op, count, which="LA", tol=tol, v0=v0)
        vals = xp.asarray(vals)
        order = xp.argsort(-vals)
        vals = xp.take(vals, order)
        vecs = xp.take(xp.asarray(vecs), order, axis=1)
        if self.normalization == "unnormalized":
            lam = shift - vals
        else:
            lam = self.scale * (1.0 - vals)
            vecs = s[:, None] * vecs  # D-orthonormal: V^T D V = I
        return lam, vecs


def _astype(xp, a, dtype):
    """``xp.astype`` where the namespace has it (NumPy 2, array-API), the array's method otherwise (CuPy)."""
    return xp.astype(a, dtype) if hasattr(xp, "astype") else a.astype(dtype)


def _as_2d(xp, v):
    return v[:, None] if v.ndim == 1 else v


def _squeeze(xp, out, v):
    return out[:, 0] if v.ndim == 1 else out


def graph_laplacian(x, *, graph: str, m: int, eps=None, k=None, density=None, normalization: str = "unnormalized",
                    method: str = "auto", max_bytes=None) -> GraphLaplacian:
    r"""A graph Laplacian of the points ``x``, scaled to converge to ``-Delta`` (module docstring).

    Parameters
    ----------
    x : array of shape (n, D)
        Points on an ``m``-dimensional manifold in R^D (any array namespace; the sparse path crosses
        the host boundary for SciPy's ``cKDTree``).
    graph : {"eps", "knn", "gaussian"}
        The indicator eps-graph, the symmetrised k-NN graph, or Cheng & Wu's Gaussian kernel.
    m : int
        Manifold dimension (enters ``sigma_eta``, ``eps^(m+2)``, ``alpha_m`` and ``eps^(-m/2)``).
    eps : float
        Radius of the eps-graph or bandwidth of the Gaussian (``> 0``); not used by ``knn``.
    k : int
        Neighbours per point of the k-NN graph (``1 <= k < n``).
    density : float
        The sampling density's value ``p`` (``1 / volume`` for uniform sampling); needed by the
        unnormalised Laplacians and by ``knn`` (its radius ``eps_k``).
    normalization : {"unnormalized", "random_walk", "density_corrected"}
        ``knn`` supports ``"unnormalized"`` only.
    method : {"auto", "sparse", "dense", "streamed"}
        ``"auto"``: sparse for eps and k-NN graphs, dense for the Gaussian.
    max_bytes : int or float, optional
        Limit on the memory of the graph (default: the memory available now); refused before allocating.

    Returns
    -------
    GraphLaplacian
    """
    graph = check_option("graph", graph, GRAPHS)
    normalization = check_option("normalization", normalization, NORMALIZATIONS)
    method = check_option("method", method, METHODS)
    m = check_int("m", m, low=1)
    xp, x = as_float_array(x, "x", ndim=2)
    n = int(x.shape[0])
    if n < 3:
        raise InputError(f"x must hold at least 3 points, got {n}")
    if graph == "knn":
        if k is None:
            raise InputError("k is required for graph='knn' (neighbours per point, in [1, n - 1])")
        k = check_int("k", k, low=1, high=n - 1)
        if normalization != "unnormalized":
            raise InputError(f"normalization must be 'unnormalized' for graph='knn', got {normalization!r}")
    elif eps is None:
        raise InputError(f"eps is required for graph={graph!r} (a radius or bandwidth > 0)")
    else:
        eps = check_real("eps", eps, low=0.0, low_open=True)
    if normalization == "unnormalized" or graph == "knn":
        if density is None:
            raise InputError("density is required here: the sampling density's value p > 0 (1 / volume for "
                             "uniform sampling)")
        density = check_real("density", density, low=0.0, low_open=True)
    if method == "auto":
        method = "dense" if graph == "gaussian" else "sparse"
    if method == "sparse" and graph == "gaussian":
        raise InputError("method must be 'dense' or 'streamed' for graph='gaussian' (its weights have full support)")
    if method == "dense" and graph != "gaussian":
        raise InputError(f"method must be 'sparse' or 'streamed' for graph={graph!r}")
    if method == "sparse" and not is_numpy_namespace(xp):
        x = np.asarray(to_numpy(x), dtype=np.float64)
        xp = np

    radii = None
    if graph == "knn":
        eps = knn_radius(k, n, density, m)
    if method == "sparse":
        w, radii = _sparse_graph(x, graph, eps=eps, k=k, max_bytes=max_bytes)
        apply = w.__matmul__
        edges = int(w.nnz)
        degrees = w.row_counts()
    elif method == "dense":
        check_dense_memory(n, n, copies=3, max_bytes=max_bytes, what=f"the dense Gaussian graph on n = {n} points",
                           alternative="use method='streamed'")
        d2 = pairwise_sq_distance(x, max_bytes=max_bytes)
        w = _gaussian(xp, d2, eps, m)
        del d2
        apply = w.__matmul__
        edges = n * n
        degrees = xp.sum(w, axis=1)
    else:
        r2 = _stream_knn_radii(xp, x, k) if graph == "knn" else None
        w = None
        apply = _streamed_apply(xp, x, graph, eps=eps, m=m, radii=r2)
        radii = None if r2 is None else xp.sqrt(r2)
        degrees = apply(xp.ones((n, 1), dtype=x.dtype))[:, 0]
        edges = int(round(float(xp.sum(degrees)))) if graph != "gaussian" else n * n
    if bool(xp.any(degrees <= 0)):
        isolated = int(xp.sum(_astype(xp, degrees <= 0, degrees.dtype)))
        raise InputError(f"the graph has {isolated} isolated point(s) (degree 0): raise "
                         f"{'k' if graph == 'knn' else 'eps'}")

    if normalization == "density_corrected":
        inv = 1.0 / degrees
        base = apply

        def apply(v, base=base, inv=inv):  # W~ V = D^-1 W D^-1 V, never stored
            return inv[:, None] * base(inv[:, None] * v)
        degrees = apply(xp.ones((n, 1), dtype=degrees.dtype))[:, 0]

    if normalization == "unnormalized":
        if graph == "gaussian":
            _, m2 = gaussian_moments(m)
            scale = 1.0 / ((m2 / 2.0) * eps * density * n)
        else:
            scale = 2.0 / (indicator_moment(m) * density * n * eps ** (m + 2))
    elif graph == "gaussian":
        m0, m2 = gaussian_moments(m)
        scale = 1.0 / (eps * m2 / (2.0 * m0))
    else:
        scale = 2.0 * (m + 2) / eps**2
    return GraphLaplacian(graph=graph, normalization=normalization, method=method, n=n, m=m, eps=float(eps),
                          k=k, scale=float(scale), weights=w, degrees=degrees, apply=apply, edges=edges, radii=radii)


def _gaussian(xp, d2, eps, m):
    """``eps^(-m/2) exp(-d2 / (4 eps)) / (4 pi)^(m/2)`` in place where the namespace allows."""
    c = eps ** (-m / 2) / (4.0 * math.pi) ** (m / 2)
    if is_numpy_namespace(xp):
        np.multiply(d2, -1.0 / (4.0 * eps), out=d2)
        np.exp(d2, out=d2)
        d2 *= c
        return d2
    return c * xp.exp(-d2 / (4.0 * eps))


class PatternMatrix:
    """A symmetric 0/1 matrix stored as its pattern: CSR ``indptr`` (int64) and ``indices`` (int32) only.

    ``W @ V`` sums ``V`` over each row's columns: through a SciPy CSR array with unit data while that
    fits in :data:`CSR_DATA_BYTES` (built once), else with ``numpy.add.reduceat`` over blocks of rows (4
    bytes per stored pair instead of 12: the k-NN graphs of ``k = n^(2/3)`` at ``n = 2^18``).
    """

    def __init__(self, indptr, indices, n: int):
        self.indptr = indptr
        self.indices = indices
        self.shape = (n, n)
        self.nnz = int(indices.size)
        self._csr = None

    def tocsr(self):
        """The matrix as a :class:`scipy.sparse.csr_array` with unit data."""
        import scipy.sparse as sp

        if self._csr is None:
            self._csr = sp.csr_array((np.ones(self.nnz), self.indices, self.indptr), shape=self.shape)
        return self._csr

    def row_counts(self) -> np.ndarray:
        """The degrees: stored entries per row."""
        return np.diff(self.indptr).astype(np.float64)

    def __matmul__(self, v):
        v = np.asarray(v)
        if 8 * self.nnz <= CSR_DATA_BYTES:
            return self.tocsr() @ v
        n = self.shape[0]
        out = np.empty((n,) + v.shape[1:])
        width = int(np.prod(v.shape[1:])) if v.ndim > 1 else 1
        rows = max(1, int(REDUCE_BLOCK_ELEMENTS // max(1, width * self.nnz // n)))
        for s in range(0, n, rows):
            e = min(s + rows, n)
            a, b = int(self.indptr[s]), int(self.indptr[e])
            out[s:e] = np.add.reduceat(v[self.indices[a:b]], self.indptr[s:e] - a, axis=0)
        return out


#: Largest unit-data array (bytes) a :class:`PatternMatrix` materialises for SciPy's faster products.
CSR_DATA_BYTES = 1 << 28
#: Gathered elements per block of :meth:`PatternMatrix.__matmul__` without the CSR array.
REDUCE_BLOCK_ELEMENTS = 1 << 24
#: Query points per block of the sparse neighbour search.
SEARCH_BLOCK_POINTS = 2048


def _sparse_graph(x, graph, *, eps, k, max_bytes):
    """The eps-graph or the symmetrised k-NN graph as a :class:`PatternMatrix` (host), diagonal excluded.

    Both are built row block by row block from cKDTree pair searches, with the squared distances
    recomputed from the coordinates so that every comparison uses one formula: the eps-graph keeps
    ``|x_i - x_j|^2 <= eps^2``; the k-NN graph keeps ``|x_i - x_j|^2 <= max(r_i^2, r_j^2)`` with ``r_i^2``
    the squared distance to the ``k``-th nearest other point, which is the union of the two directed k-NN
    relations (``j`` among the ``k`` nearest of ``i``, or ``i`` among those of ``j``) without forming a
    transpose. Memory: 4 bytes per stored pair plus one block's pair list.
    """
    from scipy.spatial import cKDTree

    n = x.shape[0]
    tree = cKDTree(x)
    if graph == "knn":
        check_memory(5.0 * n * k * 1.3 + 16.0 * SEARCH_BLOCK_POINTS * (k + 1),
                     what=f"the k-NN graph on n = {n} points with k = {k}",
                     alternative="use a smaller k or method='streamed'", max_bytes=max_bytes)
        r2 = np.empty(n)
        for s in range(0, n, SEARCH_BLOCK_POINTS):
            e = min(s + SEARCH_BLOCK_POINTS, n)
            _, idx = tree.query(x[s:e], k + 1)
            own = idx == np.arange(s, e)[:, None]
            keep = ~own
            keep[~own.any(axis=1), -1] = False  # duplicates: the own index may lie beyond k + 1
            kth = idx[keep].reshape(e - s, k)[:, -1]
            r2[s:e] = np.sum((x[s:e] - x[kth]) ** 2, axis=1)
        reach = math.sqrt(float(r2.max()))
    else:
        probe = x[:: max(1, n // 256)]
        per_point = float(np.mean(tree.query_ball_point(probe, eps, return_length=True)))
        check_memory(5.0 * n * per_point + 32.0 * SEARCH_BLOCK_POINTS * per_point,
                     what=f"the eps-graph on n = {n} points (about {per_point:.0f} neighbours each)",
                     alternative="use a smaller eps or method='streamed'", max_bytes=max_bytes)
        r2 = None
        reach = eps
    counts = np.zeros(n, dtype=np.int64)
    chunks = []
    for s in range(0, n, SEARCH_BLOCK_POINTS):
        e = min(s + SEARCH_BLOCK_POINTS, n)
        pairs = cKDTree(x[s:e]).sparse_distance_matrix(tree, reach * (1.0 + 1e-9), output_type="ndarray")
        i = pairs["i"] + s
        j = pairs["j"]
        del pairs
        d2 = np.sum((x[i] - x[j]) ** 2, axis=1)
        keep = (i != j) & (d2 <= (eps * eps if r2 is None else np.maximum(r2[i], r2[j])))
        i, j = i[keep], j[keep]
        order = np.lexsort((j, i))
        chunks.append(j[order].astype(np.int32))
        counts[s:e] = np.bincount(i - s, minlength=e - s)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int32)
    return PatternMatrix(indptr, indices, n), (None if r2 is None else np.sqrt(r2))


def _stream_knn_radii(xp, x, k):
    """Squared distance of each point to its k-th nearest other point, block by block (``O(block n)`` memory).

    Squared, so that the k-th neighbour itself passes ``d2 <= r2`` exactly (a square root and its square
    can lose the last bit).
    """
    n = int(x.shape[0])
    rows = max(1, STREAM_BLOCK_ELEMENTS // n)
    out = []
    for s in range(0, n, rows):
        e = min(s + rows, n)
        d2 = pairwise_sq_distance(x[s:e, ...], x)
        # the point itself is at distance 0: the (k+1)-th smallest is the k-th nearest other point
        if hasattr(xp, "partition"):
            kth = xp.partition(d2, k, axis=1)[:, k]
        else:
            kth = xp.sort(d2, axis=1)[:, k]
        out.append(kth)
    return xp.concat(out) if hasattr(xp, "concat") else xp.concatenate(out)


def _streamed_apply(xp, x, graph, *, eps, m, radii):
    """``V -> W V`` recomputing the weights block by block (the diagonal excluded for eps and k-NN)."""
    n = int(x.shape[0])
    rows = max(1, STREAM_BLOCK_ELEMENTS // n)
    eps2 = eps * eps

    def block(s, e):
        d2 = pairwise_sq_distance(x[s:e, ...], x)
        if graph == "gaussian":
            return _gaussian(xp, d2, eps, m)
        if graph == "eps":
            return _astype(xp, d2 <= eps2, x.dtype)
        return _astype(xp, d2 <= xp.maximum(radii[s:e][:, None], radii[None, :]), x.dtype)

    def apply(v):
        out = []
        for s in range(0, n, rows):
            e = min(s + rows, n)
            wv = block(s, e) @ v
            if graph != "gaussian":
                wv = wv - v[s:e, ...]  # the diagonal: d2_ii = 0 exactly, so every block holds W_ii = 1
            out.append(wv)
        return xp.concat(out, axis=0) if hasattr(xp, "concat") else xp.concatenate(out, axis=0)

    return apply
