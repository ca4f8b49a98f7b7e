"""Memory first in the checks: estimate the peak of a request, refuse it before allocating anything.

A check whose size options can build an ``n x n`` (or ``n x n x d``, or a very long ``n x d``) array
calls :func:`require_memory` right after validating its options, with its estimate of the peak bytes
of the whole request (every array alive at once: distances, kernel, copies, solver workspace) as a
function of one size option. The coefficients are measured (tracemalloc peaks at two sizes, stated
next to each estimate) and the growth is the cost's exact power of the size. A request over the
memory available now (:func:`spectral.floor.memory.available_memory_bytes`: the smallest of the free
memory, the ``RLIMIT_AS`` headroom and the cgroup limit's) is refused with
:class:`spectral.floor.memory.DenseMemoryError` -- on the command line one ``memory:`` line, exit 2 --
stating the estimate, the memory available and the largest value of the option that fits. Only
options that exist in that command are named (tests hold every check to this).

On ``--device gpu`` the arrays live on the GPU: the estimate is compared with the device's free memory
(:func:`spectral.floor.memory.device_memory_bytes`, CuPy's free bytes plus its memory pool's unused ones) and
the refusal says "device memory". The device is passed explicitly (``device=p.device``; a declared
check's memory hook is held on its run's device by the skeleton). The host check is kept too: a gpu run makes its points on the host and
brings its results back there, and unless the check states its host-side part (``host=``) the whole
estimate bounds it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from spectral.floor import memory as _memory
from spectral.floor.memory import check_memory, first_that_fits, format_bytes, memory_limit
from spectral.floor.validation import check_option

__all__ = ["require_memory", "available_memory_bytes", "largest_that_fits", "circle_pairs", "PathNeed", "choose_path"]


def available_memory_bytes(device: str | None = None) -> int:
    """Memory available now on ``device``: the host's, or the GPU's free memory.

    ``device=None`` or ``"cpu"`` gives :func:`spectral.floor.memory.available_memory_bytes` (free memory, ``RLIMIT_AS`` and cgroup
    headroom), ``"gpu"`` :func:`spectral.floor.memory.device_memory_bytes` (CuPy's free bytes plus its pool's
    unused ones). A check choosing its path by memory reads this, so that on ``--device gpu`` it
    chooses by the device's memory.
    """
    device = "cpu" if device is None else device
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
        Where the request's arrays live (``None``: the host). On ``"gpu"`` the estimate is compared with the device's
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
    spectral.floor.memory.DenseMemoryError
        The estimate exceeds the memory available now (on the device and, on ``"gpu"``, the host part
        on the host).
    spectral.floor.validation.UnavailableError
        ``device="gpu"`` without CuPy or a CUDA device.
    """
    device = "cpu" if device is None else device
    check_option("device", device, ("cpu", "gpu"))
    needed = estimate(value)
    if device == "cpu":
        limit = available_memory_bytes("cpu")
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
    this path's need (a noun phrase, e.g. ``"a smaller --torus-n"``). ``host``: on ``"gpu"``, the bytes
    held on the host (None: the whole estimate). ``auto``: whether ``method="auto"`` may take this path
    (False for a path that fits but would take too long).
    """

    estimate: Callable[[int], float]
    value: int
    option: str
    low: int
    what: str
    other: str = ""
    host: Callable[[int], float] | None = None
    auto: bool = True

    def bytes(self) -> float:
        """The estimate at the requested value."""
        return self.estimate(self.value)

    def require(self, *, device: str = "cpu", other: str | None = None) -> int:
        """Refuse this path when it would not fit now (:func:`require_memory`); its estimate otherwise."""
        return require_memory(self.estimate, self.value, option=self.option, low=self.low, what=self.what,
                              other=self.other if other is None else other, device=device, host=self.host)


def choose_path(method: str, needs=None, *, device: str | None = None, dense: PathNeed | None = None,
                matrix_free: PathNeed | None = None) -> str:
    """The path of a ``--method`` check, checked against the memory available now on ``device``.

    ``needs`` maps each path to its :class:`PathNeed`, in the order ``"auto"`` prefers them.
    ``"auto"`` takes the first path (allowed to ``auto``) whose estimate fits
    (:func:`spectral.floor.memory.first_that_fits`, the rule :func:`spectral.markov_spectrum` follows too).
    The path taken is then held to its estimate by :func:`require_memory` (refused before anything is
    allocated); a refusal names the other paths of the command that fit now, with what they need,
    then the path's ``other`` options.

    Returns
    -------
    str
        The path to run.
    """
    if needs is None:  # the two-path form: dense, else matrix-free
        needs = {"dense": dense, "matrix-free": matrix_free}
    device = "cpu" if device is None else device
    limit = memory_limit(device)  # the limit the guard compares with
    if method == "auto":
        allowed = {name: need.bytes() for name, need in needs.items() if need.auto}
        method = first_that_fits(allowed, limit) or list(allowed)[-1]  # none fits: refuse the most frugal
    if method not in needs:
        raise ValueError(f"no memory need declared for path {method!r}")
    need, alternatives = needs[method], []
    for name, other in needs.items():
        if name != method and other.bytes() <= limit:
            alternatives.append(f"--method {name} (needs {format_bytes(other.bytes())})")
    if need.other:
        alternatives.append(need.other)
    need.require(device=device, other=", or ".join(alternatives))
    return method
