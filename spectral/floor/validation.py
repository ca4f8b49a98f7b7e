"""Input validation and the toolkit's error types: one module for the whole toolkit.

This module sits on the floor of the house next to :mod:`spectral.floor.backend`: ``manifolds``,
``spectral``, ``graphs``, ``verify`` and ``figures`` all validate through it, and importing it
loads nothing else of the toolkit.

Error types (the command-line layer maps them to exit codes):

* :class:`InputError` (a ``ValueError``): a parameter outside its allowed range. The message names
  the parameter and the allowed values. CLI exit 2, one line, no traceback.
* :class:`UnavailableError` (a ``RuntimeError``): the environment lacks something the request needs
  (a GPU, an optional dependency). CLI exit 2.
* :class:`ConvergenceError` (a ``RuntimeError``): a numerical method did not converge; the message
  says what did not converge and what to try. CLI exit 1 (the check could not confirm its claim).
* ``spectral.floor.memory.DenseMemoryError`` (a ``MemoryError``): a request refused before allocation.
  CLI exit 2.

Any other exception is a bug and keeps its traceback.

Validators return the normalised value, so a function reads ``alpha = check_real("alpha", alpha,
low=0, high=2, low_open=True)``. Booleans are never accepted as numbers (``True`` is not ``1.0``).
"""

from __future__ import annotations

import math
import zlib
from numbers import Integral, Real

import numpy as np

__all__ = [
    "InputError",
    "UnavailableError",
    "ConvergenceError",
    "check_real",
    "check_int",
    "check_option",
    "check_seed",
    "check_reals",
    "check_ints",
    "as_generator",
    "child_rng",
]


class InputError(ValueError):
    """Bad input: a parameter outside its allowed range (CLI exit 2)."""


class UnavailableError(RuntimeError):
    """The environment lacks what the request needs, e.g. a GPU or an optional package (CLI exit 2)."""


class ConvergenceError(RuntimeError):
    """A numerical method did not converge; the message says what and what to try (CLI exit 1)."""


def _interval(low, high, low_open, high_open) -> str:
    lo = "-inf" if low is None else f"{low}"
    hi = "inf" if high is None else f"{high}"
    left = "(" if (low_open or low is None) else "["
    right = ")" if (high_open or high is None) else "]"
    return f"{left}{lo}, {hi}{right}"


def check_real(name: str, value, *, low=None, high=None, low_open: bool = False, high_open: bool = False,
               finite: bool = True) -> float:
    """Return ``value`` as a float if it is a real number in the interval, else raise :class:`InputError`.

    Parameters
    ----------
    name : str
        Parameter name, used in the message.
    value : object
        The value to check; ``bool`` is refused.
    low, high : float, optional
        Bounds of the allowed interval (``None``: unbounded).
    low_open, high_open : bool
        Whether each bound is excluded.
    finite : bool
        Refuse ``nan`` and ``inf`` (default).

    Examples
    --------
    >>> check_real("alpha", 1.2, low=0, high=2, low_open=True)
    1.2
    >>> check_real("alpha", 3.0, low=0, high=2)
    Traceback (most recent call last):
    ...
    spectral.floor.validation.InputError: alpha must be in [0, 2], got 3.0
    """
    interval = _interval(low, high, low_open, high_open)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.floating, np.integer)):
        raise InputError(f"{name} must be a real number in {interval}, got {value!r}")
    v = float(value)
    if math.isnan(v) or (finite and not math.isfinite(v)):
        kind = "a finite real number" if finite else "a real number (not NaN)"
        raise InputError(f"{name} must be {kind} in {interval}, got {v!r}")
    if low is not None and (v <= low if low_open else v < low):
        raise InputError(f"{name} must be in {interval}, got {v!r}")
    if high is not None and (v >= high if high_open else v > high):
        raise InputError(f"{name} must be in {interval}, got {v!r}")
    return v


def check_int(name: str, value, *, low=None, high=None) -> int:
    """Return ``value`` as an int if it is an integer in ``[low, high]``, else raise :class:`InputError`.

    Python and NumPy integers are accepted; ``bool`` and floats are refused (the command line
    accepts ``1e3`` for an integer option and converts it before it gets here).

    Examples
    --------
    >>> check_int("n", 2000, low=2)
    2000
    >>> check_int("n", True)
    Traceback (most recent call last):
    ...
    spectral.floor.validation.InputError: n must be an integer in (-inf, inf), got True
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)):
        raise InputError(f"{name} must be an integer in {_interval(low, high, False, False)}, got {value!r}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise InputError(f"{name} must be an integer in {_interval(low, high, False, False)}, got {v}")
    return v


def check_reals(name: str, values, *, min_count: int = 1, **bounds) -> tuple[float, ...]:
    """A non-empty tuple of reals, each checked as by :func:`check_real` (``name`` names the tuple)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise InputError(f"{name} must be a sequence of real numbers, got {values!r}")
    out = tuple(check_real(name, v, **bounds) for v in values)
    if len(out) < min_count:
        raise InputError(f"{name} must hold at least {min_count} value(s), got {len(out)}")
    return out


def check_ints(name: str, values, *, low=None, high=None, min_count: int = 1) -> tuple[int, ...]:
    """A tuple of at least ``min_count`` integers, each checked as by :func:`check_int`.

    Examples
    --------
    >>> check_ints("sizes", [32, 128], low=8)
    (32, 128)
    """
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise InputError(f"{name} must be a sequence of integers in {_interval(low, high, False, False)}, "
                         f"got {values!r}")
    out = tuple(check_int(name, v, low=low, high=high) for v in values)
    if len(out) < min_count:
        raise InputError(f"{name} must hold at least {min_count} integer(s), got {len(out)}")
    return out


def check_option(name: str, value, allowed) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise :class:`InputError` listing them.

    Examples
    --------
    >>> check_option("claim", "printed", ("corrected", "printed"))
    'printed'
    """
    allowed = tuple(allowed)
    if not isinstance(value, str) or value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def check_seed(seed) -> int:
    """A seed is an integer >= 0 (``numpy.random.SeedSequence`` entropy)."""
    return check_int("seed", seed, low=0)


def as_generator(rng) -> np.random.Generator:
    """Normalise ``rng`` (None, an int seed >= 0 or a ``numpy.random.Generator``) to a Generator (SPEC 7).

    ``None`` gives a fresh OS-seeded generator; no global state is used.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, (Integral, np.integer)) and not isinstance(rng, (bool, np.bool_)) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise InputError(f"rng must be None, an integer seed >= 0 or a numpy.random.Generator, got {rng!r}")


def _key(part) -> int:
    if isinstance(part, (Integral, np.integer)) and not isinstance(part, bool):
        return int(part)
    return zlib.crc32(str(part).encode("utf-8"))


def child_rng(seed: int, *keys) -> np.random.Generator:
    """An independent random stream for one part of a computation, named by ``keys``.

    The stream is ``SeedSequence(seed, spawn_key=keys)``: the same seed and keys always give
    the same draws, different keys give independent streams, and adding a new part (a new key)
    never changes the draws of another. String keys are mapped to integers by CRC-32.

    Examples
    --------
    >>> a = child_rng(0, "grid").standard_normal(2)
    >>> b = child_rng(0, "grid").standard_normal(2)
    >>> bool((a == b).all())
    True
    >>> bool((child_rng(0, "random").standard_normal(2) == a).any())
    False
    """
    seed = check_seed(seed)
    ss = np.random.SeedSequence(seed, spawn_key=tuple(_key(k) for k in keys))
    return np.random.default_rng(ss)
