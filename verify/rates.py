"""Convergence rates as a first-class claim: does ``error(n)`` decay like ``n^p`` as ``n -> infinity``?

:func:`check_rate` measures ``error(n)`` at each size (``repeats`` times with independent seeded
streams when the error is random, or as many repeats as it takes with ``repeats="auto"``), and
decides a claim of one of two kinds about the *asymptotic* order ``p_inf``:

* ``kind="equal"``: ``p_inf`` is ``p = claimed`` within ``tolerance``;
* ``kind="bound"``: ``error = O(n^p)``: ``p_inf <= p + tolerance``.

``log_power=k`` claims ``error ~ n^p (log n)^k`` instead (the errors are divided by ``(log n)^k``).

The model
    The rule assumes what Richardson extrapolation and the grid convergence index assume: at the
    sizes given the error is ``C n^p (1 + D n^-q)`` with a correction that decays at least like
    ``n^-q_min`` (``correction=q_min``, default 1/2) and is at most the leading term at the first
    size used (``|D n^-q| <= 1``). The local orders then move monotonically towards ``p`` and
    slow down (the drift decelerates). Nothing finite can tell a faster term that still leads at
    every size measured from the asymptotic one: the sizes must reach the regime where the claimed
    term leads.

The rule
    1. A NaN or infinite error never passes (``"non-finite"``). Sizes whose errors sit on a
       round-off floor are left out: an error at or below ``floor``, or, in a trailing run of
       errors below ``roundoff`` (default 1e-8, about the square root of float64's epsilon; set
       about 1e-5 for float32 arithmetic), the sizes from where the local orders leave their trend
       (by more than ``0.05 |order| + 0.05``) on. A claim is then never failed as "slower than
       claimed" because of them: the run is ``"round-off"`` unless the sizes above the floor fail it
       on their own.
    2. The level of the error at each size is a power mean of the repeats, ``(mean e^(1/4))^4``
       (a scale that takes exact zeros and heavy tails). Every number below is a linear contrast
       of the levels' logs, with its standard error from the repeats themselves (Student's ``t``;
       for a deterministic error, the amount by which its local orders fail to move one way).
    3. A window is a run of at least 3 sizes ending at the largest. Its fitted order ``b`` and its
       drift ``d`` (the order over its upper half minus that over its lower half) bracket the
       asymptotic order: ``p_inf`` lies between ``b`` and the extrapolation ``b + A d`` with the
       slowest admitted correction (``A`` is computed for the window's sizes over the model
       family). The window's interval is that bracket widened by the noise of both ends.
    4. Every window is valid under the model at once, so the interval of ``p_inf`` is the
       intersection of the windows' intervals (the error rate ``1 - confidence`` split between
       them: half to the largest, the rest shared). A window whose drift speeds up (beyond 1.645
       standard errors, and by more than 0.001) is before its correction's inflection, where the
       extrapolation fails: it keeps only the side that monotone local orders give (the asymptotic
       order lies beyond its fitted order in the drift's direction). Windows that do not meet
       contradict the model.
    5. ``equal`` passes when the interval lies inside ``[p - tolerance, p + tolerance]`` and fails
       when it lies wholly outside; ``bound`` passes when its upper end is at most ``p + tolerance``
       and fails when its lower end is above. Otherwise the run is undecided and says what would
       decide it, from the measured noise and drift: ``"inconclusive"`` (the noise is wider than
       the band: about N repeats per size would do) or ``"pre-asymptotic"`` (the drift dominates,
       or the windows contradict each other: sizes up to about N would do).

So a pass means that the asymptotic order is inside the band at the stated confidence, allowing
for the slowest admitted correction, and a fail that it is outside; a mixture of regimes can never
pass by its fitted slope. ``passed`` is true only for ``status == "pass"``; on the command line every
other status exits 1 (:mod:`verify.rate`). The measured operating characteristics of the rule
(shares of pass / fail / undecided over seeds, for true claims and claims off by 0.15 and 0.3) on a
library of errors with known orders are :mod:`verify.rate_oc`'s (``python -m verify.rate
--operating-characteristics``; the table is in docs/guide.md and benchmarks/README.md).

Deciding at a known cost: ``repeats="auto"`` (the default) measures a pilot of 64 repeats, computes
from their spread how many repeats the decision needs, measures those, and looks again, within
``budget`` (seconds, default 60, or ``"N calls"``); sizes ending in ``"auto"`` (``[1000, 2000, 4000,
"auto"]``) also extend the ladder when the drift, not the noise, is what is undecided. The looks
split the error rate (a twentieth to the pilot, then two thirds of what is left at each look, all of
it at the last one the budget allows: the shares are fixed before each look sees its data, so
looking more often does not inflate the error rate). The result says what was spent and what would
still be needed.

Why the default ``tolerance`` is 0.1: a claim off by 0.15 or more then never passes unless the
interval misses the true order by 0.05 (the target of the operating characteristics), while a Monte
Carlo order -1/2 over a 64-fold range of sizes is decided with a few thousand repeats per size.

The papers' checks calibrate their tolerances over seeds and assert the point order with
:func:`record_rate` (the interval and local orders reported beside it); :func:`record_bound`
records a check's one-sided decision made here, on the asymptotic order or (``decide="range"``) on
the fitted order over the sizes measured, the asymptotic interval reported beside it.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from spectral.floor.validation import InputError, UnavailableError, check_int, check_option, check_real, child_rng
from verify import rate_rule
from verify.core.cli import check_plot_path
from verify.core.drawing import figure_saver
from verify.core.implementation import Implementation, ImplementationError
from verify.core.provenance import versions
from verify.core.result import CheckResult, Recorder

__all__ = ["KINDS", "STATUSES", "DEFAULT_TOLERANCE", "DEFAULT_BUDGET", "DEFAULT_ROUNDOFF", "PILOT_REPEATS",
           "RateQuantities", "RateResult", "check_rate", "measure_rate", "decide_rate", "rate_records", "record_rate",
           "record_bound", "rate_check_result", "takes_rng", "function_label", "parse_budget", "auto_result",
           "check_auto"]

KINDS = ("equal", "bound")

#: what a decision can be: only ``"pass"`` passes (see the module docstring for each)
STATUSES = ("pass", "fail", "inconclusive", "pre-asymptotic", "round-off", "non-finite")

#: half-width of the band around the claimed order (the module docstring says why 0.1)
DEFAULT_TOLERANCE = 0.1
#: seconds ``repeats="auto"`` may spend measuring, by default
DEFAULT_BUDGET = 60.0
#: below this, errors whose local orders leave their trend at the largest sizes are read as a round-off floor
#: (:data:`verify.rate_rule.ROUNDOFF`: about sqrt(float64 eps); float32 sets about 1e-5, float16 1e-2)
DEFAULT_ROUNDOFF = rate_rule.ROUNDOFF
#: repeats per size of the first look of ``repeats="auto"`` (enough to estimate the noise, and so the repeats
#: the decision needs, to about 20 %)
PILOT_REPEATS = 64
#: looks of ``repeats="auto"`` at most, and sizes it may add to the ladder at most
MAX_LOOKS = 6
MAX_EXTENSIONS = 4
#: the share of the budget left that a planned look may use (the cost per call is an estimate)
SAFETY = 0.8
#: the share of the error rate the pilot look spends, and the share of what is left each later look spends (the
#: last look the budget allows spends all that is left): most goes to the look the pilot plans, which decides
#: most runs (measured: a pilot share of 1/8 and later shares of 1/2 cost 13 % more repeats at the median)
PILOT_SHARE = 1 / 20
LOOK_SHARE = 2 / 3


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
    spent : dict or None
        ``repeats="auto"``: what it spent (seconds, calls, looks, repeats, sizes, budget) and the
        level its last look decided at (``last_confidence``); None for fixed repeats.
    """

    sizes: np.ndarray
    errors: np.ndarray
    deterministic: bool
    label: str = ""
    spent: dict | None = None


