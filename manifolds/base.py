"""The manifold protocol shared by :class:`Circle`, :class:`Sphere` and :class:`Euclidean`.

Points are ``(n, ambient_dim)`` arrays of the ambient Euclidean space.  Two
manifolds compare equal when they are the same space (``Circle() == Sphere(1)``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from spectral.floor.backend import dtype_name
from spectral.floor.distance import BLOCK_ELEMENTS
from spectral.floor.pairwise_memory import check_pairwise_memory
from spectral.floor.validation import InputError, as_generator, check_int

from .points import as_points, check_points_memory

__all__ = ["Manifold"]


class Manifold(ABC):
    """A Riemannian manifold embedded in R^ambient_dim with exact reference quantities.

    Subclasses provide ``dim``, ``ambient_dim``, ``volume``, ``sample``,
    ``grid``, ``distance``, ``laplacian_eigenvalues``, ``check_points`` and
    ``project_tangent``.
    """

    _family: str = ""

    @property
    @abstractmethod
    def dim(self) -> int:
        """Intrinsic dimension."""

    @property
    @abstractmethod
    def ambient_dim(self) -> int:
        """Dimension of the ambient Euclidean space holding the points."""

    @property
    @abstractmethod
    def volume(self) -> float:
        """Riemannian volume (``inf`` for R^d)."""

    @abstractmethod
    def distance(self, x, y=None, *, max_bytes=None):
        """``(n, m)`` geodesic distances between the rows of ``x`` and ``y`` (``y = x`` if None).

        The estimated peak memory is compared with ``max_bytes`` (default: the memory available now)
        before anything ``(n, m)`` is allocated (:meth:`_check_distance_memory`).
        """

    @abstractmethod
    def grid(self, n: int) -> np.ndarray:
        """Deterministic ``(n, ambient_dim)`` point set (:class:`~spectral.floor.validation.InputError` if none)."""

    @abstractmethod
    def laplacian_eigenvalues(self, count: int) -> np.ndarray:
        """First ``count`` eigenvalues of ``-Delta`` with multiplicity, ascending."""

    @abstractmethod
    def check_points(self, x, *, atol: float = 1e-10):
        """Return ``x`` if its rows lie on the manifold within ``atol``, else raise an InputError."""

    @abstractmethod
    def project_tangent(self, x, v):
        """Orthogonal projection of ambient vectors ``v`` (rows) onto the tangent spaces at ``x``."""

    @abstractmethod
    def _sample_uniform(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Uniform i.i.d. points (host NumPy)."""

    def sample(self, n: int, *, density=None, rng=None) -> np.ndarray:
        """Draw ``n`` i.i.d. points (host NumPy float64, shape ``(n, ambient_dim)``).

        Parameters
        ----------
        n : int
            Number of points (>= 1).
        density : Density, optional
            Law to sample; its ``manifold`` must equal this one.  Default: the
            uniform law (Riemannian volume normalised), where it exists.
        rng : numpy.random.Generator or int, optional
            Random source (SPEC 7); points are drawn on the host so a seed gives
            the same points on every backend.
        """
        n = check_int("n", n, low=1)
        if density is None:  # the result, the Gaussians it is made from and their norms
            check_points_memory(n, 8 * (3 * self.ambient_dim + 4), what=f"uniform draws on {self!r}")
            return self._sample_uniform(n, as_generator(rng))
        if getattr(density, "manifold", None) != self:
            raise InputError(
                f"density must be defined on {self!r}, got a density on {getattr(density, 'manifold', None)!r}"
            )
        return density.sample(n, rng=rng)

    def _points(self, x, name: str = "x"):
        return as_points(x, self.ambient_dim, name)

    def _check_distance_memory(self, x, y, *, copies: int, blocks: int, max_bytes, what: str) -> int:
        """Refuse an ``(n, m)`` distance request whose estimated peak exceeds ``max_bytes``, before allocating.

        The estimate is ``copies`` arrays of shape ``(n, m)`` (the result and the ``(n, m)``
        temporaries held at once) plus ``blocks`` blocks of a blocked pairwise loop
        (:data:`spectral.floor.distance.BLOCK_ELEMENTS` pairs, or one row of ``m`` if longer).
        """
        n, m = int(x.shape[0]), int(y.shape[0])
        itemsize = np.dtype(dtype_name(x.dtype)).itemsize
        return check_pairwise_memory(
            n, m, bytes_per_pair=copies * itemsize, extra_bytes=blocks * min(n * m, max(BLOCK_ELEMENTS, m)) * itemsize,
            max_bytes=max_bytes, like=x, what=what,
            alternative=(f"compute it in row blocks, {self!r}.distance(x[i:j], y), or multiply without storing "
                         f"with KernelOperator(x, kernel=..., distance={self!r}.distance) from spectral"))

    def __eq__(self, other):
        if not isinstance(other, Manifold):
            return NotImplemented
        return (self._family, self.dim) == (other._family, other.dim)

    def __hash__(self):
        return hash((self._family, self.dim))
