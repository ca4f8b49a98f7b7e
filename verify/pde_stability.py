"""Stability of the explicit PDE schemes: CFL limits, contraction, parameter scaling (PDE-2, 10, 14).

PDE-2 (App. E eqs. 24 and 28). The one-step map of diffusion ``I + r L`` (``r = alpha dt / ds^2``)
has spectral radius <= 1 iff ``r <= 2 / mu_max``; the symplectic-Euler wave map (eqs. 26-27) has
eigenvalues on the unit circle iff ``(c dt / ds)^2 mu_max <= 4`` (at equality the eigenvalue -1 is
defective and the wave grows linearly). With periodic even ``T``, ``mu_max = 4``: ``r <= 1/2``
(``1/4`` on both axes) and ``c dt / ds < 1``; cell-centred Neumann gives ``1 / (2 cos^2(pi / 2T))``,
slightly above 1/2. The thresholds are compared with closed forms, with a bisection on the spectral
radius of token-by-token step matrices, and with growth over many steps just below and above.
"Stability is more restrictive" for the wave (E.0.2) compares ``dt <= ds / c`` with
``dt <= ds^2 / (2 alpha)``: the wave bound is the tighter one iff ``c > 2 alpha / ds``; at the
paper's alpha = 0.1, c = 0.15, ds = 1 it is looser (6.67 against 5).

PDE-10 (Thm. D.1 item 3, C.5). For key-axis diffusion with ``r <= 1/2`` (periodic or cell-centred
Neumann) ``M = (I + r L)^N_t`` is symmetric and doubly stochastic with eigenvalues in [-1, 1]:
``|M|_2 = |M|_1 = |M|_inf = 1`` for every ``N_t`` and ``T``, so back-propagation through the
refinement cannot amplify a gradient; beyond the limit ``|M|_2 = |1 - r mu_max|^N_t`` grows
geometrically. With the learned alpha in [0.02, 0.15] (Fig. 13) and any dt <= 3, r < 1/2: linear
theory predicts no instability at 8 steps, so it does not explain the reported NaN. The wave's
``A -> A`` map has norm up to ``(1 - c^2 mu_max dt^2 / 4)^(-1/2) > 1``.

PDE-14 (App. E.1). Only ``r`` decides stability. In token units (``ds = 1``) with
``alpha ~ 1/N^2`` the largest stable dt grows like ``N^2``; with positions normalised to [0, 1]
(``ds = 1/N``) and ``alpha ~ 1/N^2`` it is independent of N, and so is the diffusion length in
tokens. Neither needs ``dt ~ 1/N``.

``claim="printed"`` asserts the paper's statements: the wave bound is the more restrictive one at the
paper's parameters, eq. (28) with equality is stable, eight diffusion steps with the learned
parameters are unstable, and the largest stable dt scales like 1/N. All fail.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import spectral
from manifolds.references import pde as pde_module
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.fits import fit_power_law
from verify.core.params import Int, Ints, Real, check_resolved
from verify.core.reduce import least, worst
from verify.core.result import Recorder

CHECK = Check("pde_stability",
              printed="the paper's statements (the wave bound is the tighter one, eq. (28) with equality is "
                      "stable, 8 steps are unstable, dt ~ 1/N), which fail",
              host_only="token-by-token step matrices of at most 2 T^2 entries, T <= 128; the operator norms "
                        "are dense eigenvalue problems of size T <= 256")

#: The measured tolerances (the others are exact algebra or bounds computed from theory next to their assertion).
CALIBRATION = Calibration(
    Tolerance("diffusion_limit_vs_bisection", 1e-8, measured=5.0e-12,
              why="bisection to spectral radius 1 + 1e-11 locates r* to ~3e-12 relative; a limit 1 % off gives 1e-2"),
    Tolerance("wave_limit_vs_bisection", 1e-8, measured=2.9e-14,
              why="beyond the defective threshold the radius grows like sqrt(x - 4), so a 1e-7 radius tolerance "
                  "moves the threshold by ~1e-14; a limit 1 % off gives 1e-2"),
)


#: The smallest wave speed whose A -> A map is resolved: at c = 1e-5 the excess over norm 1 is 8e-12 (the rounding
#: of the 1.6e5 steps to reach it 4e-14, 5 s); at 1e-6 it would be ~1e-13 after 1.6e6 steps.
WAVE_MAP_MIN_C = 1e-5


@CHECK.parameters
class Params:
    sizes: tuple = Ints((8, 63, 64, 512), "Sequence lengths T whose limits are compared with the closed forms "
                        "(include an odd one)", low=4, high=4096, unit="tokens")
    growth_size: int = Int(16, "T of the growth tests (random A(0), threshold -+ 1 %)", low=8, high=128,
                           unit="tokens")
    growth_steps: int = Int(2000, "Steps of the growth tests", low=200, high=20000)
    norm_size: int = Int(64, "T of the operator-norm sweep over N_t = 1..norm_steps and r in [0, 0.6]", low=8,
                         high=256, unit="tokens")
    norm_steps: int = Int(64, "Largest N_t of the operator-norm sweep", low=8, high=256)
    alpha: float = Real(0.1, "Diffusion coefficient of the paper (PDE Table 5: 0.1)", low=0.0, high=1.0,
                        low_open=True)
    c: float = Real(0.15, "Wave speed of the paper (PDE Table 11: 0.15); at least 1e-5: the wave's A -> A map "
                    "exceeds norm 1 by c^2 mu_max / 8, first after ~1.6 / c steps (1.6e5 steps, ~5 s, for an excess "
                    "of 8e-12 at 1e-5; below it the excess is at the rounding of float64 over so many steps)",
                    low=0.0, high=1.0, low_open=True)
    lengths: tuple = Ints((64, 256, 1024, 4096, 16384), "Sequence lengths N of the parameter-scaling sweep "
                          "(PDE-14; a log-log slope over at least 3 distinct N)", low=16, high=65536, min_len=3,
                          unit="tokens")

    def resolve(self):
        """The steps (dt = 1) must move entries by more than rounding."""
        if len(set(self.lengths)) < 3:
            raise InputError(f"lengths must hold at least 3 distinct values (the slope of a log-log fit), got "
                             f"{self.lengths!r}")
        check_resolved("alpha", self.alpha, "r = alpha dt (dt = 1)")
        check_resolved("c", self.c, "c dt (dt = 1)")
        if self.c < WAVE_MAP_MIN_C:
            raise InputError(f"c must be >= {WAVE_MAP_MIN_C:g}: the wave's A -> A map exceeds norm 1 by at most "
                             f"c^2 mu_max / 8 and first after ~1.6 / c steps; below c = {WAVE_MAP_MIN_C:g} that is "
                             f"> 1.6e5 steps for an excess < 5e-11, at the rounding of so many steps, got {self.c:g}")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What pde_stability measures (ratios are relative errors unless named otherwise)."""

    #: max |stability_limit / closed form - 1| over sizes, boundaries, axes and both PDEs
    limit_vs_closed_form: float
    limit_neumann_T8: float
    limit_neumann_T64: float
    limit_periodic_T63: float
    #: max |limit / bisection on the spectral radius of token-by-token step matrices - 1|
    diffusion_limit_vs_bisection: float
    wave_limit_vs_bisection: float
    #: growth tests: |A(N)|_F / |A(0)|_F at 0.99 x the diffusion limit (max over boundaries)
    diffusion_growth_below_limit: float
    #: max|A(N)| / max|A(0)| at 1.01 x the diffusion limit (min over boundaries)
    diffusion_growth_above_limit: float
    wave_growth_below_limit: float
    #: (1 - x/4)^(-1/2) at 0.99 x the wave limit: the bounded amplitude below the limit
    wave_amplitude_bound: float
    wave_growth_above_limit: float
    #: the modulus of the real eigenvalue per step at 1.01 x the wave limit, and the steps taken there
    wave_eigenvalue_above_limit: float
    wave_steps_above_limit: int
    #: at c dt / ds = 1: max|A(2n)| / max|A(n)| and max|A(2n)| / max|A(0)|
    wave_at_limit_growth_ratio: float
    wave_at_limit_growth: float
    dt_max_diffusion: float
    dt_max_wave: float
    #: the largest stable dt of the wave at c = 2.5 alpha (where the wave bound is the tighter one)
    dt_max_wave_fast: float
    contraction_norm2_deviation: float
    contraction_norm1_inf_deviation: float
    unstable_norm_vs_closed_form: float
    unstable_norm_growth_per_step: float
    #: max |M|_2 of 8 diffusion steps with the learned alpha in [0.02, 0.15] and dt <= 3
    max_norm_8_steps_learned_alpha: float
    wave_map_sup_norm: float
    #: (1 - c^2 mu_max dt^2 / 4)^(-1/2): the bound of the wave's A -> A map
    wave_map_bound: float
    #: the same sup from the closed form |cos((2n+1) theta_k / 2) / cos(theta_k / 2)| over the same steps n, and the
    #: last n swept (past the top mode's first crossing of pi / theta_max, which needs ~1.6 / c steps)
    wave_map_closed_form_sup: float
    wave_map_last_step: int
    r_limit_spacing_dependence: float
    #: max |r_max - 1/2| over the lengths
    r_limit_offset: float
    dt_max_slope_token_units: float
    dt_max_slope_normalised: float
    diffusion_length_tokens_spread: float
    dt_max_token_units: np.ndarray
    dt_max_normalised: np.ndarray


