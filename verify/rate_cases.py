"""Errors with known asymptotic orders: the library behind the rate rule's operating characteristics.

Each :class:`RateCase` draws the errors a user's check would measure (``seeds x sizes x repeats``)
for an error whose asymptotic order is known in closed form, cheaply: where the law of the error is
known it is sampled directly (the mean of ``n`` exponential draws is a Gamma(n) sum over ``n``, the
mean of ``n`` Bernoulli draws a binomial count over ``n``, the mean of ``n`` normal draws ``Z /
sqrt(n)``); heavy-tailed draws are summed at moderate sizes; quadratures are computed (one random
integrand per seed). :mod:`verify.rate_oc` decides every case's true claim and claims off by
+-0.15 and +-0.3 with the rule of :mod:`verify.rates`; the tests and ``python -m verify.rate
--operating-characteristics`` use it.

Families
    ``monte-carlo``: means of light-tailed draws (normal, exponential, Bernoulli with its lattice of
    exact zeros, nested samples shared across sizes), order -1/2.
    ``heavy-tailed``: means of Pareto draws with tail index 2.5 (finite variance, order -1/2, slow
    CLT), 1.5 (infinite variance: order 1/1.5 - 1 = -1/3) and lognormal draws (order -1/2).
    ``quadrature``: trapezoid and Simpson rules on ``exp(a x)`` (orders -2, -4), the trapezoid rule
    on ``x^beta`` (order -(1 + beta), its correction ``n^-2`` decays like ``n^-(1 - beta)``),
    Gauss-Legendre on ``x^beta`` (order -2(1 + beta)).
    ``mixture``: ``C1 n^p + C2 n^q`` with and without multiplicative noise ``exp(sigma Z)``, at sizes
    where the second term still matters and where it does not; the audit's case ``(1/n + 100/n^2)
    exp(sigma Z)`` at ``n = 200 .. 3200`` with 8 to 32 repeats; a correction that changes sign.
    ``log-factor``: ``n^p (log n)^k``, claimed with ``log_power=k``.
    ``round-off``: Simpson's rule in float64 and the trapezoid rule in float32 carried into their
    round-off floors.
    ``design``: few repeats, three sizes, ladders of ratio 10 and irregular ladders, heteroscedastic
    noise, a biased estimator (order 0).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from spectral.floor.validation import child_rng

__all__ = ["RateCase", "CASES", "FAMILIES", "case", "draw_errors", "uniform_mean"]


@dataclasses.dataclass(frozen=True)
class RateCase:
    """An error with a known asymptotic order, and how to draw it.

    Attributes
    ----------
    name : str
        Short name (unique).
    family : str
        One of :data:`FAMILIES`.
    description : str
        The error in words.
    sizes : tuple of int
        The sizes a user measures.
    repeats : int
        Repeats per size (1: deterministic).
    order : float
        The true asymptotic order ``p`` (``error ~ n^p (log n)^log_power``); NaN when it depends
        on the integrand drawn per run (``sample`` then returns the orders too).
    sample : callable
        ``sample(rng, sizes, seeds, repeats) -> ndarray (seeds, len(sizes), repeats)`` (or that and
        the true order of each run).
    log_power : float
        The true power of ``log n``, claimed alongside ``order``.
    asymptotic : bool
        Whether the case's sizes are past its pre-asymptotic regime (informational).
    roundoff : float or None
        The ``roundoff`` a user of this arithmetic states (None: the default, float64's).
    outside_model : str
        Why the rule's model does not hold at these sizes (empty: it holds): a term that decays
        faster still leads at every size measured and the noise hides that it fades. The rule can
        promise nothing there; the operating characteristics show what it does.
    """

    name: str
    family: str
    description: str
    sizes: tuple
    repeats: int
    order: float
    sample: Callable
    log_power: float = 0.0
    asymptotic: bool = True
    roundoff: float | None = None
    outside_model: str = ""

    @property
    def deterministic(self) -> bool:
        return self.repeats == 1


def draw_errors(c: RateCase, seeds: int, seed: int = 0, *, sizes=None,
                repeats: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The errors of ``seeds`` independent runs of case ``c`` (``seeds x sizes x repeats``) and each run's true order.

    ``sizes`` and ``repeats`` default to the case's. The order is ``c.order`` for every run, except
    for cases whose integrand is drawn per run (the order then depends on it). Reproducible: the
    draws depend on ``seed``, the case's name, the sizes and the repeats.
    """
    sizes = c.sizes if sizes is None else tuple(int(n) for n in sizes)
    repeats = c.repeats if repeats is None else int(repeats)
    rng = child_rng(seed, "rate-case", c.name, *sizes, repeats)
    out = c.sample(rng, np.asarray(sizes), seeds, repeats)
    errors, orders = out if isinstance(out, tuple) else (out, np.full(seeds, c.order))
    errors = np.asarray(errors, dtype=float)
    assert errors.shape == (seeds, len(sizes), repeats), (c.name, errors.shape)
    return errors, np.asarray(orders, dtype=float)


def _ladder(start, ratio, count):
    return tuple(int(round(start * ratio**k)) for k in range(count))


# -- Monte Carlo means (closed-form laws) --------------------------------------------------------------------
def _normal_mean(rng, sizes, s, r):
    n = np.asarray(sizes, dtype=float)[None, :, None]
    return np.abs(rng.standard_normal((s, n.shape[1], r))) / np.sqrt(n)


def uniform_mean(rng, sizes, s, r):
    """|mean of n uniforms - 1/2| by its normal law N(0, 1/(12 n)) (Irwin-Hall's correction is O(1/n))."""
    return _normal_mean(rng, sizes, s, r) / math.sqrt(12.0)


def _exponential_mean(rng, sizes, s, r):
    n = np.asarray(sizes, dtype=float)[None, :, None]
    return np.abs(rng.gamma(np.broadcast_to(n, (s, n.shape[1], r))) / n - 1.0)


def _bernoulli_mean(rng, sizes, s, r, prob=0.3):
    n = np.asarray(sizes)[None, :, None]
    return np.abs(rng.binomial(np.broadcast_to(n, (s, n.shape[1], r)), prob) / n - prob)


def _nested_normal_mean(rng, sizes, s, r):
    """The error of the first n draws of ONE normal sample per repeat (shared across sizes)."""
    n = np.asarray(sizes, dtype=float)
    steps = np.diff(np.concatenate([[0.0], n]))
    sums = np.cumsum(rng.standard_normal((s, r, n.size)) * np.sqrt(steps), axis=-1)
    return np.abs(np.swapaxes(sums, 1, 2)) / n[None, :, None]


def _direct_mean(draw, mean):
    """|mean of n draws - mean|, summed directly (heavy tails: no closed-form law)."""
    def sample(rng, sizes, s, r):
        out = np.empty((s, len(sizes), r))
        for i, m in enumerate(sizes):
            for j0 in range(0, s, 50):  # chunks of seeds: memory
                j1 = min(s, j0 + 50)
                out[j0:j1, i, :] = np.abs(draw(rng, (j1 - j0, r, int(m))).mean(axis=-1) - mean)
        return out

    return sample


def _pareto(alpha):
    # numpy's pareto is Lomax; + 1 is the Pareto law with x_m = 1, mean alpha / (alpha - 1)
    return (lambda rng, shape: rng.pareto(alpha, shape) + 1.0), alpha / (alpha - 1.0)


def _lognormal(sigma):
    return (lambda rng, shape: rng.lognormal(0.0, sigma, shape)), math.exp(sigma**2 / 2)


# -- deterministic quadratures (one random integrand per seed) ------------------------------------------------
def _trapezoid(y, h):
    return h * (y.sum(axis=-1) - 0.5 * (y[..., 0] + y[..., -1]))


def _quadrature(rule, dtype=np.float64, order=None):
    """rule(n, params, dtype) -> |error|, params drawn per seed; ``order(params)`` when the order depends on them."""
    def sample(rng, sizes, s, r):
        params = rng.random((s, 2))
        errors = np.array([[[rule(int(n), params[k], dtype)] * r for n in sizes] for k in range(s)])
        return errors if order is None else (errors, np.array([order(par) for par in params]))

    return sample


def _trap_exp(n, par, dtype):
    a = 0.5 + 2.5 * par[0]
    x = np.linspace(0.0, 1.0, n + 1, dtype=dtype)
    exact = math.expm1(a) / a
    return abs(float(_trapezoid(np.exp(dtype(a) * x), dtype(1.0 / n))) - exact)


def _simpson_exp(n, par, dtype):
    a = 0.5 + 2.5 * par[0]
    x = np.linspace(0.0, 1.0, 2 * n + 1, dtype=dtype)
    y = np.exp(dtype(a) * x)
    h = 1.0 / (2 * n)
    value = h / 3 * (y[0] + y[-1] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum())
    return abs(float(value) - math.expm1(a) / a)


def _trap_beta(par):
    return 0.3 + 0.4 * par[0]


def _gauss_beta(par):
    return 0.2 + 0.6 * par[0]


def _trap_power(n, par, dtype):
    beta = _trap_beta(par)  # order -(1 + beta); its correction n^-2 is relatively n^-(1 - beta)
    x = np.linspace(0.0, 1.0, n + 1)
    return abs(float(_trapezoid(x**beta, 1.0 / n)) - 1.0 / (1.0 + beta))


def _gauss_power(n, par, dtype):
    beta = _gauss_beta(par)  # Gauss-Legendre on x^beta over [0, 1]: order -2 (1 + beta)
    x, w = np.polynomial.legendre.leggauss(n)
    return abs(float(0.5 * w @ ((x + 1) / 2) ** beta) - 1.0 / (1.0 + beta))


# -- mixtures and the rest -------------------------------------------------------------------------------------
def _power_noise(terms, sigma=0.0, log_power=0.0, noise="lognormal"):
    """sum_k C_k n^p_k (log n)^log_power, times exp(sigma(n) Z) per draw (sigma a number or a function of the
    sizes' position in [0, 1]), or times |Z| (``noise="abs-normal"``); sigma 0: deterministic."""
    def sample(rng, sizes, s, r):
        n = np.asarray(sizes, dtype=float)
        base = sum(c * n**p for c, p in terms) * np.log(n) ** log_power
        if noise == "abs-normal":
            return base[None, :, None] * np.abs(rng.standard_normal((s, n.size, r)))
        if callable(sigma):
            sig = sigma(n)
        else:
            sig = np.full(n.size, float(sigma))
        if not np.any(sig):
            return np.broadcast_to(base[None, :, None], (s, n.size, r)).copy()
        z = rng.standard_normal((s, n.size, r))
        return base[None, :, None] * np.exp(sig[None, :, None] * z)

    return sample


def _floored(terms, level):
    """A deterministic error sum_k C_k n^p_k plus a fixed erratic floor: |error + level u_n|, u_n drawn once per run."""
    def sample(rng, sizes, s, r):
        n = np.asarray(sizes, dtype=float)
        base = sum(c * n**p for c, p in terms)
        u = rng.uniform(-1.0, 1.0, (s, n.size))
        return np.repeat(np.abs(base[None, :] + level * u)[:, :, None], r, axis=2)

    return sample


def _biased_mean(bias):
    def sample(rng, sizes, s, r):
        n = np.asarray(sizes, dtype=float)[None, :, None]
        return np.abs(rng.standard_normal((s, n.shape[1], r)) / np.sqrt(n) + bias)

    return sample


def _hetero_sigma(n):
    """0.05 at n = 100 rising to 0.5 at n = 3200 (and on, capped)."""
    return np.clip(0.05 + 0.45 * np.log(n / 100.0) / np.log(32.0), 0.05, 0.5)


def _cases() -> tuple[RateCase, ...]:
    mc = _ladder(1000, 2, 7)
    small = _ladder(100, 2, 6)
    audit = _ladder(200, 2, 5)
    audit_terms = [(1, -1), (100, -2)]
    out = [
        # Monte Carlo means, light tails
        RateCase("normal-mean", "monte-carlo", "|mean of n N(0,1) draws| (exactly |Z| n^-1/2)", mc, 256, -0.5,
                 _normal_mean),
        RateCase("exponential-mean", "monte-carlo", "|mean of n Exp(1) draws - 1| (a Gamma(n) sum)", mc, 256, -0.5,
                 _exponential_mean),
        RateCase("bernoulli-mean", "monte-carlo", "|mean of n Bernoulli(0.3) draws - 0.3| (exact zeros)",
                 _ladder(100, 2, 7), 256, -0.5, _bernoulli_mean),
        RateCase("nested-mean", "monte-carlo", "|mean of the first n of one normal sample| (shared across sizes)",
                 mc, 128, -0.5, _nested_normal_mean),
        # heavy tails
        RateCase("pareto-2.5-mean", "heavy-tailed", "|mean of n Pareto(2.5) draws - mean| (finite variance)", small,
                 64, -0.5, _direct_mean(*_pareto(2.5))),
        RateCase("pareto-1.5-mean", "heavy-tailed", "|mean of n Pareto(1.5) draws - mean| (infinite variance)",
                 small, 64, 1 / 1.5 - 1, _direct_mean(*_pareto(1.5))),
        RateCase("lognormal-mean", "heavy-tailed", "|mean of n lognormal(0, 1.5) draws - mean|", small, 64, -0.5,
                 _direct_mean(*_lognormal(1.5))),
        # deterministic quadratures
        RateCase("trapezoid-exp", "quadrature", "trapezoid rule on exp(a x), a in [0.5, 3]", _ladder(4, 2, 5), 1,
                 -2.0, _quadrature(_trap_exp)),
        RateCase("simpson-exp", "quadrature", "Simpson's rule on exp(a x), a in [0.5, 3]", _ladder(2, 2, 5), 1,
                 -4.0, _quadrature(_simpson_exp)),
        RateCase("trapezoid-power", "quadrature", "trapezoid rule on x^beta, beta in [0.3, 0.7]", _ladder(8, 2, 6),
                 1, math.nan, _quadrature(_trap_power, order=lambda par: -(1 + _trap_beta(par)))),
        RateCase("gauss-power", "quadrature", "Gauss-Legendre on x^beta, beta in [0.2, 0.8]", _ladder(4, 2, 5), 1,
                 math.nan, _quadrature(_gauss_power, order=lambda par: -2 * (1 + _gauss_beta(par)))),
        # mixtures
        RateCase("audit-0.1-32", "mixture", "(1/n + 100/n^2) exp(0.1 Z), the audit's case", audit, 32, -1.0,
                 _power_noise(audit_terms, 0.1), asymptotic=False),
        RateCase("audit-0.2-16", "mixture", "(1/n + 100/n^2) exp(0.2 Z), the audit's case", audit, 16, -1.0,
                 _power_noise(audit_terms, 0.2), asymptotic=False),
        RateCase("audit-0.3-8", "mixture", "(1/n + 100/n^2) exp(0.3 Z), the audit's case", audit, 8, -1.0,
                 _power_noise(audit_terms, 0.3), asymptotic=False),
        RateCase("audit-late", "mixture", "(1/n + 100/n^2) exp(0.2 Z) at n = 3200 .. 51200", _ladder(3200, 2, 5), 16,
                 -1.0, _power_noise(audit_terms, 0.2)),
        RateCase("half-gap", "mixture", "(1/n + 3 n^-1.5) exp(0.2 Z): a correction n^-1/2", _ladder(100, 2, 7), 32,
                 -1.0, _power_noise([(1, -1), (3, -1.5)], 0.2), asymptotic=False),
        RateCase("early-mixture", "mixture", "5 n^-1/2 - 4/n, deterministic, n = 4 .. 64", _ladder(4, 2, 5), 1,
                 -0.5, _power_noise([(5, -0.5), (-4, -1)]), asymptotic=False),
        RateCase("dominated-start", "mixture", "(1/n + 10/n^2) exp(0.1 Z), n = 10 .. 640 (n^-2 leads at first)",
                 _ladder(10, 2, 7), 16, -1.0, _power_noise([(1, -1), (10, -2)], 0.1), asymptotic=False),
        RateCase("pre-inflection", "mixture", "1/n + 3000/n^2, deterministic, n = 10 .. 640 (the n^-2 term leads at "
                 "every size; its fading speeds up)", _ladder(10, 2, 7), 1, -1.0, _power_noise([(1, -1), (3000, -2)]),
                 asymptotic=False),
        RateCase("pre-inflection-noisy", "mixture", "(1/n + 300/n^2) exp(0.2 Z), n = 10 .. 640", _ladder(10, 2, 7), 16,
                 -1.0, _power_noise([(1, -1), (300, -2)], 0.2), asymptotic=False,
                 outside_model="300/n^2 leads up to n = 300 and its fading (the local orders' acceleration) is "
                               "hidden by the noise"),
        RateCase("sign-change", "mixture", "n^-1 (1 + 4 n^-1/2 - 12/n) exp(0.1 Z): a correction changing sign",
                 _ladder(16, 2, 7), 16, -1.0, _power_noise([(1, -1), (4, -1.5), (-12, -2)], 0.1), asymptotic=False),
        RateCase("slow-correction", "mixture", "n^-1 (1 + 2 n^-1/2), deterministic, n = 16 .. 1024", _ladder(16, 2, 7),
                 1, -1.0, _power_noise([(1, -1), (2, -1.5)]), asymptotic=False),
        RateCase("slow-correction-noisy", "mixture", "n^-1 (1 + 2 n^-1/2) exp(0.1 Z), n = 16 .. 1024",
                 _ladder(16, 2, 7), 32, -1.0, _power_noise([(1, -1), (2, -1.5)], 0.1), asymptotic=False),
        RateCase("gap-0.3", "mixture", "n^-1 + n^-1.3, deterministic, n = 100 .. 6400", _ladder(100, 2, 7), 1,
                 -1.0, _power_noise([(1, -1), (1, -1.3)]), asymptotic=False),
        RateCase("gap-0.3-large", "mixture", "n^-1 + 4 n^-1.3, deterministic, n = 100 .. 6400", _ladder(100, 2, 7), 1,
                 -1.0, _power_noise([(1, -1), (4, -1.3)]), asymptotic=False),
        # log factors
        RateCase("gl-type", "log-factor", "(log n / n)^(1/6) exp(0.2 Z) (a graph-Laplacian theorem's form)",
                 _ladder(256, 2, 5), 16, -1 / 6, _power_noise([(1, -1 / 6)], 0.2, 1 / 6), log_power=1 / 6),
        RateCase("n-log-n", "log-factor", "log(n) / n, deterministic", _ladder(16, 2, 6), 1, -1.0,
                 _power_noise([(1, -1)], 0.0, 1.0), log_power=1.0),
        RateCase("mc-log2", "log-factor", "|Z| (log n)^2 / sqrt(n)", mc, 128, -0.5,
                 _power_noise([(1, -0.5)], 0.0, 2.0, noise="abs-normal"), log_power=2.0),
        # round-off floors
        RateCase("simpson-floor", "round-off", "Simpson's rule on exp(a x) in float64, n = 4 .. 2048 (floor ~1e-15)",
                 _ladder(4, 2, 10), 1, -4.0, _quadrature(_simpson_exp)),
        RateCase("float32-floor", "round-off", "trapezoid rule on exp(a x) in float32, n = 4 .. 4096 (floor 1e-7 .. "
                 "1e-6), roundoff=1e-5 stated", _ladder(4, 2, 11), 1, -2.0, _quadrature(_trap_exp, np.float32),
                 roundoff=1e-5),
        RateCase("noise-floor", "round-off", "|3 n^-3 + 1e-10 u_n|, u_n uniform in [-1, 1] per size (a floor near 1e-10 "
                 "reached at n ~ 2000)", _ladder(8, 2, 11), 1, -3.0, _floored([(3, -3)], 1e-10)),
        # designs
        RateCase("few-repeats", "design", "|Z| n^-1/2 with 4 repeats", small, 4, -0.5, _normal_mean),
        RateCase("three-sizes", "design", "n^-1 exp(0.1 Z) at n = 100, 200, 400", (100, 200, 400), 16, -1.0,
                 _power_noise([(1, -1)], 0.1)),
        RateCase("ratio-10", "design", "|mean of n Exp(1) draws - 1| at n = 10^2 .. 10^6", _ladder(100, 10, 5), 64,
                 -0.5, _exponential_mean),
        RateCase("irregular", "design", "n^-2 exp(0.2 Z) at n = 30, 45, 100, 110, 400, 1000",
                 (30, 45, 100, 110, 400, 1000), 16, -2.0, _power_noise([(1, -2)], 0.2)),
        RateCase("heteroscedastic", "design", "n^-1 exp(sigma(n) Z), sigma rising from 0.05 to 0.5 with n", small, 32,
                 -1.0, _power_noise([(1, -1)], _hetero_sigma)),
        RateCase("biased-mean", "design", "|N(0,1) n^-1/2 + 0.003|: a bias 0.003, order 0 (hidden by the noise "
                 "until the largest sizes)", mc, 64, 0.0, _biased_mean(0.003), asymptotic=False,
                 outside_model="the noise n^-1/2 leads at every size (the bias reaches it only at n = 64000) and the "
                               "local orders' acceleration is hidden by the noise"),
        RateCase("biased-mean-visible", "design", "|N(0,1) n^-1/2 + 0.01|: a bias 0.01, order 0", mc, 64, 0.0,
                 _biased_mean(0.01), asymptotic=False),
    ]
    return tuple(out)


CASES = _cases()
FAMILIES = ("monte-carlo", "heavy-tailed", "quadrature", "mixture", "log-factor", "round-off", "design")


def case(name: str) -> RateCase:
    """The case called ``name``."""
    for c in CASES:
        if c.name == name:
            return c
    raise KeyError(name)
