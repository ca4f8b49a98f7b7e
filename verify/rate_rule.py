"""The arithmetic of :mod:`verify.rates`' decision, on arrays: an interval for the asymptotic order.

Everything here is a pure function of the log sizes and the measured errors, vectorised over any
leading axes (the operating characteristics of :mod:`verify.rate_oc` decide hundreds of seeds at
once with the very code that decides one run). :mod:`verify.rates` documents the rule for users;
this docstring states the arithmetic.

Level of the error at a size
    ``T_i = log(mean_j e_ij^g) / g`` with ``g = GAMMA = 1/4`` over the repeats ``j`` (for a
    deterministic error, ``log e_i``). A power mean with a small exponent is a scale: for errors
    ``e = s(n) X`` with one law of ``X`` at every size its order is that of ``s(n)``; unlike the
    mean of ``log e`` it takes errors that are exactly 0 (a lattice's Monte Carlo error), and it is
    more efficient (standard deviation per repeat 0.94 against 1.11 for ``|N(0, 1)|``) while staying
    finite for heavy tails (it needs ``E e^(1/2) < inf``: a Cauchy-tailed error qualifies).

Contrasts
    Every number the rule uses is a linear contrast ``c . T`` (``sum c = 0``): the least-squares
    slope over a set of sizes, the difference of two slopes. Its standard error comes from the
    repeats themselves: the delta-method influence ``psi_ij = (e_ij^g / M_i - 1) / g`` of repeat
    ``j`` gives ``v_j = sum_i c_i psi_ij`` and ``se = sd(v) / sqrt(r)``, with Student's ``t`` on
    ``r - 1`` degrees of freedom. Pairing the repeats by index makes this right for independent
    streams and for errors that share samples across sizes alike. A deterministic error (one value
    per size) takes the lack of fit of a quadratic in ``log n`` as its noise (``s - 3`` degrees of
    freedom; none with 3 sizes): an erratic deterministic error is as undecided as a noisy one.

The asymptotic order from a window
    A window is a run of sizes ending at the largest. Its fitted order ``b`` (least squares) and
    the drift ``d`` (the slope over its upper half minus the slope over its lower half) bracket the
    asymptotic order ``p`` under the model ``log e = a + p log n + log(1 + D n^-q)`` with
    ``q >= q_min`` and ``|D n^-q| <= U_MAX`` at the window's first size: the local orders then move
    monotonically towards ``p``, so ``p`` lies between ``b`` and the Richardson extrapolation
    ``R = b + A d`` with the slowest admitted correction, where ``A`` is the largest ratio
    ``(p - b) / d`` over that model family on the window's sizes (computed here, by
    :func:`extrapolation_factor`). The window's interval is ``[min(b_lo, R_lo), max(b_hi, R_hi)]``
    with each end one-sided at ``alpha / 2`` (``p`` lies between ``b`` and ``R``, so the lower end
    fails only if the lower of the two is overestimated: no split is needed inside a window).

Windows together
    Every window of at least 3 sizes ending at the largest is valid under the model at once (a
    correction that is small at the first size is smaller later), so their intersection is the
    interval, the windows sharing the error rate (Bonferroni: half to the largest window, the rest
    shared). A window whose drift speeds up (``ACCELERATION_Z`` standard errors, and a material
    drift) is before the inflection of its correction, where the extrapolation does not hold: it
    keeps only the one-sided bound that monotone local orders give. An empty intersection
    contradicts the model: the run is pre-asymptotic.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

__all__ = ["GAMMA", "U_MAX", "Q_MIN", "ACCELERATION_Z", "MATERIAL_DRIFT", "ROUNDOFF", "FLOOR_MARGIN", "Design", "Bracket", "design", "extrapolation_factor",
           "levels", "bracket", "window_alphas", "kept_sizes", "intervals", "final_verdicts", "consistent", "verdicts",
           "t_quantile"]

#: exponent of the power mean that measures the error's level at a size (see the module docstring)
GAMMA = 0.25
#: the largest admitted relative correction |D n^-q| at a window's first size (the leading term dominates)
U_MAX = 1.0
#: a window whose drift speeds up by more than this many standard errors keeps only the side that monotone
#: local orders give (the correction is not yet decaying there: before the inflection |D n^-q| = 1 the
#: extrapolation's end does not hold); this only widens the interval. The 3-size window, which cannot show its
#: own acceleration, takes the 4-size one's.
ACCELERATION_Z = 1.645
#: below this, errors whose local orders leave their trend at the largest sizes are read as a round-off floor:
#: about sqrt(float64 eps), the round-off of float64 quantities up to 1e4 after a few hundred operations.
#: Lower precisions set their own (float32: about 1e-5; float16: about 1e-2).
ROUNDOFF = 1e-8
#: a drift (change of the order across a window) smaller than this is immaterial: its acceleration is not read
#: as a pre-inflection regime (a floor far below the errors, or rounding, bends exact power laws by 1e-5)
MATERIAL_DRIFT = 1e-3
#: a round-off floor bends the errors up to this factor above the size where it first shows (1/30: a floor
#: ~3 % of the error moves a local order between doubled sizes by about 0.05)
FLOOR_MARGIN = 30.0
#: the default slowest admitted correction exponent q (error = C n^p (1 + D n^-q)): 1/2 covers the
#: Monte Carlo bias-to-noise ratio n^-1/2, second-order terms of two-dimensional meshes in the number of
#: unknowns, and C1 n^p + C2 n^(p - 1/2) mixtures
Q_MIN = 0.5

_Q_FACTORS = (1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0, 20.0)
_U_GRID = (-0.9, -0.6, -0.3, -1e-6, 1e-6, 0.25, 0.5, 0.75, 1.0)


def t_quantile(dof, level):
    """Student's t quantile (``scipy.stats.t.ppf``'s number, without importing scipy.stats); inf at dof <= 0."""
    from scipy.special import stdtrit

    dof = np.asarray(dof, dtype=float)
    out = np.where(dof > 0, stdtrit(np.maximum(dof, 1.0), level), np.inf)
    return out


def _slope(x: np.ndarray) -> np.ndarray:
    """Least-squares slope weights over ``x`` (the slope is ``weights . y``)."""
    xc = x - x.mean()
    return xc / float(np.sum(xc * xc))


def extrapolation_factor(x: np.ndarray, fit: np.ndarray, drift: np.ndarray, *, q_min: float,
                         u_max: float = U_MAX) -> float:
    """The largest ``(p - b) / d`` over ``log e = p x + log(1 + u exp(-q (x - x_0)))``, ``q >= q_min``, ``|u| <= u_max``.

    ``b = fit . log e`` and ``d = drift . log e`` are the window's order and drift (``fit`` and
    ``drift`` are weights on ``x``, zero outside the window; ``x_0`` is the window's first size).
    Both contrasts annihilate ``a + p x``, so ``p - b = -fit . g`` and ``d = drift . g`` for the
    correction ``g``; the ratio is maximised over a grid of ``q`` from ``q_min`` to ``20 q_min`` and
    ``u`` in ``[-0.9, u_max]`` (``u -> 0`` is the linear, Richardson, limit).
    """
    inside = (fit != 0) | (drift != 0)
    x0 = float(x[inside].min())
    worst = 0.0
    for factor in _Q_FACTORS:
        q = q_min * factor
        shape = np.where(inside, np.exp(-q * np.maximum(x - x0, 0.0)), 0.0)
        for u in _U_GRID:
            if u > u_max:
                continue
            g = np.log1p(u * shape) if abs(u) > 1e-3 else u * shape
            d = float(drift @ g)
            if abs(d) < 1e-300:
                continue
            worst = max(worst, float(-(fit @ g) / d))
    return worst


@dataclasses.dataclass(frozen=True)
class Design:
    """The contrasts of one ladder of sizes.

    Attributes
    ----------
    logn : ndarray (s,)
    starts : tuple of int
        First index of each window (every window ends at the largest size), largest window first.
    fit, drift, richardson : ndarray (K, s)
        Per window: its least-squares order, its drift (upper-half order minus lower-half order),
        and ``fit + A drift``.
    factors : ndarray (K,)
        The extrapolation factors ``A``.
    acceleration : ndarray (K, s)
        Per window of at least 4 sizes: the rate of drift (change of order per unit ``log n``) over its
        upper third minus that over its lower third (zero for 3 sizes: it cannot be measured).
    all_sizes : ndarray (s,)
        The least-squares order over every size (informational: it mixes regimes).
    local : ndarray (s - 1, s)
        The local orders between successive sizes.
    """

    logn: np.ndarray
    starts: tuple
    fit: np.ndarray
    drift: np.ndarray
    richardson: np.ndarray
    factors: np.ndarray
    all_sizes: np.ndarray
    local: np.ndarray
    acceleration: np.ndarray
    q_min: float
    u_max: float

    @property
    def contrasts(self) -> np.ndarray:
        """Every contrast stacked: all sizes, local orders, then per window fit, richardson, drift, acceleration."""
        return np.concatenate([self.all_sizes[None], self.local, self.fit, self.richardson, self.drift,
                               self.acceleration])


def _acceleration(x: np.ndarray, i0: int) -> np.ndarray:
    """Drift rate over the upper third of the window ``x[i0:]`` minus that over its lower third (a contrast)."""
    s = x.size
    out = np.zeros(s)
    m = s - i0 - 1  # local orders in the window
    if m < 3:
        return out
    g = max(m // 3, 1)
    groups = [(i0, i0 + g), (i0 + g, s - 1 - g), (s - 1 - g, s - 1)]  # local orders [a, b): sizes a .. b
    slopes, centres = [], []
    for a, b in groups:
        c = np.zeros(s)
        c[a:b + 1] = _slope(x[a:b + 1])
        slopes.append(c)
        centres.append(float(x[a:b + 1].mean()))
    r1 = (slopes[1] - slopes[0]) / (centres[1] - centres[0])
    r2 = (slopes[2] - slopes[1]) / (centres[2] - centres[1])
    return r2 - r1


@functools.lru_cache(maxsize=256)
def _design(logn: tuple, q_min: float, u_max: float) -> Design:
    x = np.asarray(logn, dtype=float)
    s = x.size
    starts = tuple(range(0, s - 2))
    fit, drift, rich, factors, acc = [], [], [], [], []
    for i0 in starts:
        k = s - i0
        half = k // 2 + k % 2  # k = 3: {0,1},{1,2}; 4: {0,1},{2,3}; 5: {0..2},{2..4}
        cb = np.zeros(s)
        cb[i0:] = _slope(x[i0:])
        lower, upper = np.zeros(s), np.zeros(s)
        lower[i0:i0 + half] = _slope(x[i0:i0 + half])
        upper[s - half:] = _slope(x[s - half:])
        cd = upper - lower
        a = extrapolation_factor(x, cb, cd, q_min=q_min, u_max=u_max)
        acc.append(_acceleration(x, i0))
        fit.append(cb)
        drift.append(cd)
        rich.append(cb + a * cd)
        factors.append(a)
    local = np.zeros((s - 1, s))
    for i in range(s - 1):
        local[i, i], local[i, i + 1] = -1.0, 1.0
        local[i] /= x[i + 1] - x[i]
    return Design(logn=x, starts=starts, fit=np.array(fit), drift=np.array(drift), richardson=np.array(rich),
                  factors=np.array(factors), all_sizes=_slope(x), local=local, acceleration=np.array(acc),
                  q_min=q_min, u_max=u_max)


def design(logn, *, q_min: float = Q_MIN, u_max: float = U_MAX) -> Design:
    """The contrasts of the ladder ``logn`` (cached: the operating characteristics reuse it across seeds)."""
    return _design(tuple(float(v) for v in np.asarray(logn, dtype=float)), float(q_min), float(u_max))


def levels(errors: np.ndarray, gamma: float = GAMMA) -> tuple[np.ndarray, np.ndarray]:
    """``T`` (``...``, s) and the influence ``psi`` (``...``, s, r) of the errors ``(..., s, r)`` (module docstring).

    A size whose errors are all exactly 0 has level ``-inf`` (the caller refuses it as round-off).
    """
    e = np.asarray(errors, dtype=float)
    w = e**gamma
    m = w.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log(m) / gamma
        psi = (w / m[..., None] - 1.0) / gamma
    psi = np.where(np.isfinite(psi), psi, 0.0)
    return t, psi


@dataclasses.dataclass(frozen=True)
class Bracket:
    """Estimates and intervals of every contrast of a :class:`Design` (arrays over the leading axes).

    ``value`` and ``se`` have shape ``(..., m)`` for the ``m`` stacked contrasts
    (:attr:`Design.contrasts`); ``low`` / ``high`` are the asymptotic order's interval (intersection
    over the windows), ``window_low`` / ``window_high`` (``..., K``) each window's, ``t`` the quantile
    used for the windows, ``dof`` the degrees of freedom.
    """

    value: np.ndarray
    se: np.ndarray
    dof: np.ndarray
    t: np.ndarray
    window_low: np.ndarray
    window_high: np.ndarray
    low: np.ndarray
    high: np.ndarray
    accelerating: np.ndarray
    design: Design

    def part(self, name: str, array: np.ndarray | None = None) -> np.ndarray:
        """The slice of ``value`` (or ``array``) holding the contrasts ``name`` (all_sizes, local, fit, ...)."""
        d = self.design
        s = d.logn.size
        k = len(d.starts)
        bounds = {"all_sizes": (0, 1), "local": (1, s), "fit": (s, s + k), "richardson": (s + k, s + 2 * k),
                  "drift": (s + 2 * k, s + 3 * k), "acceleration": (s + 3 * k, s + 4 * k)}
        lo, hi = bounds[name]
        arr = self.value if array is None else array
        return arr[..., lo:hi]


def window_alphas(k: int, alpha: float) -> np.ndarray:
    """The error rate each of ``k`` windows is taken at (largest first): half to the largest window, the rest shared.

    Bonferroni with unequal weights: the windows' rates add up to ``alpha``. The largest window
    decides most runs that have settled (it has the most data); the smaller ones take over when the
    first sizes are still moving.
    """
    if k == 1:
        return np.array([alpha])
    return np.concatenate([[alpha / 2], np.full(k - 1, alpha / (2 * (k - 1)))])


def bracket(logn, errors: np.ndarray, *, confidence: float, q_min: float = Q_MIN, u_max: float = U_MAX,
            deterministic: bool | None = None, gamma: float = GAMMA) -> Bracket:
    """The interval of the asymptotic order from ``errors`` (``..., s, r``) at the sizes ``exp(logn)``.

    ``confidence`` is the level of the final interval; the windows share its error rate
    (:func:`window_alphas`). ``deterministic`` (default: ``r == 1``) takes the lack of fit as noise.
    """
    d = design(logn, q_min=q_min, u_max=u_max)
    e = np.asarray(errors, dtype=float)
    r = e.shape[-1]
    if deterministic is None:
        deterministic = r == 1
    t_level, psi = levels(e, gamma)
    c = d.contrasts
    value = t_level @ c.T
    s = d.logn.size
    if deterministic:
        sigma = _reversal_noise(t_level, d.logn)
        se = sigma[..., None] * np.sqrt(np.sum(c * c, axis=1))
        dof = np.full(t_level.shape[:-1], float(max(s - 2, 1)))
    else:
        v = np.einsum("...sr,ms->...mr", psi, c)
        se = v.std(axis=-1, ddof=1) / math.sqrt(r)
        dof = np.full(value.shape[:-1], float(r - 1))
    k = len(d.starts)
    alpha = window_alphas(k, 1 - confidence)
    t = np.where(se[..., s:s + k] > 0, t_quantile(dof[..., None], 1 - alpha / 2), 0.0)
    b = value[..., s:s + k]
    rr = value[..., s + k:s + 2 * k]
    sb = se[..., s:s + k]
    sr = se[..., s + k:s + 2 * k]
    tt = t
    window_low = np.minimum(b - tt * sb, rr - tt * sr)
    window_high = np.maximum(b + tt * sb, rr + tt * sr)
    drift = value[..., s + 2 * k:s + 3 * k]
    acc = value[..., s + 3 * k:s + 4 * k]
    sacc = se[..., s + 3 * k:s + 4 * k]
    accelerating = np.sign(drift) * acc > ACCELERATION_Z * sacc + 1e-9 * (1.0 + np.abs(drift))
    accelerating &= np.abs(drift) > MATERIAL_DRIFT
    accelerating &= np.any(d.acceleration != 0, axis=1)
    if k >= 2:  # the 3-size window cannot show its own acceleration: it takes that of the 4-size one around it
        accelerating[..., -1] = accelerating[..., -2]
    # an accelerating window keeps the side that monotone local orders alone give: the asymptotic order lies
    # beyond the fitted one in the direction of the drift (the extrapolation's end is not trusted)
    window_low = np.where(accelerating & (drift > 0), b - tt * sb, np.where(accelerating, -np.inf, window_low))
    window_high = np.where(accelerating & (drift < 0), b + tt * sb, np.where(accelerating, np.inf, window_high))
    low = window_low.max(axis=-1)
    high = window_high.min(axis=-1)
    return Bracket(value=value, se=se, dof=dof, t=t, window_low=window_low, window_high=window_high,
                   low=low, high=high, accelerating=accelerating, design=d)


def kept_sizes(t_level: np.ndarray, logn, *, floor: float, roundoff: float) -> np.ndarray:
    """How many of the smallest sizes stay clear of a round-off floor (an int array over the leading axes).

    ``t_level`` is the log level of the error per size (:func:`levels`). A size is cut, with every
    larger one, when its level is at or below ``floor``. Below ``roundoff`` the errors may be the
    arithmetic's rather than the method's: in the trailing run of sizes whose levels are at or
    below ``roundoff``, the first local order that departs from the typical (median) local order
    above it by more than ``0.05 |typical| + 0.05`` (a stall, a jump or a bend) marks the floor's
    influence, and every size of that run whose error is within a factor ``FLOOR_MARGIN`` of the
    error where that step starts is cut (a floor bends the errors above it too). Sizes above ``roundoff`` are
    always kept. Flattening is so read as the floating point, never as a slower order.
    """
    t = np.asarray(t_level, dtype=float)
    x = np.asarray(logn, dtype=float)
    flat = t.reshape(-1, t.shape[-1])
    out = np.empty(flat.shape[0], dtype=int)
    lf = math.log(floor) if floor > 0 else -np.inf
    lr = math.log(roundoff) if roundoff > 0 else -np.inf
    margin = math.log(FLOOR_MARGIN)
    for k, row in enumerate(flat):
        s = row.size
        low = np.flatnonzero(~(row > lf))  # at or below floor (or -inf: all zero)
        keep = int(low[0]) if low.size else s
        tail = keep
        while tail > 0 and row[tail - 1] <= lr:
            tail -= 1
        if tail < keep and keep >= 3:
            lam = np.diff(row[:keep]) / np.diff(x[:keep])
            base = lam[:tail - 1] if tail >= 3 else lam[:2]
            ref = float(np.median(base))
            limit = 0.05 * abs(ref) + 0.05
            for i in range(max(tail, 1), keep):
                if abs(lam[i - 1] - ref) > limit:  # the step from size i - 1 to i: both ends may be bent
                    bent = np.flatnonzero(row[tail:keep] < row[i - 1] + margin)
                    keep = tail + int(bent[0]) if bent.size else keep
                    break
        out[k] = keep
    return out.reshape(t.shape[:-1])


def intervals(logn, errors: np.ndarray, *, confidence: float, q_min: float = Q_MIN, floor: float = 1e-13,
              roundoff: float | None = None, deterministic: bool | None = None, log_power: float = 0.0):
    """The asymptotic order's interval of every run in ``errors`` (``runs x sizes x repeats``), round-off first.

    Returns ``(low, high, keep)``: per run the interval over the sizes that stay clear of a
    round-off floor (:func:`kept_sizes`) and how many they are (NaN intervals when fewer than 3).
    The same steps as :func:`verify.rates.decide_rate`, batched (runs with the same kept sizes share
    one :func:`bracket`).
    """
    roundoff = ROUNDOFF if roundoff is None else roundoff
    logn = np.asarray(logn, dtype=float)
    e = np.asarray(errors, dtype=float)
    if log_power:
        e = e / logn[None, :, None] ** log_power
    t_level, _ = levels(e)
    keep = kept_sizes(t_level, logn, floor=floor, roundoff=roundoff)
    low = np.full(e.shape[0], np.nan)
    high = np.full(e.shape[0], np.nan)
    for k in np.unique(keep):
        if k < 3:
            continue
        runs = np.flatnonzero(keep == k)
        br = bracket(logn[:k], e[runs, :k], confidence=confidence, q_min=q_min, deterministic=deterministic)
        low[runs], high[runs] = br.low, br.high
    return low, high, keep


def final_verdicts(low, high, keep, sizes: int, claimed, kind: str, tolerance: float) -> np.ndarray:
    """+1 / -1 / 0 as :func:`verdicts`, after round-off: runs that left sizes out can only fail (or stay undecided)."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    none = np.isnan(low) | np.isnan(high)
    v = np.where(none, 0, verdicts(np.where(none, 0.0, low), np.where(none, 0.0, high), claimed, kind, tolerance))
    return np.where((np.asarray(keep) < sizes) & (v == 1), 0, v)


