"""Heat-kernel scores ``exp(-d^2 / (2 eps))``: dense, sparse within a cutoff, and the time step.

DRIFT convention: ``W_ij = exp(-|x_i - x_j|^2 / (2 eps))`` with the ambient distance and the
diagonal kept; ``(1/eps)(D^-1 W - I) f -> (1/2)(Delta f + 2 <grad log p, grad f>)``, so one attention
step is an Euler step of length ``eps / 2`` (:func:`heat_time`). The sparse builder keeps the pairs
within ``cutoff sqrt(eps)`` (SciPy ``cKDTree`` on the host) and returns a
:class:`~spectral.operators.SparseScores`; :mod:`spectral.heat_sparse` bounds what the cutoff drops.

Underflow is flushed to exact zero (subnormal scores slow eigensolvers down 100x).

References
----------
"Attention as drift-diffusion" (DRIFT), Theorem 3 and Example 1.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.floor.arrays import as_distances, as_float_array, flush_subnormal, numpy_dtype
from spectral.floor.backend import to_numpy
from spectral.operators import SparseScores
from spectral.floor.pairwise_memory import check_pairwise_memory
from spectral.profiles import TileProfile, declares_profile
from spectral.floor.validation import InputError, check_real

__all__ = ["heat_kernel", "heat_kernel_sparse", "heat_tile_profile", "heat_time"]


#: Peak bytes per entry of :func:`heat_kernel` beyond its input: ``copies`` arrays of the itemsize plus
#: ``mask_bytes`` of boolean masks (flushing subnormal scores). Measured with tracemalloc at
#: n x m = 1000 x 1500, 3000 x 2000 and 600 x 700 (float64, most scores subnormal): NumPy 9.0 bytes per
#: entry = the scores, computed in place, and one mask; other namespaces (array_api_strict) build
#: ``d * d``, its negation, the quotient, the exponential and the flushed copy with ``where``: 25.4.
HEAT_KERNEL_PEAK = {"numpy": {"copies": 1, "mask_bytes": 1}, "other": {"copies": 3, "mask_bytes": 2}}


def heat_tile_profile(*, eps, max_bytes=None) -> TileProfile:
    """Tile profile of ``functools.partial(heat_kernel, eps=...)``: ``exp(-d^2 / (2 eps))`` (``max_bytes`` is the
    dense kernel's memory limit; a fused tile holds no dense matrix)."""
    return TileProfile.heat(eps, name=f"heat_kernel(eps={check_real('eps', eps, low=0.0, low_open=True):g})")


@declares_profile(heat_tile_profile)
def heat_kernel(dist, *, eps, max_bytes=None):
    r"""Heat-kernel scores :math:`W_{ij} = \exp(-d_{ij}^2 / (2\varepsilon))` (DRIFT convention).

    Parameters
    ----------
    dist : array of shape (n, m)
        Distances, finite and ``>= 0`` (ambient distance in the DRIFT setting).
    eps : float
        Bandwidth ``> 0`` (variance of the Gaussian).
    max_bytes : int or float, optional
        Limit on the memory the scores may take (the result plus its temporaries, in bytes);
        default the memory available now.

    Returns
    -------
    array of shape (n, m)
        Same namespace and dtype as ``dist``; underflow flushed to exact 0.

    Raises
    ------
    spectral.floor.memory.DenseMemoryError
        Before allocating, if the estimated peak exceeds the limit.

    Notes
    -----
    ``(1/eps)(D^-1 W - I) f -> (1/2)(Delta f + 2 <grad log p, grad f>)``, so one
    attention step is an Euler step of length ``eps/2`` (:func:`heat_time`) for
    ``dH/dt = Delta H + 2 <grad log p, grad H>`` (DRIFT Theorem 3).  DRIFT's own
    ``S_eps`` convention ``exp(-f / (2 eps))`` with ``f = -x.y`` on the unit
    sphere corresponds to ``exp(-|x-y|^2 / (4 eps))`` (ledger DRIFT-1).

    Examples
    --------
    >>> import numpy as np
    >>> from spectral import heat_kernel
    >>> heat_kernel(np.array([[0.0, 1.0]]), eps=0.5)
    array([[1.        , 0.36787944]])
    """
    eps = check_real("eps", eps, low=0.0, low_open=True)
    xp, d = as_distances(dist)
    n, m = (int(d.shape[0]), int(d.shape[1])) if d.ndim == 2 else (1, int(d.size))
    itemsize = numpy_dtype(d.dtype).itemsize
    peak = HEAT_KERNEL_PEAK["numpy" if xp is np else "other"]
    check_pairwise_memory(n, m, bytes_per_pair=peak["copies"] * itemsize + peak["mask_bytes"],
                          max_bytes=max_bytes, like=d, what="dense heat-kernel scores",
                          alternative="use heat_kernel_sparse(x, eps=..., cutoff=...) for the scores within a "
                          "cutoff, or KernelOperator(x, kernel=..., distance=...) for products without storing")
    if xp is np:
        w = np.multiply(d, d)
        w *= -1.0 / (2.0 * eps)
        np.exp(w, out=w)
    else:
        w = xp.exp(-(d * d) / (2.0 * eps))
    return flush_subnormal(w)


def heat_kernel_sparse(x, *, eps, cutoff=6.0, y=None) -> SparseScores:
    r"""Heat-kernel scores :math:`\exp(-|x_i - y_j|^2 / (2\varepsilon))` kept where ``|x_i - y_j| <= cutoff sqrt(eps)``.

    Parameters
    ----------
    x : array of shape (n, d)
        Query points (Euclidean).  Crosses the host boundary
        (:func:`spectral.floor.backend.to_numpy`): the neighbour search is SciPy's ``cKDTree``.
    eps : float
        Bandwidth ``> 0`` (as :func:`heat_kernel`).
    cutoff : float
        Radius in units of ``sqrt(eps)`` (``> 0``).  Dropped entries are below
        ``exp(-cutoff^2 / 2)`` (1.5e-8 for the default 6).
    y : array of shape (m, d), optional
        Key points; default ``x`` (then the result is symmetric, diagonal included).

    Returns
    -------
    SparseScores
        CSR scores with every pair within the cutoff stored, zero distances included.
    """
    eps = check_real("eps", eps, low=0.0, low_open=True)
    cutoff = check_real("cutoff", cutoff, low=0.0, low_open=True)  # radius in units of sqrt(eps)
    import scipy.sparse as sp
    from scipy.spatial import cKDTree

    _, xa = as_float_array(x, "x", ndim=2)
    xh = np.asarray(to_numpy(xa), dtype=np.float64)
    if y is None:
        yh = xh
    else:
        _, ya = as_float_array(y, "y", ndim=2)
        yh = np.asarray(to_numpy(ya), dtype=np.float64)
        if yh.shape[1] != xh.shape[1]:
            raise InputError(f"y must have shape (m, {xh.shape[1]}) like x, got {yh.shape}")
    tx = cKDTree(xh)
    ty = tx if y is None else cKDTree(yh)
    # coo output keeps explicit zero distances (the diagonal, duplicate points)
    pairs = tx.sparse_distance_matrix(ty, cutoff * math.sqrt(eps), output_type="coo_matrix")
    w = pairs.data * pairs.data
    w *= -1.0 / (2.0 * eps)
    np.exp(w, out=w)
    w[w < np.finfo(np.float64).smallest_normal] = 0.0
    mat = sp.csr_array((w, (pairs.row, pairs.col)), shape=(xh.shape[0], yh.shape[0]))
    return SparseScores(mat, symmetric=y is None)


def heat_time(eps) -> float:
    """Generator time of one heat-kernel attention step: ``eps / 2`` (DRIFT Theorem 3)."""
    return check_real("eps", eps, low=0.0, low_open=True) / 2.0