def _rho(m: np.ndarray) -> float:
    return float(np.max(np.abs(np.linalg.eigvals(m))))


def _sym_norm(m: np.ndarray) -> float:
    """Spectral norm of the symmetric part of ``m``; NaN when ``m`` is not finite (eigvalsh would raise)."""
    if not np.all(np.isfinite(m)):
        return math.nan
    return float(np.max(np.abs(np.linalg.eigvalsh(0.5 * (m + m.T)))))


def _bisect(radius, lo: float, hi: float, tol: float) -> float:
    """Largest x in [lo, hi] with radius(x) <= 1 + tol (radius increasing past the threshold)."""
    for _ in range(45):
        mid = 0.5 * (lo + hi)
        if radius(mid) <= 1.0 + tol:
            lo = mid
        else:
            hi = mid
    return lo


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """CFL limits from the Laplacian's spectrum, contraction of the refinement, and parameter scaling."""
    with ctx.timed("limits"):
        limits = _limits(p.sizes)
    with ctx.timed("growth"):
        growth = _growth(p.growth_size, p.growth_steps, p.seed)
    with ctx.timed("paper_parameters"):
        paper = _paper_parameters(p.alpha, p.c)
    with ctx.timed("norms"):
        norms = _norms(p.norm_size, p.norm_steps, p.c)
    with ctx.timed("scaling"):
        scaling = _scaling(p.lengths, p.alpha)
    return Quantities(**limits, **growth, **paper, **norms, **scaling)