def _isotonic(y: np.ndarray) -> np.ndarray:
    """Least-squares non-decreasing fit of ``y`` (pool adjacent violators)."""
    blocks = []  # [mean, weight]
    for v in y:
        blocks.append([float(v), 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2 = blocks.pop()
            m1, w1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2])
    return np.concatenate([np.full(int(w), m) for m, w in blocks])


def _reversal_noise(t_level: np.ndarray, logn: np.ndarray) -> np.ndarray:
    """The noise level of deterministic errors: how far their local orders are from moving one way.

    The model lets the local orders drift monotonically; the distance of the local orders from the
    best monotone sequence (either direction, least squares) is read as noise: ``sigma_T =
    rms(residual) * mean(dx) / sqrt(2)`` per size (a level's noise ``sigma_T`` gives local orders a noise
    ``sqrt(2) sigma_T / dx``). Monotone local orders give 0 (the bracket is exact).
    """
    dx = np.diff(logn)
    lam = np.diff(t_level, axis=-1) / dx
    flat = lam.reshape(-1, lam.shape[-1])
    out = np.empty(flat.shape[0])
    for i, row in enumerate(flat):
        if not np.all(np.isfinite(row)):
            out[i] = np.nan
            continue
        up = np.sum((row - _isotonic(row)) ** 2)
        down = np.sum((row + _isotonic(-row)) ** 2)
        out[i] = math.sqrt(min(up, down) / max(row.size - 1, 1)) * float(dx.mean()) / math.sqrt(2)
    return out.reshape(lam.shape[:-1])


