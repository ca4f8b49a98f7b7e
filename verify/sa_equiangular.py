"""Equiangular tokens follow one ODE; the simulator matches it and its integrators have their orders (SA-6).

SA-6 (GLPR, arXiv 2312.10794 v5, section 6.2, Theorem 6.8 and its equations for ``gamma_beta``).
Tokens with all pairwise inner products equal to ``rho`` stay equiangular, and ``rho`` solves

* (SA)  ``rho' = 2 e^(beta rho) (1 - rho)(1 + (n-1) rho) / (e^beta + (n-1) e^(beta rho))``,
* (USA) ``rho' = (2/n) e^(beta rho) (1 - rho)(1 + (n-1) rho)``,

(derived again in :mod:`manifolds.references.attention_flow` and with sympy in its tests), so
``1 - rho ~ e^(-2t)`` (SA, whatever beta and n) and ``e^(-2 e^beta t)`` (USA) near a cluster. The
check starts :func:`spectral.attention_flow` from ``x_i = sqrt(rho0) e_0 + sqrt(1 - rho0) e_i``
(the construction of :func:`~manifolds.references.attention_flow.equiangular_tokens`, seeded random
rotation) for every ``beta`` in ``betas`` and ``n`` in ``sizes``, both normalisations, and compares
every pairwise inner product over ``t`` in ``[0, t_max]`` with the ODE solved by ``solve_ivp``
(DOP853, rtol 1e-12), or with its closed form at ``beta = 0``
(``rho = (K e^(2t) - 1)/(K e^(2t) + n - 1)``). Beyond equiangular starts the Gram matrix of any
configuration solves a closed ODE (same module); the check compares the simulator with it from
``gram_n`` random tokens in ``d = gram_n`` (a full-rank Gram matrix: for ``d < n`` the solver of the
Gram ODE drifts off the rank-``d`` matrices, 1e-8 measured at ``d = 3``).

The integrators' orders (projected Euler 1, projected RK4 4, projected Dormand-Prince 5) are checked
with :func:`verify.rates.decide_rate` (``kind="equal"``, deterministic errors, the fit's t interval):
the error at ``t = 2`` of ``n = 8`` equiangular SA tokens at ``beta = 4`` against the reference, as a
function of the number of steps. Tolerances: the relative error of ``rho`` is held to the 1e-8 of
the task (measured 2e-11 at rtol 1e-11 on AVX-512 and AVX2 alike); the order bands are the measured
settling of the local orders (CALIBRATION). The references step onto every output time: read off
DOP853's dense output they were up to 2e-8 off at rtol 1e-12, and more on AVX2 machines.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import spectral
from manifolds.references.attention_flow import (equiangular_beta0, equiangular_flow, equiangular_tokens, gram_flow,
                                                 pair_inner_products, uniform_sphere)
from spectral.floor.backend import to_numpy
from spectral.floor.validation import ConvergenceError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.cpu import AVX2, AVX512
from verify.core.memory import PathNeed
from verify.core.params import Int, Ints, Real, Reals
from verify.core.result import Recorder
from verify.rates import RateQuantities, decide_rate

__all__ = ["CHECK", "CALIBRATION", "Params", "Quantities", "run", "main", "RATE_SIZES", "RATE_SETTING"]

CHECK = Check("sa_equiangular", devices=("cpu", "gpu"))

NORMALISATIONS = ("softmax", "uniform")
#: The order study: SA, n = 8 equiangular tokens from rho0 = 0, beta = 4, error of rho at t = 2.
RATE_SETTING = {"beta": 4.0, "n": 8, "t": 2.0}
#: Steps over [0, 2] per method, chosen where the local orders have settled and the error stays above
#: round-off (euler 3.5e-5 .. 5.5e-4, rk4 4.8e-9 .. 3.2e-7, dopri5 3.4e-12 .. 4.9e-10, measured).
RATE_SIZES = {"euler": (64, 128, 256, 512), "rk4": (8, 16, 32, 64), "dopri5": (8, 12, 16, 24)}
ORDERS = {"euler": 1, "rk4": 4, "dopri5": 5}

#: where the trajectory tolerances hold: the integrator at rtol <= 1e-10
_RTOL = {"rtol": (None, 1e-10)}
_TRAJECTORIES = {"over": {"betas": ((0.0, 1.0, 4.0),), "sizes": ((3, 8, 32),), "seed": (0, 1, 2)},
                 "valid": _RTOL, "cpu": (AVX512, AVX2)}
CALIBRATION = Calibration(
    Tolerance("rho_relative_error", 1e-8, measured=2.1e-11, **_TRAJECTORIES,
              why="the task's 1e-8 for rtol <= 1e-10 (adaptive error per step, the same on both "
                  "classes); a beta 1 % off gives 1e-3, the wrong normaliser 1e-1"),
    Tolerance("one_minus_rho_relative_error", 1e-6, measured=2.6e-9, **_TRAJECTORIES,
              why="1 - rho where it is >= 1e-6 (the rate e^(-2t) or e^(-2 e^beta t) itself): rounding of rho near 1 "
                  "is eps / (1 - rho) <= 2e-10 relative, the integration's error relative to 1 - rho larger (30 times "
                  "larger still before the reference stepped onto its output times)"),
    Tolerance("gram_error", 1e-8, measured=7.5e-12,
              over={"betas": ((0.0, 1.0, 4.0),), "seed": (0, 1, 2, 3, 4, 5)}, valid=_RTOL, cpu=(AVX512, AVX2),
              why="max |G_sim - G_ref| from n random tokens in d = n against the closed Gram ODE (solve_ivp rtol "
                  "1e-12, stepped onto every output time): the simulator's global error, about C rtol with C <= 33 "
                  "(up to 3.3e-9 at rtol 1e-10 over betas 0-8, gram_n 3-8 and t_max 2 and 5, the same on both "
                  "classes); read off DOP853's dense output the reference itself was 2e-8 off (6e-8 on "
                  "AVX2); a beta 1 % off gives 1e-3"),
    Tolerance("euler_order", 0.05, measured=0.0073, cpu=(AVX512, AVX2),
              why="the farther end of the 95 % interval of the order from 1: local orders 0.993, 0.997, 0.998, "
                  "interval [0.993, 1.000]"),
    Tolerance("rk4_order", 0.1, measured=0.064, cpu=(AVX512, AVX2),
              why="the farther end of the 95 % interval from 4: local orders 3.94, 3.97, 3.99 approach 4 from below, "
                  "interval [3.94, 4.00]; an order-3 method gives 1"),
    Tolerance("dopri5_order", 0.15, measured=0.116, cpu=(AVX512, AVX2),
              why="the farther end of the 95 % interval from 5: local orders 5.10, 5.08, 5.06 approach 5 from above "
                  "slowly (the embedded pair's constants), interval [5.05, 5.12]; an order-4 method gives 1"),
)


@CHECK.parameters
class Params:
    betas: tuple = Reals((0.0, 1.0, 4.0), "Inverse temperatures beta of the equiangular runs", low=0.0, high=8.0)
    sizes: tuple = Ints((3, 8, 32), "Numbers of tokens n of the equiangular runs (d = n + 1)", low=2, high=256,
                        unit="tokens")
    t_max: float = Real(5.0, "Final time of the comparison (26 equispaced output times); at least 1e-3: over shorter "
                        "runs rho moves too little for its 1e-8 relative error to be resolved (t_max = 1e-8 gave 2e-5, "
                        "1e-300 no output time with rho != 0)", low=1e-3, high=20.0)
    rho0: float = Real(0.0, "Initial inner product rho(0) (GLPR Theorem 6.8: 0, pairwise orthogonal)", low=-0.02,
                       high=0.99)
    rtol: float = Real(1e-11, "Relative tolerance of the adaptive Dormand-Prince run of the simulator", low=1e-13,
                       high=1e-3)
    gram_n: int = Int(8, "Tokens (and dimension) of the general random start compared with the Gram ODE", low=2,
                      high=64, unit="tokens")


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What sa_equiangular measures; dictionaries are keyed by (beta, n, normalisation)."""

    times: np.ndarray
    #: mean over pairs of <x_i, x_j>(t) from the simulator, and the reference rho(t)
    rho: dict[tuple[float, int, str], np.ndarray]
    rho_reference: dict[tuple[float, int, str], np.ndarray]
    #: max over t > 0 and pairs of |<x_i, x_j> - rho| / |rho|
    rho_error: dict[tuple[float, int, str], float]
    #: max |(1 - <x_i, x_j>) - (1 - rho)| / (1 - rho) where 1 - rho >= 1e-6 (always at t = 0: rho0 <= 0.99)
    one_minus_rho_error: dict[tuple[float, int, str], float]
    #: max over t of (max - min) of the pairwise inner products: zero when the start stays equiangular
    spread: dict[tuple[float, int, str], float]
    #: -d log(1 - rho)/dt at the last output time with 1 - rho >= 1e-6, from the simulator (nan if none)
    late_rate: dict[tuple[float, int, str], float]
    norm_error: float
    #: |solve_ivp reference - closed form| at beta = 0 (the reference against itself)
    reference_beta0_gap: float
    #: random start (n = d = gram_n): max |G_sim - G_ref| per (beta, normalisation)
    gram_error: dict[tuple[float, str], float]
    #: the order study: steps and errors per method
    rate_sizes: dict[str, np.ndarray]
    rate_errors: dict[str, np.ndarray]


