"""Convergence rates as a first-class claim: is ``error(n) ~ n^p``, with a confidence interval?

:func:`check_rate` measures ``error(n)`` at each size (``repeats`` times with independent seeded
streams when the error is random), fits the observed order, bootstraps a confidence interval over
the repeats, looks at the local orders, and decides a claim of one of two kinds:

* ``kind="equal"``: the observed order equals ``p = claimed``;
* ``kind="bound"``: ``error = O(n^p)``, so the observed order is ``p`` or steeper (more negative).

The numbers
    ``order`` is the least-squares slope of ``log error`` on ``log n`` over every repeat at every
    size. ``local_orders`` are the slopes between successive sizes of the mean log error per size.
    A random error's intervals come from a paired bootstrap over the repeats (``n_boot`` resamples
    of the repeat indices, the same indices at every size, seeded): valid for independent streams
    and for errors that share samples across sizes alike. A deterministic error (``error(n)``,
    measured once per size) has the fit's Student-t interval for the order (degenerate for an exact
    power law) and exact local orders.

The rule (``tolerance`` is the half-width of the band ``[p - tolerance, p + tolerance]``)
    1. A non-finite error fails (``status="non-finite"``); an error at or below ``floor`` is
       round-off (``"round-off"``): a slope through it measures the floating point, not the method.
    2. Settled or not: a local order *differs* from the last one (the one nearest n -> infinity)
       when their difference exceeds ``tolerance / 2`` beyond the repeats' noise (its whole
       interval lies outside ``[-tolerance/2, tolerance/2]``). When none differs the run is
       asymptotic and the fitted order decides, with its interval ``[lo, hi]``:

       * ``equal``: pass when ``[lo, hi]`` lies inside the band, fail when it lies wholly outside,
         otherwise ``"inconclusive"`` (the interval straddles an edge: more repeats or sizes decide);
       * ``bound``: pass when ``hi <= p + tolerance``, fail when ``lo > p + tolerance``, otherwise
         ``"inconclusive"``.
    3. When a local order differs, the local orders are still moving and the fit over all sizes
       mixes regimes. Assuming the drift keeps its direction (a leading power with a correction of
       one sign), the asymptotic order lies beyond the last local order ``L`` (interval
       ``[L_lo, L_hi]``) in the direction of the drift, which still decides these cases:

       * steepening (``L`` below the local order that differs): a ``bound`` passes when
         ``L_hi <= p + tolerance`` (a method converging ever faster, e.g. spectrally, satisfies any
         algebraic bound it already meets); an ``equal`` claim fails when ``L_hi < p - tolerance``;
       * rising: both kinds fail when ``L_lo > p + tolerance``.

       Anything else is ``"pre-asymptotic"``: the run neither passes nor fails silently, its message
       lists the local orders ("local orders still moving: -0.31, -0.42, -0.47") so that the sizes
       can be raised.

``passed`` is true only for ``status == "pass"``; on the command line every other status exits 1
(see :mod:`verify.rate`).

Why an interval inside the band, not the point order: ``tolerance`` is how close the order must be,
so a pass must mean that the order is within it at the stated confidence (an equivalence test); a
noisy run whose interval is wider than the band cannot establish that and says
``"inconclusive"`` instead of passing by luck or failing a true claim. The checks of the papers
decide their rates with tolerances *calibrated* over seeds (the band already holds the measured
spread of the point order), so they assert the point order with :func:`record_rate` and report
the interval and local orders beside it.

Established projects assert orders with a fixed slack over a few refinements (every pairwise
order above expected - 0.1; |order - expected| < 0.1 from Monte Carlo means; a fitted line): the
rule here adds the repeats' spread and the test that the regime is asymptotic.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from spectral.validation import InputError, check_int, check_option, check_real, child_rng

__all__ = ["KINDS", "STATUSES", "RateQuantities", "RateResult", "check_rate", "measure_rate", "decide_rate",
           "rate_records", "record_rate", "record_bound", "rate_check_result", "takes_rng", "function_label"]

KINDS = ("equal", "bound")

#: what a decision can be: only ``"pass"`` passes (see the module docstring for each)
STATUSES = ("pass", "fail", "inconclusive", "pre-asymptotic", "round-off", "non-finite")


@dataclasses.dataclass(frozen=True)
class RateQuantities:
    """What a rate check measures: the errors at each size and repeat.

    Attributes
    ----------
    sizes : ndarray of shape (s,)
        The sizes n, increasing (n -> infinity is the asymptote).
    errors : ndarray of shape (s, r)
        ``errors[i, j]`` is the error at ``sizes[i]`` in repeat ``j`` (``r = 1`` when deterministic).
    deterministic : bool
        Whether ``error`` takes no random stream (one measurement per size).
    label : str
        The error function in words (``package.module:function`` or its qualified name).
    """

    sizes: np.ndarray
    errors: np.ndarray
    deterministic: bool
    label: str = ""


@dataclasses.dataclass(frozen=True)
class RateResult:
    """The decision on a claimed rate (see the module docstring for the rule).

    Attributes
    ----------
    order : float
        Least-squares slope of log error on log n over all repeats at all sizes.
    interval : tuple of float
        Confidence interval of ``order`` at ``confidence``.
    local_orders : tuple of float
        Slopes between successive sizes (of the mean log error per size).
    local_intervals : tuple of (float, float)
        Confidence interval of each local order (degenerate when deterministic).
    asymptotic : bool
        Whether the local orders have settled (none differs from the last by more than tolerance / 2).
    passed : bool
        Whether the claim holds by the rule (``status == "pass"``).
    status : str
        One of :data:`STATUSES`.
    message : str
        One line: what was decided and why.
    claimed, kind, tolerance, confidence, seed, n_boot, floor : as given
    intercept : float
        Intercept of the fitted line ``log error = intercept + order log n``.
    band : ndarray of shape (s, 2)
        Confidence band of the fitted line at each size (errors, not logs), for the figure.
    quantities : RateQuantities
        The measured errors.
    """

    order: float
    interval: tuple[float, float]
    local_orders: tuple[float, ...]
    local_intervals: tuple[tuple[float, float], ...]
    asymptotic: bool
    passed: bool
    status: str
    message: str
    claimed: float
    kind: str
    tolerance: float
    confidence: float
    seed: int
    n_boot: int
    floor: float
    intercept: float
    band: np.ndarray
    quantities: RateQuantities

    def __repr__(self) -> str:
        lo, hi = self.interval
        return (f"RateResult(status={self.status!r}, order={self.order:.4g}, interval=({lo:.4g}, {hi:.4g}), "
                f"claimed={self.claimed:g}, kind={self.kind!r})")

    # -- the usual views: records, table, final line, JSON, figure ------------------------------------
    def check_result(self, parameters: Mapping[str, Any] | None = None):
        """This decision as a :class:`~verify.core.result.CheckResult` of the check ``rate``.

        The same records, table, final line and JSON as ``python -m verify.rate`` prints for the
        same errors; ``parameters`` replaces the recorded parameters (the command line passes its own).
        """
        return rate_check_result(self, parameters)

    @property
    def records(self):
        """The assertion and informational records (:func:`rate_records`)."""
        return self.check_result().records

    def summary(self) -> str:
        """The table: the deciding records, the informational values, the message and the parameters."""
        return self.check_result().summary()

    def final_line(self) -> str:
        """``PASS rate: <statement>`` or ``FAIL rate: <what differed>``."""
        return self.check_result().final_line()

    def to_json(self, path=None, *, indent: int | None = 2) -> str:
        """The JSON of :meth:`check_result` (records, parameters, the measured errors, provenance)."""
        return self.check_result().to_json(path, indent=indent)

    def plot(self, path) -> None:
        """Save the figure (log-log errors, the fitted order with its band, the claimed slope) to ``path``.

        Needs matplotlib and the toolkit's ``figures`` package (found through its entry point).
        """
        from verify.core.cli import check_plot_path
        from verify.core.drawing import figure_saver

        check_plot_path(str(path))
        save = figure_saver("rate")
        if save is None:
            from spectral.validation import UnavailableError

            raise UnavailableError("no installed figures provider draws the rate figure (install attention-limits)")
        save(self.check_result(), str(path))


def takes_rng(error: Callable) -> bool:
    """Whether ``error`` takes a second argument (the random stream): ``error(n, rng)`` vs ``error(n)``."""
    try:
        params = [p for p in inspect.signature(error).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):  # a builtin without a signature: called as error(n)
        return False
    required = [p for p in params if p.kind is p.VAR_POSITIONAL or p.default is p.empty]
    return len(required) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


def function_label(error: Callable) -> str:
    """``module:qualname`` of a function (its repr when it has none)."""
    module, name = getattr(error, "__module__", None), getattr(error, "__qualname__", None)
    return f"{module}:{name}" if module and name else repr(error)


def _sizes(sizes) -> np.ndarray:
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise InputError(f"sizes must be a sequence of at least 3 increasing integers, got {sizes!r}")
    out = [check_int("sizes", n, low=1) for n in sizes]
    if len(out) < 3:
        raise InputError(f"sizes must hold at least 3 increasing integers (local orders need them), got {len(out)}")
    if any(b <= a for a, b in zip(out, out[1:])):
        raise InputError(f"sizes must increase, got {tuple(out)}")
    return np.asarray(out, dtype=np.int64)


def _number(value, label: str, n: int) -> float:
    """One real number from what the error function returned (InputError naming it otherwise)."""
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise InputError(f"error function {label} must return one real number, got {type(value).__name__} "
                         f"{value!r} at n = {n}")
    try:
        arr = np.asarray(value)
        if arr.size != 1 or np.iscomplexobj(arr):
            raise TypeError
        return float(arr.reshape(()))
    except (TypeError, ValueError):
        raise InputError(f"error function {label} must return one real number, got {type(value).__name__} at "
                         f"n = {n}") from None


def measure_rate(error: Callable, sizes: Sequence[int], *, repeats: int = 8, seed: int = 0,
                 random: bool | None = None, label: str | None = None) -> RateQuantities:
    """Measure ``error(n, rng)`` (``repeats`` independent streams per size) or ``error(n)`` (once per size).

    The stream of repeat ``j`` at size ``n`` is ``child_rng(seed, "rate", n, j)``: adding a size or a
    repeat never changes the draws of another. ``random`` overrides the arity test of
    :func:`takes_rng`; ``label`` names the function in messages. A value that is not one real number
    is an :class:`~spectral.validation.InputError` naming the function and the size; an exception
    raised by ``error`` propagates unchanged.
    """
    sizes = _sizes(sizes)
    repeats = check_int("repeats", repeats, low=2)
    random = takes_rng(error) if random is None else bool(random)
    label = function_label(error) if label is None else label
    r = repeats if random else 1
    errors = np.empty((sizes.size, r))
    for i, n in enumerate(sizes):
        for j in range(r):
            value = error(int(n), child_rng(seed, "rate", int(n), j)) if random else error(int(n))
            errors[i, j] = _number(value, label, int(n))
    return RateQuantities(sizes=sizes, errors=errors, deterministic=not random, label=label)


def _fmt(values) -> str:
    return ", ".join(f"{v:.3g}" for v in values)


def _quantiles(values: np.ndarray, confidence: float) -> np.ndarray:
    """Percentile interval of ``values`` along axis 0: shape ``(2, ...)``."""
    a = (1 - confidence) / 2
    return np.quantile(values, [a, 1 - a], axis=0)


def _statistics(logn, loge, *, confidence, seed, n_boot):
    """order, interval, intercept, band (logs), local orders, their intervals, and intervals of L_i - L_last."""
    s, r = loge.shape
    x = logn - logn.mean()
    sxx = float(np.sum(x * x))
    means = loge.mean(axis=1)  # balanced design: the slope over all repeats is the slope of the means
    order = float(np.sum(x * (means - means.mean())) / sxx)
    intercept = float(means.mean() - order * logn.mean())
    local = np.diff(means) / np.diff(logn)
    diffs = local[:-1] - local[-1]
    if r == 1:
        from scipy.special import stdtrit  # = scipy.stats.t.ppf (what it evaluates), without importing scipy.stats

        resid = means - (intercept + order * logn)
        dof = s - 2
        se2 = float(np.sum(resid**2)) / dof if dof > 0 else 0.0
        t = float(stdtrit(dof, 0.5 + confidence / 2)) if dof > 0 else 0.0
        half = t * math.sqrt(se2 / sxx)
        interval = (order - half, order + half)
        line = intercept + order * logn
        width = t * np.sqrt(se2 * (1 / s + x**2 / sxx))
        band = np.stack([line - width, line + width], axis=1)
        local_iv = np.stack([local, local], axis=1)
        diff_iv = np.stack([diffs, diffs], axis=1)
        return order, interval, intercept, band, local, local_iv, diff_iv
    rng = child_rng(seed, "rate-bootstrap")
    idx = rng.integers(0, r, size=(n_boot, r))  # paired: the same repeats at every size
    boot = loge[:, idx].mean(axis=2).T  # (n_boot, s)
    slopes = (boot - boot.mean(axis=1, keepdims=True)) @ x / sxx
    icpts = boot.mean(axis=1) - slopes * logn.mean()
    lines = icpts[:, None] + slopes[:, None] * logn[None, :]
    blocal = np.diff(boot, axis=1) / np.diff(logn)
    # the settling test compares s - 2 local orders with the last: Bonferroni over them (a noisy run of an exact
    # power law must not read as moving)
    diff_level = 1 - (1 - confidence) / max(s - 2, 1)
    lo, hi = _widened(slopes, order, confidence, r)
    band = _widened(lines, intercept + order * logn, confidence, r).T
    local_iv = _widened(blocal, local, confidence, r).T
    diff_iv = _widened(blocal[:, :-1] - blocal[:, -1:], diffs, diff_level, r).T if s > 2 else np.empty((0, 2))
    return order, (float(lo), float(hi)), intercept, band, local, local_iv, diff_iv


def _widened(values: np.ndarray, estimate, confidence: float, r: int) -> np.ndarray:
    """Percentile interval of bootstrap ``values`` about ``estimate``, widened for ``r`` repeats.

    Resampling r repeats spreads a mean by sqrt((r - 1)/r) of its standard error, and a normal quantile
    is below Student's with r - 1 degrees of freedom: both ends move away from the estimate by
    t_{r-1} / z sqrt(r / (r - 1)) (1.29 at 8 repeats, 1.03 at 64). Measured coverage of the 95 % interval of
    the order (|N(0,1)| n^-1/2, n = 100..800) before the widening 0.91 / 0.89 / 0.94 at 8 / 16 / 64 repeats
    (200 seeds), after it 0.97 / 0.953 / 0.948 / 0.945 at 8 / 16 / 32 / 64 repeats (200 / 600 / 400 / 200
    seeds); the same runs read as moving (pre-asymptotic, tolerance 0.5) in 1 % / 1.5 % / 3 % / 0.5 %.
    """
    # Student's and the normal quantile by the functions scipy.stats.t.ppf and norm.ppf evaluate (the same
    # numbers), without importing scipy.stats (about 1 s of CPU in a fresh interpreter)
    from scipy.special import ndtri, stdtrit

    q = 0.5 + confidence / 2
    factor = float(stdtrit(r - 1, q) / ndtri(q)) * math.sqrt(r / (r - 1))
    lo, hi = _quantiles(values, confidence)
    return np.stack([estimate - factor * (estimate - lo), estimate + factor * (hi - estimate)])


def decide_rate(q: RateQuantities, *, claimed: float, kind: str = "equal", confidence: float = 0.95,
                tolerance: float = 0.05, seed: int = 0, n_boot: int = 2000, floor: float = 1e-13) -> RateResult:
    """Decide a claimed rate on measured errors by the rule of the module docstring.

    Parameters
    ----------
    q : RateQuantities
        The errors (:func:`measure_rate`, or built from a check's own measurements).
    claimed, kind, confidence, tolerance, seed, n_boot, floor
        As in :func:`check_rate`.

    Returns
    -------
    RateResult
    """
    claimed = check_real("claimed", claimed)
    kind = check_option("kind", kind, KINDS)
    confidence = check_real("confidence", confidence, low=0.5, high=1.0, high_open=True)
    tolerance = check_real("tolerance", tolerance, low=0.0, low_open=True)
    n_boot = check_int("n_boot", n_boot, low=100)
    floor = check_real("floor", floor, low=0.0)
    errors = np.asarray(q.errors, dtype=float)
    sizes = np.asarray(q.sizes, dtype=float)
    if errors.ndim != 2 or errors.shape[0] != sizes.size or sizes.size < 3:
        raise InputError(f"errors must have shape (sizes, repeats) with at least 3 sizes, got {errors.shape} for "
                         f"{sizes.size} sizes")
    if not (np.all(np.isfinite(sizes)) and np.all(sizes > 0) and np.all(np.diff(sizes) > 0)):
        raise InputError(f"sizes must be positive and increasing, got {tuple(sizes)}")
    common = dict(claimed=claimed, kind=kind, tolerance=tolerance, confidence=confidence, seed=int(seed),
                  n_boot=n_boot, floor=floor, quantities=q)
    who = f"{q.label}: " if q.label else ""
    nonfinite = ~np.isfinite(errors)
    if nonfinite.any():
        i, j = np.argwhere(nonfinite)[0]
        return _undecided("non-finite", f"{who}the error is not finite ({float(errors[i, j])!r} at n = {sizes[i]:g}, "
                                        f"repeat {j}): no rate", sizes.size, common)
    if np.any(errors < 0):
        raise InputError("errors must be >= 0 (a distance to the exact value)")
    low = errors <= floor
    if low.any():
        i = int(np.argwhere(low)[0][0])
        return _undecided("round-off", f"{who}the error reaches round-off ({errors[i].min():.2g} <= {floor:g} at "
                                       f"n = {sizes[i]:g}): a slope through it measures the floating point; use "
                                       "smaller sizes", sizes.size, common)
    logn = np.log(sizes)
    order, interval, intercept, band, local, local_iv, diff_iv = _statistics(
        logn, np.log(errors), confidence=confidence, seed=seed, n_boot=n_boot)
    settle = tolerance / 2
    differs = (diff_iv[:, 0] > settle) | (diff_iv[:, 1] < -settle)
    asymptotic = not bool(differs.any())
    lo, hi = interval
    p, top, bottom = claimed, claimed + tolerance, claimed - tolerance
    ci = f"{100 * confidence:g} % interval [{lo:.4g}, {hi:.4g}]"
    what = f"error ~ n^{p:g}" if kind == "equal" else f"error = O(n^{p:g})"
    band_text = f"[{bottom:.4g}, {top:.4g}]" if kind == "equal" else f"<= {top:.4g}"
    tail = f"; local orders {_fmt(local)}"
    if asymptotic:
        if kind == "equal":
            status = ("pass" if bottom <= lo and hi <= top else
                      "fail" if hi < bottom or lo > top else "inconclusive")
        else:
            status = "pass" if hi <= top else "fail" if lo > top else "inconclusive"
        if status == "pass":
            message = f"{who}{what} holds: order {order:.4g}, {ci} inside {band_text}{tail}"
        elif status == "fail":
            message = f"{who}{what} does not hold: order {order:.4g}, {ci} outside {band_text}{tail}"
        else:
            message = (f"{who}cannot decide {what}: order {order:.4g}, {ci} reaches outside {band_text} but not "
                       f"wholly: more repeats (the interval narrows like 1/sqrt(repeats)) or a wider size range "
                       f"decide{tail}")
    else:
        j = int(np.flatnonzero(differs)[-1])
        last, (llo, lhi) = float(local[-1]), local_iv[-1]
        steepening = last < local[j]
        status = "pre-asymptotic"
        if steepening and kind == "bound" and lhi <= top:
            status = "pass"
            message = (f"{who}{what} holds: the local orders steepen ({_fmt(local)}) and the last one is already "
                       f"steeper than the bound (its interval [{llo:.4g}, {lhi:.4g}] is {band_text})")
        elif steepening and kind == "equal" and lhi < bottom:
            status = "fail"
            message = (f"{who}{what} does not hold: the local orders steepen past the band [{bottom:.4g}, {top:.4g}] "
                       f"({_fmt(local)}; the last one's interval [{llo:.4g}, {lhi:.4g}]): faster than claimed")
        elif not steepening and llo > top:
            status = "fail"
            message = (f"{who}{what} does not hold: the local orders rise above {top:.4g} ({_fmt(local)}; the last "
                       f"one's interval [{llo:.4g}, {lhi:.4g}]): slower than claimed")
        else:
            message = (f"{who}local orders still moving: {_fmt(local)} (n = {sizes[j]:g}..{sizes[j + 1]:g} differs "
                       f"from the last by {local[j] - last:+.3g}, more than tolerance/2 = {settle:g}); order "
                       f"{order:.4g}, {ci}: raise the sizes")
    return RateResult(order=float(order), interval=(float(lo), float(hi)),
                      local_orders=tuple(float(v) for v in local),
                      local_intervals=tuple((float(a), float(b)) for a, b in local_iv), asymptotic=asymptotic,
                      passed=status == "pass", status=status, message=message, intercept=float(intercept),
                      band=np.exp(band), **common)


def _undecided(status, message, s, common) -> RateResult:
    nan = math.nan
    return RateResult(order=nan, interval=(nan, nan), local_orders=(), local_intervals=(), asymptotic=False,
                      passed=False, status=status, message=message, intercept=nan, band=np.full((s, 2), nan),
                      **common)


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
        Level of the intervals, in [0.5, 1).
    tolerance : float
        Half-width of the accepted band around p; local orders settle within tolerance / 2.
    n_boot : int
        Bootstrap resamples (>= 100).
    floor : float
        Errors at or below this are round-off: the run is refused rather than fitted.

    Returns
    -------
    RateResult
        ``order``, ``interval``, ``local_orders``, ``asymptotic``, ``passed``, ``status``, ``message``;
        ``summary()``, ``to_json()``, ``plot(path)``.

    Examples
    --------
    >>> def mc_error(n, rng):                  # |mean of n uniforms - 1/2|: order -1/2
    ...     return abs(rng.random(n).mean() - 0.5)
    >>> res = check_rate(mc_error, [1000, 4000, 16000, 64000], claimed=-0.5, repeats=64, tolerance=0.15)
    >>> res.status
    'pass'
    """
    q = measure_rate(error, sizes, repeats=repeats, seed=seed)
    return decide_rate(q, claimed=claimed, kind=kind, confidence=confidence, tolerance=tolerance, seed=seed,
                       n_boot=n_boot, floor=floor)


# -- records -------------------------------------------------------------------------------------------------
def _rule_why(res: RateResult) -> str:
    return (f"verify.rates rule ({res.kind}): the {100 * res.confidence:g} % interval of the order against "
            f"n^{res.claimed:g} with tolerance {res.tolerance:g} (the user's band), local orders settled within "
            f"{res.tolerance / 2:g}")


def rate_records(rec, res: RateResult) -> str:
    """Record the decision ``res`` on a :class:`~verify.core.result.Recorder`; return the statement tested.

    Deciding records: the interval's ends against the band when the run is asymptotic
    (``interval_low`` / ``interval_high``), the last local order when the drift decides
    (``last_local_order_low`` / ``_high``), ``local_orders_settled`` when the run is pre-asymptotic,
    ``smallest_error`` at round-off and ``errors_finite`` for a non-finite error; the order, the
    interval, the local orders and the status are informational. The recorded verdict equals
    ``res.passed``.
    """
    p, tol = res.claimed, res.tolerance
    top, bottom = p + tol, p - tol
    why = _rule_why(res)
    if res.status == "non-finite":
        rec.holds("errors_finite", False, why="a non-finite error never passes", label=res.message)
    elif res.status == "round-off":
        smallest = float(np.min(res.quantities.errors))
        rec.at_least("smallest_error", smallest, res.floor, why=f"errors at or below floor {res.floor:g} are "
                     "round-off: a slope through them measures the floating point", label=res.message)
    elif res.asymptotic:
        lo, hi = res.interval
        label = res.message
        if res.kind == "equal":  # the message labels the first failing end only (one line per failure)
            rec.within("interval_low", lo, (bottom, top), why=why, label=label)
            low_failed = not (bottom <= lo <= top)
            rec.within("interval_high", hi, (bottom, top), why=why, label="" if low_failed else label)
        else:
            rec.at_most("interval_high", hi, top, why=why, label=label)
    elif res.status == "pre-asymptotic":
        rec.holds("local_orders_settled", False, why=f"local orders must agree within tolerance/2 = {tol / 2:g} "
                  "before a fitted order means anything", label=res.message)
    else:  # the drift decides: the last local order's interval against the band
        llo, lhi = res.local_intervals[-1]
        why_drift = why + "; the local orders drift, so the last one (nearest n -> infinity) decides"
        if res.status == "pass":  # a bound, steepening: the last local order is already below the bound
            rec.at_most("last_local_order_high", lhi, top, why=why_drift, label=res.message)
        elif lhi < bottom:  # an equal claim, steepening past the band
            rec.at_least("last_local_order_high", lhi, bottom, why=why_drift, label=res.message)
        else:  # rising above the band
            rec.at_most("last_local_order_low", llo, top, why=why_drift, label=res.message)
    rec.info("order", res.order)
    rec.info("interval", res.interval)
    rec.info("local_orders", res.local_orders)
    rec.info("asymptotic", res.asymptotic)
    rec.info("status", res.status)
    rec.note(res.message)
    how = "equals" if res.kind == "equal" else "is at most (error = O(n^p))"
    who = f"{res.quantities.label}: " if res.quantities.label else ""
    return (f"{who}the order of the error {how} p = {res.claimed:g} within {res.tolerance:g}, at "
            f"{100 * res.confidence:g} % confidence over n = {', '.join(f'{n:g}' for n in res.quantities.sizes)}")


def record_bound(rec, tag: str, res: RateResult, *, why: str, label: str) -> None:
    """A check's one-sided rate decision ``res`` (``kind="bound"``, e.g. on sampled errors) on ``rec``.

    The deciding record ``<tag>_rate`` holds ``res.passed`` (``why`` and ``label`` as for
    :meth:`~verify.core.result.Recorder.holds`, the label usually carrying ``res.status``); the fitted order and
    its interval are informational: ``<tag>_order``, ``<tag>_order_low``, ``<tag>_order_high``.
    """
    rec.holds(f"{tag}_rate", res.passed, why=why, label=label)
    rec.info(f"{tag}_order", res.order)
    rec.info(f"{tag}_order_low", res.interval[0])
    rec.info(f"{tag}_order_high", res.interval[1])


def rate_check_result(res: RateResult, parameters: Mapping[str, Any] | None = None):
    """A :class:`~verify.core.result.CheckResult` of the check ``rate`` holding ``res``'s records."""
    from verify.core.provenance import versions
    from verify.core.result import CheckResult, Recorder

    q = res.quantities
    if parameters is None:
        parameters = {"error": q.label, "sizes": tuple(int(n) for n in q.sizes), "claimed": res.claimed,
                      "kind": res.kind, "repeats": int(q.errors.shape[1]), "confidence": res.confidence,
                      "tolerance": res.tolerance, "n_boot": res.n_boot, "floor": res.floor, "seed": res.seed,
                      "device": "cpu"}
    rec = Recorder(check="rate")
    statement = rate_records(rec, res)
    findings = rec.finish(statement)
    out = CheckResult(check="rate", claims=(), statement=statement, records=findings.records,
                      parameters=dict(parameters), versions=versions(), notes=findings.notes, quantities=q)
    assert out.passed == res.passed, (out.failures, res.status)
    return out


def record_rate(rec, name: str, order: float, claimed: float, *, atol, x, errors, asymptote: str = "large",
                why: str = "", label: str = "", hint: str = "", confidence: float = 0.95):
    """A check's rate decision with a *calibrated* tolerance: the point order within ``atol`` of ``claimed``.

    The papers' checks calibrate their tolerances over seeds (the band holds the measured spread of
    the fitted order), so the point order decides (``rec.close(name, order, claimed, atol=atol)``:
    the record and verdict the check always had). Beside it this records, from the same data by
    :func:`decide_rate`, the order's confidence interval (``<name>_interval``, the fit's Student-t
    interval: one pooled error per size) and the local orders (``<name>_local_orders``, nearest the
    asymptote last); when the decision fails and the local orders are still moving, the hint says so.

    Parameters
    ----------
    rec : Recorder
    name : str
        The record's name.
    order : float
        The fitted order the check measured (its quantity: tests alter it).
    claimed : float
        The claimed order, in the check's variable.
    atol : float or Tolerance
        The calibrated tolerance (a :class:`~verify.core.calibration.Tolerance` or a number with ``why``).
    x, errors : array_like
        The check's variable (sizes, or steps such as eps) and one error per value.
    asymptote : {"large", "small"}
        Where the claim's limit is: ``"large"`` x (sizes n) or ``"small"`` x (steps, eps -> 0).
    why, label, hint : str
        As for :meth:`~verify.core.result.Recorder.close`.
    """
    check_option("asymptote", asymptote, ("large", "small"))
    tolerance = float(getattr(atol, "value", atol))
    x = np.asarray(x, dtype=float).ravel()
    e = np.asarray(errors, dtype=float).ravel()
    order_x = np.argsort(x)
    x, e = x[order_x], e[order_x]
    sizes, sign = (x, 1.0) if asymptote == "large" else (1.0 / x[::-1], -1.0)
    if asymptote == "small":
        e = e[::-1]
    res = None  # no diagnosis where there is no power law to fit (fewer than 3 values, signs changing)
    if x.size >= 3 and x.size == e.size and np.all(x > 0) and np.all(np.diff(x) > 0) and not np.any(e < 0):
        res = decide_rate(RateQuantities(sizes=sizes, errors=e[:, None], deterministic=True),
                          claimed=sign * float(claimed), kind="equal", tolerance=max(tolerance, 1e-12),
                          confidence=confidence)
    moving = ""
    if res is not None and res.status == "pre-asymptotic":
        moving = f"local orders still moving: {_fmt(sign * v for v in res.local_orders)} (nearest the limit last)"
    record = rec.close(name, order, claimed, atol=atol, why=why, label=label,
                       hint="; ".join(h for h in (hint, moving) if h))
    if res is not None:
        lo, hi = res.interval
        rec.info(f"{name}_interval", (sign * lo, sign * hi) if sign > 0 else (sign * hi, sign * lo))
        rec.info(f"{name}_local_orders", tuple(sign * v for v in res.local_orders))
    return record