def consistent(low, high):
    """Whether the windows' intervals meet (``low <= high`` up to rounding: 1e-9 relative)."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    with np.errstate(invalid="ignore", over="ignore"):  # NaN ends (no interval) compare False; inf ends too
        return low <= high + 1e-9 * (1.0 + np.abs(low))


def verdicts(low, high, claimed, kind: str, tolerance: float) -> np.ndarray:
    """+1 pass, -1 fail, 0 undecided, for the interval ``[low, high]`` of the asymptotic order.

    ``equal``: pass when ``[low, high]`` lies in ``[claimed - tolerance, claimed + tolerance]``, fail
    when it lies wholly outside; ``bound``: pass when ``high <= claimed + tolerance``, fail when
    ``low > claimed + tolerance``. An empty interval (``low > high``: the windows contradict the
    model) is undecided.
    """
    low, high, claimed = np.asarray(low, float), np.asarray(high, float), np.asarray(claimed, float)
    top, bottom = claimed + tolerance, claimed - tolerance
    ok = consistent(low, high)
    low, high = np.minimum(low, high), np.maximum(low, high)
    if kind == "equal":
        passed = ok & (low >= bottom) & (high <= top)
        failed = ok & ((high < bottom) | (low > top))
    else:
        passed = ok & (high <= top)
        failed = ok & (low > top)
    return np.where(passed, 1, np.where(failed, -1, 0))
