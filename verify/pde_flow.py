"""Explicit steps against the exact flow: global error, layers as time, the hybrid bound (PDE-5, 6, 7).

The reference is the exact semi-discrete flow (method of lines): ``A(t) = A(0) exp(t alpha L^T)`` for
key-axis diffusion and ``A(t) = A(0) cos(c t sqrt(-L))^T`` for the wave with ``V(0) = 0``, from the
eigendecomposition of the token-by-token second-difference matrix (periodic, T = 64).

PDE-5 (Prop. D.4 item 3, eq. 17). The global error is first order: slope 1 in dt at fixed t. For
diffusion it is bounded in t (per mode ``sup_n |(1-x)^n - e^(-x n)| ~ x / (2e)``, so
``|error| <~ alpha mu_max dt / (2e) |A(0)|``) and decays; the ``(1 + t)`` factor is pessimistic. For
the wave the phase error makes it grow with t. If ``A_true`` is the continuum PDE (as the paper
writes), an ``O(ds^2)`` spatial error remains at ``ds = 1`` and the error does not vanish as dt -> 0.

PDE-6 (Prop. D.4 item 2). L layers of one step each equal one evolution of length ``L dt`` only if the
same matrix is carried across layers (error ``O(dt)``); Algorithm 1 recomputes
``A^(l)(0) = softmax(Q^(l) K^(l)T / sqrt(d))`` in every layer, and then the final attention differs
from ``E_(L dt)[A^(0)]`` by O(1). Toy stack: random (untrained) weights, LayerNorm, residuals, FFN.

PDE-7 (Prop. D.5, eq. 19). ``A_true = softmax`` is not stationary (``L A_true != 0``), so
``|A_final - A_true|`` grows with the pseudo-time towards ``|A_true - row mean|`` (smoothing bias)
instead of decaying; what holds is ``|A_final - E_T A_true| <= (1 - r mu_1)^N_t eps_0 <= eps_0``
(both row-stochastic, r <= 1/4) and ``|A_final - A_true| <= eps_0 + |E_T A_true - A_true|``. The
sparse surrogate (band of width 33 plus 4 global tokens, renormalised) approximates a local
``A_true`` (scores with a distance bias ``-|i - j| / 4``); without it the surrogate is no
approximation at all (recorded).

``claim="printed"`` asserts the printed statements: first-order convergence to the continuum PDE,
``A^(L) ~ E_(L dt)[A^(0)]`` for the Algorithm-1 stack, and a decaying ``delta(T)`` with stationary
``A_true``; all fail.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import spectral
from manifolds.references import pde as pde_module
from manifolds.references.pde import laplacian_eigenvalues
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.fits import fit_power_law
from verify.core.params import Int, Ints, Real, Reals, check_resolved
from verify.core.reduce import worst
from verify.core.result import Recorder
from verify.rates import record_rate

CHECK = Check("pde_flow",
              host_only="T <= 256 for the error runs (512 for the hybrid test): a step of a 256 x 256 matrix is "
                        "0.1-0.2 ms on the host, about what the ~10 kernel launches of a device step take; the "
                        "exact flow is numpy.linalg.eigh of the token-by-token matrix, the Algorithm-1 stack a "
                        "loop over layers at T = 128",
              printed="first-order convergence to the continuum PDE, the layer equivalence for the Algorithm-1 "
                      "stack and a decaying hybrid error with stationary A_true, which fail")

#: The measured tolerances (the others are bounds computed from theory next to their assertion).
_SEEDS = {"seed": (0, 1, 2, 3, 4)}
CALIBRATION = Calibration(
    Tolerance("error_order_deviation", 0.05, measured=0.0304, over=_SEEDS,
              why="first-order scheme: the dt^2 terms bias the fitted slope for dt <= 1/8 (worst: the wave at "
                  "t = 100); a second-order error would give a deviation near 1"),
    Tolerance("diffusion_error_decay", 0.1, measured=1.07e-3,
              over=({"seed": (0, 1, 2, 3, 4)}, {"size": (16, 32, 64, 128, 256),
                                                "alpha long_dt": (5e-4, 5e-3, 0.05, 0.25, 0.4, 0.45, 0.49)}),
              why="per mode the error is (alpha mu)^2 t dt e^(-alpha mu t) / 2 to first order: a function of alpha t "
                  "alone up to the factor alpha dt, so its decay is measured at alpha t = 100 against its maximum "
                  "over alpha t in [0.1, 100] (t = 1000 at alpha = 0.1); what is left there is carried by the modes "
                  "with alpha mu t ~ 1 (about 1e-3 for T >= 32, 2e-7 at T = 16); an error bounded like (1 + t) would "
                  "give about 1"),
    Tolerance("wave_error_growth_over_a_decade", 2.0, measured=3.13, cpu=("x86-64 AVX-512", "x86-64 AVX2"),
              over=({"seed": (0, 1, 2, 3, 4)},
                    {"c": (0.5, 0.15, 0.1, 0.05, 0.02), "long_dt": (0.5,)}, {"c": (0.3, 0.01), "long_dt": (1.0,)},
                    {"c": (0.2,), "long_dt": (0.05,)}),
              why="per mode the error is |sin(omega t)| omega dt / 2 (1 + omega^2 dt t / 12) while the phase error "
                  "omega^3 dt^2 t / 24 is small: its envelope grows 11/2-fold from t_b = 3 / (c^2 dt) to 10 t_b "
                  "(5-6 for c dt <= 0.15; least at c dt = 0.3, where the phase error starts to saturate); "
                  "a bounded error gives about 1"),
    Tolerance("carried_error_order", 0.05, measured=0.031,
              over=({"seed": (0, 1, 2, 3, 4)},
                    {"alpha": (0.001, 0.01, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5),
                     "layers_time": (1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32)}),
              why="the carried matrix is the explicit scheme itself: its fitted order over the three largest dt with "
                  "x_max <= 1 and second-order fraction rho <= 0.05 (carried_second_order_fraction) is 1 up to "
                  "~0.6 rho (0.004 at the defaults, the worst at alpha = 0.03, L dt = 1.5 over the grid, closed "
                  "form per mode); a second-order or an O(1) error gives a deviation near 1"),
    Tolerance("recomputed_relative_discrepancy", 0.2, measured=0.504, over=_SEEDS,
              why="every layer starts from its own softmax with its own random W_Q, W_K: an O(1) relative "
                  "discrepancy; the layer equivalence would give O(dt) like the carried matrix (<= 0.05)"),
    Tolerance("laplacian_of_true_attention", 1.0, measured=9.73, over=_SEEDS,
              why="softmax rows are peaked: |L A_true|_F is O(1), far from stationary (L A_true = 0)"),
    Tolerance("hybrid_error_fraction_of_limit", 0.5, measured=0.911, over=_SEEDS,
              why="|A_final - A_true| approaches |A_true - row mean| as N_t grows (at N_t = 1024); a decaying "
                  "error would give a fraction near 0"),
)

#: pseudo-times of the error-versus-t run at fixed dt
ERROR_TIMES = (1, 3, 10, 30, 100, 300, 1000)
#: The wave's error growth is asserted for c long_dt in [WAVE_GROWTH_MIN_COURANT, WAVE_GROWTH_MAX_COURANT]. The scheme
#: depends on c and dt only through the Courant number c dt: the run to 12.5 t_b = 37.5 / (c^2 long_dt) takes
#: 37.5 / (c long_dt)^2 steps (3.8e5 at the floor, 4-10 s), so below it the run is not made and the growth is not
#: decided (a note says so); above 0.3 the phase error saturates (the error stays below 2 |A(0)|) within a decade of
#: t_b and the growth is recorded, not asserted.
WAVE_GROWTH_MIN_COURANT = 0.01
WAVE_GROWTH_MAX_COURANT = 0.3
#: the wave's slope in dt is fitted where its dt^2 t term is at most this fraction of its first-order term
WAVE_SLOPE_MAX_RHO = 0.1
#: samples of the error envelope (its max) over [t, 1.25 t] at t = t_b and 10 t_b
_ENVELOPE_SAMPLES = 17


def wave_secular_time(c: float, dt: float) -> float:
    """``t_b = 12 / (omega_max^2 dt) = 3 / (c^2 dt)`` (periodic, omega_max = 2 c): where the wave's secular phase
    error ``omega^3 dt^2 t / 24`` of its top mode reaches its bounded amplitude error ``omega dt / 2``."""
    return 3.0 / (c * c * dt)
#: dt candidates of the Algorithm-1 stack: the carried matrix's order is fitted over the three largest in its
#: asymptotic range (see carried_second_order_fraction), each rounded to dt = L dt / round(L dt / dt)
LAYER_DTS = tuple(2.0 ** -k for k in range(8))
#: the diffusion's order in dt (the global error's and the carried matrix's) is fitted where its second-order
#: fraction (diffusion_second_order_fraction) at the largest dt is at most this and alpha mu_max dt <= 1: the fitted
#: order then deviates from 1 by about 0.6 rho (its worst over alpha and L dt: the carried_error_order row)
DIFFUSION_SLOPE_MAX_RHO = 0.05
#: alpha t of the diffusion error-versus-t run (t = 1, 3, ..., 1000 at alpha = 0.1): to first order the error per
#: mode is (alpha mu)^2 t dt e^(-alpha mu t) / 2, a function of alpha t up to the factor alpha dt, so its decay is
#: observed at fixed alpha t (alpha = 1e-3 decays only past t ~ 1 / (alpha mu): at t <= 1000 it was a wrong FAIL)
DIFFUSION_ALPHA_TIMES = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
#: the diffusion run to alpha t = 100 takes 100 / (alpha long_dt) steps: made for alpha long_dt >= this (2e5 steps at
#: the floor: 3.6 s at T = 64, 35 s at T = 256); below, the times within as many steps are run, the decay not decided
DIFFUSION_DECAY_MIN_R = 5e-4
#: the decay is decided where the least-damped top mode keeps at most this fraction |1 - alpha mu_max long_dt|^n of
#: its error at alpha t = 100 (alpha long_dt = 1/2 with even T: (-1)^n, no decay at all; decided up to ~0.494)
DIFFUSION_DECAY_TOP_REMAINDER = 0.01


def diffusion_step_sup_error(x) -> np.ndarray:
    """``sup_(n >= 0) |(1 - x)^n - exp(-x n)|`` per mode, ``x = alpha mu dt`` in [0, 2] (the explicit step's factor
    against the flow's over any number of steps; ``x / (2e)`` to first order).

    For ``x >= 1`` it is ``x - 1 + exp(-x)`` (n = 1: both terms shrink with n and have opposite signs there); for
    ``x < 1`` the maximum over real ``n = s / x``, s in [0, 40] on a grid of spacing 0.002 (an upper bound on the
    integers; beyond s = 40 both terms are below e^-40). Infinite for x > 2 (the step is unstable).
    """
    x = np.atleast_1d(np.asarray(x, dtype=float))
    out = np.empty_like(x)
    # below x = 1: the grid's maximum is within 1e-6 of the sup over real n (spacing 0.002, curvature O(1) at the
    # peak); the factor 1 + 1e-5 keeps it an upper bound
    big = x >= 1.0
    out[big] = np.where(x[big] > 2.0, np.inf, x[big] - 1.0 + np.exp(-x[big]))
    small = x[~big][:, None]
    s = np.linspace(0.0, 40.0, 20001)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_rate = np.where(small > 0, np.log1p(-small) / np.where(small > 0, small, 1.0), -1.0)
    out[~big] = np.max(np.abs(np.exp(s * log_rate) - np.exp(-s)), axis=1) * (1.0 + 1e-5)
    return out


def diffusion_decay_top_remainder(size: int, alpha: float, dt: float) -> float:
    """``|1 - alpha mu_max dt|^n`` at ``n = round(100 / (alpha dt))`` (alpha t = 100): what the least-damped top
    mode keeps of its error at the end of the diffusion error-versus-t run (periodic, mu_max = 4 sin^2(pi [T/2] / T))."""
    mu_max = 4.0 * math.sin(math.pi * (size // 2) / size) ** 2
    n = max(1, int(round(DIFFUSION_ALPHA_TIMES[-1] / (alpha * dt))))
    return abs(1.0 - alpha * mu_max * dt) ** n


def diffusion_second_order_fraction(b: np.ndarray, mu: np.ndarray, alpha: float, t: float, n: int) -> float:
    """The second-order fraction ``rho`` of the explicit diffusion's error after n steps of dt = t / n.

    Per mode (``x = alpha mu dt``, ``s = alpha mu t``) the scheme's error against the flow is
    ``e^(-s) (1 - exp(-s (x/2 + x^2/3 + ...)))`` = its first-order term ``e^(-s) s x / 2`` times
    ``1 + x (2/3 - s/4) + O(x^2)``: its local order in dt is ``1 + 0.72 x (2/3 - s/4)``. ``rho`` is the mean of
    ``x |2/3 - s/4|`` over the modes weighted by their share of the squared error (no cancellation between modes).

    Parameters
    ----------
    b : ndarray
        The initial matrix in the eigenbasis of the token-by-token matrix (columns: modes).
    mu : ndarray
        The eigenvalues of minus that matrix, one per column of ``b``.
    """
    x = alpha * mu * (t / n)
    s = alpha * mu * t
    share = (np.linalg.norm(b, axis=0) * ((1.0 - x) ** n - np.exp(-s))) ** 2
    return float(np.sum(share * x * np.abs(2.0 / 3.0 - s / 4.0)) / np.sum(share))


@CHECK.parameters
class Params:
    size: int = Int(64, "Sequence length T of the error runs (periodic)", low=16, high=256, unit="tokens")
    alpha: float = Real(0.1, "Diffusion coefficient (PDE Table 5: 0.1)", low=0.0, high=0.5, low_open=True)
    c: float = Real(0.15, "Wave speed (PDE Table 11: 0.15)", low=0.0, high=0.5, low_open=True)
    times: tuple = Reals((1.0, 10.0, 100.0), "Pseudo-times t at which the error is measured against dt", low=0.5,
                         high=200.0)
    dt_exponents: tuple = Ints((3, 4, 5, 6), "dt = 2^-k for these k (at least 3 distinct); the slope in dt is "
                               "fitted over them", low=0, high=8)
    long_dt: float = Real(0.5, "dt of the error-versus-t runs (the wave's to t = 1000 and its growth run to "
                          "37.5 / (c^2 long_dt), with c long_dt >= 0.01; the diffusion's to alpha t = 100, its decay "
                          "decided for alpha long_dt >= 5e-4: 2e5 steps, 3.6 s at size 64)", low=0.05, high=1.0)
    layers_time: float = Real(8.0, "Pseudo-time L dt of the Algorithm-1 stack (L = layers_time / dt layers, dt "
                             "the three largest of 1, 1/2, ..., 1/128 in the carried matrix's first-order range)",
                              low=1.0, high=32.0)
    hybrid_size: int = Int(256, "Sequence length of the hybrid-bound test (PDE-7)", low=64, high=512, unit="tokens")
    hybrid_steps: tuple = Ints((0, 1, 4, 16, 64, 256, 1024), "Step counts N_t of the hybrid-bound test, at least 3 "
                               "increasing", low=0, high=4096)

    def resolve(self):
        """The rules between values: three distinct dt exponents (a slope), increasing hybrid steps."""
        if len(set(self.dt_exponents)) < 3:
            raise InputError("dt_exponents must hold at least 3 distinct values and times at least one")
        steps = self.hybrid_steps
        if len(steps) < 3 or list(steps) != sorted(set(steps)):
            raise InputError(f"hybrid_steps must be at least 3 increasing values, got {steps}")
        dt = 2.0 ** -max(self.dt_exponents)  # the smallest step (alpha = 1e-300 stopped in the slope fit)
        check_resolved("alpha and dt_exponents", self.alpha * dt, "alpha dt (dt = 2^-max(dt_exponents))")
        check_resolved("c and dt_exponents", self.c * dt, "c dt (dt = 2^-max(dt_exponents))")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What pde_flow measures (norms are Frobenius norms)."""

    #: pde -> t -> fitted slope of the global error against dt (exact semi-discrete flow as reference)
    error_slope: dict[str, dict[float, float]]
    #: t -> the diffusion's second-order fraction at the largest dt (diffusion_second_order_fraction)
    diffusion_slope_rho: dict[float, float]
    #: |A(0)|_F of the error runs
    initial_norm: float
    #: the pseudo-times ERROR_TIMES (the wave's) and pde -> the global error with dt = long_dt at the pde's times
    error_times: tuple[float, ...]
    error_vs_t: dict[str, np.ndarray]
    #: the diffusion's pseudo-times: DIFFUSION_ALPHA_TIMES / alpha on the grid of long_dt (those within
    #: 100 / DIFFUSION_DECAY_MIN_R steps)
    diffusion_error_times: tuple[float, ...]
    #: the wave at dt = long_dt: t_b and 10 t_b (wave_secular_time) and the max of its error over [t, 1.25 t] there
    #: (both empty when c long_dt < WAVE_GROWTH_MIN_COURANT: the run is not made)
    wave_growth_times: tuple[float, ...]
    wave_growth_envelope: tuple[float, ...]
    #: against the continuum PDE (a cosine of T/4 periods per row, t = 10): fitted slope in dt, error at the smallest
    continuum_error_slope: float
    continuum_error_smallest_dt: float
    #: the dt of the Algorithm-1 stack (the three largest of LAYER_DTS in the carried matrix's asymptotic range, or
    #: the three smallest where there is none), their second-order fractions rho, and whether the range was found
    layer_dts: tuple[float, ...]
    carried_second_order_fraction: tuple[float, ...]
    carried_asymptotic: bool
    #: relative distance to E_(L dt)[A^(0)] at dt = layer_dts: the carried matrix and the Algorithm-1 stack
    carried_relative_error: tuple[float, ...]
    recomputed_relative_error: tuple[float, ...]
    #: fitted order in dt of the carried matrix's error
    carried_error_order: float
    #: hybrid test: |A_final - A_true| and |A_final - E_T A_true| at hybrid_steps
    hybrid_distance_to_true: np.ndarray
    hybrid_distance_to_flow: np.ndarray
    #: eps_0 = |A_0 - A_true| of the surrogate, |A_true - row mean|, |L A_true|
    hybrid_eps0: float
    hybrid_row_mean_limit: float
    laplacian_of_true_attention: float
    #: max over N_t >= 1 of |A_final - E_T A_true| / ((1 - r mu_1)^N_t eps_0)
    contraction_bound_ratio: float
    #: max over N_t >= 1 of |A_final - A_true| - (eps_0 + |E_T A_true - A_true|)
    triangle_bound_excess: float
    #: the same surrogate of random softmax attention without a distance bias: eps_0 and |A - row mean|
    unbiased_eps0: float
    unbiased_row_mean_limit: float


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Global error of the explicit schemes, layers as pseudo-time, and the hybrid bound."""
    with ctx.timed("global_error"):
        glob = _global_error(p.size, p.alpha, p.c, p.times, tuple(sorted(p.dt_exponents)), p.long_dt, p.seed)
    with ctx.timed("layers"):
        layers = _layers(p.alpha, p.layers_time, p.seed)
    with ctx.timed("hybrid"):
        hybrid = _hybrid(p.hybrid_size, p.hybrid_steps, p.seed)
    return Quantities(**glob, **layers, **hybrid)


def _global_error(T, alpha, c, times, dt_exponents, long_dt, seed) -> dict:
    a0 = pde_module.softmax_attention(child_rng(seed, "global-error"), T)
    w, u = np.linalg.eigh(pde_module.stencil_matrix(T, "periodic"))
    w = np.minimum(w, 0.0)

    def exact(pde, t):
        if pde == "diffusion":
            return a0 @ (u * np.exp(alpha * t * w)) @ u.T
        return a0 @ (u * np.cos(c * t * np.sqrt(-w))) @ u.T

    dts = [2.0 ** -k for k in dt_exponents]

    def counts(t):  # n steps of dt = t / n for each dt (at least one: t = 0.5 with dt = 1 was n = 0)
        return [max(1, int(round(t / dt))) for dt in dts]

    rho = {t: diffusion_second_order_fraction(a0 @ u, -w, alpha, t, counts(t)[0]) for t in times}
    slopes = {}
    for pde in ("diffusion", "wave"):
        slopes[pde] = {}
        for t in times:
            errs = []
            for n in counts(t):
                a = spectral.evolve_attention(a0, pde=pde, steps=n, dt=t / n, alpha=alpha, c=c,
                                              boundary="periodic").attention
                errs.append(float(np.linalg.norm(a - exact(pde, t))))
            slopes[pde][t] = fit_power_law([t / n for n in counts(t)], errs).slope

    # error versus t at fixed dt: diffusion bounded and decaying (at alpha t = 0.1 .. 100), wave growing (t <= 1000)
    err = {"diffusion": [], "wave": []}
    steps = {"wave": [int(round(t / long_dt)) for t in ERROR_TIMES],
             "diffusion": sorted({n for n in (max(1, int(round(tau / (alpha * long_dt))))
                                              for tau in DIFFUSION_ALPHA_TIMES)
                                  if n <= DIFFUSION_ALPHA_TIMES[-1] / DIFFUSION_DECAY_MIN_R})}
    for pde in ("diffusion", "wave"):
        res, done = None, 0
        for n in steps[pde]:
            if res is None:
                res = spectral.evolve_attention(a0, pde=pde, steps=n, dt=long_dt, alpha=alpha, c=c, boundary="periodic")
            else:
                res = spectral.evolve_attention(res.attention, pde=pde, steps=n - done, dt=long_dt, alpha=alpha, c=c,
                                                boundary="periodic", velocity=res.velocity)
            done = n
            err[pde].append(float(np.linalg.norm(res.attention - exact(pde, n * long_dt))))

    # the wave's error envelope at t_b and 10 t_b: its secular part dominates there (growth ~ 11/2)
    t_b = wave_secular_time(c, long_dt)
    growth_times = (t_b, 10.0 * t_b) if c * long_dt >= WAVE_GROWTH_MIN_COURANT else ()
    envelope = []
    res, done = spectral.evolve_attention(a0, pde="wave", steps=0, dt=long_dt, c=c, boundary="periodic"), 0
    for t_start in growth_times:
        worst_err = 0.0
        for n in np.unique(np.round(np.linspace(t_start, 1.25 * t_start, _ENVELOPE_SAMPLES) / long_dt).astype(int)):
            res = spectral.evolve_attention(res.attention, pde="wave", steps=int(n) - done, dt=long_dt, c=c,
                                            boundary="periodic", velocity=res.velocity)
            done = int(n)
            worst_err = worst(worst_err, float(np.linalg.norm(res.attention - exact("wave", n * long_dt))))
        envelope.append(worst_err)

    # continuum reference: a cosine of k0 = T/4 periods per row decays like exp(-alpha kappa^2 t)
    k0 = T // 4
    j = np.arange(T)
    kappa = 2 * np.pi * k0 / T
    row = 1.0 / T + (0.5 / T) * np.cos(kappa * j)
    b0 = np.tile(row, (T, 1))
    t = 10.0
    cont = 1.0 / T + (0.5 / T) * np.exp(-alpha * kappa ** 2 * t) * np.cos(kappa * j)
    errs = []
    for dt in dts:
        n = int(round(t / dt))
        b = spectral.evolve_attention(b0, steps=n, dt=t / n, alpha=alpha, boundary="periodic").attention
        errs.append(float(np.max(np.abs(b - cont[None, :]))))
    return dict(error_slope=slopes, diffusion_slope_rho=rho, initial_norm=float(np.linalg.norm(a0)),
                error_times=tuple(float(t) for t in ERROR_TIMES),
                diffusion_error_times=tuple(n * long_dt for n in steps["diffusion"]),
                error_vs_t={pde: np.array(e) for pde, e in err.items()},
                wave_growth_times=growth_times, wave_growth_envelope=tuple(envelope),
                continuum_error_slope=fit_power_law(dts, errs).slope, continuum_error_smallest_dt=errs[-1])


def _layers(alpha, t_total, seed) -> dict:
    """Algorithm 1 toy stack (T = 128, d = 32): recomputed softmax per layer vs the carried matrix.

    The dt are the three largest of LAYER_DTS (as dt = t_total / L) where the carried matrix is in its asymptotic
    range: ``alpha mu_max dt <= 1`` (every mode damped like the flow's) and ``carried_second_order_fraction <=
    DIFFUSION_SLOPE_MAX_RHO`` (at alpha = 0.5, dt = 1 the top mode's factor is 1 - 2 = -1: undamped, local order 5.5).
    """
    T, d = 128, 32
    rng = child_rng(seed, "stack")
    x0 = rng.standard_normal((T, d))
    w, u = np.linalg.eigh(pde_module.stencil_matrix(T, "neumann"))
    w = np.minimum(w, 0.0)

    def layernorm(x):
        return (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)

    def softmax(s):
        s = s - s.max(axis=1, keepdims=True)
        e = np.exp(s)
        return e / e.sum(axis=1, keepdims=True)

    # the first layer's weights are drawn first, so its softmax (which picks the dt) is the same for every dt
    counts = sorted({max(1, int(round(t_total / dt))) for dt in LAYER_DTS})
    weights = [[rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(6)]]
    a_first = softmax((x0 @ weights[0][0]) @ (x0 @ weights[0][1]).T / math.sqrt(d))
    b = a_first @ u
    rho = {n: diffusion_second_order_fraction(b, -w, alpha, t_total, n) for n in counts}
    inside = [n for n in counts if alpha * float(-w.min()) * t_total / n <= 1.0 and rho[n] <= DIFFUSION_SLOPE_MAX_RHO]
    asymptotic = len(inside) >= 3
    counts = inside[:3] if asymptotic else counts[-3:]
    weights += [[rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(6)] for _ in range(counts[-1] - 1)]

    carried_err, recomputed_err = [], []
    ref = a_first @ (u * np.exp(alpha * t_total * w)) @ u.T
    for n_layers in counts:
        dt = t_total / n_layers
        x = x0.copy()
        a_carried = a_rec = None
        for layer in range(n_layers):
            wq, wk, wv, wo, w1, w2 = weights[layer]
            a_init = softmax((x @ wq) @ (x @ wk).T / math.sqrt(d))
            if a_carried is None:
                a_carried = a_init
            a_rec = spectral.evolve_attention(a_init, steps=1, dt=dt, alpha=alpha).attention
            a_carried = spectral.evolve_attention(a_carried, steps=1, dt=dt, alpha=alpha).attention
            x = layernorm(x + a_rec @ (x @ wv) @ wo)
            x = layernorm(x + np.maximum(x @ w1, 0.0) @ w2)
        carried_err.append(float(np.linalg.norm(a_carried - ref) / np.linalg.norm(ref)))
        recomputed_err.append(float(np.linalg.norm(a_rec - ref) / np.linalg.norm(ref)))
    dts = tuple(t_total / n for n in counts)
    return dict(layer_dts=dts, carried_second_order_fraction=tuple(rho[n] for n in counts),
                carried_asymptotic=asymptotic, carried_relative_error=tuple(carried_err),
                recomputed_relative_error=tuple(recomputed_err),
                carried_error_order=fit_power_law(dts, carried_err).slope)


def _hybrid(T, steps_list, seed) -> dict:
    """Band (33) + 4 global tokens surrogate of a local softmax, key-axis Neumann diffusion, r = 1/4."""
    r = 0.25
    i, j = np.indices((T, T))
    keep = (np.abs(i - j) <= 16) | (i < 4) | (j < 4)

    def surrogate(a):
        s = np.where(keep, a, 0.0)
        return s / s.sum(axis=1, keepdims=True)

    a_true = pde_module.softmax_attention(child_rng(seed, "hybrid"), T, bias_length=4.0)
    a0 = surrogate(a_true)
    eps0 = float(np.linalg.norm(a0 - a_true))
    lap_true = float(np.linalg.norm(a_true @ pde_module.stencil_matrix(T, "neumann").T))
    limit = float(np.linalg.norm(a_true - a_true.mean(axis=1, keepdims=True)))
    mu1 = pde_module.laplacian_eigenvalues(T, "neumann")[1]
    dist_true, dist_flow, decay_ratio, triangle_excess = [], [], -np.inf, -np.inf
    af, et, done = a0, a_true, 0
    for n in steps_list:
        af = spectral.evolve_attention(af, steps=n - done, alpha=r, boundary="neumann").attention
        et = spectral.evolve_attention(et, steps=n - done, alpha=r, boundary="neumann").attention
        done = n
        d_true = float(np.linalg.norm(af - a_true))
        d_flow = float(np.linalg.norm(af - et))
        dist_true.append(d_true)
        dist_flow.append(d_flow)
        if n > 0:
            decay_ratio = worst(decay_ratio, d_flow / (eps0 * (1 - r * mu1) ** n))
            triangle_excess = worst(triangle_excess, d_true - (eps0 + float(np.linalg.norm(et - a_true))))
    # the unbiased setting (random scores without a distance bias, same surrogate): no approximation at all
    a_rand = pde_module.softmax_attention(child_rng(seed, "hybrid-unbiased"), T)
    return dict(hybrid_distance_to_true=np.array(dist_true), hybrid_distance_to_flow=np.array(dist_flow),
                hybrid_eps0=eps0, hybrid_row_mean_limit=limit, laplacian_of_true_attention=lap_true,
                contraction_bound_ratio=float(decay_ratio), triangle_bound_excess=float(triangle_excess),
                unbiased_eps0=float(np.linalg.norm(surrogate(a_rand) - a_rand)),
                unbiased_row_mean_limit=float(np.linalg.norm(a_rand - a_rand.mean(axis=1, keepdims=True))))


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """First order in dt, bounded / growing errors in t, layers as time, the hybrid bounds."""
    corrected = p.claim == "corrected"
    alpha = p.alpha
    deviations, skipped = [0.0], []
    dt_max = 2.0 ** -min(p.dt_exponents)
    for pde in ("diffusion", "wave"):
        for t, slope in q.error_slope[pde].items():
            rec.info(f"{pde}_slope_t{t:g}", slope)
            # the wave's error is omega dt / 2 (1 + omega^2 dt t / 12) per mode: its dt^2 t part biases the slope by
            # ~ rho / 2 with rho = c^2 dt_max t / 3 (omega_max = 2 c); fitted where rho <= 0.1 (0.094 at the defaults'
            # t = 100, deviation 0.03; c = 0.5 gave rho = 1 at t = 100 and 0.23: the dt^2 t regime, not first order)
            if pde == "wave" and p.c ** 2 * dt_max * t / 3.0 > WAVE_SLOPE_MAX_RHO:
                skipped.append(f"the wave's at t = {t:g} (c^2 dt t / 3 = {p.c ** 2 * dt_max * t / 3.0:.2g})")
                continue
            # the diffusion's: its dt^2 term per mode is x (2/3 - s/4) of the first-order one (x = alpha mu dt,
            # s = alpha mu t); fitted where alpha mu_max dt <= 1 and the weighted fraction is <= 0.05 (alpha = 0.5 at
            # dt = 1/4, t = 1 gave rho = 0.17, slope 1.055: the dt^2 regime, not first order)
            x_max = 4.0 * alpha * t / max(1, round(t / dt_max))
            if pde == "diffusion" and (x_max > 1.0 or q.diffusion_slope_rho[t] > DIFFUSION_SLOPE_MAX_RHO):
                skipped.append(f"the diffusion's at t = {t:g} (rho = {q.diffusion_slope_rho[t]:.2g}, "
                               f"alpha mu_max dt = {x_max:.2g})")
                continue
            deviations.append(abs(slope - 1.0))
    worst_dev = np.max(deviations)  # np.max: a NaN slope is not skipped
    if skipped:
        rec.note(f"slopes in dt outside their first-order range (dt <= {dt_max:g}), recorded, not asserted: "
                 + "; ".join(skipped))
    if len(deviations) > 1:
        rec.at_most("error_order_deviation", worst_dev, CALIBRATION.get("error_order_deviation", p),
                    label="the global error is not first order in dt")
    err = q.error_vs_t
    if corrected:
        x_modes = np.unique(alpha * laplacian_eigenvalues(p.size, "periodic") * p.long_dt)
        sup_factor = float(np.max(diffusion_step_sup_error(x_modes)))
        rec.at_most("diffusion_sup_error_over_t", float(np.max(err["diffusion"])), sup_factor * q.initial_norm,
                    why="|error|_F <= max_k sup_n |(1 - x_k)^n - exp(-x_k n)| |A(0)|_F over the modes x_k = alpha mu_k "
                        f"long_dt <= {alpha * 4 * p.long_dt:g} (diffusion_step_sup_error: x / (2e) to first order; "
                        "measured sup 0.027 against 0.062 at the defaults)",
                    label="the diffusion error exceeds max_k sup_n |(1 - x_k)^n - exp(-x_k n)| |A(0)|")
        r = alpha * p.long_dt
        remainder = diffusion_decay_top_remainder(p.size, alpha, p.long_dt)
        decay = float(err["diffusion"][-1] / np.max(err["diffusion"]))
        if r < DIFFUSION_DECAY_MIN_R:
            rec.info("diffusion_error_decay", decay)
            rec.note(f"alpha long_dt = {r:g} < {DIFFUSION_DECAY_MIN_R:g}: the diffusion error decays only past "
                     f"alpha t ~ 1 (t ~ {1 / alpha:.3g}); alpha t = 100 needs {100 / r:.2g} steps: its decay is not "
                     f"decided here (raise alpha or long_dt)")
        elif remainder > DIFFUSION_DECAY_TOP_REMAINDER:
            rec.info("diffusion_error_decay", decay)
            rec.note(f"alpha long_dt = {r:g}: the top mode's factor |1 - alpha mu_max long_dt| = "
                     f"{abs(1 - 4 * r):.3g} keeps {remainder:.2g} of its error at alpha t = 100 (none decays at "
                     "alpha long_dt = 1/2, where the step's top factor is -1): the decay is recorded, not asserted")
        else:
            rec.at_most("diffusion_error_decay", decay, CALIBRATION.get("diffusion_error_decay", p),
                        label="the diffusion error does not decay at large t (alpha t = 100): (1 + t) would not be "
                              "pessimistic")
        rec.info("wave_error_growth_100_to_1000", float(err["wave"][-1] / err["wave"][4]))
        courant = p.c * p.long_dt
        if courant < WAVE_GROWTH_MIN_COURANT:
            rec.note(f"c long_dt = {courant:g} < {WAVE_GROWTH_MIN_COURANT:g}: the wave's secular phase error overtakes "
                     f"its bounded error only at t_b = 3 / (c^2 long_dt) = {wave_secular_time(p.c, p.long_dt):.3g}, "
                     f"{37.5 / courant ** 2:.2g} steps to see it grow over a decade: its growth is not decided here "
                     "(raise c or long_dt)")
        else:
            growth = q.wave_growth_envelope[1] / q.wave_growth_envelope[0]
            rec.info("wave_growth_from_t", q.wave_growth_times[0])
            if courant <= WAVE_GROWTH_MAX_COURANT:
                rec.at_least("wave_error_growth_over_a_decade", growth,
                             CALIBRATION.get("wave_error_growth_over_a_decade", p),
                             label="the wave error does not grow with t (its envelope from t_b = 3 / (c^2 dt) to 10 t_b)")
            else:
                rec.info("wave_error_growth_over_a_decade", growth)
                rec.note(f"c long_dt = {courant:g} > {WAVE_GROWTH_MAX_COURANT:g}: the wave's phase error saturates "
                         "within a decade of t_b = 3 / (c^2 long_dt) (the error stays below 2 |A(0)|), so its growth "
                         "is recorded, not asserted")
    else:
        rec.info("continuum_error_smallest_dt", q.continuum_error_smallest_dt)
        rec.close("printed_continuum_error_order", q.continuum_error_slope, 1.0, atol=0.05,
                  why="eq. (17) as printed: A_true solves the continuous PDE; first order in dt",
                  label="eq. (17) as printed: against the continuum PDE the error does not vanish with dt at ds = 1 "
                        "(O(ds^2) spatial error)")
        rec.info("error_order_wave_growth_100_to_1000", float(err["wave"][-1] / err["wave"][4]))

    carried, recomputed = q.carried_relative_error, q.recomputed_relative_error
    rec.info("carried_relative_error_dt1", carried[0])
    rec.info("recomputed_relative_error_dt1", recomputed[0])
    rec.info("layer_dts", q.layer_dts)
    rec.info("carried_second_order_fraction", q.carried_second_order_fraction)
    if q.carried_asymptotic:
        record_rate(rec, "carried_error_order", q.carried_error_order, 1.0,
                    atol=CALIBRATION.get("carried_error_order", p), x=q.layer_dts, errors=carried, asymptote="small",
                    label="carrying A across layers is not a first-order approximation of E_(L dt)")
    else:
        rec.info("carried_error_order", q.carried_error_order)
        rec.note(f"no three dt in {LAYER_DTS[-1]:g}..1 with alpha mu_max dt <= 1 and second-order fraction <= "
                 f"{DIFFUSION_SLOPE_MAX_RHO:g} at alpha = {alpha:g}, L dt = {p.layers_time:g}: the carried matrix's order is "
                 "recorded over the smallest, not asserted")
    if corrected:
        rec.at_least("recomputed_relative_discrepancy", np.min(recomputed),
                     CALIBRATION.get("recomputed_relative_discrepancy", p),
                     label="recomputing softmax per layer still matches E_(L dt)[A^(0)]")
    else:
        rec.at_most("printed_recomputed_relative_error", np.max(recomputed), 2 * np.max(carried),
                    why="Prop. D.4(2) as printed for Algorithm 1: the stack approximates E_(L dt)[A^(0)] to first "
                        "order, like the carried matrix",
                    label="Prop. D.4(2) as printed: the Algorithm-1 stack (softmax recomputed per layer) differs "
                          "from E_(L dt)[A^(0)] by O(1)")

    dist_true = q.hybrid_distance_to_true
    rec.info("hybrid_eps0", q.hybrid_eps0)
    rec.info("hybrid_row_mean_limit", q.hybrid_row_mean_limit)
    rec.info("hybrid_distance_final", float(dist_true[-1]))
    rec.info("unbiased_eps0", q.unbiased_eps0)
    rec.info("unbiased_row_mean_limit", q.unbiased_row_mean_limit)
    if corrected:
        rec.at_least("laplacian_of_true_attention", q.laplacian_of_true_attention,
                     CALIBRATION.get("laplacian_of_true_attention", p),
                     label="A_true is (nearly) stationary under the Laplacian")
        rec.at_least("hybrid_error_min_increment", float(np.diff(dist_true).min()), 0.0,
                     why="smoothing bias: |A_final - A_true| grows monotonically with N_t (measured increments >= 0.38)",
                     label="the hybrid error does not grow with the pseudo-time")
        rec.at_least("hybrid_error_fraction_of_limit", float(dist_true[-1]) / q.hybrid_row_mean_limit,
                     CALIBRATION.get("hybrid_error_fraction_of_limit", p),
                     label="the hybrid error does not approach |A_true - row mean|")
        rec.at_most("contraction_bound_ratio", q.contraction_bound_ratio, 1.0 + 1e-10,
                    why="(A_0 - A_true) has zero row sums: key-axis steps shrink it by max_(k>=1)|1 - r mu_k| = "
                        "1 - r mu_1 per step (r <= 1/4); rounding (measured max ratio 0.77 over N_t >= 1)",
                    label="|A_final - E_T A_true| exceeds (1 - r mu_1)^N_t eps_0")
        rec.at_most("triangle_bound_excess", q.triangle_bound_excess, 1e-12,
                    why="|A_final - A_true| <= |E_T(A_0 - A_true)| + |E_T A_true - A_true| <= eps_0 + bias "
                        "(measured margin >= 0.15 over N_t >= 1)",
                    label="|A_final - A_true| exceeds eps_0 + |E_T A_true - A_true|")
        return ("the explicit schemes converge to the exact semi-discrete flow with order 1 in dt (diffusion error "
                "bounded in t, wave error growing with t); L one-step layers equal one evolution of length L dt only "
                "when the same matrix is carried (Algorithm 1 recomputes it: O(1) difference); softmax attention is "
                "not stationary, the hybrid error grows towards |A_true - row mean| while |A_final - E_T A_true| <= "
                "eps_0")
    lap_true = q.laplacian_of_true_attention
    rec.at_most("printed_laplacian_of_true_attention", lap_true, 1e-12,
                why="D.5 sketch as printed: 'A_true is stationary for (18)', i.e. L A_true = 0",
                label=f"D.5 as printed: A_true is not stationary (|L A_true|_F = {lap_true:.3g})")
    rec.at_most("printed_hybrid_error_max_increment", float(np.diff(dist_true).max()), 0.0,
                why="eq. (19) as printed: delta(T) = O(exp(-alpha lambda_min T) + dt) decays with T",
                label="eq. (19) as printed: |A_final - A_true| grows with the pseudo-time instead of decaying")
    return ("the scheme converges to the continuum PDE with error C dt (1 + t), the Algorithm-1 stack equals "
            "E_(L dt)[A^(0)], and the hybrid error decays because A_true is stationary (PDE-5, 6, 7 as printed)")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