def _limits(sizes) -> dict:
    """stability_limit against closed forms and against a bisection on token-by-token step matrices."""
    worst_rel = 0.0
    for T in sizes:
        for b in ("periodic", "neumann", "reflect", "dirichlet", "fixed"):
            if b == "fixed" and T < 5:
                continue
            for axis in ("key", "both"):
                for pde in ("diffusion", "wave"):
                    got = spectral.stability_limit(pde, T=T, boundary=b, axis=axis)
                    worst_rel = worst(worst_rel, abs(got / pde_module.closed_form_limit(pde, T, b, axis) - 1.0))

    # bisection on the spectral radius of step matrices built token by token (small T: dense eig)
    worst_d, worst_w = 0.0, 0.0
    for b, T in (("periodic", 16), ("periodic", 15), ("neumann", 8), ("neumann", 16), ("reflect", 16),
                 ("dirichlet", 16), ("fixed", 16)):
        lap, eye = pde_module.stencil_matrix(T, b), np.eye(T)
        r_star = _bisect(lambda r: _rho(eye + r * lap), 0.2, 0.8, 1e-11)
        nu_star = _bisect(lambda nu: _rho(np.block([[eye + nu * nu * lap, eye], [nu * nu * lap, eye]])),
                          0.5, 1.5, 1e-7)
        worst_d = worst(worst_d, abs(r_star / spectral.stability_limit("diffusion", T=T, boundary=b) - 1.0))
        worst_w = worst(worst_w, abs(nu_star / spectral.stability_limit("wave", T=T, boundary=b) - 1.0))
    T = 6
    lap = pde_module.stencil_matrix(T, "neumann")
    lap2 = np.kron(lap, np.eye(T)) + np.kron(np.eye(T), lap)
    eye2 = np.eye(T * T)
    r_star = _bisect(lambda r: _rho(eye2 + r * lap2), 0.1, 0.5, 1e-11)
    worst_d = worst(worst_d, abs(r_star / spectral.stability_limit("diffusion", T=T, boundary="neumann",
                                                                   axis="both") - 1))
    nu_star = _bisect(lambda nu: _rho(np.block([[eye2 + nu * nu * lap2, eye2], [nu * nu * lap2, eye2]])),
                      0.3, 1.2, 1e-7)
    worst_w = worst(worst_w, abs(nu_star / spectral.stability_limit("wave", T=T, boundary="neumann", axis="both") - 1))
    return dict(limit_vs_closed_form=worst_rel,
                limit_neumann_T8=spectral.stability_limit("diffusion", T=8, boundary="neumann"),
                limit_neumann_T64=spectral.stability_limit("diffusion", T=64, boundary="neumann"),
                limit_periodic_T63=spectral.stability_limit("diffusion", T=63, boundary="periodic"),
                diffusion_limit_vs_bisection=worst_d, wave_limit_vs_bisection=worst_w)