@dataclasses.dataclass(frozen=True)
class RateResult:
    """The decision on a claimed rate (see the module docstring for the rule).

    Attributes
    ----------
    passed : bool
        Whether the claim holds by the rule (``status == "pass"``).
    status : str
        One of :data:`STATUSES`.
    message : str
        One line: what was decided and why, and what would decide an undecided run.
    asymptotic_interval : tuple of float
        The interval of the asymptotic order that decides (NaN when none).
    asymptotic : bool
        Whether the sizes are past the pre-asymptotic regime as far as the rule can tell: the windows
        agree, one of them at least is past its correction's inflection, and a drift the noise does
        not explain is not what leaves the claim undecided (false for ``"pre-asymptotic"``,
        ``"round-off"`` and ``"non-finite"`` runs).
    order, interval : float, tuple of float
        The least-squares order over every size and its interval (informational: it mixes regimes
        and never decides).
    local_orders, local_intervals : tuple
        Orders between successive sizes and their intervals (degenerate when deterministic).
    windows : tuple of dict
        Per window (largest first): first size, fitted order, extrapolated order, drift, interval,
        and whether it was left out for accelerating.
    needed_repeats : int or None
        Repeats per size that would decide, from the measured noise (None: repeats would not).
    needed_size : int or None
        Largest size that would decide when the drift is what is undecided (None: not the drift).
    left_out : tuple of int
        Sizes left out at a round-off floor.
    spent : dict or None
        ``repeats="auto"``: seconds, calls, looks and repeats spent.
    claimed, kind, tolerance, confidence, seed, floor, roundoff, log_power, correction : as given
    intercept : float
        Intercept of the all-sizes fit ``log error = intercept + order log n``.
    band : ndarray of shape (s, 2)
        Confidence band of the all-sizes fit at each size (errors, not logs).
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
    floor: float
    intercept: float
    band: np.ndarray
    quantities: RateQuantities
    asymptotic_interval: tuple[float, float] = (math.nan, math.nan)
    windows: tuple = ()
    needed_repeats: int | None = None
    needed_size: int | None = None
    left_out: tuple = ()
    spent: dict | None = None
    roundoff: float = DEFAULT_ROUNDOFF
    log_power: float = 0.0
    correction: float = rate_rule.Q_MIN

    def __repr__(self) -> str:
        lo, hi = self.asymptotic_interval
        return (f"RateResult(status={self.status!r}, asymptotic_interval=({lo:.4g}, {hi:.4g}), "
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
        """Save the figure (log-log errors, the asymptotic interval, the claimed slope) to ``path``.

        Needs matplotlib and the toolkit's ``figures`` package (found through its entry point).
        """
        check_plot_path(str(path))
        save = figure_saver("rate")
        if save is None:
            raise UnavailableError("no installed figures provider draws the rate figure (install attention-limits)")
        save(self.check_result(), str(path))


# -- the user's function --------------------------------------------------------------------------------------
def takes_rng(error: Callable) -> bool:
    """Whether ``error`` takes a second argument (the random stream): ``error(n, rng)`` vs ``error(n)``."""
    try:
        params = [p for p in inspect.signature(error).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):  # a builtin without a signature: called as error(n)
        return False
    required = [p for p in params if p.kind is p.VAR_POSITIONAL or p.default is p.empty]
    return len(required) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


def _check_signature(error: Callable, label: str, random: bool) -> None:
    """ImplementationError unless ``error`` can be called as ``error(n)`` (or ``error(n, rng)`` when random)."""
    try:
        sig = inspect.signature(error)
    except (TypeError, ValueError):
        return  # a builtin without a signature: its call says
    want = 2 if random else 1
    positional = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values())
    required = [p for p in positional if p.default is p.empty]
    kw_only = [p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    if len(required) > want or kw_only or (len(positional) < want and not star):
        raise ImplementationError(f"error function {label} must take (n) for a deterministic error or (n, rng) for a random "
                         f"one; its signature is {label.split(':')[-1]}{sig}")


def function_label(error: Callable) -> str:
    """``module:qualname`` of a function (its repr when it has none)."""
    module, name = getattr(error, "__module__", None), getattr(error, "__qualname__", None)
    return f"{module}:{name}" if module and name else repr(error)


def _number(value, label: str, n: int) -> float:
    """One real number from what the error function returned (ImplementationError naming it otherwise).

    Python and NumPy real scalars (and 0-d arrays, and objects with ``__float__`` and no shape)
    are numbers; a one-element array or list is not (an accident of shapes that hides bugs).
    """
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise ImplementationError(f"error function {label} must return one real number, got {type(value).__name__} "
                         f"{value!r} at n = {n}")
    shape = getattr(value, "shape", None)
    if isinstance(value, (list, tuple)) or (shape is not None and tuple(shape) != ()):
        size = len(value) if shape is None else int(np.prod(shape))
        what = f"a {type(value).__name__} of shape {tuple(shape)}" if shape is not None else \
            f"a {type(value).__name__} of length {size}"
        fix = " (return float(x[0]) or x.item(), not the array)" if size == 1 else ""
        raise ImplementationError(f"error function {label} must return one real number, got {what} at n = {n}{fix}")
    if isinstance(value, (complex, np.complexfloating)):
        raise ImplementationError(f"error function {label} must return one real number, got complex {value!r} at n = {n}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ImplementationError(f"error function {label} must return one real number, got {type(value).__name__} at "
                         f"n = {n}") from None


class _Meter:
    """The user's error function, called through :class:`verify.core.implementation.Implementation`."""

    def __init__(self, error, *, random, label, seed, timeout):
        if error is None or not callable(error):
            raise InputError(f"error must be a function error(n) or error(n, rng) -> float, got {error!r}")
        self.random = takes_rng(error) if random is None else bool(random)
        self.label = function_label(error) if label is None else label
        _check_signature(error, self.label, self.random)
        self.impl = Implementation(self.label, error, parameter="error function", timeout=timeout)
        self.seed = seed
        self.calls = 0
        self.seconds = 0.0
        self._error = ImplementationError

    @staticmethod
    def now() -> float:
        return time.perf_counter()

    def one(self, n: int, j: int, budget_left=None) -> float:
        """One call; ``budget_left`` (seconds) stops a call that would outlast the budget of ``repeats="auto"``."""
        impl = self.impl
        from_budget = budget_left is not None and (impl.timeout is None or budget_left < impl.timeout)
        if from_budget:
            impl = dataclasses.replace(impl, timeout=budget_left)
        args = (n, child_rng(self.seed, "rate", n, j)) if self.random else (n,)
        where = f"at n = {n}{f', repeat {j}' if self.random else ''}"
        start = time.perf_counter()
        try:
            value, _ = impl.call(*args, copy=False)
        except self._error as exc:
            if from_budget and "time limit" in str(exc):
                raise self._error(f"error function {self.label!r} did not return within the {budget_left:.3g} s left "
                                  f"of the budget ({where}): give it a larger budget, or a timeout") from None
            raise self._error(f"{exc} ({where})") from None
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - start
        return _number(value, self.label, n)

    def block(self, sizes, j0: int, j1: int, deadline=None) -> np.ndarray:
        """Errors at ``sizes`` for repeats ``j0 .. j1 - 1`` (one column when deterministic).

        With a ``deadline`` (``repeats="auto"`` on a budget in seconds) the repeats are measured one at
        a time across every size and the block ends, with the repeats completed so far, when the
        budget is spent (the first one always completes); no call may run past the budget with more
        than a second of grace.
        """
        cols = list(range(j0, j1)) if self.random else [0]
        out = np.empty((len(sizes), len(cols)))
        done = 0
        for c, j in enumerate(cols):
            if deadline is not None and c > 0 and self.now() >= deadline:
                break
            for i, n in enumerate(sizes):
                left = None if deadline is None else max(deadline - self.now(), 0.0) + 1.0
                out[i, c] = self.one(int(n), j, left)
            done += 1
        out = out[:, :done]
        if self.random and j0 == 0 and done >= 2 and len(sizes) >= 2:
            _refuse_identical(out, self.label, ImplementationError)
        return out


