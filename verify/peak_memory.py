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
"""

from __future__ import annotations

import math
from collections.abc import Callable

from spectral.memory import available_memory_bytes, check_memory

__all__ = ["require_memory", "largest_that_fits", "circle_pairs"]


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
                   other: str = "") -> int:
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

    Returns
    -------
    int
        The estimate in bytes, when it fits.

    Raises
    ------
    spectral.memory.DenseMemoryError
        The estimate exceeds the memory available now.
    """
    needed = estimate(value)
    limit = available_memory_bytes()
    if needed <= limit:
        return int(needed)
    fits = largest_that_fits(estimate, low, value, limit=limit)
    if fits is not None:
        advice = f"lower {option} (at most {fits} fits now)" + (f", or use {other}" if other else "")
    else:
        advice = f"even {option} {low} does not fit now" + (f": use {other}" if other else "")
    return check_memory(needed, what=what, alternative=advice)


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
