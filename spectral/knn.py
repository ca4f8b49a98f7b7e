"""k-nearest-neighbour kernels as stored sparse scores, with a stated symmetrisation and bandwidth rule.

The directed kernel keeps, in row ``i``, the point itself and its ``k`` nearest other points
:math:`N_k(i)` (``k + 1`` entries: the self score included, as in every score matrix of the toolkit):

.. math::

    K^{\\to}_{ij} = \\kappa(x_i, x_j)\\, [\\, j = i \\text{ or } j \\in N_k(i) \\,], \\qquad
    \\kappa(x, y) = \\exp\\Bigl(-\\frac{|x - y|^2}{2\\varepsilon}\\Bigr) \\ \\text{(fixed)}
    \\quad\\text{or}\\quad
    \\exp\\Bigl(-\\frac{|x - y|^2}{\\sigma(x)\\,\\sigma(y)}\\Bigr) \\ \\text{(self-tuning)},

with :math:`\\sigma(x_i)` the distance from ``x_i`` to its ``k``-th nearest other point (Zelnik-Manor &
Perona 2004; they use the 7th). ``K->`` is not symmetric (``j`` may be among ``i``'s neighbours and
not the other way round); the diffusion map needs a symmetric kernel, made from ``K->`` and its
transpose ``K<- = (K->)^T`` (for a symmetric ``kappa``, ``K->_ij`` and ``K<-_ij`` are both
``kappa(x_i, x_j)`` where they are nonzero):

* ``"max"``: :math:`W = \\max(K^{\\to}, K^{\\leftarrow})` -- the union ("or") graph: ``kappa`` wherever
  ``i`` is among ``j``'s neighbours or ``j`` among ``i``'s. Every point keeps at least its ``k``
  neighbours. The default.
* ``"mean"``: :math:`W = (K^{\\to} + K^{\\leftarrow}) / 2` -- the same union graph, but an edge that
  only one of its two points chose weighs ``kappa / 2`` (scikit-learn's ``0.5 (A + A^T)`` of
  ``SpectralEmbedding(affinity="nearest_neighbors")``).
* ``"product"``: :math:`W = K^{\\to} \\odot K^{\\leftarrow}` (entrywise) -- the mutual ("and") graph
  with the kernel squared, ``kappa^2``: for the fixed Gaussian that is the Gaussian of bandwidth
  ``eps / 2`` (pass ``2 eps`` to keep the bandwidth); a point may keep fewer than ``k`` neighbours,
  and an outlier none but itself (a separate component).
* ``"none"``: :math:`W = K^{\\to}`, not symmetric (pydiffmap's kernel; ``diffusion_map`` refuses it).

Ties in the neighbour search (equal distances) are broken by SciPy's ``cKDTree``; the search and the
scores live on the host (a :class:`~spectral.operators.SparseScores` wraps a SciPy CSR array).

References
----------
Zelnik-Manor & Perona, "Self-tuning spectral clustering", NIPS 17 (2004) (the self-tuning
bandwidth); von Luxburg, "A tutorial on spectral clustering", Stat. Comput. 17 (2007), section 2.2
(the union and mutual kNN graphs); Coifman & Lafon, "Diffusion maps", ACHA 21 (2006).
"""

from __future__ import annotations

import numpy as np

from spectral.floor.arrays import as_float_array
from spectral.floor.backend import to_numpy
from spectral.floor.memory import check_memory
from spectral.operators import SparseScores
from spectral.floor.validation import InputError, check_int, check_option, check_real

__all__ = ["knn_distances", "knn_kernel"]

SYMMETRIZE = ("max", "mean", "product", "none")

#: Host bytes per stored directed entry at the peak of :func:`knn_kernel` (float64 values, int64
#: indices): the query's distances and indices (16), the row indices and values (16), the CSR of
#: ``K->`` (12) and of its transpose (12), the symmetrised result (up to twice the entries, 2 x 12)
#: and the temporaries of the scipy elementwise operation (about 24): 104, rounded up to 128. Measured
#: with tracemalloc (n = 20000 on S^2, k = 10 and 50): 106 ("max"), 122 ("mean"), 120 ("product").
#: Rows against keys with the self-tuning bandwidth add the keys' own search, 16 bytes per key entry.
KNN_BYTES_PER_ENTRY = 128