def _sizes(sizes) -> tuple[np.ndarray, bool]:
    """The sizes as increasing int64, and whether the ladder may be extended (a trailing ``"auto"``)."""
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise InputError(f"sizes must be a sequence of at least 3 increasing integers, got {sizes!r}")
    items = list(sizes)
    extend = bool(items) and isinstance(items[-1], str) and items[-1] == "auto"
    if extend:
        items = items[:-1]
    out = [check_int("sizes", n, low=1) for n in items]
    if len(out) < 3:
        raise InputError(f"sizes must hold at least 3 increasing integers (local orders need them), got {len(out)}")
    if any(b <= a for a, b in zip(out, out[1:])):
        raise InputError(f"sizes must increase, got {tuple(out)}")
    return np.asarray(out, dtype=np.int64), extend


def measure_rate(error: Callable, sizes: Sequence[int], *, repeats: int = 8, seed: int = 0,
                 random: bool | None = None, label: str | None = None, timeout: float | None = None) -> RateQuantities:
    """Measure ``error(n, rng)`` (``repeats`` independent streams per size) or ``error(n)`` (once per size).

    The stream of repeat ``j`` at size ``n`` is ``child_rng(seed, "rate", n, j)``: adding a size or a
    repeat never changes the draws of another. ``random`` overrides the arity test of
    :func:`takes_rng`; ``label`` names the function in messages; ``timeout`` limits each call
    (seconds). A function that raises, runs past ``timeout`` or has the wrong signature is an
    :class:`~verify.core.implementation.ImplementationError` (an InputError) naming it and the size;
    a value that is not one real number is an InputError too.
    """
    sizes, _ = _sizes(sizes)
    repeats = check_int("repeats", repeats, low=2)
    meter = _Meter(error, random=random, label=label, seed=seed, timeout=timeout)
    errors = meter.block(sizes, 0, repeats)
    return RateQuantities(sizes=sizes, errors=errors, deterministic=not meter.random, label=meter.label)


# -- the decision ----------------------------------------------------------------------------------------------
def _fmt(values) -> str:
    return ", ".join(f"{v:.3g}" for v in values)


def _fit_interval(logn, t_level, psi, deterministic, confidence):
    """All-sizes least-squares order, its interval, intercept and band (logs): informational."""
    s = logn.size
    x = logn - logn.mean()
    sxx = float(np.sum(x * x))
    order = float(np.sum(x * (t_level - t_level.mean())) / sxx)
    intercept = float(t_level.mean() - order * logn.mean())
    line = intercept + order * logn
    hat = 1.0 / s + np.outer(x, x) / sxx  # fitted values = hat @ T
    if deterministic:
        dof = s - 2
        resid = t_level - line
        se2 = float(np.sum(resid**2)) / dof if dof > 0 else 0.0
        t = float(rate_rule.t_quantile(dof, 0.5 + confidence / 2)) if dof > 0 and se2 > 0 else 0.0
        half = t * math.sqrt(se2 / sxx)
        width = t * np.sqrt(se2 * (1 / s + x**2 / sxx))
    else:
        r = psi.shape[-1]
        t = float(rate_rule.t_quantile(r - 1, 0.5 + confidence / 2))
        v_order = (x / sxx) @ psi
        half = t * float(np.std(v_order, ddof=1)) / math.sqrt(r)
        v_line = hat @ psi
        width = t * np.std(v_line, axis=-1, ddof=1) / math.sqrt(r)
    band = np.stack([line - width, line + width], axis=1)
    return order, (order - half, order + half), intercept, band