def _growth(T, steps, seed) -> dict:
    """Random A(0) evolved at 0.99 and 1.01 times the limit; the wave at the limit grows linearly."""
    a0 = child_rng(seed, "growth").random((T, T))
    norm0 = float(np.linalg.norm(a0))
    bounded, grown = 0.0, np.inf
    for b, axis in (("periodic", "key"), ("neumann", "key"), ("periodic", "both")):
        lim = spectral.stability_limit("diffusion", T=T, boundary=b, axis=axis)
        below = spectral.evolve_attention(a0, steps=steps, alpha=0.99 * lim, boundary=b, axis=axis).attention
        above = spectral.evolve_attention(a0, steps=steps, alpha=1.01 * lim, boundary=b, axis=axis,
                                          allow_unstable=True).attention
        bounded = worst(bounded, float(np.linalg.norm(below)) / norm0)
        grown = least(grown, float(np.max(np.abs(above))) / float(np.max(np.abs(a0))))

    lim = spectral.stability_limit("wave", T=T, boundary="neumann")
    nu = 0.99 * lim
    below = spectral.evolve_attention(a0, pde="wave", steps=steps, c=nu, boundary="neumann").attention
    x_max = nu * nu * 4.0 * math.cos(math.pi / (2 * T)) ** 2  # c^2 dt^2 mu_max
    wave_steps = min(steps, 1000)  # 1.01 x limit grows ~1.3x per step: stay below overflow
    above = spectral.evolve_attention(a0, pde="wave", steps=wave_steps, c=1.01 * lim, boundary="neumann",
                                      allow_unstable=True).attention
    x_up = 4.0 * 1.01 ** 2  # c^2 dt^2 mu_max at 1.01 times the limit
    lam = (x_up - 2.0 + math.sqrt((2.0 - x_up) ** 2 - 4.0)) / 2.0  # |eigenvalue| of [[1 - x, 1], [-x, 1]]
    # at exactly c dt / ds = 1, periodic even T: eigenvalue -1 is defective, the Nyquist amplitude is 2n + 1
    n = steps // 2
    a_n = spectral.evolve_attention(a0, pde="wave", steps=n, c=1.0, boundary="periodic").attention
    a_2n = spectral.evolve_attention(a0, pde="wave", steps=2 * n, c=1.0, boundary="periodic").attention
    return dict(diffusion_growth_below_limit=bounded, diffusion_growth_above_limit=grown,
                wave_growth_below_limit=float(np.linalg.norm(below)) / norm0,
                wave_amplitude_bound=1.0 / math.sqrt(1.0 - x_max / 4.0),
                wave_growth_above_limit=float(np.max(np.abs(above))) / float(np.max(np.abs(a0))),
                wave_eigenvalue_above_limit=lam, wave_steps_above_limit=wave_steps,
                wave_at_limit_growth_ratio=float(np.max(np.abs(a_2n)) / np.max(np.abs(a_n))),
                wave_at_limit_growth=float(np.max(np.abs(a_2n)) / np.max(np.abs(a0))))


def _paper_parameters(alpha, c) -> dict:
    """dt limits of diffusion and wave at the paper's alpha, c (ds = 1, periodic even T)."""
    T = 512
    wave = spectral.stability_limit("wave", T=T, boundary="periodic")
    return dict(dt_max_diffusion=spectral.stability_limit("diffusion", T=T, boundary="periodic") / alpha,
                dt_max_wave=wave / c, dt_max_wave_fast=wave / (2.5 * alpha))


def _norms(T, n_max, c) -> dict:
    """Operator norms of M = (I + r L)^N_t (key axis) and of the wave's A -> A map."""
    eye = np.eye(T)
    dev_2 = dev_1 = 0.0
    growth_err = 0.0
    min_growth = np.inf
    checkpoints = sorted({1, 2, 3, 4, 8, 16, 32, n_max} | set(range(8, n_max + 1, 8)))
    for b in ("periodic", "neumann"):
        mu_max = pde_module.laplacian_eigenvalues(T, b).max()
        for r in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6):
            m, done = eye, 0
            unstable = r > spectral.stability_limit("diffusion", T=T, boundary=b)
            for n in checkpoints:
                # evolving I along the key axis gives I M^T = M^T (symmetric here); diffusion has no
                # memory, so the evolution continues from the previous checkpoint
                m = spectral.evolve_attention(m, steps=n - done, alpha=r, boundary=b, allow_unstable=True).attention
                done = n
                n2 = _sym_norm(m)
                if not unstable:
                    dev_2 = worst(dev_2, abs(n2 - 1.0))
                    if r <= 0.5:
                        dev_1 = worst(dev_1, abs(float(np.abs(m).sum(axis=0).max()) - 1.0),
                                    abs(float(np.abs(m).sum(axis=1).max()) - 1.0))
                else:
                    expect = abs(1.0 - r * mu_max) ** n
                    growth_err = worst(growth_err, abs(n2 / expect - 1.0))
                    min_growth = least(min_growth, n2 ** (1.0 / n))

    # the NaN explanation: learned alpha in [0.02, 0.15] (Fig. 13), dt <= 3, N_t = 8 steps
    T8 = 128
    worst8 = 0.0
    for a in (0.02, 0.085, 0.15):
        for dt in (0.5, 1.0, 2.0, 3.0):
            m8 = spectral.evolve_attention(np.eye(T8), steps=8, dt=dt, alpha=a, boundary="neumann").attention
            worst8 = worst(worst8, _sym_norm(m8))

    # the wave's A -> A map: W_n with A_n = A_0 W_n^T; sup_n |W_n|_2 vs (1 - c^2 mu_max dt^2 / 4)^(-1/2)
    mu = pde_module.laplacian_eigenvalues(T, "neumann")
    bound = 1.0 / math.sqrt(1.0 - c * c * mu.max() / 4.0)
    sup = 0.0
    ns = wave_map_steps(T, n_max, c)
    res = spectral.evolve_attention(eye, pde="wave", steps=0, c=c, boundary="neumann")
    done = 0
    for n in ns:  # one step at a time (a jump to the window past n_max), continuing from the returned velocity
        res = spectral.evolve_attention(res.attention, pde="wave", steps=n - done, c=c, boundary="neumann",
                                        velocity=res.velocity)
        done = n
        sup = worst(sup, _sym_norm(res.attention))
    return dict(contraction_norm2_deviation=dev_2, contraction_norm1_inf_deviation=dev_1,
                unstable_norm_vs_closed_form=growth_err, unstable_norm_growth_per_step=min_growth,
                max_norm_8_steps_learned_alpha=worst8, wave_map_sup_norm=sup, wave_map_bound=bound,
                wave_map_closed_form_sup=wave_map_closed_form(mu, c, ns), wave_map_last_step=int(ns[-1]))


