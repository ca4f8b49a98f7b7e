"""Memory guard of the public pairwise builders: estimate the peak of an ``(n, m)`` request, refuse it first.

The builders that return an ``(n, m)`` array (:func:`spectral.dot_product_scores`,
:func:`spectral.metric_kernel`, :func:`spectral.heat_kernel`, the manifolds' ``distance``) state
their peak as bytes per pair ``(i, j)`` (the output plus every ``(n, m)`` temporary they hold at
once, measured with ``tracemalloc``) plus a few bytes that do not grow with ``n m`` (projected
features, blocks of a blocked loop), and call :func:`check_pairwise_memory` before allocating.

Asking the system for the memory available now reads ``/proc`` (about 0.1 ms measured); a request of
at most :data:`SMALL_REQUEST_BYTES` without a caller's limit skips that read, so that a builder
called on small blocks in a loop (a :class:`spectral.KernelOperator` tile, ``distance(x[i:j], y)``)
pays microseconds. An explicit ``max_bytes`` is always enforced. This module imports only
:mod:`spectral.floor.memory` (itself on the floor: :mod:`spectral.floor.backend` and :mod:`spectral.floor.validation`),
so ``manifolds`` may use it.
"""

from __future__ import annotations

from spectral.floor.backend import is_cupy_array
from spectral.floor.memory import check_memory
from spectral.floor.validation import check_int, check_real

__all__ = ["check_pairwise_memory"]

#: Bytes every estimate adds for what does not scale with the arrays (Python objects, array headers):
#: tracemalloc measured up to 2.5 KB above the arrays' bytes for a 600 x 700 heat kernel.
FIXED_OVERHEAD_BYTES = 64 << 10

#: Requests up to this size (8 MiB, about a millisecond of distance computation) without a caller's
#: limit are not compared with the memory available now: the ``/proc`` reads would cost more than
#: 5% of the computation, and a machine without 8 MiB free cannot run Python anyway.
SMALL_REQUEST_BYTES = 8 << 20


def check_pairwise_memory(n, m, *, bytes_per_pair, extra_bytes=0, max_bytes=None, what: str,
                          alternative: str | None = None, like=None) -> int:
    """Refuse an ``(n, m)`` pairwise request whose estimated peak would not fit, before it allocates.

    Parameters
    ----------
    n, m : int
        Numbers of rows and columns of the result (``>= 0``).
    bytes_per_pair : float
        Peak bytes per entry ``(i, j)``: the result and the ``(n, m)`` temporaries held at once
        (e.g. ``8 + 1`` for a float64 result and one boolean mask).
    extra_bytes : int
        Peak bytes that do not grow with ``n m`` (features, blocked temporaries);
        :data:`FIXED_OVERHEAD_BYTES` is added to them.
    max_bytes : int or float, optional
        The caller's limit; ``None`` compares with the memory available now, except for requests of
        at most :data:`SMALL_REQUEST_BYTES`.
    what : str
        What is built, for the message (the shape is appended).
    alternative : str, optional
        What to do instead, naming things that exist.
    like : array, optional
        An input of the builder: a CuPy array makes the comparison with the CUDA device's free
        memory (the result lives there), anything else with the host's.

    Returns
    -------
    int
        The estimate in bytes: ``n m bytes_per_pair + extra_bytes + FIXED_OVERHEAD_BYTES``.

    Raises
    ------
    spectral.floor.memory.DenseMemoryError
        If the estimate exceeds the limit (the message states both and the ``alternative``).

    Examples
    --------
    >>> check_pairwise_memory(1000, 1000, bytes_per_pair=9, max_bytes=2**30, what="scores")
    9065536
    >>> check_pairwise_memory(10**6, 10**6, bytes_per_pair=16, max_bytes=2**30, what="distances")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    spectral.floor.memory.DenseMemoryError: distances of shape (1000000, 1000000) needs an estimated 14.6 TiB, ...
    """
    n = check_int("n", n, low=0)
    m = check_int("m", m, low=0)
    bytes_per_pair = check_real("bytes_per_pair", bytes_per_pair, low=0.0)
    extra_bytes = check_int("extra_bytes", extra_bytes, low=0)
    needed = int(n * m * bytes_per_pair) + extra_bytes + FIXED_OVERHEAD_BYTES
    if max_bytes is None and needed <= SMALL_REQUEST_BYTES:
        return needed
    on_device = {"device": "gpu"} if is_cupy_array(like) else {}
    return check_memory(needed, what=f"{what} of shape ({n}, {m})", alternative=alternative,
                        max_bytes=max_bytes, **on_device)