def _needed_repeats(r, lo_pt, hi_pt, lo, hi, claimed, kind, tolerance):
    """Repeats per size that would decide, scaling the noise parts like 1/sqrt(repeats) (None: they would not)."""
    top, bottom = claimed + tolerance, claimed - tolerance
    wl, wh = max(lo_pt - lo, 0.0), max(hi - hi_pt, 0.0)
    least = tolerance / 2  # an estimate nearer an edge than this is as likely to move across it: plan for half
    factors = []
    if kind == "equal" and bottom < lo_pt and hi_pt < top:
        factors.append(max(wl / max(lo_pt - bottom, least), wh / max(top - hi_pt, least)))
    if kind == "bound" and hi_pt < top:
        factors.append(wh / max(top - hi_pt, least))
    if kind == "equal" and hi_pt < bottom:
        factors.append(wh / max(bottom - hi_pt, least))
    if lo_pt > top:
        factors.append(wl / max(lo_pt - top, least))
    if not factors:
        return None
    f = min(factors)
    return int(math.ceil(r * max(f, 1.0) ** 2 * 1.1))


def _analyse(br: rate_rule.Bracket, sizes, r, claimed, kind, tolerance, deterministic, correction):
    """Verdict, windows, what would decide: the rule's reading of one bracket (unbatched)."""
    d = br.design
    s = d.logn.size
    low, high = float(br.low), float(br.high)
    consistent = bool(rate_rule.consistent(low, high))
    verdict = int(rate_rule.verdicts(low, high, claimed, kind, tolerance)) if not np.isnan([low, high]).any() else 0
    fit = br.part("fit")
    rich = br.part("richardson")
    drift = br.part("drift")
    windows = []
    best, best_width = None, math.inf
    for w, i0 in enumerate(d.starts):
        acc = bool(br.accelerating[w])
        wl, wh = float(br.window_low[w]), float(br.window_high[w])
        windows.append({"first_size": int(sizes[i0]), "order": float(fit[w]), "extrapolated": float(rich[w]),
                        "drift": float(drift[w]), "factor": float(d.factors[w]), "interval": (wl, wh),
                        "accelerating": acc})
        if not acc and wh - wl < best_width:
            best, best_width = w, wh - wl
    needed_r = None
    needed_n = None
    drift_dominates = False
    if best is not None:
        b, rr = float(fit[best]), float(rich[best])
        wl, wh = windows[best]["interval"]
        se_d = float(br.part("drift", br.se)[best])
        t_w = float(np.atleast_1d(br.t)[best])
        shown = abs(float(drift[best])) > t_w * se_d  # a drift the noise does not explain
        lo_pt, hi_pt = (min(b, rr), max(b, rr)) if shown else (b, b)
        if not deterministic:
            needed_r = _needed_repeats(r, lo_pt, hi_pt, wl, wh, claimed, kind, tolerance)
        noise = max(lo_pt - wl, wh - hi_pt)
        drift_part = hi_pt - lo_pt
        drift_dominates = shown and (drift_part > noise or needed_r is None)
        if shown and drift_part > tolerance / 4:
            ratio = float(sizes[-1] / sizes[-2])
            factor = (drift_part / (tolerance / 4)) ** (1.0 / correction)
            steps = max(1, math.ceil(math.log(factor) / math.log(ratio))) if ratio > 1 else 1
            needed_n = int(round(sizes[-1] * ratio**steps)) if steps < 60 else int(min(sizes[-1] * factor, 2**62))
    asymptotic = bool(consistent and best is not None)  # and not pre-asymptotic: decide_rate completes it
    return dict(low=low, high=high, consistent=consistent, verdict=verdict, windows=tuple(windows), best=best,
                needed_repeats=needed_r, needed_size=needed_n, drift_dominates=drift_dominates,
                asymptotic=asymptotic)


def _refuse_identical(errors, label, error_type=InputError):
    """A random error whose repeats agree at every size ignores its stream: refused."""
    if errors.shape[1] >= 2 and np.all(errors == errors[:, :1]):
        who = label or "the error"
        raise error_type(f"error function {who} takes a random stream but returned the same value in all "
                         f"{errors.shape[1]} repeats at every size: it ignores its rng (draw from rng, e.g. "
                         "rng.random(n); or define error(n) for a deterministic error)")