def _points(x, name):
    _, xa = as_float_array(x, name, ndim=2)
    return np.ascontiguousarray(to_numpy(xa), dtype=np.float64)


def knn_distances(x, *, k, y=None):
    """Distances to (and indices of) the ``k + 1`` nearest keys of each query, nearest first.

    Parameters
    ----------
    x : array of shape (n, D)
        Query points (crosses the host boundary: the search is SciPy's ``cKDTree``).
    k : int
        Neighbours besides the point itself: ``1 <= k <= m - 1`` (``m`` keys).
    y : array of shape (m, D), optional
        Key points; default ``x`` (then column 0 is the point itself, at distance 0).

    Returns
    -------
    (distances, indices) : numpy arrays of shape (n, k + 1)
        Sorted by distance. ``distances`` can be given to :func:`spectral.max_slope_bandwidth` or
        :func:`spectral.suggest_scale` (the kernel sum over the kNN pairs, self pairs included).

    Examples
    --------
    >>> import numpy as np
    >>> d, i = knn_distances(np.arange(5.0).reshape(-1, 1), k=2)
    >>> d[2].tolist(), sorted(i[2].tolist())
    ([0.0, 1.0, 1.0], [1, 2, 3])
    """
    xh = _points(x, "x")
    yh = xh if y is None else _points(y, "y")
    if yh.shape[1] != xh.shape[1]:
        raise InputError(f"y must have shape (m, {xh.shape[1]}) like x, got {yh.shape}")
    m = yh.shape[0]
    if m < 2:
        raise InputError(f"the keys must be at least 2 points for a neighbour search, got {m}")
    k = check_int("k", k, low=1, high=m - 1)
    from scipy.spatial import cKDTree

    dist, idx = cKDTree(yh).query(xh, k=k + 1)
    return np.asarray(dist, dtype=np.float64).reshape(-1, k + 1), np.asarray(idx, dtype=np.int64).reshape(-1, k + 1)


