"""Memory guard for dense matrices: refuse a request that would not fit, before allocating it.

Every dense ``n x m`` request is estimated *before* anything is allocated; if the estimate exceeds
the memory that is free (or a caller's limit) the request is refused with :class:`DenseMemoryError`,
whose message states the estimate, the limit, and the alternative the caller names (an option of
that caller that needs less memory). Nothing here allocates arrays.
"""

from __future__ import annotations

import os

from spectral.backend import dtype_name
from spectral.validation import InputError, check_int, check_real

__all__ = [
    "DenseMemoryError",
    "dense_bytes",
    "available_memory_bytes",
    "check_dense_memory",
]

_GIB = float(1 << 30)


class DenseMemoryError(MemoryError):
    """A dense matrix would not fit in the allowed memory (raised before allocation)."""


def _itemsize(dtype) -> int:
    """Bytes per element of ``dtype`` (a NumPy dtype, its name, or an array-API dtype)."""
    import numpy as np

    try:
        return int(np.dtype(dtype_name(dtype)).itemsize)
    except TypeError as exc:
        raise InputError(f"dtype must be a numeric dtype (e.g. 'float64', 'float32'), got {dtype!r}") from exc


def dense_bytes(n, m=None, dtype="float64") -> int:
    """Bytes needed by one dense ``n x m`` array of ``dtype`` (``m`` defaults to ``n``).

    Parameters
    ----------
    n, m : int
        Numbers of rows and columns (``>= 1``); ``m=None`` means a square matrix.
    dtype : dtype or str
        Element type; anything :func:`numpy.dtype` understands, or an array-API dtype.

    Returns
    -------
    int
        ``n * m * itemsize`` (exact integer arithmetic, no overflow).
    """
    n = check_int("n", n, low=1)
    m = n if m is None else check_int("m", m, low=1)
    return n * m * _itemsize(dtype)


def _meminfo_available(path: str = "/proc/meminfo") -> int | None:
    try:
        with open(path, encoding="ascii") as fh:
            fields = {}
            for line in fh:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts:
                    fields[key.strip()] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    except (OSError, ValueError, IndexError):
        return None
    if "MemAvailable" in fields:
        return fields["MemAvailable"]
    if "MemFree" in fields:  # kernels older than 3.14 have no MemAvailable
        return fields["MemFree"] + fields.get("Buffers", 0) + fields.get("Cached", 0)
    return None


def available_memory_bytes() -> int:
    """Memory available to a new allocation, in bytes.

    Reads ``MemAvailable`` from ``/proc/meminfo`` (Linux); elsewhere falls back
    to ``sysconf`` free pages (POSIX) and, if that is missing too, to 4 GiB.
    The value is an estimate of what can be allocated without swapping; it does
    not account for other processes growing in the meantime.
    """
    value = _meminfo_available()
    if value is not None:
        return value
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def check_dense_memory(
    n,
    m=None,
    *,
    dtype="float64",
    copies: int = 1,
    max_bytes=None,
    what: str = "score matrix",
    alternative: str | None = None,
    limit_name: str = "max_bytes",
) -> int:
    """Refuse a dense ``n x m`` request that would not fit, before allocating it.

    Parameters
    ----------
    n, m : int
        Shape of the dense matrix (``m=None``: square).
    dtype : dtype or str
        Element type of the matrix.
    copies : int
        How many such matrices the operation holds at once (e.g. 2 for a
        kernel plus its normalised copy).
    max_bytes : int or float, optional
        The caller's limit in bytes.  ``None`` uses the memory available now
        (:func:`available_memory_bytes`).
    what : str
        What is being built, for the message (e.g. ``"score matrix"``).
    alternative : str, optional
        What the caller can do instead, naming options that exist in the caller's signature
        (e.g. ``"use method='matrix-free'"``); appended to the message.
    limit_name : str
        The caller's name of its ``max_bytes`` option, used in the message.

    Returns
    -------
    int
        The estimated number of bytes (``copies * n * m * itemsize``).

    Raises
    ------
    DenseMemoryError
        If the estimate exceeds the limit; the message gives the estimate, the limit in GiB and
        the caller's ``alternative``.
    spectral.validation.InputError
        If ``n``, ``m`` or ``copies`` is not an integer ``>= 1`` or ``max_bytes`` is not ``> 0``.

    Examples
    --------
    >>> check_dense_memory(1000, dtype="float64", max_bytes=8e6)
    8000000
    >>> check_dense_memory(2000, max_bytes=8e6, what="kernel matrix", alternative="use a smaller n")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    spectral.memory.DenseMemoryError: kernel matrix of shape (2000, 2000) x 1 in float64 needs ... GiB; use a smaller n
    """
    copies = check_int("copies", copies, low=1)
    needed = copies * dense_bytes(n, m, dtype)
    if max_bytes is None:
        limit = available_memory_bytes()
        source = "memory available now:"
    else:
        limit = int(check_real(limit_name, max_bytes, low=0.0, low_open=True))
        source = f"limit {limit_name} ="
    if needed > limit:
        m_shown = n if m is None else m
        hint = f"; {alternative}" if alternative else ""
        raise DenseMemoryError(
            f"{what} of shape ({n}, {m_shown}) x {copies} in {dtype_name(dtype)} "
            f"needs an estimated {needed / _GIB:.3g} GiB, over the {source} {limit / _GIB:.3g} GiB{hint}"
        )
    return needed