def decide_rate(q: RateQuantities, *, claimed: float, kind: str = "equal", confidence: float = 0.95,
                tolerance: float = DEFAULT_TOLERANCE, seed: int = 0, floor: float = 1e-13,
                roundoff: float = DEFAULT_ROUNDOFF, log_power: float = 0.0,
                correction: float = rate_rule.Q_MIN) -> RateResult:
    """Decide a claimed rate on measured errors by the rule of the module docstring.

    Parameters
    ----------
    q : RateQuantities
        The errors (:func:`measure_rate`, or built from a check's own measurements).
    claimed, kind, confidence, tolerance, floor, roundoff, log_power, correction
        As in :func:`check_rate`.
    seed : int
        Recorded with the result (the rule itself draws nothing).

    Returns
    -------
    RateResult
    """
    claimed = check_real("claimed", claimed)
    kind = check_option("kind", kind, KINDS)
    confidence = check_real("confidence", confidence, low=0.5, high=1.0, high_open=True)
    tolerance = check_real("tolerance", tolerance, low=0.0, low_open=True)
    floor = check_real("floor", floor, low=0.0)
    roundoff = check_real("roundoff", roundoff, low=0.0)
    log_power = check_real("log_power", log_power)
    correction = check_real("correction", correction, low=0.05, high=10.0)
    errors = np.asarray(q.errors, dtype=float)
    sizes = np.asarray(q.sizes, dtype=float)
    if errors.ndim != 2 or errors.shape[0] != sizes.size or sizes.size < 3:
        raise InputError(f"errors must have shape (sizes, repeats) with at least 3 sizes, got {errors.shape} for "
                         f"{sizes.size} sizes")
    if not (np.all(np.isfinite(sizes)) and np.all(sizes > 0) and np.all(np.diff(sizes) > 0)):
        raise InputError(f"sizes must be positive and increasing, got {tuple(sizes)}")
    if log_power != 0 and sizes[0] <= 1:
        raise InputError(f"log_power needs sizes above 1 (log n > 0), got n = {sizes[0]:g}")
    common = dict(claimed=claimed, kind=kind, tolerance=tolerance, confidence=confidence, seed=int(seed),
                  floor=floor, roundoff=roundoff, log_power=log_power, correction=correction, quantities=q)
    who = f"{q.label}: " if q.label else ""
    nonfinite = ~np.isfinite(errors)
    if nonfinite.any():
        i, j = np.argwhere(nonfinite)[0]
        return _undecided("non-finite", f"{who}the error is not finite ({float(errors[i, j])!r} at n = {sizes[i]:g}, "
                                        f"repeat {j}): no rate", sizes.size, common)
    if np.any(errors < 0):
        raise InputError("errors must be >= 0 (a distance to the exact value)")
    deterministic = bool(q.deterministic) or errors.shape[1] == 1
    if not deterministic:
        _refuse_identical(errors, q.label)
    scaled = errors / np.log(sizes)[:, None] ** log_power if log_power else errors
    logn = np.log(sizes)
    t_all, psi_all = rate_rule.levels(scaled)
    keep = int(rate_rule.kept_sizes(t_all, logn, floor=floor, roundoff=roundoff))
    left_out = tuple(int(n) for n in sizes[keep:])
    common["left_out"] = left_out
    floor_text = ""
    if left_out:
        level = np.exp(t_all[keep:])
        floor_text = (f"n = {_fmt(left_out)} left out: their errors ({_fmt(level)}) sit on a round-off floor (at or "
                      f"below floor = {floor:g}, or below roundoff = {roundoff:g} where the local orders leave their trend)")
    if keep < 3:
        return _undecided("round-off", f"{who}{floor_text}; fewer than 3 sizes remain above it: use smaller sizes "
                                       "(or lower roundoff / floor if these errors are the method's)", sizes.size,
                          common)
    what = (f"error ~ n^{claimed:g}" if kind == "equal" else f"error = O(n^{claimed:g})")
    if log_power:
        what += f" (log n)^{log_power:g}"
    band_text = (f"[{claimed - tolerance:.4g}, {claimed + tolerance:.4g}]" if kind == "equal"
                 else f"<= {claimed + tolerance:.4g}")
    ks = sizes[:keep]
    br = rate_rule.bracket(logn[:keep], scaled[:keep], confidence=confidence, q_min=correction,
                           deterministic=deterministic)
    r = scaled.shape[1]
    a = _analyse(br, ks, r, claimed, kind, tolerance, deterministic, correction)
    local = br.part("local")
    if deterministic:
        local_iv = np.stack([local, local], axis=1)
    else:
        t_loc = float(rate_rule.t_quantile(r - 1, 0.5 + confidence / 2))
        se_loc = br.part("local", br.se)
        local_iv = np.stack([local - t_loc * se_loc, local + t_loc * se_loc], axis=1)
    order, interval, intercept, band = _fit_interval(logn[:keep], t_all[:keep], psi_all[:keep], deterministic,
                                                     confidence)
    if keep < sizes.size:  # the band over every size (the left-out ones on the fitted line)
        band = np.concatenate([band, np.full((sizes.size - keep, 2), np.nan)])
    low, high = a["low"], a["high"]
    ci = f"{100 * confidence:g} % interval of the asymptotic order [{low:.4g}, {high:.4g}]"
    tail = f"; local orders {_fmt(local)}"
    best = a["best"]
    if best is not None:
        w = a["windows"][best]
        tail = (f"; from n = {w['first_size']:g}..{ks[-1]:g}: order {w['order']:.4g}, extrapolated "
                f"{w['extrapolated']:.4g} (corrections n^-q, q >= {correction:g})") + tail
    verdict = a["verdict"]  # on the sizes kept; a run that left sizes out is round-off unless it fails
    needed_text = _needed_text(a, r, deterministic, ks)
    if verdict == 1:
        status, message = "pass", f"{who}{what} holds: {ci} inside {band_text}{tail}"
    elif verdict == -1:
        side = "slower" if low > claimed + tolerance else "faster"
        status, message = "fail", f"{who}{what} does not hold: {ci} outside {band_text} ({side} than claimed){tail}"
    elif best is None:
        status = "pre-asymptotic"
        message = (f"{who}cannot decide {what} yet: the local orders move faster and faster in every window of 4 or "
                   f"more sizes (a term that decays faster still leads), so only the side they move to is known: "
                   f"{ci}; larger sizes, where that term has faded, decide{tail}")
    elif not a["consistent"]:
        status = "pre-asymptotic"
        message = (f"{who}cannot decide {what} yet: the windows' intervals do not meet (the local orders do not "
                   f"settle as a decaying correction would); {needed_text}{tail}")
    elif a["drift_dominates"] and a["needed_size"] is not None:
        status = "pre-asymptotic"
        message = (f"{who}cannot decide {what} yet: the local orders still move, {ci} reaches outside {band_text}; "
                   f"{needed_text}{tail}")
    else:
        status = "inconclusive"
        message = f"{who}cannot decide {what} yet: {ci} reaches outside {band_text}; {needed_text}{tail}"
    if left_out and status != "fail":
        message = (f"{who}{floor_text}; without them: {status} ({message[len(who):]}); leave those sizes out, or lower "
                   "roundoff / floor if these errors are the method's")
        status = "round-off"
    elif left_out:
        message += f"; {floor_text}"
    return RateResult(order=float(order), interval=(float(interval[0]), float(interval[1])),
                      local_orders=tuple(float(v) for v in local),
                      local_intervals=tuple((float(lo), float(hi)) for lo, hi in local_iv),
                      asymptotic=a["asymptotic"] and status in ("pass", "fail", "inconclusive"),
                      passed=status == "pass", status=status, message=message,
                      intercept=float(intercept), band=np.exp(band), asymptotic_interval=(low, high),
                      windows=a["windows"], needed_repeats=a["needed_repeats"], needed_size=a["needed_size"],
                      **common)


