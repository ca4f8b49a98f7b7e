"""The unit sphere S^dim in R^(dim+1).

Geodesic distance is computed as ``theta = 2 atan2(|x - y|, |x + y|)`` with the
two norms summed coordinate by coordinate: this is accurate to a few ulps at
every angle, whereas ``arccos(clip(x . y))`` loses about ``1e-8`` absolute near
0 (``x . y = 1 - theta^2/2`` rounds to 1 below ``theta ~ 1.5e-8``), which
matters at the small kernel scales of the FNA checks.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.floor.backend import array_namespace
from spectral.floor.distance import pairwise_sq_distance, row_blocks
from spectral.floor.validation import InputError, check_int, check_real

from . import spectra
from .base import Manifold
from .euclidean import EUCLIDEAN_DISTANCE_COPIES, sqrt_in_place
from .points import check_points_memory

__all__ = ["Sphere", "sphere_volume"]

GOLDEN_ANGLE = math.pi * (3.0 - math.sqrt(5.0))

#: Peak ``(n, m)`` arrays of :meth:`Sphere.distance` (and :meth:`Circle.distance`): the result, into which
#: the blocks of rows are written (:func:`spectral.floor.distance.row_blocks`), plus up to six blocks of
#: temporaries (``BLOCK_ELEMENTS`` pairs each). Measured with tracemalloc (float64, NumPy): the result
#: plus 1.96e6 / 2.64e6 floats on S^2 and 0.92e6 / 1.59e6 on S^1 at n x m = 1000 x 666 and 3000 x 2000
#: (six blocks are 3.1e6 floats); when the blocks were joined by a concatenation it was 2.00-2.23 x (n m 8).
SPHERE_DISTANCE_COPIES = 1


def sphere_volume(dim: int) -> float:
    """Surface measure of the unit S^dim: ``2 pi^((dim+1)/2) / Gamma((dim+1)/2)``."""
    dim = check_int("dim", dim, low=1)
    if dim == 1:
        return 2.0 * math.pi  # exact in floating point (the circle's length)
    if dim == 2:
        return 4.0 * math.pi
    h = (dim + 1) / 2.0
    if h < 170:
        return 2.0 * math.pi**h / math.gamma(h)
    from scipy.special import gammaln  # here: scipy.special costs ~100 ms at start-up, and only dim >= 339 needs it

    return float(math.exp(math.log(2.0) + h * math.log(math.pi) - gammaln(h)))


class Sphere(Manifold):
    """The unit sphere S^dim embedded in R^(dim+1) (``dim >= 1``).

    Parameters
    ----------
    dim : int
        Intrinsic dimension (>= 1). ``Sphere(1)`` is the circle and equals ``Circle()``.

    Notes
    -----
    Points are unit vectors, rows of ``(n, dim + 1)`` arrays.  Laplace-Beltrami
    eigenvalues are ``l (l + dim - 1)`` with the multiplicities of
    :func:`manifolds.spectra.sphere_multiplicity`.
    """

    _family = "sphere"

    def __init__(self, dim: int):
        self._dim = check_int("dim", dim, low=1)

    def __repr__(self):
        return f"Sphere({self._dim})"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def ambient_dim(self) -> int:
        return self._dim + 1

    @property
    def volume(self) -> float:
        """``2 pi^((dim+1)/2) / Gamma((dim+1)/2)`` (2 pi on S^1, 4 pi on S^2)."""
        return sphere_volume(self._dim)

    # ------------------------------------------------------------------ points
    def check_points(self, x, *, atol: float = 1e-10):
        """Return ``x`` if every row is finite with ``| |x_i| - 1 | <= atol``.

        Raises
        ------
        spectral.floor.validation.InputError
            Wrong shape, non-finite entries, or a row whose norm differs from 1
            by more than ``atol`` (default 1e-10; use about ``100 * eps`` of the
            dtype for float32 data).
        """
        atol = check_real("atol", atol, low=0.0, low_open=True)
        xp, x = self._points(x)
        if x.shape[0] == 0:
            return x
        if not bool(xp.all(xp.isfinite(x))):
            raise InputError("x must contain only finite values")
        dev = float(xp.max(xp.abs(_row_norms(x, xp) - 1.0)))
        if dev > atol:
            raise InputError(
                f"x must lie on the unit sphere S^{self._dim}: | |x_i| - 1 | <= atol = {atol:g} "
                f"is required, got a maximum deviation of {dev:.3g}"
            )
        return x

    def project_tangent(self, x, v):
        """``v - (x . v) x`` row by row (projection onto the tangent space at unit ``x``)."""
        xp, x = self._points(x)
        _, v = self._points(v, "v")
        return v - xp.sum(x * v, axis=1, keepdims=True) * x

    def _sample_uniform(self, n, rng):
        z = rng.standard_normal((n, self.ambient_dim))
        return z / np.linalg.norm(z, axis=1, keepdims=True)

    def grid(self, n: int) -> np.ndarray:
        """Deterministic point set of ``n`` points (host NumPy float64).

        S^1: equispaced, ``x_j = (cos(2 pi j / n), sin(2 pi j / n))``, ``j = 0..n-1``.
        S^2: Fibonacci lattice, ``z_j = 1 - (2 j + 1) / n``, longitude ``j`` times
        the golden angle ``pi (3 - sqrt 5)`` (Gonzalez 2010, *Measurement of
        areas on a sphere using Fibonacci and latitude-longitude lattices*).
        Other dimensions raise :class:`~spectral.floor.validation.InputError` (use ``sample``).
        """
        n = check_int("n", n, low=1)
        if self._dim in (1, 2):  # the result and up to 8 temporaries of n (angles, heights, cos, sin)
            check_points_memory(n, 8 * (self.ambient_dim + 8), what=f"the grid of {self!r}")
        if self._dim == 1:
            theta = 2.0 * np.pi * np.arange(n) / n
            return np.stack([np.cos(theta), np.sin(theta)], axis=1)
        if self._dim == 2:
            j = np.arange(n, dtype=np.float64)
            z = 1.0 - (2.0 * j + 1.0) / n
            r = np.sqrt((1.0 - z) * (1.0 + z))
            phi = np.mod(j * GOLDEN_ANGLE, 2.0 * np.pi)
            return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)
        raise InputError(
            f"grid is defined only for dim in (1, 2) (equispaced circle, Fibonacci lattice on S^2), "
            f"got dim={self._dim}; use sample(n, rng=...) for random points on S^{self._dim}"
        )

    # --------------------------------------------------------------- distances
    def _pair(self, x, y):
        xp, x = self._points(x)
        if y is None:
            return xp, x, None
        _, y = self._points(y, "y")
        xp = array_namespace(x, y)
        return xp, x, y

    def distance(self, x, y=None, *, max_bytes=None):
        """Geodesic distance ``theta = 2 atan2(|x - y|, |x + y|)`` in ``[0, pi]``.

        Parameters
        ----------
        x : array of shape (n, dim + 1)
        y : array of shape (m, dim + 1), optional
            Defaults to ``x``.
        max_bytes : int or float, optional
            Limit on the memory the distances may take (result and temporaries, in bytes); default
            the memory available now.

        Returns
        -------
        array of shape (n, m)
            In the namespace of the inputs.  Rows are normalised to unit length
            first (points are assumed to lie on the sphere; see ``check_points``).

        Raises
        ------
        spectral.floor.memory.DenseMemoryError
            Before allocating, if the estimated peak (:data:`SPHERE_DISTANCE_COPIES`) exceeds the limit.

        Notes
        -----
        For unit vectors ``|x - y| = 2 sin(theta/2)`` and ``|x + y| = 2 cos(theta/2)``;
        both norms are sums of squared coordinate differences, so the angle is
        accurate to a few ulps at every angle, including ``theta < 1e-8`` where
        ``arccos`` returns 0.
        """
        xp, x, y = self._pair(x, y)
        self._check_distance_memory(x, x if y is None else y, copies=SPHERE_DISTANCE_COPIES, blocks=6,
                                    max_bytes=max_bytes, what=f"geodesic distances on {self!r}")
        x = x / _row_norms(x, xp, keepdims=True)
        y = x if y is None else y / _row_norms(y, xp, keepdims=True)

        def block(xb, yb):
            minus = pairwise_sq_distance(xb, yb, sign=1.0)
            plus = pairwise_sq_distance(xb, yb, sign=-1.0)
            return 2.0 * xp.atan2(xp.sqrt(minus), xp.sqrt(plus))

        return row_blocks(x, y, block)

    def chordal_distance(self, x, y=None, *, max_bytes=None):
        """Ambient (chordal) distance ``|x - y| = 2 sin(theta / 2)``, an ``(n, m)`` array.

        Computed coordinate by coordinate (no cancellation), without normalising the rows; the square
        root is taken in place on NumPy. ``max_bytes`` limits the memory (default: the memory
        available now); a request over it raises :class:`~spectral.floor.memory.DenseMemoryError` before
        allocating (estimate :data:`manifolds.euclidean.EUCLIDEAN_DISTANCE_COPIES`).
        """
        xp, x, y = self._pair(x, y)
        y = x if y is None else y
        self._check_distance_memory(x, y, copies=EUCLIDEAN_DISTANCE_COPIES["numpy" if xp is np else "other"],
                                    blocks=3, max_bytes=max_bytes, what=f"chordal distances on {self!r}")
        return sqrt_in_place(pairwise_sq_distance(x, y))

    def tile_distance(self, method: str):
        """Fusable form of a distance method, for :class:`spectral.KernelOperator` (``None``: not fusable).

        ``"distance"``: ``"sphere"`` (``2 atan2(|x - y|, |x + y|)`` of the normalised rows);
        ``"chordal_distance"``: ``"chordal"`` (``|x - y|``).
        """
        return {"distance": "sphere", "chordal_distance": "chordal"}.get(method)

    def laplacian_eigenvalues(self, count: int) -> np.ndarray:
        """First ``count`` eigenvalues of ``-Delta`` on S^dim: ``l (l + dim - 1)`` with multiplicity."""
        return spectra.sphere_eigenvalues(self._dim, count)


def _row_norms(x, xp, *, keepdims: bool = False):
    """Euclidean norms of the rows, ``sqrt(sum(x * x))``: NumPy's ``vector_norm`` operations (the same bits),
    without ``linalg.vector_norm``, which bare CuPy lacks (CuPy 14 without array-api-compat)."""
    return xp.sqrt(xp.sum(x * x, axis=1, keepdims=keepdims))
