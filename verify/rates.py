"""Convergence rates as a first-class claim: is ``error(n) ~ n^p`` with a confidence interval?

:func:`check_rate` measures ``error(n)`` at each size (``repeats`` times with independent seeded
streams when the error is random), fits the observed order, bootstraps a confidence interval over
the repeats, and decides a claim of one of two kinds:

* ``kind="equal"``: the observed order equals ``claimed``. Passes when the whole confidence
  interval lies in ``[claimed - tolerance, claimed + tolerance]``.
* ``kind="bound"``: ``error = O(n^claimed)``, so the observed order is ``claimed`` or steeper (more
  negative). Passes when the interval's upper end is at most ``claimed + tolerance``.

In both cases the run must be in its asymptotic regime: the local orders (slopes between
successive sizes, of the mean log error) must have settled. They are still moving when the last
differs from the one before by more than ``tolerance / 2``, beyond the repeats' noise (the whole
bootstrap interval of that difference is outside ``[-tolerance/2, tolerance/2]``); for a bound only
a drift towards shallower orders counts (a method that converges ever faster satisfies a bound). A
run whose local orders are still moving neither passes nor fails silently: its status is
``"pre-asymptotic"`` and its message lists them ("local orders still moving: -0.31, -0.42,
-0.47"), so the sizes can be raised. Errors at round-off (below ``floor``) are refused for the same
reason: a slope through them measures the floating point, not the method.

The order is the least-squares slope of ``log error`` on ``log n`` over every repeat at every size;
the interval resamples the repeats at each size (a stratified bootstrap, ``n_boot`` resamples,
seeded) and takes the percentile interval at ``confidence``. A deterministic error (a function of
``n`` alone) is measured once per size and its interval is the fit's own t interval, which is
degenerate for exact power laws.

Established projects assert orders with a fixed slack over a few refinements (every pairwise
order above expected - 0.1; |order - expected| < 0.1 from Monte Carlo means; a fitted line):
the rule here adds the repeats' spread and the check that the regime is asymptotic.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Sequence

import numpy as np

from spectral.validation import InputError, check_int, check_option, check_real, child_rng

__all__ = ["RateQuantities", "RateResult", "KINDS", "check_rate", "measure_rate", "decide_rate", "takes_rng"]

KINDS = ("equal", "bound")


@dataclasses.dataclass(frozen=True)
class RateQuantities:
    """What a rate check measures: the errors at each size and repeat.

    Attributes
    ----------
    sizes : ndarray of shape (s,)
        The sizes n, increasing.
    errors : ndarray of shape (s, r)
        ``errors[i, j]`` is the error at ``sizes[i]`` in repeat ``j`` (``r = 1`` when deterministic).
    deterministic : bool
        Whether ``error`` takes no random stream (one measurement per size).
    """

    sizes: np.ndarray
    errors: np.ndarray
    deterministic: bool


@dataclasses.dataclass(frozen=True)
class RateResult:
    """The decision on a claimed rate (see the module docstring for the rule).

    Attributes
    ----------
    order : float
        Least-squares slope of log error on log n over all repeats.
    interval : tuple of float
        Confidence interval of the order at ``confidence``.
    local_orders : tuple of float
        Slopes between successive sizes (of the mean log error per size).
    asymptotic : bool
        Whether the local orders have settled (see the module docstring).
    passed : bool
        Whether the claim holds by the rule of ``kind`` in the asymptotic regime.
    status : str
        ``"pass"``, ``"fail"``, ``"pre-asymptotic"`` or ``"round-off"``.
    message : str
        One line: what was decided and why.
    claimed, kind, tolerance, confidence : as given
    quantities : RateQuantities
        The measured errors.
    """

    order: float
    interval: tuple[float, float]
    local_orders: tuple[float, ...]
    asymptotic: bool
    passed: bool
    status: str
    message: str
    claimed: float
    kind: str
    tolerance: float
    confidence: float
    quantities: RateQuantities

    def __repr__(self) -> str:
        lo, hi = self.interval
        return (f"RateResult(status={self.status!r}, order={self.order:.4g}, interval=({lo:.4g}, {hi:.4g}), "
                f"claimed={self.claimed:g}, kind={self.kind!r})")


def takes_rng(error: Callable) -> bool:
    """Whether ``error`` takes a second argument (the random stream): ``error(n, rng)`` vs ``error(n)``."""
    try:
        params = [p for p in inspect.signature(error).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):  # a builtin without a signature: called as error(n)
        return False
    return len(params) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


def _sizes(sizes) -> np.ndarray:
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise InputError(f"sizes must be a sequence of at least 3 increasing integers, got {sizes!r}")
    out = [check_int("sizes", n, low=1) for n in sizes]
    if len(out) < 3:
        raise InputError(f"sizes must hold at least 3 increasing integers (local orders need them), got {len(out)}")
    if any(b <= a for a, b in zip(out, out[1:])):
        raise InputError(f"sizes must increase, got {tuple(out)}")
    return np.asarray(out, dtype=np.int64)


def measure_rate(error: Callable, sizes: Sequence[int], *, repeats: int = 8, seed: int = 0) -> RateQuantities:
    """Measure ``error(n, rng)`` (``repeats`` independent streams per size) or ``error(n)`` (once per size).

    The stream of repeat ``j`` at size ``n`` is ``child_rng(seed, "rate", n, j)``: adding a size or a
    repeat never changes the draws of another.
    """
    sizes = _sizes(sizes)
    repeats = check_int("repeats", repeats, low=2)
    random = takes_rng(error)
    r = repeats if random else 1
    errors = np.empty((sizes.size, r))
    for i, n in enumerate(sizes):
        for j in range(r):
            value = error(int(n), child_rng(seed, "rate", int(n), j)) if random else error(int(n))
            try:
                errors[i, j] = float(value)
            except (TypeError, ValueError):
                raise InputError(f"error({int(n)}) must return one number, got {type(value).__name__}") from None
    return RateQuantities(sizes=sizes, errors=errors, deterministic=not random)


def _local_orders(logn: np.ndarray, mean_log: np.ndarray) -> tuple[float, ...]:
    return tuple(float((mean_log[i + 1] - mean_log[i]) / (logn[i + 1] - logn[i])) for i in range(len(logn) - 1))


def _slope(logn: np.ndarray, loge: np.ndarray) -> float:
    x = logn - logn.mean()
    return float(np.sum(x * (loge - loge.mean())) / np.sum(x * x))


def decide_rate(q: RateQuantities, *, claimed: float, kind: str = "equal", confidence: float = 0.95,
                tolerance: float = 0.05, seed: int = 0, n_boot: int = 2000, floor: float = 1e-13) -> RateResult:
    """Decide a claimed rate on measured errors (the rule of the module docstring)."""
    claimed = check_real("claimed", claimed)
    kind = check_option("kind", kind, KINDS)
    confidence = check_real("confidence", confidence, low=0.5, high=1.0, high_open=True)
    tolerance = check_real("tolerance", tolerance, low=0.0, low_open=True)
    n_boot = check_int("n_boot", n_boot, low=100)
    errors = np.asarray(q.errors, dtype=float)
    sizes = np.asarray(q.sizes, dtype=float)
    nonfinite = ~np.isfinite(errors)
    if nonfinite.any():
        i, j = np.argwhere(nonfinite)[0]
        return _result(q, math.nan, (math.nan, math.nan), (), False, "fail",
                       f"the error is not finite ({errors[i, j]!r} at n = {int(sizes[i])}, repeat {j}): no rate",
                       claimed, kind, tolerance, confidence)
    if np.any(errors < 0):
        raise InputError("errors must be >= 0 (a distance to the exact value)")
    if np.any(errors <= floor):
        i = int(np.argwhere(errors <= floor)[0][0])
        return _result(q, math.nan, (math.nan, math.nan), (), False, "round-off",
                       f"the error reaches round-off ({errors[i].min():.2g} <= {floor:g} at n = {int(sizes[i])}): "
                       "a slope through it measures the floating point; use smaller sizes",
                       claimed, kind, tolerance, confidence)
    logn = np.log(sizes)
    loge = np.log(errors)
    r = errors.shape[1]
    order = _slope(np.repeat(logn, r), loge.ravel())
    local = _local_orders(logn, loge.mean(axis=1))
    drift = local[-1] - local[-2]
    if q.deterministic or r == 1:
        from verify.core.fits import fit_linear

        interval = fit_linear(logn, loge.mean(axis=1)).slope_interval(confidence)
        drift_interval = (drift, drift)
    else:
        rng = child_rng(seed, "rate-bootstrap")
        idx = rng.integers(0, r, size=(n_boot, len(sizes), r))
        boot = np.take_along_axis(np.broadcast_to(loge, (n_boot, *loge.shape)), idx, axis=2)
        x = np.repeat(logn, r) - np.repeat(logn, r).mean()
        y = boot.reshape(n_boot, -1)
        slopes = (y - y.mean(axis=1, keepdims=True)) @ x / np.sum(x * x)
        means = boot.mean(axis=2)
        drifts = ((means[:, -1] - means[:, -2]) / (logn[-1] - logn[-2])
                  - (means[:, -2] - means[:, -3]) / (logn[-2] - logn[-3]))
        a = (1 - confidence) / 2
        interval = (float(np.quantile(slopes, a)), float(np.quantile(slopes, 1 - a)))
        drift_interval = (float(np.quantile(drifts, a)), float(np.quantile(drifts, 1 - a)))
    # still moving: the last local order differs from the one before by more than tolerance / 2, beyond the
    # repeats' noise (the whole interval of the difference); for a bound only a drift towards shallower orders
    settle = tolerance / 2
    rising = drift_interval[0] > settle
    moving = rising if kind == "bound" else (rising or drift_interval[1] < -settle)
    asymptotic = not moving
    lo, hi = interval
    text_local = ", ".join(f"{v:.3g}" for v in local)
    ci = f"{100 * confidence:g} % interval [{lo:.4g}, {hi:.4g}]"
    if not asymptotic:
        return _result(q, order, interval, local, False, "pre-asymptotic",
                       f"local orders still moving: {text_local} (the last two differ by {drift:+.3g}, more than "
                       f"{settle:g}); order {order:.4g}, {ci}: raise the sizes", claimed, kind, tolerance, confidence)
    if kind == "equal":
        passed = claimed - tolerance <= lo and hi <= claimed + tolerance
        rule = f"inside [{claimed - tolerance:.4g}, {claimed + tolerance:.4g}]"
    else:
        passed = hi <= claimed + tolerance
        rule = f"upper end <= {claimed + tolerance:.4g} (order {claimed:g} or steeper)"
    verdict = "holds" if passed else "does not hold"
    message = (f"error ~ n^{claimed:g} ({kind}) {verdict}: order {order:.4g}, {ci}, {rule}? "
               f"{'yes' if passed else 'no'}; local orders {text_local}")
    return _result(q, order, interval, local, True, "pass" if passed else "fail", message, claimed, kind, tolerance,
                   confidence, passed=passed)


def _result(q, order, interval, local, asymptotic, status, message, claimed, kind, tolerance, confidence, *,
            passed=False) -> RateResult:
    return RateResult(order=float(order), interval=(float(interval[0]), float(interval[1])), local_orders=local,
                      asymptotic=asymptotic, passed=bool(passed), status=status, message=message,
                      claimed=float(claimed), kind=kind, tolerance=float(tolerance), confidence=float(confidence),
                      quantities=q)


def check_rate(error: Callable, sizes: Sequence[int], *, claimed: float, kind: str = "equal", repeats: int = 8,
               seed: int = 0, confidence: float = 0.95, tolerance: float = 0.05, n_boot: int = 2000,
               floor: float = 1e-13) -> RateResult:
    """Check that ``error(n)`` decays like ``n^claimed`` (``kind="equal"``) or at least as fast (``"bound"``).

    Parameters
    ----------
    error : callable
        ``error(n, rng) -> float`` (random: measured ``repeats`` times per size with independent
        streams ``rng``) or ``error(n) -> float`` (deterministic: once per size). The error is a
        distance to an exact value, >= 0.
    sizes : sequence of int
        At least 3 increasing sizes (4 or more recommended: the local orders need them).
    claimed : float
        The exponent p of error ~ n^p (e.g. -0.5 for a Monte Carlo mean).
    kind : {"equal", "bound"}
        ``"equal"``: the observed order is p; ``"bound"``: error = O(n^p), the order is p or steeper.
    repeats : int
        Repeats per size of a random error (>= 2).
    seed : int
        Root seed of the repeats' streams and of the bootstrap.
    confidence : float
        Level of the bootstrap interval, in [0.5, 1).
    tolerance : float
        Half-width of the accepted band around p, and the settling tolerance of the local orders.
    n_boot : int
        Bootstrap resamples (>= 100).
    floor : float
        Errors at or below this are round-off: the run is refused rather than fitted.

    Returns
    -------
    RateResult
        ``order``, ``interval``, ``local_orders``, ``asymptotic``, ``passed``, ``status``, ``message``.

    Examples
    --------
    >>> import numpy as np
    >>> def mc_error(n, rng):                  # |mean of n uniforms - 1/2|: order -1/2
    ...     return abs(rng.random(n).mean() - 0.5)
    >>> res = check_rate(mc_error, [1000, 4000, 16000, 64000], claimed=-0.5, repeats=64, tolerance=0.15)
    >>> res.status
    'pass'
    """
    q = measure_rate(error, sizes, repeats=repeats, seed=seed)
    return decide_rate(q, claimed=claimed, kind=kind, confidence=confidence, tolerance=tolerance, seed=seed,
                       n_boot=n_boot, floor=floor)
