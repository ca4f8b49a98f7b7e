"""Memory guard: refuse a request that would not fit, before allocating it.

Every dense ``n x m`` request (:func:`check_dense_memory`), or the estimated peak of a whole
computation (:func:`check_memory`), is compared *before* anything is allocated with the memory that
is free (or a caller's limit); a request over it is refused with :class:`DenseMemoryError`, whose
message states the estimate, the limit, and the alternative the caller names (an option of that
caller that needs less memory). The memory that is free is the smallest of what the kernel reports
available, what the process's address-space limit (``ulimit -v``, ``RLIMIT_AS``) leaves, and what
its control group's memory limit leaves. Nothing here allocates arrays.

Arrays that live on a GPU are compared with the device's free memory instead
(:func:`device_memory_bytes`: what the CUDA driver reports free plus what CuPy's default memory pool
holds without using it), and the refusal then says "device memory"; pass ``device="gpu"`` to
:func:`available_memory_bytes`, :func:`check_memory` and :func:`check_dense_memory`. CuPy is
imported only then.
"""

from __future__ import annotations

import os

import numpy as np

from spectral.floor.backend import dtype_name, is_cupy_array, is_cupy_namespace, require_device
from spectral.floor.validation import InputError, UnavailableError, check_int, check_option, check_real

__all__ = [
    "DenseMemoryError",
    "dense_bytes",
    "available_memory_bytes",
    "device_memory_bytes",
    "memory_label",
    "check_dense_memory",
    "first_that_fits",
    "memory_limit",
    "check_memory",
    "format_bytes",
    "memory_device",
]

_GIB = float(1 << 30)


class DenseMemoryError(MemoryError):
    """A dense matrix would not fit in the allowed memory (raised before allocation)."""


def _itemsize(dtype) -> int:
    """Bytes per element of ``dtype`` (a NumPy dtype, its name, or an array-API dtype)."""
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


def _host_memory_bytes() -> int:
    """Host memory available to a new allocation, in bytes (see :func:`available_memory_bytes`)."""
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


def _is_cupy(xp) -> bool:
    return is_cupy_namespace(xp)


def _cupy():
    """The CuPy module of a usable CUDA device, or :class:`UnavailableError` (the message of ``device='gpu'``)."""
    return require_device("gpu")


def device_memory_bytes(xp=None) -> int:
    """Free memory, in bytes, of the device on which the namespace ``xp`` computes.

    For CuPy (``xp`` is ``cupy``, or ``None``: the current CUDA device) this is the free memory the
    driver reports (``cupy.cuda.runtime.memGetInfo()[0]``) plus the bytes CuPy's default memory pool
    holds without using them (``total_bytes() - used_bytes()``: freed arrays the pool keeps for reuse,
    which the driver counts as used). For a host namespace (NumPy, array-api-strict, ...) it is
    :func:`available_memory_bytes` on the host.

    Raises
    ------
    spectral.floor.validation.UnavailableError
        ``xp=None`` and CuPy or a CUDA device is missing, or the driver does not answer.
    """
    if xp is not None and not _is_cupy(xp):
        return available_memory_bytes()
    cp = _cupy() if xp is None else xp
    try:
        free, _total = cp.cuda.runtime.memGetInfo()
        pool = cp.get_default_memory_pool()
        pooled = int(pool.total_bytes()) - int(pool.used_bytes())
    except (AttributeError, RuntimeError) as exc:  # CuPy's CUDARuntimeError is a RuntimeError
        raise UnavailableError(f"could not read the free memory of the CUDA device: {exc}") from None
    return int(free) + max(pooled, 0)


def memory_device(x) -> str:
    """Where the array ``x`` lives, for the guard's ``device=``: ``"gpu"`` for a CuPy array, else ``"cpu"``.

    >>> import numpy as np
    >>> memory_device(np.zeros(3))
    'cpu'
    """
    return "gpu" if is_cupy_array(x) else "cpu"


def memory_label(device: str = "cpu") -> str:
    """What :func:`available_memory_bytes` measures on ``device``, in words for a refusal.

    ``"memory available now"`` on the host; ``"device memory available now on gpu (CUDA device 0)"``
    on the GPU (the current CUDA device's number).
    """
    check_option("device", device, ("cpu", "gpu"))
    if device == "cpu":
        return "memory available now"
    cp = _cupy()
    try:
        which = f"CUDA device {int(cp.cuda.runtime.getDevice())}"
    except (AttributeError, RuntimeError):  # no getDevice, or the driver does not answer: still the current one
        which = "the current CUDA device"
    return f"device memory available now on gpu ({which})"


def available_memory_bytes(device: str = "cpu") -> int:
    """Memory available to a new allocation on ``device``, in bytes.

    Parameters
    ----------
    device : {"cpu", "gpu"}
        ``"cpu"``: host memory, the smallest of ``MemAvailable`` (``/proc/meminfo``; elsewhere
        ``sysconf`` free pages, and 4 GiB if that is missing too), the address space left under
        ``RLIMIT_AS`` (``ulimit -v``: the limit minus the process's ``VmSize``) and the memory left
        under the control group's limit. ``"gpu"``: the current CUDA device's free memory
        (:func:`device_memory_bytes`).

    The value is an estimate of what can be allocated without swapping or failing; it does not
    account for other processes growing in the meantime.
    """
    check_option("device", device, ("cpu", "gpu"))
    if device == "gpu":
        return device_memory_bytes()
    return _host_memory_bytes()


