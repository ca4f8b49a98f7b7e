"""Memory guard for dense score matrices (DESIGN.md section 2, "Memory guard").

Every dense ``n x m`` request is estimated *before* anything is allocated; if
the estimate exceeds the memory that is free (or a caller's limit) the request
is refused with :class:`DenseMemoryError`, whose message states the estimate,
the limit and the matrix-free alternative.  Nothing here allocates arrays.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = [
    "DenseMemoryError",
    "dense_bytes",
    "available_memory_bytes",
    "check_dense_memory",
]

_GIB = float(1 << 30)
_MATRIX_FREE_HINT = "use the matrix-free path: method='matrix-free' / --matrix-free"


class DenseMemoryError(MemoryError):
    """A dense matrix would not fit in the allowed memory (raised before allocation)."""


def _check_count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _itemsize(dtype) -> int:
    """Bytes per element of ``dtype`` (a NumPy dtype, its name, or an array-API dtype)."""
    try:
        return int(np.dtype(dtype).itemsize)
    except TypeError:
        # array-API dtypes (array_api_strict.float32, cupy dtypes) print as their name
        name = str(dtype).rsplit(".", 1)[-1]
        try:
            return int(np.dtype(name).itemsize)
        except TypeError as exc:
            raise ValueError(f"dtype must be a numeric dtype (e.g. 'float64', 'float32'), got {dtype!r}") from exc


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
    n = _check_count(n, "n")
    m = n if m is None else _check_count(m, "m")
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
        The caller's limit in bytes (``--max-memory``).  ``None`` uses the memory
        available now (:func:`available_memory_bytes`).
    what : str
        What is being built, for the message.

    Returns
    -------
    int
        The estimated number of bytes (``copies * n * m * itemsize``).

    Raises
    ------
    DenseMemoryError
        If the estimate exceeds the limit; the message gives the estimate and the
        limit in GiB and points to the matrix-free path.
    ValueError
        If ``n``, ``m`` or ``copies`` is not an integer ``>= 1`` or ``max_bytes`` is not ``> 0``.
    """
    copies = _check_count(copies, "copies")
    needed = copies * dense_bytes(n, m, dtype)
    if max_bytes is None:
        limit = available_memory_bytes()
        source = "memory available now"
    else:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, float, np.integer, np.floating)):
            raise ValueError(f"max_bytes must be a number > 0 (bytes) or None, got {max_bytes!r}")
        if not np.isfinite(max_bytes) or max_bytes <= 0:
            raise ValueError(f"max_bytes must be a finite number > 0 (bytes) or None, got {max_bytes!r}")
        limit = int(max_bytes)
        source = "limit max_bytes"
    if needed > limit:
        m_shown = n if m is None else m
        raise DenseMemoryError(
            f"dense {what} of shape ({n}, {m_shown}) x {copies} in {np.dtype(_numpy_name(dtype)).name} "
            f"needs an estimated {needed / _GIB:.3g} GiB, over the {source} of {limit / _GIB:.3g} GiB; "
            f"{_MATRIX_FREE_HINT}"
        )
    return needed


def _numpy_name(dtype) -> str:
    try:
        return np.dtype(dtype).name
    except TypeError:
        return str(dtype).rsplit(".", 1)[-1]