#: steps swept on each side of the top mode's first crossing when it lies past norm_steps
_WAVE_WINDOW = 64


def wave_map_steps(T: int, n_max: int, c: float) -> list[int]:
    """The steps n at which the wave's A -> A map is measured: 1..n_max, and a window around the top mode's first
    crossing when it lies past n_max.

    Per Neumann mode k (dt = 1) the map is ``cos((2n+1) theta_k / 2) / cos(theta_k / 2)`` with
    ``sin(theta_k / 2) = c sqrt(mu_k) / 2``: its modulus exceeds 1 only where ``(2n+1) theta_k / 2`` comes within
    ``theta_k / 2`` of a multiple of pi, first near ``n = pi / theta_max`` (~1.6 / c steps). A sweep of n_max = 64
    steps sees that for c >= 0.03 only (c = 0.01 gave sup = 1: a wrong FAIL); past it the window
    ``pi / theta_max -+ 64`` is swept one step at a time after one jump.
    """
    theta = 2.0 * math.asin(min(1.0, c * math.sqrt(pde_module.laplacian_eigenvalues(T, "neumann").max()) / 2.0))
    cross = math.ceil(math.pi / theta)
    ns = list(range(1, n_max + 1))
    if cross + 8 > n_max:
        ns += list(range(max(n_max + 1, cross - _WAVE_WINDOW), cross + _WAVE_WINDOW + 1))
    return ns


def wave_map_closed_form(mu: np.ndarray, c: float, ns) -> float:
    """``max_(n, k) |cos((2n+1) theta_k / 2)| / cos(theta_k / 2)``: the sup of the wave's A -> A map over the steps
    ``ns`` from its closed form (symplectic Euler, V(0) = 0, dt = 1), independent of the evolution."""
    theta = 2.0 * np.arcsin(c * np.sqrt(mu) / 2.0)
    n = np.asarray(ns, dtype=float)[:, None]
    return float(np.max(np.abs(np.cos((2.0 * n + 1.0) * theta / 2.0)) / np.cos(theta / 2.0)))


def _scaling(lengths, alpha) -> dict:
    """Largest stable dt vs N in token units and in normalised positions, alpha ~ 1/N^2 (E.1)."""
    n_ref = lengths[0]
    dt_tok, dt_norm, r_max, r_ds, length_tok = [], [], [], [], []
    for N in lengths:
        a_n = alpha * (n_ref / N) ** 2  # alpha ~ 1/N^2, equal to alpha at the first length
        r1 = spectral.stability_limit("diffusion", T=N, boundary="neumann", ds=1.0)
        rn = spectral.stability_limit("diffusion", T=N, boundary="neumann", ds=1.0 / N)
        r_max.append(r1)
        r_ds.append(abs(rn / r1 - 1.0))
        dt_tok.append(r1 * 1.0 ** 2 / a_n)           # token units: ds = 1
        dt_norm.append(rn * (1.0 / N) ** 2 / a_n)    # positions in [0, 1]: ds = 1/N
        length_tok.append(math.sqrt(2.0 * a_n * 1.0) / (1.0 / N))  # sqrt(2 alpha t) / ds at t = 1
    return dict(r_limit_spacing_dependence=worst(r_ds), r_limit_offset=worst(abs(r - 0.5) for r in r_max),
                dt_max_slope_token_units=fit_power_law(lengths, dt_tok).slope,
                dt_max_slope_normalised=fit_power_law(lengths, dt_norm).slope,
                diffusion_length_tokens_spread=(max(length_tok) - min(length_tok)) / min(length_tok),
                dt_max_token_units=np.asarray(dt_tok), dt_max_normalised=np.asarray(dt_norm))


