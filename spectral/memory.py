"""Memory guard: refuse a request that would not fit, before allocating it.

Every dense ``n x m`` request (:func:`check_dense_memory`), or the estimated peak of a whole
computation (:func:`check_memory`), is compared *before* anything is allocated with the memory that
is free (or a caller's limit); a request over it is refused with :class:`DenseMemoryError`, whose
message states the estimate, the limit, and the alternative the caller names (an option of that
caller that needs less memory). The memory that is free is the smallest of what the kernel reports
available, what the process's address-space limit (``ulimit -v``, ``RLIMIT_AS``) leaves, and what
its control group's memory limit leaves. Nothing here allocates arrays.
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
    "check_memory",
    "format_bytes",
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


def _status_bytes(field: str, path: str = "/proc/self/status") -> int | None:
    """A ``kB`` field of ``/proc/self/status`` (e.g. ``VmSize``) in bytes, or None."""
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _rlimit_headroom() -> int | None:
    """Address space left under the soft ``RLIMIT_AS`` (``ulimit -v``): limit minus ``VmSize``; None if unlimited."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    used = _status_bytes("VmSize")
    return max(int(soft) - (used or 0), 0)


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as fh:
            text = fh.read().strip()
    except OSError:
        return None
    if not text or text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _cgroup_headroom(root: str = "/sys/fs/cgroup") -> int | None:
    """Memory left under the control group's limit (cgroup v2 ``memory.max``, v1 ``memory.limit_in_bytes``)."""
    for limit_file, usage_file in (("memory.max", "memory.current"),
                                   ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes")):
        limit = _read_int(os.path.join(root, limit_file))
        if limit is None or limit >= 1 << 60:  # "max" / the v1 "unlimited" sentinel
            continue
        usage = _read_int(os.path.join(root, usage_file)) or 0
        return max(limit - usage, 0)
    return None


def available_memory_bytes() -> int:
    """Memory available to a new allocation, in bytes.

    The smallest of: ``MemAvailable`` from ``/proc/meminfo`` (Linux; elsewhere ``sysconf`` free pages
    and, if that is missing too, 4 GiB), the address space left under ``RLIMIT_AS`` (``ulimit -v``:
    the limit minus the process's ``VmSize``) and the memory left under the control group's limit.
    The value is an estimate of what can be allocated without swapping or failing; it does not
    account for other processes growing in the meantime.
    """
    value = _meminfo_available()
    if value is None:
        try:
            value = int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            value = 4 << 30
    for headroom in (_rlimit_headroom(), _cgroup_headroom()):
        if headroom is not None:
            value = min(value, headroom)
    return value


def format_bytes(nbytes) -> str:
    """``nbytes`` in the unit that reads best: ``"512 MiB"``, ``"3.2 GiB"``, ``"7.28 TiB"``."""
    nbytes = check_real("nbytes", nbytes, low=0.0)
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes / 1024:.3g} KiB"


def check_memory(needed, *, what: str, alternative: str | None = None, max_bytes=None,
                 limit_name: str = "max_bytes") -> int:
    """Refuse a computation whose estimated peak ``needed`` (bytes) would not fit, before it starts.

    Parameters
    ----------
    needed : int or float
        The caller's estimate of the peak of the whole request (every array it holds at once).
    what : str
        What is estimated, for the message (e.g. ``"the dense path on n = 30000 points"``).
    alternative : str, optional
        What the caller can do instead, naming options that exist in the caller's signature.
    max_bytes : int or float, optional
        The caller's limit; ``None`` uses :func:`available_memory_bytes`.
    limit_name : str
        The caller's name of its ``max_bytes`` option, used in the message.

    Returns
    -------
    int
        ``needed`` as an integer.

    Raises
    ------
    DenseMemoryError
        If ``needed`` exceeds the limit; the message gives both and the ``alternative``.

    Examples
    --------
    >>> check_memory(2**20, what="one MiB", max_bytes=2**21)
    1048576
    >>> check_memory(2**40, what="the request", max_bytes=2**30, alternative="use a smaller n")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    spectral.memory.DenseMemoryError: the request needs an estimated 1 TiB, over the limit max_bytes = 1 GiB; ...
    """
    needed = int(check_real("needed", needed, low=0.0))
    if max_bytes is None:
        limit = available_memory_bytes()
        source = "memory available now:"
    else:
        limit = int(check_real(limit_name, max_bytes, low=0.0, low_open=True))
        source = f"limit {limit_name} ="
    if needed > limit:
        hint = f"; {alternative}" if alternative else ""
        raise DenseMemoryError(f"{what} needs an estimated {format_bytes(needed)}, over the {source} "
                               f"{format_bytes(limit)}{hint}")
    return needed


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
