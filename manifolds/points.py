"""Point arrays: the input check every manifold uses; the toolkit's one squared-distance routine.

Points are ``(n, ambient_dim)`` arrays of any array-API namespace (NumPy, CuPy, ``array_api_strict``).
:func:`as_points` checks their shape and dtype. The squared distances (:func:`pairwise_sq_distance`,
accurate for nearby points) and the row blocks of a pairwise computation (``row_blocks``,
``BLOCK_ELEMENTS``) live on the floor of ``spectral``, in :mod:`spectral.floor.distance`, which both
``manifolds`` and ``spectral`` may import; they are re-exported here under their old names.
"""

from __future__ import annotations

import numpy as np

from spectral.floor.backend import array_namespace
# the old names of spectral.floor.distance, kept importable from here
from spectral.floor.distance import BLOCK_ELEMENTS, SQ_DISTANCE_BLOCKS, pairwise_sq_distance, row_blocks  # noqa: F401
from spectral.floor.memory import check_memory, memory_limit
from spectral.floor.validation import InputError

__all__ = ["pairwise_sq_distance"]

#: Point requests up to this many estimated bytes are made without reading the memory available (64 MiB).
SMALL_POINT_BYTES = 1 << 26


def as_points(x, ambient_dim: int, name: str = "x"):
    """Return ``(xp, x)`` with ``x`` a real floating array of shape ``(n, ambient_dim)``.

    Lists and other non-arrays become NumPy float64 arrays; integer arrays are cast to float64 in
    their own namespace; floating arrays keep their dtype. Only the shape and dtype are checked (no
    device synchronisation); a manifold's ``check_points`` tests that points lie on it.

    Raises
    ------
    spectral.floor.validation.InputError
        Wrong shape or a non-real dtype (the message names ``name``).

    Examples
    --------
    >>> xp, x = as_points([[1, 0], [0, 1]], 2)
    >>> x.dtype, x.shape
    (dtype('float64'), (2, 2))
    """
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        x = np.asarray(x, dtype=np.float64)
    xp = array_namespace(x)
    if len(x.shape) != 2 or x.shape[1] != ambient_dim:
        raise InputError(
            f"{name} must be an array of shape (n, {ambient_dim}) (points in R^{ambient_dim}), "
            f"got shape {tuple(x.shape)}"
        )
    if not xp.isdtype(x.dtype, "real floating"):
        if xp.isdtype(x.dtype, "integral"):
            x = xp.astype(x, xp.float64)
        else:  # complex, or bool (True is not 1.0)
            raise InputError(f"{name} must be a real array (float or integer dtype), got dtype {x.dtype}")
    return xp, x


def check_points_memory(n: int, bytes_per_point: int, *, what: str, max_bytes=None) -> int:
    """Refuse to make ``n`` points when their estimated peak (``n * bytes_per_point``) would not fit.

    The guard of every point maker (grids, samplers, quantile grids): ``Circle().grid(10**12)`` is one
    :class:`~spectral.floor.memory.DenseMemoryError` with the estimate and the largest ``n`` that fits now,
    before NumPy is asked for terabytes. ``bytes_per_point`` counts the result and the temporaries held
    at once (the caller's estimate); ``max_bytes`` defaults to the memory available now.
    """
    per_point = max(int(bytes_per_point), 1)
    needed = int(n) * per_point
    if max_bytes is None and needed <= SMALL_POINT_BYTES:  # small requests skip reading the memory available
        return needed
    fits = memory_limit(max_bytes=max_bytes) // per_point
    return check_memory(needed, what=f"{what} (n = {n} points, ~{per_point} bytes each)", max_bytes=max_bytes,
                        alternative=f"lower n (at most {fits} fits now)")