def knn_kernel(x, *, k, eps, symmetrize=None, y=None, max_bytes=None) -> SparseScores:
    """Gaussian kernel on the k-nearest-neighbour graph, symmetrised as stated, as sparse scores.

    Parameters
    ----------
    x : array of shape (n, D)
        Points (Euclidean). Host only: the points cross to NumPy, the search is SciPy's ``cKDTree``
        and the result a SciPy CSR array.
    k : int
        Neighbours of each point besides itself, ``1 <= k <= m - 1`` (``m`` keys); each directed row
        stores ``k + 1`` entries (pydiffmap's ``k`` counts the point itself: its ``k`` is ours plus 1).
    eps : float > 0 or "self-tuning"
        A number: the fixed heat kernel ``exp(-d^2 / (2 eps))`` (the toolkit's convention; the
        generator scaling of :func:`spectral.diffusion_map` holds for it). ``"self-tuning"``:
        ``exp(-d_ij^2 / (sigma_i sigma_j))``, ``sigma_i`` the distance to the ``k``-th nearest other
        point (Zelnik-Manor & Perona 2004).
    symmetrize : {"max", "mean", "product", "none"}, optional
        How the directed kernel and its transpose are combined (module docstring: what each
        means). Default ``"max"``. Only without ``y``: rows against other keys are directed.
    y : array of shape (m, D), optional
        Keys: then row ``i`` holds the kernel between query ``x_i`` and its ``k + 1`` nearest keys
        (directed; for a query that is itself a key this is that key's directed training row, self
        included), the out-of-sample rows of :meth:`spectral.DiffusionMap.transform`. With
        ``"self-tuning"``, ``sigma`` of a query is its distance to the ``(k + 1)``-th nearest key and
        ``sigma`` of a key its distance to its ``k``-th nearest other key.
    max_bytes : float, optional
        Limit for the estimated peak (``KNN_BYTES_PER_ENTRY`` bytes per directed entry, measured
        106-122); default the host memory available now.

    Returns
    -------
    SparseScores
        ``(n, n)`` (``symmetric`` unless ``"none"``) or ``(n, m)`` with ``y``; entries below the
        smallest normal number are stored as 0.

    Raises
    ------
    spectral.floor.validation.InputError
        Bad ``k`` (range stated), ``eps``, ``symmetrize``, points that are not finite 2-D arrays,
        ``symmetrize`` given with ``y``, a zero self-tuning bandwidth (more than ``k`` copies of a
        point).
    spectral.floor.memory.DenseMemoryError
        The estimated peak exceeds ``max_bytes`` (or the memory available).

    Notes
    -----
    With the fixed bandwidth and ``"max"``, the scores are the heat kernel restricted to the union
    kNN graph: where that graph holds every pair within ``r sqrt(eps)`` the result equals
    :func:`spectral.heat_kernel_sparse` with ``cutoff = r`` plus some pairs beyond it.  O(n k log n)
    for the search, O(n k) memory.

    References
    ----------
    Zelnik-Manor & Perona (2004); von Luxburg (2007), section 2.2; Coifman & Lafon (2006).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.0], [1.0], [3.0]])
    >>> W = knn_kernel(x, k=1, eps=0.5, symmetrize="max").to_dense()
    >>> np.round(W, 4).tolist()        # 2 -> 1 is a one-way edge (1 chose 0), kept by "max"
    [[1.0, 0.3679, 0.0], [0.3679, 1.0, 0.0183], [0.0, 0.0183, 1.0]]
    >>> np.round(knn_kernel(x, k=1, eps=0.5, symmetrize="product").to_dense(), 4).tolist()
    [[1.0, 0.1353, 0.0], [0.1353, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    import scipy.sparse as sp

    if y is not None and symmetrize is not None:
        raise InputError("symmetrize applies to the kernel of x with itself (y omitted); rows of x against "
                         "other keys y are directed")
    symmetrize = "max" if symmetrize is None else check_option("symmetrize", symmetrize, SYMMETRIZE)
    self_tuning = isinstance(eps, str)
    if self_tuning:
        if eps != "self-tuning":
            raise InputError(f"eps must be a number > 0 or 'self-tuning', got {eps!r}")
    else:
        eps = check_real("eps", eps, low=0.0, low_open=True)
    xh = _points(x, "x")
    m = xh.shape[0] if y is None else _points(y, "y").shape[0]
    if m >= 2:
        k = check_int("k", k, low=1, high=m - 1)
    if max_bytes is not None:
        max_bytes = check_real("max_bytes", max_bytes, low=0.0, low_open=True)
    n = xh.shape[0]
    keys_search = 16 * m * (int(k) + 1) if (y is not None and self_tuning) else 0
    check_memory(KNN_BYTES_PER_ENTRY * n * (int(k) + 1) + keys_search, what=f"the kNN kernel of {n} points with "
                 f"k = {k}", alternative="use a smaller k or fewer points", max_bytes=max_bytes)
    dist, idx = knn_distances(xh, k=k, y=y)
    if self_tuning:
        if y is None:
            sig_q = sig_k = dist[:, k]
        else:
            sig_q = dist[:, k]
            sig_k = knn_distances(y, k=k)[0][:, k]
        if float(np.min(sig_q)) <= 0 or float(np.min(sig_k)) <= 0:
            raise InputError(f"eps='self-tuning' needs a positive distance to the k-th neighbour (k = {k}); "
                             "some point has more than k copies: use a larger k or a fixed eps")
        expo = dist * dist / (sig_q[:, None] * sig_k[idx])
    else:
        expo = dist * dist / (2.0 * eps)
    vals = np.exp(-expo)
    vals[vals < np.finfo(np.float64).smallest_normal] = 0.0
    rows = np.repeat(np.arange(n, dtype=np.int64), k + 1)
    K = sp.csr_array((vals.ravel(), (rows, idx.ravel())), shape=(n, m))
    if y is not None or symmetrize == "none":
        return SparseScores(K, symmetric=False)
    Kt = sp.csr_array(K.T)
    if symmetrize == "max":
        W = K.maximum(Kt)
    elif symmetrize == "mean":
        W = (K + Kt) * 0.5
    else:
        W = K.multiply(Kt)
    W = sp.csr_array(W)
    W.eliminate_zeros()
    return SparseScores(W, symmetric=True)
