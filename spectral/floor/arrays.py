"""Array inputs of the score builders: real floating arrays, distances, arrays made like another.

Every function takes its namespace from its arguments (:func:`spectral.floor.backend.array_namespace`), so
CuPy inputs stay on the GPU. Bad input raises :class:`spectral.floor.validation.InputError` naming the
parameter.
"""

from __future__ import annotations

import numpy as np

from spectral.floor.backend import array_namespace, dtype_name, from_numpy
from spectral.floor.validation import InputError

__all__ = []  # the input checks of spectral's builders, used inside spectral only


def _is_real_float(xp, dtype) -> bool:
    try:
        return bool(xp.isdtype(dtype, "real floating"))
    except AttributeError:  # namespaces without isdtype (older CuPy): dtypes are numpy dtypes
        return np.dtype(dtype).kind == "f"


def _is_integral(xp, dtype) -> bool:
    try:
        return bool(xp.isdtype(dtype, ("integral", "bool")))
    except AttributeError:
        return np.dtype(dtype).kind in "iub"


def _is_bool(xp, dtype) -> bool:
    try:
        return bool(xp.isdtype(dtype, "bool"))
    except AttributeError:
        return np.dtype(dtype).kind == "b"


def numpy_dtype(dtype) -> np.dtype:
    """The NumPy dtype of the same name as a NumPy, CuPy or array-API dtype (for byte counts)."""
    return np.dtype(dtype_name(dtype))


def as_float_array(x, name: str, *, ndim: int | None = None, finite: bool = True):
    """``(xp, array)`` with a real floating dtype (integers promoted to float64) and finite entries.

    Non-arrays (lists) become NumPy arrays. Raises :class:`~spectral.floor.validation.InputError` for a
    boolean, complex or other non-real dtype (``True`` is not 1), a wrong number of dimensions, NaN or
    inf (``finite=False``: no finiteness pass, which on a GPU is a host synchronisation; for callers
    whose arrays are finite by construction).
    """
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        x = np.asarray(x)
    xp = array_namespace(x)
    if not _is_real_float(xp, x.dtype):
        if _is_integral(xp, x.dtype) and not _is_bool(xp, x.dtype):
            x = xp.astype(x, xp.float64)
        else:
            raise InputError(f"{name} must be a real array (float or integer dtype), got dtype {x.dtype}")
    if ndim is not None and x.ndim != ndim:
        raise InputError(f"{name} must be a {ndim}-d array, got shape {tuple(x.shape)}")
    if finite and not bool(xp.all(xp.isfinite(x))):
        raise InputError(f"{name} must contain only finite values (no NaN or inf)")
    return xp, x


def as_distances(dist, name: str = "dist"):
    """``(xp, array)`` of finite, nonnegative distances (as :func:`as_float_array`, plus ``>= 0``)."""
    xp, d = as_float_array(dist, name)
    if d.size and bool(xp.any(d < 0)):
        raise InputError(f"{name} must be >= 0 (distances); got a minimum of {float(xp.min(d))!r}")
    return xp, d


def like_array(a, name: str, *, like, keep_dtype: bool = False, finite: bool = True):
    """``a`` (array or array-like) as a finite float array in the namespace and dtype of ``like``.

    A NumPy array is moved to the namespace (and device) of ``like``; an array of another library
    is refused. ``keep_dtype=True`` keeps ``a``'s own floating dtype (callers that accumulate in a
    wider type than ``like``'s decide the cast themselves); ``finite=False`` skips the finiteness
    pass (:func:`as_float_array`).
    """
    xp = array_namespace(like)
    if not hasattr(a, "shape"):
        a = np.asarray(a, dtype=float)
    if isinstance(a, np.ndarray) and xp is not np:
        a = from_numpy(a, like=like)
    xa, a = as_float_array(a, name, finite=finite)
    if xa is not xp and getattr(xa, "__name__", None) != getattr(xp, "__name__", None):
        raise InputError(f"{name} must be an array of the same library as the points")
    if not keep_dtype and a.dtype != like.dtype:
        a = xp.astype(a, like.dtype)
    return a


def matrix_transpose(a):
    """Matrix transpose (``xp.matrix_transpose`` where the namespace has it, else ``.T``)."""
    xp = array_namespace(a)
    f = getattr(xp, "matrix_transpose", None)
    return f(a) if f is not None else a.T


def flush_subnormal(out):
    """Set entries below the smallest normal number to exact 0 (in place on NumPy; pays only when some are).

    Subnormal scores made a 500 x 500 ``eigvalsh`` 100x slower (measured); kernels flush them.
    """
    if out.size == 0:
        return out
    xp = array_namespace(out)
    tiny = float(xp.finfo(out.dtype).smallest_normal)
    if float(xp.min(out)) >= tiny:  # one read pass, no allocation
        return out
    if xp is np:
        out[out < tiny] = 0.0
        return out
    return xp.where(out < tiny, xp.zeros_like(out), out)
