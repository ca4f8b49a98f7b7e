"""Reductions that keep a NaN: the worst of measured values, the least, and counts of bad entries.

A NaN compares false with everything, so the usual reductions drop it silently and a failed
measurement can pass:

* Python's ``max(0.0, nan)`` is ``0.0`` and ``min(inf, nan)`` is ``inf`` (the NaN is lost when it
  comes second), so a running ``worst = max(worst, err)`` forgets a NaN error;
* ``np.nanmax``, ``np.nanmin``, ``np.nanmean`` skip NaNs by design, and ``np.fmax``/``np.fmin``
  prefer the number;
* ``int(np.sum(err > tol))`` does not count a NaN error as bad (``nan > tol`` is false), and a flag
  ``err <= tol`` recorded as a boolean hides that ``err`` was NaN.

:func:`worst` and :func:`least` are ``max`` and ``min`` that return NaN as soon as one value is NaN
(otherwise exactly Python's ``max``/``min``: the same value, of the same type); :func:`count_bad`
counts the entries that fail a condition *or* are not finite; :func:`share` is the fraction of
entries where a condition holds, NaN when a value it was computed from is NaN. ``np.max``, ``np.min``, ``np.mean``
and ``np.maximum`` propagate NaN already and need no helper.
"""

from __future__ import annotations

import math
from typing import Any

from spectral.floor.backend import array_namespace

__all__ = ["count_bad", "least", "share", "worst"]

_NO_DEFAULT = object()


def _values(values: tuple, default: Any, name: str) -> tuple[list, bool]:
    """The values of a ``max``-like call (several arguments or one iterable) and whether one is NaN."""
    items = list(values[0]) if len(values) == 1 else list(values)
    if not items and default is _NO_DEFAULT:
        raise ValueError(f"{name}() of no values (give default=)")
    return items, any(_is_nan(v) for v in items)


def _is_nan(value: Any) -> bool:
    """Whether a scalar is NaN (complex: either part); an array of more than one entry is refused."""
    if isinstance(value, complex):
        return math.isnan(value.real) or math.isnan(value.imag)
    try:
        return bool(value != value)
    except ValueError:  # an array's truth value is ambiguous: reduce it first (np.max propagates NaN)
        raise TypeError("worst()/least() take scalars; reduce an array with np.max/np.min first") from None


def worst(*values: Any, default: Any = _NO_DEFAULT) -> Any:
    """The largest value, or NaN when any value is NaN.

    Called like Python's ``max``: ``worst(a, b, c)`` or ``worst(iterable)``; ``default`` is returned
    for an empty iterable. When no value is NaN the result is exactly ``max(...)`` (same value and
    type), so replacing ``max`` by ``worst`` changes no finite result; ``+inf`` is the largest
    value, as for ``max``.

    Parameters
    ----------
    *values : scalars, or one iterable of scalars
        Measured values (errors, deviations) of which the largest decides.
    default : optional
        The value of an empty iterable (``ValueError`` without it).

    Returns
    -------
    scalar
        ``max(values)``, or ``float("nan")`` when one of them is NaN.

    Examples
    --------
    >>> max(0.0, float("nan")), worst(0.0, float("nan"))
    (0.0, nan)
    >>> worst([1, 3, 2])
    3
    """
    items, nan = _values(values, default, "worst")
    if nan:
        return math.nan
    return max(items) if items else default


def least(*values: Any, default: Any = _NO_DEFAULT) -> Any:
    """The smallest value, or NaN when any value is NaN (:func:`worst`'s counterpart for ``min``).

    Examples
    --------
    >>> min(math.inf, float("nan")), least(math.inf, float("nan"))
    (inf, nan)
    """
    items, nan = _values(values, default, "least")
    if nan:
        return math.nan
    return min(items) if items else default


def count_bad(values: Any, ok: Any) -> int:
    """How many entries of ``values`` are bad: ``ok`` is false there, or the value is not finite.

    ``ok`` is the condition a good entry meets, computed from ``values`` by the caller
    (``err <= tol``, ``rank == expected``); a comparison is false for NaN in one direction and
    true in the other, so the count adds every non-finite entry whatever ``ok`` says. Both take
    the array namespace of ``values`` (NumPy, CuPy, any array-API library).

    Parameters
    ----------
    values : array
        The measured values.
    ok : array of bool, broadcastable to ``values``
        Where an entry is good.

    Returns
    -------
    int
        The number of entries that are not ok or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> err = np.array([0.1, np.nan, 3.0])
    >>> int(np.sum(err > 1.0)), count_bad(err, err <= 1.0)
    (1, 2)
    """
    xp = array_namespace(values, ok)
    values, ok = xp.asarray(values), xp.asarray(ok)
    if xp.isdtype(values.dtype, "bool") or xp.isdtype(values.dtype, "integral"):
        finite = xp.ones(values.shape, dtype=xp.bool)
    else:
        finite = xp.isfinite(values)
    bad = xp.logical_not(xp.logical_and(ok, finite))
    return int(xp.sum(xp.astype(bad, xp.int64)))


def share(ok: Any, *values: Any) -> float:
    """The fraction of entries where ``ok`` holds, or NaN when any entry of ``values`` is NaN.

    ``ok`` is a condition computed from ``values`` (``mass_a > mass_b``, ``edges == 0``); a
    comparison with a NaN is false (or true, for ``!=``), so ``mean(ok)`` would count a broken
    measurement as an ordinary outcome and a claim "in 95 % of the draws" could still pass. An
    infinity compares as a value (an eigengap ratio is ``inf`` where ``|eta_k| = 1``). Without a
    NaN the result is exactly ``float(mean(ok))``.

    Parameters
    ----------
    ok : array of bool
        Where the condition holds.
    *values : arrays
        The measured values ``ok`` was computed from.

    Returns
    -------
    float
        ``mean(ok)``, or NaN.

    Examples
    --------
    >>> import numpy as np
    >>> a, b = np.array([2.0, 3.0, np.nan]), np.array([1.0, 1.0, 1.0])
    >>> float(np.mean(a > b)), share(a > b, a, b)
    (0.6666666666666666, nan)
    """
    xp = array_namespace(ok, *values)
    for v in values:
        v = xp.asarray(v)
        if not (xp.isdtype(v.dtype, "bool") or xp.isdtype(v.dtype, "integral")) and bool(xp.any(xp.isnan(v))):
            return math.nan
    return float(xp.mean(xp.astype(xp.asarray(ok), xp.float64)))
