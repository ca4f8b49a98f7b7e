"""The unit circle S^1 in R^2, with the angle <-> point maps.

Geodesic distance is the wrapped angle difference, computed as
``atan2(|x ^ y|, x . y)`` with ``x ^ y = x_0 y_1 - x_1 y_0``: exact to a few ulps at
every angle (``arccos`` of the dot product returns 0 below about 1.5e-8).
"""

from __future__ import annotations

import math

from spectral.backend import array_namespace
from spectral.distance import row_blocks
from spectral.validation import InputError

from .sphere import SPHERE_DISTANCE_COPIES, Sphere

__all__ = ["Circle"]


class Circle(Sphere):
    """The unit circle S^1 = ``Sphere(1)``: ``dim = 1``, ``ambient_dim = 2``, ``volume = 2 pi``.

    ``grid(n)`` is equispaced with point 0 at angle 0 (the circulant eigen path
    relies on this order); ``laplacian_eigenvalues`` are 0, 1, 1, 4, 4, 9, 9, ...
    """

    def __init__(self):
        super().__init__(1)

    def __repr__(self):
        return "Circle()"

    @staticmethod
    def angles(x):
        """Angles of the points ``x`` (shape ``(n, 2)``) in ``[0, 2 pi)``, shape ``(n,)``."""
        xp, x = Circle()._points(x)
        t = xp.atan2(x[:, 1], x[:, 0])
        t = xp.where(t < 0, t + 2.0 * math.pi, t)
        # t + 2 pi can round up to exactly 2 pi for t in (-1e-16, 0): wrap it to 0.
        return xp.where(t >= 2.0 * math.pi, t - 2.0 * math.pi, t)

    @staticmethod
    def embed(theta):
        """Points ``(cos theta, sin theta)`` of shape ``(n, 2)`` for angles of shape ``(n,)``."""
        if not hasattr(theta, "shape"):
            import numpy as np

            theta = np.asarray(theta, dtype=np.float64)
        xp = array_namespace(theta)
        if len(theta.shape) != 1:
            raise InputError(f"theta must be a 1-D array of angles, got shape {tuple(theta.shape)}")
        if not xp.isdtype(theta.dtype, "real floating"):
            theta = xp.astype(theta, xp.float64)
        return xp.stack([xp.cos(theta), xp.sin(theta)], axis=1)

    def distance(self, x, y=None, *, max_bytes=None):
        """Geodesic distance: wrapped angle difference ``atan2(|x ^ y|, x . y)`` in ``[0, pi]``.

        Parameters
        ----------
        x : array of shape (n, 2)
        y : array of shape (m, 2), optional (defaults to ``x``)
        max_bytes : int or float, optional
            Limit on the memory the distances may take (result and temporaries, in bytes); default
            the memory available now.

        Returns
        -------
        array of shape (n, m) in the namespace of the inputs.  The formula is
        invariant under scaling of the rows, so points need not be normalised.

        Raises
        ------
        spectral.memory.DenseMemoryError
            Before allocating, if the estimated peak (:data:`manifolds.sphere.SPHERE_DISTANCE_COPIES`)
            exceeds the limit.
        """
        xp, x, y = self._pair(x, y)
        if y is None:
            y = x
        self._check_distance_memory(x, y, copies=SPHERE_DISTANCE_COPIES, blocks=6, max_bytes=max_bytes,
                                    what="geodesic distances on Circle()")

        def block(xb, yb):
            x0, x1 = xb[:, 0][:, None], xb[:, 1][:, None]
            y0, y1 = yb[:, 0][None, :], yb[:, 1][None, :]
            return xp.atan2(xp.abs(x0 * y1 - x1 * y0), x0 * y0 + x1 * y1)

        return row_blocks(x, y, block)