def _memory(n: int) -> float:
    # one flow of n tokens in d = n + 1 (26 outputs, 11 token arrays of the stages, 3 (n, n) score arrays), the
    # (26, n, n) Gram matrices of its inner products and the reference's solve_ivp of the (n, n) Gram ODE; 16 MiB fixed
    return (37 * n * (n + 1) + 3 * n * n + 2 * 26 * n * n) * 8 + 40 * n * n * 8 + (16 << 20)


@CHECK.memory
def needs(p: Params) -> dict:
    """The largest equiangular run and the Gram comparison."""
    n = max(max(p.sizes), p.gram_n)
    return {"flows": PathNeed(_memory, n, option="--sizes", low=2, what=f"the flows of n = {n} tokens",
                              other="a smaller --gram-n")}


def _run(ctx, X0, beta, times, norm, **kw):
    """The simulated tokens at ``times`` (host); NaN where the integrator gave up (a note says why)."""
    try:
        flow = spectral.attention_flow(ctx.xp.asarray(X0), beta=beta, times=times, normalisation=norm, **kw)
    except ConvergenceError as exc:  # a wrong dynamics can overflow: its inner products are then NaN (never pass)
        ctx.note(f"beta = {beta:g}, {norm}: {exc}")
        return np.full((len(times), *np.shape(X0)), np.nan)
    return np.asarray(to_numpy(flow.tokens), dtype=float)


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Equiangular runs against the ODE, a random start against the Gram ODE, and the orders of the integrators."""
    times = np.linspace(0.0, p.t_max, 26)
    atol = 1e-2 * p.rtol
    rho, ref, err, err1, spread, late = {}, {}, {}, {}, {}, {}
    norm_error = 0.0
    with ctx.timed("equiangular"):
        for beta in p.betas:
            for n in p.sizes:
                X0 = equiangular_tokens(n, p.rho0, seed=child_rng(p.seed, "rotation", n).integers(2**31))
                for norm in NORMALISATIONS:
                    toks = _run(ctx, X0, beta, times, norm, rtol=p.rtol, atol=atol)
                    drift = np.max(np.abs(np.linalg.norm(toks, axis=-1) - 1.0))
                    norm_error = float(np.max([norm_error, drift]))  # keeps a NaN
                    ips = pair_inner_products(toks)
                    r = (equiangular_beta0(times, n=n, rho0=p.rho0) if beta == 0.0 else
                         equiangular_flow(times, beta=beta, n=n, rho0=p.rho0, normalisation=norm))
                    key = (float(beta), int(n), norm)
                    rho[key], ref[key] = ips.mean(axis=-1), r
                    nz = np.abs(r) > 0
                    err[key] = float(np.max(np.abs(ips[nz] - r[nz, None]) / np.abs(r[nz, None])))
                    far = (1.0 - r) >= 1e-6
                    err1[key] = (float(np.max(np.abs((1.0 - ips[far]) - (1.0 - r[far, None])) / (1.0 - r[far, None])))
                                 if far.any() else float("nan"))
                    spread[key] = float(np.max(ips.max(axis=-1) - ips.min(axis=-1)))
                    k = np.flatnonzero(far)
                    late[key] = (float(-np.log((1.0 - rho[key][k[-1]]) / (1.0 - rho[key][k[-2]]))
                                       / (times[k[-1]] - times[k[-2]])) if k.size >= 2 and k[-1] == k[-2] + 1
                                 else float("nan"))
        gap = max(float(np.max(np.abs(equiangular_flow(times, beta=0.0, n=n, rho0=p.rho0)
                                      - equiangular_beta0(times, n=n, rho0=p.rho0)))) for n in p.sizes)
    gram = {}
    with ctx.timed("gram"):
        X0 = uniform_sphere(child_rng(p.seed, "gram"), p.gram_n, p.gram_n)
        for beta in p.betas:
            for norm in NORMALISATIONS:
                toks = _run(ctx, X0, beta, times, norm, rtol=p.rtol, atol=atol)
                G = np.einsum("tid,tjd->tij", toks, toks)
                G_ref = gram_flow(X0 @ X0.T, times, beta=beta, normalisation=norm)
                gram[float(beta), norm] = float(np.max(np.abs(G - G_ref)))
    sizes, errors = {}, {}
    with ctx.timed("orders"):
        n, beta, T = RATE_SETTING["n"], RATE_SETTING["beta"], RATE_SETTING["t"]
        X0 = equiangular_tokens(n, 0.0, seed=child_rng(p.seed, "rate-rotation").integers(2**31))
        target = equiangular_flow([T], beta=beta, n=n)[0]
        for method, steps in RATE_SIZES.items():
            errs = [float(np.max(np.abs(pair_inner_products(_run(ctx, X0, beta, [T], "softmax", method=method,
                                                                  dt=T / m)[-1]) - target))) for m in steps]
            sizes[method], errors[method] = np.asarray(steps), np.asarray(errs)
    return Quantities(times=times, rho=rho, rho_reference=ref, rho_error=err, one_minus_rho_error=err1,
                      spread=spread, late_rate=late, norm_error=norm_error, reference_beta0_gap=gap, gram_error=gram,
                      rate_sizes=sizes, rate_errors=errors)


def _worst(values) -> float:
    """max that keeps a NaN (a NaN never passes)."""
    values = [v for v in values]
    return float(np.max(values)) if values else 0.0


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """rho against the ODE, equiangularity, the unit norm, the Gram ODE, and the three orders with their intervals."""
    rec.at_most("rho_relative_error", _worst(q.rho_error.values()), CALIBRATION.get("rho_relative_error", p),
                label="SA-6: the simulated inner products leave the equiangular ODE")
    # every run has 1 - rho >= 1e-6 at t = 0 (rho0 <= 0.99): a NaN here is a NaN simulation, never skipped
    rec.at_most("one_minus_rho_relative_error", _worst(q.one_minus_rho_error.values()),
                CALIBRATION.get("one_minus_rho_relative_error", p),
                label="SA-6: 1 - rho (the approach to the cluster) differs from the ODE")
    rec.at_most("equiangular_spread", _worst(q.spread.values()), 1e-9,
                why="an equiangular start stays equiangular (the ODE is the same for every pair); the spread is the "
                    "integration error of different pairs, below the rho error (measured 4e-12)",
                label="SA-6: the pairwise inner products drift apart")
    rec.at_most("norm_error", q.norm_error, 1e-13,
                why="the projection divides every token by its norm after each step: rounding only",
                label="SA-6: tokens leave the unit sphere")
    rec.at_most("gram_error", _worst(q.gram_error.values()), CALIBRATION.get("gram_error", p),
                label="SA-6: the Gram matrix of a random start differs from the closed Gram ODE")
    rec.at_most("reference_beta0_gap", q.reference_beta0_gap, 1e-10,
                why="solve_ivp at rtol 1e-12 against the closed form at beta = 0 (the reference against itself)",
                label="SA-6: the reference ODE solver disagrees with the closed form")
    for key, rate in q.late_rate.items():
        beta, n, norm = key
        limit = 2.0 if norm == "softmax" else 2.0 * float(np.exp(beta))
        rec.info(f"late_rate_b{beta:g}_n{n}_{norm}_over_limit", rate / limit if not np.isnan(rate) else rate)
    statements = []
    for method, steps in q.rate_sizes.items():
        order = ORDERS[method]
        tol = CALIBRATION.get(f"{method}_order", p)
        res = decide_rate(RateQuantities(sizes=np.asarray(steps), errors=np.asarray(q.rate_errors[method])[:, None],
                                         deterministic=True), claimed=-order, kind="equal", tolerance=tol.value)
        lo, hi = -res.interval[1], -res.interval[0]
        rec.at_most(f"{method}_order", _worst([abs(lo - order), abs(hi - order)]), tol,
                    label=f"SA-6: the {method} order is not {order} (95 % interval [{lo:.4f}, {hi:.4f}])")
        rec.holds(f"{method}_order_asymptotic", res.asymptotic,
                  why="verify.rates: not pre-asymptotic (the windows' intervals of the asymptotic order agree and a "
                      "drift does not leave the claim undecided)",
                  label=f"SA-6: the {method} errors are not in their asymptotic regime ({res.message})")
        rec.info(f"{method}_order_estimate", -res.order)
        rec.info(f"{method}_order_interval", f"[{lo:.4f}, {hi:.4f}]")
        rec.info(f"{method}_local_orders", ", ".join(f"{-v:.4f}" for v in res.local_orders))
        statements.append(f"{method} {-res.order:.3f} [{lo:.3f}, {hi:.3f}]")
    return ("equiangular tokens follow rho' = 2 e^(beta rho)(1 - rho)(1 + (n-1) rho)/(e^beta + (n-1) e^(beta rho)) "
            "(SA) and (2/n) e^(beta rho)(1 - rho)(1 + (n-1) rho) (USA) to 1e-8 relative; the Gram ODE holds from a "
            "random start; orders (95 % intervals): " + "; ".join(statements))


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