def memory_limit(device: str | None = None, max_bytes=None, *, limit_name: str = "max_bytes") -> int:
    """The bytes a request is compared with: the caller's ``max_bytes``, else the memory available now on ``device``.

    The limit of :func:`check_memory` and :func:`check_dense_memory`, and the one to pass to
    :func:`first_that_fits` so that a path chosen by ``method="auto"`` is one the guard accepts.
    ``device``: ``None`` or ``"cpu"`` (host memory, :func:`available_memory_bytes`), ``"gpu"`` (the
    CUDA device's free memory, :func:`device_memory_bytes`).

    >>> memory_limit(max_bytes=2**30)
    1073741824
    """
    if max_bytes is not None:
        return int(check_real(limit_name, max_bytes, low=0.0, low_open=True))
    device = check_option("device", "cpu" if device is None else device, ("cpu", "gpu"))
    return device_memory_bytes() if device == "gpu" else available_memory_bytes()


def _limit(device, max_bytes, limit_name) -> tuple[int, str]:
    """The limit in bytes and its words for the message ("memory available now:", "limit max_bytes =", ...)."""
    if max_bytes is not None:
        return memory_limit(device, max_bytes, limit_name=limit_name), f"limit {limit_name} ="
    device = "cpu" if device is None else device
    label = memory_label(device) + ":"
    return memory_limit(device), label


def first_that_fits(needs, limit):
    """The first name of ``needs`` (``name -> bytes``, in order of preference) whose bytes fit ``limit``.

    The one rule behind every ``method="auto"`` of the toolkit (:func:`spectral.markov_spectrum`'s
    solver paths and the checks' ``--method auto``): take the first path, in the caller's order of
    preference, whose estimated peak fits the memory available (``limit``, e.g. :func:`memory_limit`);
    ``None`` when none does.

    Examples
    --------
    >>> first_that_fits({"dense": 8e9, "lanczos": 3e9, "matrix-free": 1e8}, limit=4e9)
    'lanczos'
    >>> first_that_fits({"dense": 8e9}, limit=4e9) is None
    True
    """
    for name, nbytes in needs.items():
        if nbytes <= limit:
            return name
    return None


def format_bytes(nbytes) -> str:
    """``nbytes`` in the unit that reads best: ``"512 MiB"``, ``"3.2 GiB"``, ``"7.28 TiB"``."""
    nbytes = check_real("nbytes", nbytes, low=0.0)
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes / 1024:.3g} KiB"


def check_memory(needed, *, what: str, alternative: str | None = None, max_bytes=None,
                 limit_name: str = "max_bytes", device: str | None = None) -> int:
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
        The caller's limit; ``None`` uses the memory available now on ``device``.
    limit_name : str
        The caller's name of its ``max_bytes`` option, used in the message.
    device : {"cpu", "gpu"}, optional
        Where the estimated arrays live: ``None`` or ``"cpu"`` compares with host memory
        (:func:`available_memory_bytes`), ``"gpu"`` with the CUDA device's free memory
        (:func:`device_memory_bytes`; the message then says "device memory").

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
    spectral.floor.memory.DenseMemoryError: the request needs an estimated 1 TiB, over the limit max_bytes = 1 GiB; ...
    """
    needed = int(check_real("needed", needed, low=0.0))
    limit, source = _limit(device, max_bytes, limit_name)
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
    device: str | None = None,
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
    device : {"cpu", "gpu"}, optional
        Where the matrix lives: ``None`` or ``"cpu"`` (host memory), ``"gpu"`` (the CUDA device's free
        memory, :func:`device_memory_bytes`).

    Returns
    -------
    int
        The estimated number of bytes (``copies * n * m * itemsize``).

    Raises
    ------
    DenseMemoryError
        If the estimate exceeds the limit; the message gives the estimate, the limit in GiB and
        the caller's ``alternative``.
    spectral.floor.validation.InputError
        If ``n``, ``m`` or ``copies`` is not an integer ``>= 1`` or ``max_bytes`` is not ``> 0``.

    Examples
    --------
    >>> check_dense_memory(1000, dtype="float64", max_bytes=8e6)
    8000000
    >>> check_dense_memory(2000, max_bytes=8e6, what="kernel matrix", alternative="use a smaller n")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    spectral.floor.memory.DenseMemoryError: kernel matrix of shape (2000, 2000) x 1 in float64 needs ... GiB; use a smaller n
    """
    copies = check_int("copies", copies, low=1)
    needed = copies * dense_bytes(n, m, dtype)
    limit, source = _limit(device, max_bytes, limit_name)
    if needed > limit:
        m_shown = n if m is None else m
        hint = f"; {alternative}" if alternative else ""
        raise DenseMemoryError(
            f"{what} of shape ({n}, {m_shown}) x {copies} in {dtype_name(dtype)} "
            f"needs an estimated {needed / _GIB:.3g} GiB, over the {source} {limit / _GIB:.3g} GiB{hint}"
        )
    return needed
