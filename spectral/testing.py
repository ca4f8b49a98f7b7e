"""Assertions for tests of array code: namespace, shape, dtype and device before values.

A comparison that converts both sides to NumPy first passes when a function silently returns NumPy
for CuPy input (the GPU was never used) or float64 for float32 input. :func:`assert_close` checks the
array library, the device, the shape and the dtype first, and only then compares the values on the
host, with a default relative tolerance of ``4 sqrt(eps(dtype))`` (about 6e-8 in float64 and 1.4e-3
in float32: round-off of exact algebra, so one test serves both precisions). This follows
``array_api_extra.testing`` and SciPy's ``xp_assert_close``.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.floor.backend import array_namespace, device_of, dtype_name, to_numpy

__all__ = ["assert_close"]


def default_rtol(dtype) -> float:
    """``4 sqrt(eps(dtype))`` for a floating (or complex) dtype, 0 for integers and booleans."""
    name = dtype_name(dtype)
    if name.startswith("complex"):
        name = {"complex64": "float32", "complex128": "float64"}[name]
    if not name.startswith("float"):
        return 0.0
    return 4.0 * math.sqrt(float(np.finfo(np.dtype(name)).eps))


def _namespace_name(xp) -> str:
    return getattr(xp, "__name__", type(xp).__name__)


def _check_meta(actual, desired) -> None:
    for label, value in (("actual", actual), ("desired", desired)):
        if not (hasattr(value, "shape") and hasattr(value, "dtype")):
            raise AssertionError(f"{label} must be an array (with shape and dtype), got {type(value).__name__}")
    xa, xd = array_namespace(actual), array_namespace(desired)
    if xa is not xd:
        raise AssertionError(f"array namespaces differ: actual {_namespace_name(xa)}, desired {_namespace_name(xd)}")
    if str(device_of(actual)) != str(device_of(desired)):
        raise AssertionError(f"devices differ: actual {device_of(actual)}, desired {device_of(desired)}")
    if tuple(actual.shape) != tuple(desired.shape):
        raise AssertionError(f"shapes differ: actual {tuple(actual.shape)}, desired {tuple(desired.shape)}")
    if dtype_name(actual.dtype) != dtype_name(desired.dtype):
        raise AssertionError(f"dtypes differ: actual {dtype_name(actual.dtype)}, desired {dtype_name(desired.dtype)}")


def assert_close(actual, desired, *, rtol=None, atol=0.0, err_msg: str = "") -> None:
    """Assert that two arrays of the same namespace, device, shape and dtype agree within tolerances.

    Parameters
    ----------
    actual, desired : array
        Arrays of one library (NumPy, CuPy, an array-API namespace); 0-d NumPy values count as arrays.
    rtol : float, optional
        Relative tolerance; default ``4 sqrt(eps(dtype))`` (0 for integer and boolean dtypes).
    atol : float
        Absolute tolerance (default 0). Set it from the scale of the problem when ``desired`` has
        entries near 0, e.g. ``100 * eps * max|desired|``.
    err_msg : str
        Added to the failure message.

    Raises
    ------
    AssertionError
        Different namespaces, devices, shapes or dtypes (checked in that order, before any value),
        or ``|actual - desired| > atol + rtol |desired|`` somewhere (NaNs must match).

    Examples
    --------
    >>> import numpy as np
    >>> assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-12]))
    >>> assert_close(np.array([1.0], dtype=np.float32), np.array([1.0]))
    Traceback (most recent call last):
    ...
    AssertionError: dtypes differ: actual float32, desired float64
    """
    _check_meta(actual, desired)
    if rtol is None:
        rtol = default_rtol(actual.dtype)
    np.testing.assert_allclose(to_numpy(actual), to_numpy(desired), rtol=rtol, atol=atol, err_msg=err_msg,
                               equal_nan=True)


def assert_equal(actual, desired, *, err_msg: str = "") -> None:
    """:func:`assert_close` with zero tolerance: namespace, device, shape, dtype and every value equal.

    Examples
    --------
    >>> import numpy as np
    >>> assert_equal(np.arange(3), np.array([0, 1, 2]))
    """
    _check_meta(actual, desired)
    np.testing.assert_array_equal(to_numpy(actual), to_numpy(desired), err_msg=err_msg)
