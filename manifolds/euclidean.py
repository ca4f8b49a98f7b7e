"""Euclidean space R^dim (the ambient space of the Gaussian-mixture checks)."""

from __future__ import annotations

import math

import numpy as np

from spectral.floor.backend import array_namespace
from spectral.floor.distance import pairwise_sq_distance
from spectral.floor.validation import InputError, check_int, check_real

from .base import Manifold

__all__ = ["Euclidean"]

#: Peak ``(n, m)`` arrays of :meth:`Euclidean.distance` and :meth:`Sphere.chordal_distance`, plus up to
#: three blocks of squared coordinate differences (``BLOCK_ELEMENTS`` pairs each). Measured with
#: tracemalloc at n x m = 1000 x 1500 and 3000 x 2000 (float64, d = 3 and 16): NumPy takes the square
#: root in place, 1.00 x (n m 8) plus 4.2-4.7 MiB, one block (2.00 x before); array_api_strict holds
#: the squared distances and their root: 2.00 x.
EUCLIDEAN_DISTANCE_COPIES = {"numpy": 1, "other": 2}


def sqrt_in_place(d2):
    """``sqrt(d2)``, written over ``d2`` on NumPy (bitwise the same values, no second ``(n, m)`` array)."""
    if isinstance(d2, np.ndarray):
        return np.sqrt(d2, out=d2)
    return array_namespace(d2).sqrt(d2)


class Euclidean(Manifold):
    """R^dim with the Euclidean metric (``dim >= 1``).

    There is no uniform probability law, no finite grid and no discrete
    Laplacian spectrum: ``sample`` needs a density, and ``grid`` and
    ``laplacian_eigenvalues`` raise :class:`~spectral.floor.validation.InputError`.  ``volume`` is ``inf``.
    """

    _family = "euclidean"

    def __init__(self, dim: int):
        self._dim = check_int("dim", dim, low=1)

    def __repr__(self):
        return f"Euclidean({self._dim})"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def ambient_dim(self) -> int:
        return self._dim

    @property
    def volume(self) -> float:
        return math.inf

    def check_points(self, x, *, atol: float = 1e-10):
        """Return ``x`` if it has shape ``(n, dim)`` and finite entries, else raise an InputError.

        ``atol`` is accepted for interface compatibility (every point of R^dim is on it).
        """
        check_real("atol", atol, low=0.0, low_open=True)
        xp, x = self._points(x)
        if x.shape[0] and not bool(xp.all(xp.isfinite(x))):
            raise InputError("x must contain only finite values")
        return x

    def project_tangent(self, x, v):
        """The tangent space is R^dim: returns ``v`` (shape checked)."""
        self._points(x)
        _, v = self._points(v, "v")
        return v

    def _sample_uniform(self, n, rng):
        raise InputError(
            "density is required on Euclidean space (there is no uniform probability law on R^d); "
            "pass density=GaussianMixture(...)"
        )

    def grid(self, n: int) -> np.ndarray:
        """Always raises an InputError: R^dim has no finite grid; use ``sample(n, density=...)``."""
        check_int("n", n, low=1)
        raise InputError(
            f"grid is not defined on {self!r} (no finite grid covers R^d); "
            "use sample(n, density=GaussianMixture(...), rng=...)"
        )

    def tile_distance(self, method: str):
        """Fusable form of a distance method, for :class:`spectral.KernelOperator` (``None``: not fusable).

        ``"distance"``: ``"chordal"`` (the Euclidean ``|x - y|``).
        """
        return {"distance": "chordal"}.get(method)

    def distance(self, x, y=None, *, max_bytes=None):
        """Euclidean distances ``|x_i - y_j|``, an ``(n, m)`` array (``y = x`` if None).

        Squared coordinate differences are summed one coordinate at a time
        (no ``|x|^2 + |y|^2 - 2 x.y`` cancellation, no ``(n, m, d)`` intermediate); the square
        root is taken in place on NumPy.

        Parameters
        ----------
        x : array of shape (n, dim)
        y : array of shape (m, dim), optional
            Defaults to ``x``.
        max_bytes : int or float, optional
            Limit on the memory the distances may take (result and temporaries, in bytes); default
            the memory available now.

        Raises
        ------
        spectral.floor.memory.DenseMemoryError
            Before allocating, if the estimated peak (:data:`EUCLIDEAN_DISTANCE_COPIES`) exceeds the limit.
        """
        xp, x = self._points(x)
        if y is None:
            y = x
        else:
            _, y = self._points(y, "y")
            xp = array_namespace(x, y)
        self._check_distance_memory(x, y, copies=EUCLIDEAN_DISTANCE_COPIES["numpy" if xp is np else "other"],
                                    blocks=3, max_bytes=max_bytes, what=f"distances on {self!r}")
        return sqrt_in_place(pairwise_sq_distance(x, y))

    def laplacian_eigenvalues(self, count: int) -> np.ndarray:
        """Always raises an InputError: the Laplacian on R^d has continuous spectrum [0, inf)."""
        check_int("count", count, low=1)
        raise InputError(
            f"laplacian_eigenvalues is not defined on {self!r}: the Laplacian on R^d has purely "
            "continuous spectrum [0, inf), no eigenvalues; use Circle() or Sphere(dim)"
        )