def _needed_text(a, r, deterministic, sizes) -> str:
    parts = []
    if a["needed_repeats"] is not None and not deterministic:
        few = (f", or more sizes along the ladder ({len(sizes)} sizes leave the extrapolation little room)"
               if len(sizes) < 5 and a["needed_repeats"] > 10 * r else "")
        parts.append(f"about {a['needed_repeats']} repeats per size would decide (from the spread of {r} repeats, the "
                     f"interval narrowing like 1/sqrt(repeats), if the order stays inside the band){few}")
    if a["needed_size"] is not None:
        parts.append(f"sizes up to about n = {a['needed_size']:g} along the ladder would (the drift shrinks like "
                     "n^-q)")
    if not parts:
        parts.append("the asymptotic order is too close to the band's edge to decide by repeats: larger sizes or a "
                     "claim that is not on the edge" if not deterministic else
                     "the local orders reverse (an erratic error): larger sizes decide, or none")
    return "; or ".join(parts)


def _undecided(status, message, s, common) -> RateResult:
    nan = math.nan
    return RateResult(order=nan, interval=(nan, nan), local_orders=(), local_intervals=(), asymptotic=False,
                      passed=False, status=status, message=message, intercept=nan, band=np.full((s, 2), nan),
                      **common)


# -- checking: fixed repeats, or as many as it takes ------------------------------------------------------------
def parse_budget(budget) -> tuple[str, float]:
    """``("seconds", s)`` or ``("calls", c)`` from a number of seconds or a text ``"60s"`` / ``"5000 calls"``."""
    if isinstance(budget, str):
        text = budget.strip().lower().replace(" ", "")
        try:
            return "seconds", check_real("budget", float(text), low=0.0, low_open=True)
        except ValueError:
            pass
        for unit, names in (("calls", ("calls", "call")), ("seconds", ("seconds", "s", "sec"))):
            for name in names:
                if text.endswith(name):
                    value = text[: -len(name)]
                    try:
                        number = float(value)
                    except ValueError:
                        break
                    if not (number > 0 and math.isfinite(number)):
                        break
                    return unit, number
        raise InputError(f"budget must be seconds (60, '60s') or calls ('5000 calls'), got {budget!r}")
    value = check_real("budget", budget, low=0.0, low_open=True)
    return "seconds", value


def check_rate(error: Callable, sizes: Sequence, *, claimed: float, kind: str = "equal", repeats: int | str = "auto",
               seed: int = 0, confidence: float = 0.95, tolerance: float = DEFAULT_TOLERANCE, log_power: float = 0.0,
               correction: float = rate_rule.Q_MIN, floor: float = 1e-13, roundoff: float = DEFAULT_ROUNDOFF,
               budget: float | str = DEFAULT_BUDGET, timeout: float | None = None, random: bool | None = None,
               label: str | None = None) -> RateResult:
    """Check that ``error(n)`` decays like ``n^claimed`` (``kind="equal"``) or at least as fast (``"bound"``).

    Parameters
    ----------
    error : callable
        ``error(n, rng) -> float`` (random: measured with independent streams ``rng``, one per size
        and repeat) or ``error(n) -> float`` (deterministic: once per size). The error is a distance
        to an exact value, >= 0, returned as one real number.
    sizes : sequence
        At least 3 increasing sizes along a ladder; a trailing ``"auto"`` lets ``repeats="auto"``
        extend the ladder (by the ratio of its last two sizes) when the drift is what is undecided.
    claimed : float
        The exponent p of error ~ n^p (e.g. -0.5 for a Monte Carlo mean).
    kind : {"equal", "bound"}
        ``"equal"``: the asymptotic order is p; ``"bound"``: error = O(n^p), the order p or steeper.
    repeats : int or "auto"
        Repeats per size of a random error (>= 2), or ``"auto"``: as many as the decision needs
        within ``budget`` (the module docstring).
    seed : int
        Root seed of the repeats' streams.
    confidence : float
        Level of the interval of the asymptotic order, in [0.5, 1).
    tolerance : float
        Half-width of the accepted band around p (default 0.1: the module docstring says why).
    log_power : float
        k in error ~ n^p (log n)^k (default 0).
    correction : float
        The slowest correction n^-q the extrapolation allows for (default 1/2); a larger value
        (1 when the next term is known to be a full order smaller) narrows the interval.
    floor, roundoff : float
        Errors at or below ``floor``, and errors below ``roundoff`` whose local orders leave their
        trend at the largest sizes, are read as a round-off floor and left out (never as slower than
        claimed); ``roundoff`` about 1e-5 for float32 arithmetic.
    budget : float or str
        What ``repeats="auto"`` may spend: seconds (default 60) or ``"N calls"``.
    timeout : float or None
        Seconds one call of ``error`` may take (an ImplementationError naming it past that).
    random : bool or None
        Overrides the arity test of :func:`takes_rng`.
    label : str or None
        The function's name in messages (default ``module:qualname``).

    Returns
    -------
    RateResult
        ``status``, ``passed``, ``message``, ``asymptotic_interval``, ``needed_repeats``,
        ``needed_size``, ``spent``; ``summary()``, ``to_json()``, ``plot(path)``.

    Raises
    ------
    InputError
        A bad parameter (naming it and the allowed range).
    ImplementationError
        (an InputError) The function has the wrong signature, raises, runs past ``timeout``, returns
        something other than one real number, or takes a random stream and ignores it: one line
        naming it, the size and the repeat.

    Examples
    --------
    >>> def mc_error(n, rng):                  # |mean of n normal draws|: order -1/2
    ...     return abs(rng.standard_normal(n).mean())
    >>> res = check_rate(mc_error, [1000, 4000, 16000, 64000], claimed=-0.5, repeats=16)
    >>> res.status, res.needed_repeats > 16
    ('inconclusive', True)
    """
    if error is None or not callable(error):
        raise InputError(f"error must be a function error(n) or error(n, rng) -> float, got {error!r}")
    ladder, extend = _sizes(sizes)
    auto = isinstance(repeats, str)
    if auto:
        check_option("repeats", repeats, ("auto",))
    else:
        repeats = check_int("repeats", repeats, low=2)
    if extend and not auto:
        raise InputError('sizes ending in "auto" need repeats="auto" (the ladder grows while the budget lasts)')
    options = dict(claimed=claimed, kind=kind, confidence=confidence, tolerance=tolerance, seed=seed, floor=floor,
                   roundoff=roundoff, log_power=log_power, correction=correction)
    decide_rate(RateQuantities(np.array([2, 3, 4]), np.ones((3, 1)), True), **options)  # validate before measuring
    unit, amount = parse_budget(budget)
    meter = _Meter(error, random=random, label=label, seed=seed, timeout=timeout)
    if auto and not meter.random and not extend:
        auto, repeats = False, 2  # a deterministic error is measured once per size: nothing to add
    if not auto:
        errors = meter.block(ladder, 0, repeats)
        q = RateQuantities(sizes=ladder, errors=errors, deterministic=not meter.random, label=meter.label)
        return decide_rate(q, **options)
    return check_auto(meter, ladder, extend, options, unit, amount)