def neumann_scaling_slopes(lengths) -> tuple[float, float]:
    """The log-log slopes of the largest stable dt against N that ``_scaling`` fits, from the closed form.

    Cell-centred Neumann: ``r_max(N) = 1 / (2 cos^2(pi / 2N)) = 1/2 + tan^2(pi / 2N) / 2``. With
    ``alpha ~ 1/N^2``, ``dt_max ~ r_max(N) N^2`` in token units and ``~ r_max(N)`` in normalised positions, so
    the least-squares slopes are 2 and 0 plus the slope of ``log r_max`` (``-(pi / N)^2 / 2`` locally): -0.0035
    over N = 16, 64, 256, -5e-5 over the default 64..16384. Independent of ``spectral.stability_limit``.
    """
    n = np.asarray(lengths, dtype=float)
    r_max = 0.5 / np.cos(np.pi / (2.0 * n)) ** 2
    return fit_power_law(n, r_max * n * n).slope, fit_power_law(n, r_max).slope


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """The limits against closed forms and bisections, the growth and norm tests, the scaling."""
    printed = p.claim == "printed"
    rec.at_most("limit_vs_closed_form_max_relative_error", q.limit_vs_closed_form, 1e-13,
                why="bisection eigenvalues of the tridiagonal matrix are accurate to a few eps relative "
                    "(measured <= 2e-15) against 4 sin^2 closed forms",
                label="stability_limit differs from the closed-form spectrum")
    rec.info("limit_neumann_T8", q.limit_neumann_T8)
    rec.info("limit_neumann_T64", q.limit_neumann_T64)
    rec.info("limit_periodic_T63", q.limit_periodic_T63)
    rec.at_most("diffusion_limit_vs_bisection", q.diffusion_limit_vs_bisection,
                CALIBRATION.get("diffusion_limit_vs_bisection", p),
                label="the diffusion limit differs from where the step matrix's spectral radius exceeds 1")
    rec.at_most("wave_limit_vs_bisection", q.wave_limit_vs_bisection, CALIBRATION.get("wave_limit_vs_bisection", p),
                label="the wave limit differs from where the step matrix's spectral radius exceeds 1")

    steps = p.growth_steps
    rec.at_most("diffusion_growth_below_limit", q.diffusion_growth_below_limit, 1.0 + 1e-12,
                why="symmetric step matrix with eigenvalues in [-1, 1]: the Frobenius norm cannot grow "
                    "(rounding <= 1e-15 per step; measured <= 1)",
                label="diffusion grew at 0.99 times the stability limit")
    rec.at_least("diffusion_growth_above_limit", q.diffusion_growth_above_limit, 1e-3 * 1.02 ** steps,
                 why=f"the top mode's factor is |1 - 1.01 * 2| = 1.02 per step: 1.02^{steps} times its share of "
                     "A(0), >= 1e-3 (measured 1.4e15 against 1.6e17 after 2000 steps)",
                 label="diffusion did not grow at 1.01 times the stability limit")
    amp = q.wave_amplitude_bound
    rec.at_most("wave_growth_below_limit", q.wave_growth_below_limit, amp * (1 + 1e-10),
                why="per mode the A-amplitude is cos((2n+1) theta/2) / cos(theta/2) <= (1 - x/4)^(-1/2) "
                    f"(= {amp:.3g} at 0.99 times the limit); orthonormal modes",
                label="the wave grew beyond its bounded amplitude below the limit")
    lam = q.wave_eigenvalue_above_limit
    rec.at_least("wave_growth_above_limit", q.wave_growth_above_limit, 1e-3 * lam ** q.wave_steps_above_limit,
                 why=f"x = 4 * 1.01^2: a real eigenvalue of modulus {lam:.4f} per step, times the top mode's share "
                     "of A(0), >= 1e-3 (measured 4.6e122 after 1000 steps)",
                 label="the wave did not grow at 1.01 times the stability limit")
    if not printed:
        rec.within("wave_at_limit_growth_ratio", q.wave_at_limit_growth_ratio, (1.8, 2.2),
                   why="defective eigenvalue -1: the Nyquist amplitude is (2n + 1) a_N, ratio (4n + 1) / (2n + 1) "
                       "-> 2 up to the bounded other modes (measured 1.99-2.0)",
                   label="the wave at c dt / ds = 1 does not grow linearly")
    else:
        rec.at_most("printed_wave_at_equality_growth", q.wave_at_limit_growth, 2.0,
                    why="eq. (28) as printed allows dt = ds / c: a stable scheme keeps the amplitude bounded "
                        "(factor <= 2 allowed)",
                    label="eq. (28) with equality is not stable: the wave grows linearly at c dt = ds")
        rec.info("wave_at_limit_growth_ratio", q.wave_at_limit_growth_ratio)

    alpha, c = p.alpha, p.c
    dt_diff, dt_wave = q.dt_max_diffusion, q.dt_max_wave
    rec.info("dt_max_diffusion", dt_diff)
    rec.info("dt_max_wave", dt_wave)
    rec.close("dt_ratio_wave_over_diffusion", dt_wave / dt_diff, 2 * alpha / c, rtol=1e-12,
              why="periodic even T: dt_wave / dt_diff = (1/c) / (1/(2 alpha)) = 2 alpha / (c ds) exactly",
              label="the ratio of the wave and diffusion dt limits is not 2 alpha / c")
    if not printed:
        rec.equal("wave_tighter", not dt_wave > dt_diff, c > 2 * alpha,
                  why="the wave bound is tighter iff c > 2 alpha / ds (0.15 < 0.2 at the paper's values)",
                  label="'wave is more restrictive' does not follow the sign of c - 2 alpha / ds")
        rec.holds("wave_tighter_when_c_above_2alpha", q.dt_max_wave_fast < dt_diff,
                  why="c = 2.5 alpha > 2 alpha / ds: the wave bound 1/c is below 1/(2 alpha)",
                  label="with c > 2 alpha / ds the wave bound is not the tighter one")
    else:
        rec.holds("printed_wave_more_restrictive", dt_wave < dt_diff,
                  why="E.0.2 as printed: 'stability is more restrictive' for the wave at alpha = 0.1, c = 0.15",
                  label=f"E.0.2 as printed: the wave bound dt <= {dt_wave:.3g} is looser than the diffusion "
                        f"bound dt <= {dt_diff:.3g} at alpha = {alpha:g}, c = {c:g}")

    rec.at_most("contraction_norm2_deviation", q.contraction_norm2_deviation, 1e-12,
                why="r <= r_max: eigenvalues 1 (constants) and |1 - r mu_k| <= 1; rounding of N_t <= 64 steps "
                    "(measured <= 3e-15)",
                label="|M|_2 differs from 1 within the stability limit")
    rec.at_most("contraction_norm1_inf_deviation", q.contraction_norm1_inf_deviation, 1e-12,
                why="r <= 1/2: M is non-negative and doubly stochastic, so |M|_1 = |M|_inf = 1 (measured <= 4e-15)",
                label="|M|_1 or |M|_inf differs from 1 for r <= 1/2")
    rec.at_most("unstable_norm_vs_closed_form", q.unstable_norm_vs_closed_form, 1e-9,
                why="beyond the limit |M|_2 = |1 - r mu_max|^N_t exactly; eigvalsh and N_t <= 64 steps of "
                    "rounding (measured <= 1e-12)",
                label="the norm beyond the limit does not grow like |1 - r mu_max|^N_t")
    rec.at_least("unstable_norm_growth_per_step", q.unstable_norm_growth_per_step, 1.0 + 1e-3,
                 why="r = 0.55, 0.6 > r_max: the per-step factor |1 - r mu_max| >= 1.2 - small",
                 label="the norm did not grow geometrically beyond the limit")
    worst8 = q.max_norm_8_steps_learned_alpha
    rec.info("max_norm_8_steps_learned_alpha", worst8)
    if not printed:
        rec.at_most("norm_8_steps_learned_alpha", worst8, 1.0 + 1e-12,
                    why="alpha <= 0.15, dt <= 3: r <= 0.45 < 1/2, so |M|_2 = 1 (rounding 1e-15)",
                    label="8 diffusion steps with the learned alpha amplify")
    else:
        rec.at_least("printed_norm_8_steps_unstable", worst8, 1.0 + 1e-6,
                     why="C.5 as printed: 8 steps become unstable 'as our theory predicts' with the learned alpha",
                     label="C.5 as printed: linear theory predicts no instability at 8 steps (|M|_2 = 1 for every "
                           "alpha in [0.02, 0.15], dt <= 3)")
    bound = q.wave_map_bound
    excess = q.wave_map_closed_form_sup - 1.0
    rec.info("wave_map_closed_form_sup", q.wave_map_closed_form_sup)
    rec.within("wave_map_sup_norm", q.wave_map_sup_norm, (1.0 + excess / 2, bound * (1 + 1e-12)),
               why="per mode |cos((2n+1) theta/2) / cos(theta/2)| <= (1 - x/4)^(-1/2) with x = c^2 mu dt^2, "
                   f"reached approximately (bound {bound:.5g}); > 1 for some n: at least half the closed form's excess "
                   f"{excess:.3g} over the steps swept (up to n = {q.wave_map_last_step}; measured within 4e-14 of "
                   "it for c in [1e-5, 1], 6e-12 at c = 1 where the norm is 40)",
               label="the wave's A -> A map norm is not in (1, (1 - c^2 mu_max dt^2 / 4)^(-1/2)]")

    n_min = min(p.lengths)  # the largest offset is at the shortest length, wherever it is listed
    rec.info("dt_max_token_units_first", q.dt_max_token_units[0])
    rec.info("dt_max_token_units_last", q.dt_max_token_units[-1])
    rec.info("dt_max_normalised_last", q.dt_max_normalised[-1])
    rec.at_most("r_limit_spacing_dependence", q.r_limit_spacing_dependence, 1e-12,
                why="r = alpha dt / ds^2 absorbs ds: the limit on r is the same for ds = 1 and ds = 1/N "
                    "(rounding of mu_max ~ N^2; measured <= 1e-15)",
                label="the limit on r depends on the token spacing")
    rec.within("r_limit_range", q.r_limit_offset, (0.0, 1.01 * math.pi ** 2 / (8 * n_min ** 2)),
               why="cell-centred Neumann: r_max = 1/(2 cos^2(pi/2N)) = 1/2 + pi^2/(8 N^2) (1 + 2 (pi/2N)^2 / 3 + ...), "
                   "largest at the shortest N (factor 1.0064 at N = 16 under the 1.01)",
               label="r_max is not 1/2 + O(1/N^2)")
    if not printed:
        slope_tok, slope_norm = neumann_scaling_slopes(p.lengths)
        rec.close("dt_max_slope_token_units", q.dt_max_slope_token_units, slope_tok, atol=1e-9,
                  why="dt_max = r_max(N) / alpha with alpha ~ 1/N^2: slope 2 plus that of r_max(N) = "
                      f"1/(2 cos^2(pi/2N)) (closed form over these N: {slope_tok - 2:+.2g}); rounding of mu_max "
                      "(measured <= 3e-15 for N in 16..65536, adjacent N included)",
                  label="in token units the largest stable dt does not grow like r_max(N) N^2 (slope 2 for "
                        "large N)")
        rec.close("dt_max_slope_normalised", q.dt_max_slope_normalised, slope_norm, atol=1e-9,
                  why="ds = 1/N and alpha ~ 1/N^2: r = alpha dt / ds^2 is N-free, so dt_max ~ r_max(N), slope "
                      f"{slope_norm:+.2g} from the closed form over these N (0 for large N); rounding (measured "
                      "<= 3e-15)",
                  label="in normalised positions the largest stable dt depends on N beyond r_max(N)")
        rec.at_most("diffusion_length_tokens_spread", q.diffusion_length_tokens_spread, 1e-12,
                    why="normalised positions: sqrt(2 alpha t) / ds = sqrt(2 alpha_ref t) N_ref^-1 N is constant "
                        "at fixed t (rounding)",
                    label="the diffusion length in tokens depends on N in normalised positions")
        return ("the explicit diffusion step is stable iff r <= 2 / mu_max (1/2 periodic, "
                "1/(2 cos^2(pi/2T)) cell-centred Neumann, 1/4 on both axes) and the wave iff c dt / ds < "
                "2 / sqrt(mu_max); the wave bound is looser than eq. (24) at alpha = 0.1, c = 0.15; the "
                "diffusion refinement has operator norm 1 for r <= 1/2 (no instability at 8 steps with the "
                "learned alpha); only r decides stability, so dt ~ 1/N is not needed")
    rec.close("printed_dt_max_slope_token_units", q.dt_max_slope_token_units, -1.0, atol=0.1,
              why="E.1 as printed: dt ~ 1/N 'to ensure stability' (slope -1)",
              label="E.1 as printed: the largest stable dt does not scale like 1/N in token units")
    rec.close("printed_dt_max_slope_normalised", q.dt_max_slope_normalised, -1.0, atol=0.1,
              why="E.1 as printed: dt ~ 1/N 'to ensure stability' (slope -1)",
              label="E.1 as printed: the largest stable dt does not scale like 1/N in normalised positions")
    return ("the wave bound dt <= ds/c is more restrictive than dt <= ds^2/(2 alpha) at the paper's "
            "parameters, eq. (28) with equality is stable, 8 diffusion steps with the learned parameters "
            "are unstable, and the largest stable dt scales like 1/N (PDE-2, 10, 14 as printed)")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
