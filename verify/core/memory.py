"""Memory first in the checks: estimate the peak of a request, refuse it before allocating anything.

A check whose size options can build an ``n x n`` (or ``n x n x d``, or a very long ``n x d``) array
calls :func:`require_memory` right after validating its options, with its estimate of the peak bytes
of the whole request (every array alive at once: distances, kernel, copies, solver workspace) as a
function of one size option. The coefficients are measured (tracemalloc peaks at two sizes, stated
next to each estimate) and the growth is the cost's exact power of the size. A request over the
memory available now (:func:`spectral.memory.available_memory_bytes`: the smallest of the free
memory, the ``RLIMIT_AS`` headroom and the cgroup limit's) is refused with
:class:`spectral.memory.DenseMemoryError` -- on the command line one ``memory:`` line, exit 2 --
stating the estimate, the memory available and the largest value of the option that fits. Only
options that exist in that command are named (tests hold every check to this).

On ``--device gpu`` the arrays live on the GPU: the estimate is compared with the device's free memory
(:func:`spectral.memory.device_memory_bytes`, CuPy's free bytes plus its memory pool's unused ones) and
the refusal says "device memory". The device is the running check's (:func:`verify.core.check.current_device`),
so a check passes nothing. The host check is kept too: a gpu run makes its points on the host and
brings its results back there, and unless the check states its host-side part (``host=``) the whole
estimate bounds it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from spectral import memory as _memory
from spectral.memory import check_memory
from spectral.validation import check_option
from verify.core.check import current_device

__all__ = ["require_memory", "available_memory_bytes", "largest_that_fits", "circle_pairs", "PathNeed", "choose_path"]


def available_memory_bytes(device: str | None = None) -> int:
    """Memory available now where the running check computes: the host's, or the GPU's free memory.

    ``device=None`` is the running check's device (:func:`verify.core.check.current_device`): ``"cpu"``
    gives :func:`spectral.memory.available_memory_bytes` (free memory, ``RLIMIT_AS`` and cgroup
    headroom), ``"gpu"`` :func:`spectral.memory.device_memory_bytes` (CuPy's free bytes plus its pool's
    unused ones). A check choosing its path by memory reads this, so that on ``--device gpu`` it
    chooses by the device's memory.
    """
    device = current_device() if device is None else device
    check_option("device", device, ("cpu", "gpu"))
    if device == "gpu":
        return _memory.device_memory_bytes()
    return _memory.available_memory_bytes()


def largest_that_fits(estimate: Callable[[int], float], low: int, high: int, *, limit: float) -> int | None:
    """The largest integer ``v`` in ``[low, high]`` with ``estimate(v) <= limit`` (None if not even ``low``).

    ``estimate`` must not decrease with ``v``.
    """
    if estimate(low) > limit:
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if estimate(mid) <= limit:
            low = mid
        else:
            high = mid - 1
    return low


def require_memory(estimate: Callable[[int], float], value: int, *, option: str, low: int, what: str,
                   other: str = "", device: str | None = None, host: Callable[[int], float] | None = None) -> int:
    """Refuse ``estimate(value)`` bytes when they would not fit; the advice names ``option``'s largest fit.

    Parameters
    ----------
    estimate : callable
        Peak bytes of the whole request as a function of the size option (the others fixed).
    value : int
        The option's requested value.
    option : str
        The command-line spelling of the option (``"--n"``), named in the advice.
    low : int
        The option's smallest allowed value.
    what : str
        The request in words, e.g. ``"the dense n x n kernels at --n 100000"``.
    other : str
        A further alternative naming other options of the command, as a noun phrase (e.g. ``"a smaller
        --dim"``); the advice reads "lower --n (at most N fits now), or <other>".
    device : {"cpu", "gpu"}, optional
        Where the request's arrays live; ``None``: the device of the running check
        (:func:`verify.core.check.current_device`). On ``"gpu"`` the estimate is compared with the device's
        free memory and the host-side part (``host``) with the host's.
    host : callable, optional
        On ``"gpu"``: peak bytes the request holds on the host (points made there, results brought
        back), as a function of the same option; ``None``: the whole ``estimate`` (an upper bound).

    Returns
    -------
    int
        The estimate in bytes, when it fits.

    Raises
    ------
    spectral.memory.DenseMemoryError
        The estimate exceeds the memory available now (on the device and, on ``"gpu"``, the host part
        on the host).
    spectral.validation.UnavailableError
        ``device="gpu"`` without CuPy or a CUDA device.
    """
    device = current_device() if device is None else device
    check_option("device", device, ("cpu", "gpu"))
    needed = estimate(value)
    if device == "cpu":
        limit = available_memory_bytes() if current_device() == "cpu" else available_memory_bytes("cpu")
        if needed <= limit:
            return int(needed)
        fits = largest_that_fits(estimate, low, value, limit=limit)
        return check_memory(needed, what=what, alternative=_advice(fits, option, low, other))
    on_host = estimate if host is None else host
    device_limit, host_limit = available_memory_bytes("gpu"), available_memory_bytes("cpu")
    host_needed = on_host(value)
    if needed <= device_limit and host_needed <= host_limit:
        return int(needed)
    # the largest value that fits on both: each estimate grows with the option
    fits = [largest_that_fits(estimate, low, value, limit=device_limit),
            largest_that_fits(on_host, low, value, limit=host_limit)]
    fits = None if None in fits else min(fits)
    advice = _advice(fits, option, low, other)
    if needed > device_limit:
        return check_memory(needed, what=what, alternative=advice, device="gpu")
    part = " (bounded by the whole estimate)" if host is None else ""
    check_memory(host_needed, what=f"the host-side part{part} of {what} on the gpu", alternative=advice)
    return int(needed)


def _advice(fits: int | None, option: str, low: int, other: str) -> str:
    if fits is not None:
        return f"lower {option} (at most {fits} fits now)" + (f", or use {other}" if other else "")
    return f"even {option} {low} does not fit now" + (f": use {other}" if other else "")


def circle_pairs(n: int, chord: float, *, radius: float = 1.0, concentration: float = 1.0) -> float:
    """Stored entries of a sparse kernel cut at ``chord`` on ``n`` quantile-grid points of a circle.

    A point of a circle of ``radius`` has the others within the angle ``2 asin(chord / (2 radius))`` on
    either side; with the points at the quantiles of a density ``p`` the pairs number
    ``n^2 (2 angle / 2 pi) concentration`` (at most ``n^2``), plus the ``n`` diagonal entries, where
    ``concentration = 2 pi int p^2`` is the density-weighted mean of the density relative to the
    uniform one: 1 uniform, ``1 + c^2 / 2`` for ``(1 + c cos theta) / (2 pi)``, ``I0(2 kappa) /
    I0(kappa)^2`` for von Mises.
    """
    if chord >= 2 * radius:
        return float(n) * n
    angle = 2 * math.asin(chord / (2 * radius))
    return min(1.0, 2 * angle / (2 * math.pi) * concentration) * n * n + n


@dataclasses.dataclass(frozen=True)
class PathNeed:
    """The memory a computing path of a check needs, as a function of one of its size options.

    ``estimate(value)`` is the peak bytes of the whole request on that path with the option at ``value``
    (the others fixed); ``option`` is the command-line spelling named in the advice, ``low`` its smallest
    allowed value, ``what`` the request in words, ``other`` further options of the command that lower
    this path's need (a noun phrase, e.g. ``"a smaller --torus-n"``).
    """

    estimate: Callable[[int], float]
    value: int
    option: str
    low: int
    what: str
    other: str = ""

    def bytes(self) -> float:
        """The estimate at the requested value."""
        return self.estimate(self.value)


def choose_path(method: str, *, dense: PathNeed, matrix_free: PathNeed) -> str:
    """The path of a ``--method {auto, dense, matrix-free}`` check, checked against the memory available now.

    ``"auto"`` takes the dense path when its estimate fits, else the matrix-free one. The path taken is
    then held to its estimate by :func:`require_memory` (refused before anything is allocated); a refused
    dense path names ``--method matrix-free`` with what it needs when that fits, then the path's
    ``other`` options.

    Returns
    -------
    str
        ``"dense"`` or ``"matrix-free"``: the path to run.
    """
    from spectral.memory import format_bytes

    limit = available_memory_bytes()
    if method == "auto":
        method = "dense" if dense.bytes() <= limit else "matrix-free"
    need, alternatives = (dense if method == "dense" else matrix_free), []
    if method == "dense" and matrix_free.bytes() <= limit:
        alternatives.append(f"--method matrix-free (needs {format_bytes(matrix_free.bytes())})")
    if need.other:
        alternatives.append(need.other)
    require_memory(need.estimate, need.value, option=need.option, low=need.low, what=need.what,
                   other=", or ".join(alternatives))
    return method