def check_auto(meter: _Meter, ladder, extend, options, unit, amount) -> RateResult:
    """``repeats="auto"``: a pilot, then the repeats (and sizes) the decision needs, within the budget."""
    start = meter.now()
    deadline = start + amount if unit == "seconds" else None
    alpha = 1.0 - options["confidence"]
    sizes = [int(n) for n in ladder]
    r = PILOT_REPEATS if meter.random else 1
    errors = meter.block(sizes, 0, r, deadline)
    spent_alpha, looks, history, extensions = 0.0, 0, [], 0

    def remaining():
        return (deadline - meter.now()) if unit == "seconds" else amount - meter.calls

    def cost(n_sizes, n_repeats, at=None):
        """Predicted cost of measuring n_repeats more at the given sizes (seconds from the mean call so far)."""
        calls = n_sizes * n_repeats
        if unit == "calls":
            return calls
        per = meter.seconds / max(meter.calls, 1)
        return calls * per * (at or 1.0)

    res = None
    next_plan = None
    while True:
        looks += 1
        q = RateQuantities(sizes=np.asarray(sizes), errors=errors, deterministic=not meter.random, label=meter.label)
        # is this the last look? predictable: the budget left could not pay for a meaningful next step (a
        # quarter more repeats, or one more size along the ladder)
        more_repeats = meter.random and SAFETY * remaining() >= cost(len(sizes), max(r // 4, 1))
        more_sizes = extend and extensions < MAX_EXTENSIONS and remaining() >= cost(1, r, sizes[-1] / sizes[-2])
        last = looks >= MAX_LOOKS or not (more_repeats or more_sizes)
        share = (alpha * PILOT_SHARE if looks == 1 else (alpha - spent_alpha) * LOOK_SHARE) if not last else alpha - spent_alpha
        spent_alpha += share
        res = decide_rate(q, **{**options, "confidence": 1.0 - share})
        history.append((r, len(sizes), res.status))
        if res.status in ("pass", "fail", "round-off", "non-finite") or last:
            break
        next_plan = None
        if extend and res.status == "pre-asymptotic" and extensions < MAX_EXTENSIONS:
            ratio = sizes[-1] / sizes[-2]
            n_new = int(round(sizes[-1] * ratio))
            if remaining() >= cost(1, r, ratio):
                next_plan = ("size", n_new)
        if next_plan is None and meter.random and res.needed_repeats is not None:
            from scipy.special import ndtri

            nxt = (alpha - spent_alpha) * LOOK_SHARE  # what the next look spends if it is not the last
            scale = (float(ndtri(1 - nxt / 4)) / float(ndtri(1 - share / 4))) ** 2
            want = max(2 * r, int(math.ceil(res.needed_repeats * scale)))
            per = cost(len(sizes), 1)
            affordable = r + int(SAFETY * remaining() / per) if per > 0 else want
            r_next = min(want, affordable)
            if r_next >= int(1.25 * r):
                next_plan = ("repeats", r_next)
        if next_plan is None:
            break
        if next_plan[0] == "size":
            new = meter.block([next_plan[1]], 0, r, deadline)
            if new.shape[1] < r:  # the budget ran out inside the new size: the ladder stays as it was
                break
            extensions += 1
            sizes.append(next_plan[1])
            errors = np.vstack([errors, new])
        else:
            new = meter.block(sizes, r, next_plan[1], deadline)
            errors = np.hstack([errors, new])
            r += new.shape[1]
    spent = {"seconds": round(meter.now() - start, 3), "calls": meter.calls, "looks": looks,
             "repeats": r, "first_repeats": history[0][0], "sizes": tuple(sizes), "budget": f"{amount:g} {unit}",
             "last_confidence": 1.0 - share,
             "schedule": tuple(f"{rr} repeats x {ss} sizes: {st}" for rr, ss, st in history)}
    res = dataclasses.replace(res, quantities=dataclasses.replace(res.quantities, spent=spent))
    return auto_result(res, spent, options["confidence"], random=meter.random)


def auto_result(res: RateResult, spent: dict, confidence: float, *, random: bool) -> RateResult:
    """The last look's decision as the automatic run's result: what was spent, what would still be needed.

    ``confidence`` is the run's level (its looks' shares of the error rate add up to ``1 - confidence``).
    """
    looks = spent["looks"]
    text = (f"; spent {spent['seconds']:.3g} s, {spent['calls']} calls, {looks} look{'s' if looks > 1 else ''} "
            f"(repeats {spent['first_repeats']} -> {spent['repeats']}) of the budget {spent['budget']}")
    if not res.passed and res.status != "fail":
        still = []
        if res.needed_repeats is not None and random:
            still.append(f"about {res.needed_repeats} repeats per size")
        if res.needed_size is not None:
            still.append(f"sizes up to n = {res.needed_size:g}")
        if still:
            text += "; still needed: " + " or ".join(still)
    return dataclasses.replace(res, spent=spent, message=res.message + text, confidence=confidence)


# -- records -------------------------------------------------------------------------------------------------
def _rule_why(res: RateResult) -> str:
    log = f" (log n)^{res.log_power:g}" if res.log_power else ""
    return (f"verify.rates rule ({res.kind}): the {100 * res.confidence:g} % interval of the asymptotic order "
            f"(the windows' brackets between the fitted order and its extrapolation with corrections n^-q, "
            f"q >= {res.correction:g}) against n^{res.claimed:g}{log} with tolerance {res.tolerance:g}")


def rate_records(rec, res: RateResult) -> str:
    """Record the decision ``res`` on a :class:`~verify.core.result.Recorder`; return the statement tested.

    Deciding records: the ends of the interval of the asymptotic order against the band
    (``asymptotic_order_low`` / ``_high``; a bound: ``asymptotic_order_high``), ``windows_agree``
    when the windows contradict the model, ``clear_of_round_off`` when sizes sat on a round-off
    floor and the rest did not fail, ``errors_finite`` for a non-finite error; the all-sizes order,
    its interval, the local orders, the windows and the status are informational. The recorded
    verdict equals ``res.passed``.
    """
    p, tol = res.claimed, res.tolerance
    top, bottom = p + tol, p - tol
    why = _rule_why(res)
    lo, hi = res.asymptotic_interval
    if res.status == "non-finite":
        rec.holds("errors_finite", False, why="a non-finite error never passes", label=res.message)
    elif res.status == "round-off":
        rec.holds("clear_of_round_off", False, why=f"errors at or below floor {res.floor:g}, or below roundoff "
                  f"{res.roundoff:g} where the local orders leave their trend, measure the floating point, not the method",
                  label=res.message)
    elif math.isnan(lo) or math.isnan(hi) or not rate_rule.consistent(lo, hi):
        rec.holds("windows_agree", False, why="every window is valid under the model at once: intervals that do not "
                  "meet (or none left) contradict it", label=res.message)
    elif res.kind == "equal":  # the message labels the first failing end only (one line per failure)
        rec.within("asymptotic_order_low", lo, (bottom, top), why=why, label=res.message)
        low_failed = not (bottom <= lo <= top)
        rec.within("asymptotic_order_high", hi, (bottom, top), why=why, label="" if low_failed else res.message)
    else:
        rec.at_most("asymptotic_order_high", hi, top, why=why, label=res.message)
    rec.info("asymptotic_interval", res.asymptotic_interval)
    rec.info("order", res.order)
    rec.info("interval", res.interval)
    rec.info("local_orders", res.local_orders)
    rec.info("asymptotic", res.asymptotic)
    rec.info("status", res.status)
    for w in res.windows:
        wl, wh = w["interval"]
        rec.info(f"window_from_{w['first_size']}", f"order {w['order']:.4g}, extrapolated {w['extrapolated']:.4g}, "
                 f"interval [{wl:.4g}, {wh:.4g}]" + (" (left out: accelerating)" if w["accelerating"] else ""))
    if res.needed_repeats is not None and not res.passed and res.status != "fail":
        rec.info("needed_repeats", res.needed_repeats)
    if res.needed_size is not None and not res.passed and res.status != "fail":
        rec.info("needed_size", res.needed_size)
    if res.left_out:
        rec.info("left_out_sizes", res.left_out)
    if res.spent:
        rec.info("spent", f"{res.spent['seconds']:g} s, {res.spent['calls']} calls, {res.spent['looks']} looks, "
                          f"{res.spent['repeats']} repeats (budget {res.spent['budget']})")
    rec.note(res.message)
    how = "equals" if res.kind == "equal" else "is at most (error = O(n^p))"
    who = f"{res.quantities.label}: " if res.quantities.label else ""
    log = f" with (log n)^{res.log_power:g}" if res.log_power else ""
    return (f"{who}the asymptotic order of the error {how} p = {res.claimed:g}{log} within {res.tolerance:g}, at "
            f"{100 * res.confidence:g} % confidence over n = {', '.join(f'{n:g}' for n in res.quantities.sizes)}")


def record_bound(rec, tag: str, res: RateResult, *, why: str, label: str, decide: str = "asymptotic") -> None:
    """A check's one-sided rate decision ``res`` (``kind="bound"``, e.g. on sampled errors) on ``rec``.

    ``decide="asymptotic"``: the deciding record ``<tag>_rate`` holds ``res.passed`` (the rule of this
    module: the asymptotic order's interval). ``decide="range"``: it holds when the upper end of the
    fitted order's interval over the measured sizes is at most ``claimed + tolerance`` (what the
    sizes measured show, a statement about that range; the asymptotic decision is recorded beside
    it). ``why`` and ``label`` as for :meth:`~verify.core.result.Recorder.holds` (the label usually
    carrying ``res.status``). Informational: ``<tag>_order``, ``<tag>_order_low``, ``<tag>_order_high``
    (the fit), ``<tag>_asymptotic_low`` / ``_high`` and ``<tag>_asymptotic_status`` (the rule).
    """
    check_option("decide", decide, ("asymptotic", "range"))
    lo, hi = res.interval
    top = res.claimed + res.tolerance
    if decide == "range":
        holds = bool(math.isfinite(hi) and hi <= top)
        sizes = res.quantities.sizes
        why = (f"{why}; decided on the measured range n = {sizes[0]:g}..{sizes[-1]:g}: the fitted order "
               f"{res.order:.4g}, {100 * res.confidence:g} % interval [{lo:.4g}, {hi:.4g}], "
               f"{'holds' if holds else 'does not hold'} against <= {top:.4g}")
        rec.holds(f"{tag}_rate", holds, why=why, label=label)
    else:
        rec.holds(f"{tag}_rate", res.passed, why=why, label=label)
    rec.info(f"{tag}_order", res.order)
    rec.info(f"{tag}_order_low", lo)
    rec.info(f"{tag}_order_high", hi)
    rec.info(f"{tag}_asymptotic_low", res.asymptotic_interval[0])
    rec.info(f"{tag}_asymptotic_high", res.asymptotic_interval[1])
    rec.info(f"{tag}_asymptotic_status", res.status)


def rate_check_result(res: RateResult, parameters: Mapping[str, Any] | None = None):
    """A :class:`~verify.core.result.CheckResult` of the check ``rate`` holding ``res``'s records."""
    q = res.quantities
    if parameters is None:
        parameters = {"error": q.label, "sizes": tuple(int(n) for n in q.sizes), "claimed": res.claimed,
                      "kind": res.kind, "log_power": res.log_power, "repeats": int(q.errors.shape[1]),
                      "confidence": res.confidence, "tolerance": res.tolerance, "correction": res.correction,
                      "floor": res.floor, "roundoff": res.roundoff, "seed": res.seed, "device": "cpu"}
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
    :func:`decide_rate`, the fitted order's confidence interval (``<name>_interval``, the fit's
    Student-t interval: one pooled error per size) and the local orders (``<name>_local_orders``,
    nearest the asymptote last); when the decision fails and the local orders are still moving (the
    rule reads the run as pre-asymptotic), the hint says so.

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
                          confidence=confidence, roundoff=0.0, floor=0.0)
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
