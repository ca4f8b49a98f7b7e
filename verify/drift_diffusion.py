"""Heat-kernel attention converges to the drift-diffusion operator with drift coefficient 2 (DRIFT Thm 2).

With ``W_ij = exp(-|x_i - x_j|^2 / (2 eps))`` (ambient distance, diagonal kept), ``L = D^-1 W - I``
and points drawn from a density ``p`` (w.r.t. Riemannian volume),
``(1/eps) L f -> (1/2)(Delta f + 2 <grad log p, grad f>)``; for the Coifman-Lafon family
``rownorm(D^-a W D^-a)`` the drift is ``2 (1 - a)`` (FNA A.4). Tiers: a deterministic quantile grid on
S^1 (von Mises density; tight relative RMS and fitted coefficients), i.i.d. samples on S^1 (von
Mises) and S^2 (von Mises-Fisher), Gaussian mixtures in R^2 (the FNA 3-mode mixture and a milder
2-mode one) restricted to well-sampled points, and the continuum form on S^2 by quadrature. On i.i.d.
data only relative RMS errors and least-squares coefficients are asserted (``op ~ A (1/2) Delta f +
B <grad log p, grad f>``, expect ``A = 1``, ``B = 1 - a``), never a max-norm. The reference is
``manifolds.drift_diffusion`` (exact gradients and Laplacians); since it is affine in ``a``, its value at
``a = 1`` is the Laplacian part ``(1/2) Delta f`` and the difference of ``a = 0`` and ``a = 1`` the drift
part. The printed claim (the Appendix-B proof of Theorem 3: drift without the factor 2) fails, and so
do the negative controls no drift, missing 1/2 and sign flip.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import manifolds
import spectral
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.fits import fit_power_law
from verify.core.memory import PathNeed, circle_pairs
from verify.core.params import Choice, Flag, Int, Options, Real
from verify.core.result import Recorder
from verify.rates import record_rate

__all__ = ["CALIBRATION", "CHECK", "CLAIMED", "TIERS", "asserted_limit", "main", "run"]

CHECK = Check("drift_diffusion", devices=("cpu", "gpu"),
              printed="(1/2)(Delta f + (1-a) <grad log p, grad f>), the drift of the Appendix-B proof of "
                      "Theorem 3, which fails")

TIERS = ("circle_grid", "circle_iid", "sphere_iid", "mixture_fna", "mixture_mild", "sphere_continuum")
#: (Laplacian coefficient A, drift coefficient B as a multiple of (1 - a)) of each operator asserted
CLAIMED = {"corrected": (1.0, 1.0), "printed": (1.0, 0.5),
           "no_drift": (1.0, 0.0), "missing_half": (2.0, 2.0), "sign_flip": (1.0, -1.0)}
_CONTROLS = ("none", "no_drift", "missing_half", "sign_flip")
#: the sampled tiers (every tier but the continuum quadrature)
_SAMPLED = TIERS[:-1]
#: smallest von Mises (mu 0.3, kappa 1) density of the quantile grid: e^-1 / (2 pi I0(1))
_GRID_P_MIN = 0.046245

_GRID_WHY = ("ledger DRIFT-4: Laplacian 1 +- 0.005, drift 2 +- 0.01 (B = 1 +- 0.005); relative RMS at N = 10000, "
             "eps = 1e-3 (N p_min sqrt(eps) = 14.6 >= 2); a wrong operator gives a grid RMS >= 0.35")
_CIRCLE_WHY = "sampling error at N = 8000, eps = 0.04"
_SPHERE_WHY = "sampling error at N = 4000, eps = 0.04 (vMF kappa = 2)"
_SEEDS = {"seed": tuple(range(10))}  # a = 0, one random stream per tier; the defaults otherwise

#: the bandwidth eps at which the circle_grid rows were calibrated (the automatic circle_grid_eps)
GRID_EPS_CALIBRATED = 1e-3
#: circle_grid's deterministic error grows linearly with its bandwidth (the O(eps) term of the kernel expansion):
#: |Laplacian coef - 1|, |drift coef - 1| and the relative RMS per unit eps, measured (a = 0, grid_n = 10000,
#: x86-64 AVX-512) over eps in {1e-3, 2e-3, 4e-3, 1e-2, 2e-2}, linear within 2 % over that range. The circle_grid
#: rows' measured values are these times GRID_EPS_CALIBRATED; at a larger eps each row becomes GRID_MARGIN times its
#: measured growth when that is wider (eps = 4e-3 failed the fixed row value, a wrong FAIL).
GRID_BIAS_PER_EPS = {"laplacian_coef": 0.48, "drift_coef": 1.85, "relative_rms": 1.44}
GRID_MARGIN = 2.5


def grid_tolerance(row, p):
    """The circle_grid row ``row`` at the run's bandwidth: max(its value, GRID_MARGIN x measured growth x eps)."""
    kind = row.name.removeprefix("circle_grid_")
    grown = GRID_MARGIN * GRID_BIAS_PER_EPS[kind] * p.circle_grid_eps
    if grown <= row.value:
        return row
    return dataclasses.replace(row, value=grown, why=row.why + f"; at eps = {p.circle_grid_eps:g}: {GRID_MARGIN:g} x "
                               f"{GRID_BIAS_PER_EPS[kind]:g} eps (its O(eps) bias, measured linear in eps)")


def _tolerance(name, p):
    row = CALIBRATION.get(name, p)
    return grid_tolerance(row, p) if name.startswith("circle_grid_") else row


#: The measured tolerances of each tier (a close record's value is its absolute tolerance).
#: the eps values of the sphere_continuum tier's remainder (its slope in eps is DRIFT-4's 2)
CONTINUUM_EPS = (1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2)

CALIBRATION = Calibration(
    Tolerance("circle_grid_laplacian_coef", 0.005, 
              measured=GRID_BIAS_PER_EPS["laplacian_coef"] * GRID_EPS_CALIBRATED, over={"seed": (0,)}, why=_GRID_WHY),
    Tolerance("circle_grid_drift_coef", 0.005, 
              measured=GRID_BIAS_PER_EPS["drift_coef"] * GRID_EPS_CALIBRATED, over={"seed": (0,)}, why=_GRID_WHY),
    Tolerance("circle_grid_relative_rms", 0.01, 
              measured=GRID_BIAS_PER_EPS["relative_rms"] * GRID_EPS_CALIBRATED, over={"seed": (0,)}, why=_GRID_WHY),
    Tolerance("circle_iid_laplacian_coef", 0.15, measured=0.046, over=_SEEDS, why=_CIRCLE_WHY),
    Tolerance("circle_iid_drift_coef", 0.15, measured=0.065, over=_SEEDS, why=_CIRCLE_WHY),
    Tolerance("circle_iid_relative_rms", 0.25, measured=0.18, over=_SEEDS, why=_CIRCLE_WHY),
    Tolerance("sphere_iid_laplacian_coef", 0.15, measured=0.096, over=_SEEDS, why=_SPHERE_WHY),
    Tolerance("sphere_iid_drift_coef", 0.15, measured=0.118, over=_SEEDS, why=_SPHERE_WHY),
    Tolerance("sphere_iid_relative_rms", 0.30, measured=0.266, over=_SEEDS, why=_SPHERE_WHY),
    Tolerance("mixture_fna_drift_coef", 0.15, measured=0.13, over=_SEEDS,
              why="O(eps / sigma^2) = 8 % kernel bias (sigma = 0.5) plus sampling error at N = 8000, eps = 0.02 "
                  "(77 % of the points kept); the drift coefficient comes out low"),
    Tolerance("mixture_mild_drift_coef", 0.15, measured=0.138, over=_SEEDS,
              why="kernel bias plus sampling error at N = 8000, eps = 0.03"),
    Tolerance("sphere_continuum_remainder_slope", 0.1, measured=2.1e-11, over={"seed": (0,)},
              why="ledger DRIFT-4 'slope 2': quadrature remainder of ratio - g - (eps/2) Delta g at the pole of S^2, "
                  "g = P_2(z), slope 2 to quadrature accuracy over eps in [1e-3, 1.6e-2]; a wrong Laplacian "
                  "coefficient (missing_half) leaves an O(eps) remainder (slope 1.005)"),
)


def _tier_n(tier, small, full, low=1000):
    return Int(None, f"Points of the {tier} tier (with its eps: sampling noise ~ n^-1/2 eps^-(d+2)/4 at most 1.1 x "
               f"that at {small} points and the automatic eps)", low=low, high=200000, unit="points",
               auto=f"{small} ({full} with full)")


def _tier_eps(tier, small, full=None):
    auto = f"{small:g}" if full is None else f"{small:g} ({full:g} with full)"
    return Real(None, f"Kernel bandwidth eps of the {tier} tier (W = exp(-|x - y|^2 / (2 eps)); with its n, refused "
                "where the predicted O(eps) bias plus sampling noise exceeds the tolerances)", low=0.005,
                high=0.2, auto=auto)


#: the automatic sizes and bandwidths of the i.i.d. tiers: (n, n with full, eps, eps with full)
_AUTO = {"circle_iid": (8000, 16000, 0.04, 0.04), "sphere_iid": (4000, 8000, 0.04, 0.04),
         "mixture_fna": (8000, 32000, 0.02, 0.02), "mixture_mild": (8000, 16000, 0.03, 0.02)}


@CHECK.parameters
class Params:
    wrong_limit: str = Choice("none", _CONTROLS,
                              "Negative control replacing the asserted limit by a wrong operator (each fails): "
                              "no_drift (1/2) Delta f, missing_half Delta f + 2(1-a) <grad log p, grad f>, sign_flip "
                              "(1/2)(Delta f - 2(1-a) <grad log p, grad f>); none asserts the claim; only with "
                              "claim='corrected'")
    a: float = Real(0.0, "Coifman-Lafon exponent a in rownorm(D^-a W D^-a) (FNA A.4); drift coefficient 2(1-a)",
                    low=0.0, high=1.0)
    tiers: tuple = Options(TIERS, TIERS, "Tiers to run")
    grid_n: int = Int(10000, "Points of the deterministic quantile grid on S^1 (N p_min sqrt(eps) >= 2)", low=1400,
                      high=200000, unit="points")
    full: bool = Flag(False, "Larger i.i.d. tiers (N = 16000 on S^1, 8000 on S^2, 32000 / 16000 for the mixtures; "
                             "slow)")
    circle_grid_eps: float = Real(None, "Kernel bandwidth eps of the circle_grid tier (below 1e-3 the grid would "
                                        "need N p_min sqrt(eps) >= 2 beyond grid_n's bound; its tolerances grow with its O(eps) bias "
                                        "above 1e-3)", low=1e-3, high=0.05,
                                  auto="1e-3")
    circle_iid_n: int = _tier_n("circle_iid", 8000, 16000)
    circle_iid_eps: float = _tier_eps("circle_iid", 0.04)
    sphere_iid_n: int = _tier_n("sphere_iid", 4000, 8000)
    sphere_iid_eps: float = _tier_eps("sphere_iid", 0.04)
    mixture_fna_n: int = _tier_n("mixture_fna", 8000, 32000)
    mixture_fna_eps: float = _tier_eps("mixture_fna", 0.02)
    mixture_mild_n: int = _tier_n("mixture_mild", 8000, 16000)
    mixture_mild_eps: float = _tier_eps("mixture_mild", 0.03, 0.02)

    def resolve(self):
        """The tiers' automatic sizes and bandwidths, and the rules between the limit asserted and the tiers."""
        if self.wrong_limit != "none" and self.claim != "corrected":
            raise InputError(f"wrong_limit={self.wrong_limit!r} replaces the corrected limit: use it with "
                             "claim='corrected'")
        asserted = asserted_limit(self)
        # the continuum tier has a uniform density: an operator that differs only in the drift passed there
        # vacuously (e.g. no_drift with tiers = sphere_continuum alone), so refuse it
        if self.tiers == ("sphere_continuum",) and asserted != "corrected" and \
                CLAIMED[asserted][0] == CLAIMED["corrected"][0]:
            raise InputError(f"tiers=('sphere_continuum',) cannot test the {asserted!r} limit: it differs only in "
                             f"the drift and that tier's density is uniform; add a tier with a non-uniform density")
        auto = {"circle_grid_eps": GRID_EPS_CALIBRATED if self.circle_grid_eps is None else None}
        for tier, (n, n_full, eps, eps_full) in _AUTO.items():
            if getattr(self, f"{tier}_n") is None:
                auto[f"{tier}_n"] = n_full if self.full else n
            if getattr(self, f"{tier}_eps") is None:
                auto[f"{tier}_eps"] = eps_full if self.full else eps
        out = dataclasses.replace(self, **{k: v for k, v in auto.items() if v is not None})
        for tier in out.tiers:
            if tier in _AUTO:
                _refuse_noisy_tier(tier, getattr(out, f"{tier}_n"), getattr(out, f"{tier}_eps"))
        return out


#: intrinsic dimension of each i.i.d. tier's sample (S^1; S^2; the mixtures in R^2)
TIER_DIM = {"circle_iid": 1, "sphere_iid": 2, "mixture_fna": 2, "mixture_mild": 2}
#: The drift coefficient of an i.i.d. tier is off by its O(eps) kernel bias plus sampling noise ~ n^-1/2
#: eps^-(d+2)/4 (the variance term of a kernel Laplacian): predicted |B - 1| = DRIFT_BIAS_PER_EPS eps + DRIFT_NOISE F,
#: F = the noise relative to the tier's calibrated (automatic) n and eps.
#: DRIFT_BIAS_PER_EPS: the slope in eps of the drift coefficient's error, measured (x86-64 AVX-512, seeds 0, 1, the
#: automatic n) over eps in {0.08, 0.11, 0.16} (sphere_iid), {0.08} (circle_iid), {0.04, 0.08} (mixture_fna),
#: {0.06, 0.12} (mixture_mild): drift coefficients 0.86 / 0.82 / 0.76, 0.964, 0.845 / 0.75, 0.92-0.88 / 0.83-0.79.
#: DRIFT_NOISE: the worst drift error of the tier's *_drift_coef row (its measured=, at the automatic n and eps)
#: minus that bias, rounded up. The noise follows F: circle_iid RMS 0.39 at n = 1000 (F = 2.8), 0.69 at eps = 0.005
#: (F = 4.8); sphere_iid 0.39 at n = 1000 (F = 2), 1.37 at eps = 0.005 (F = 8); mixture_fna drift 1.79 at n = 2000.
#: Widening the tolerances instead would pass the wrong limits (their RMS 0.35-0.75, the printed drift 0.5 off), so
#: a setting whose predicted drift error exceeds the tier's drift row, or whose noise exceeds MAX_NOISE_FACTOR x the
#: calibrated one, is refused with the n or eps that would decide.
DRIFT_BIAS_PER_EPS = {"circle_iid": 0.45, "sphere_iid": 1.7, "mixture_fna": 4.0, "mixture_mild": 2.0}
DRIFT_NOISE = {"circle_iid": 0.047, "sphere_iid": 0.05, "mixture_fna": 0.05, "mixture_mild": 0.08}
#: the largest noise factor F accepted: the smallest margin (value / measured) of the i.i.d. relative_rms rows,
#: rounded down
MAX_NOISE_FACTOR = 1.1
#: each i.i.d. tier's drift tolerance: the value of its CALIBRATION row (*_iid_drift_coef, mixture_*_drift_coef)
TIER_DRIFT_TOL = {tier: CALIBRATION.get(f"{tier}_drift_coef").value for tier in TIER_DIM}


def noise_factor(tier: str, n: int, eps: float) -> float:
    """Sampling noise of an i.i.d. tier at (n, eps) over that at its calibrated (automatic) n and eps."""
    n0, _, eps0, _ = _AUTO[tier]
    return math.sqrt(n0 / n) * (eps0 / eps) ** ((TIER_DIM[tier] + 2) / 4)


def predicted_drift_error(tier: str, n: int, eps: float) -> float:
    """Predicted |drift coefficient - 1| of an i.i.d. tier: measured bias per eps times eps plus scaled noise."""
    return DRIFT_BIAS_PER_EPS[tier] * eps + DRIFT_NOISE[tier] * noise_factor(tier, n, eps)


def _refuse_noisy_tier(tier: str, n: int, eps: float) -> None:
    factor, error = noise_factor(tier, n, eps), predicted_drift_error(tier, n, eps)
    tol = TIER_DRIFT_TOL[tier]
    if factor <= MAX_NOISE_FACTOR and error <= tol:
        return
    n0, _, eps0, _ = _AUTO[tier]
    room = tol - DRIFT_BIAS_PER_EPS[tier] * eps  # what the bias leaves for the noise
    if room <= 0:
        fix = f"lower {tier}_eps below {tol / DRIFT_BIAS_PER_EPS[tier]:.3g} (its bias alone exceeds it)"
    else:
        allowed = min(MAX_NOISE_FACTOR, room / DRIFT_NOISE[tier])
        need = math.ceil(n0 * (eps0 / eps) ** ((TIER_DIM[tier] + 2) / 2) / allowed ** 2)
        fix = f"raise {tier}_n to at least {need}" if need <= 200000 else f"raise {tier}_eps toward {eps0:g}"
    raise InputError(f"{tier}_n = {n} with {tier}_eps = {eps:g} cannot decide the limit: predicted drift error "
                     f"{DRIFT_BIAS_PER_EPS[tier]:g} eps + {DRIFT_NOISE[tier]:g} F = {error:.3g} (O(eps) bias plus "
                     f"sampling noise F = {factor:.2g} x that at n = {n0}, eps = {eps0:g}, ~ n^-1/2 "
                     f"eps^-{(TIER_DIM[tier] + 2) / 4:g}) against its tolerance {tol:g} (and F <= "
                     f"{MAX_NOISE_FACTOR:g}); {fix}")


def asserted_limit(p) -> str:
    """The limit a run asserts: the claim, or the wrong operator of a negative control."""
    return p.claim if p.wrong_limit == "none" else p.wrong_limit


@dataclasses.dataclass(frozen=True)
class Tier:
    """One sampled tier: op ~ A (1/2) Delta f + B <grad log p, grad f> fitted by least squares, and the errors."""

    #: A, the Laplacian coefficient (None where Delta f vanishes on the kept points: f linear in R^2)
    laplacian_coef: float | None
    #: B, the drift coefficient (1 - a for the corrected limit)
    drift_coef: float
    #: relative RMS of (1/eps) L f against each limit of CLAIMED (None on the mixtures, where the kernel bias
    #: dominates and Delta f = 0 leaves no_drift a zero limit)
    relative_rms: dict[str, float] | None
    #: fraction of the points kept (D_ii - 1 >= min_degree; mixtures only)
    kept_fraction: float | None = None


@dataclasses.dataclass(frozen=True)
class Grid:
    """The quantile-grid tier by point (first test function f = sin 2 theta): what the figure draws."""

    theta: np.ndarray  # angle of each grid point
    operator: np.ndarray  # (1/eps)(S^(a) - I) f
    reference: np.ndarray  # the exact limit (1/2)(f'' + 2(1-a)(log p)' f') at the run's a
    half_laplacian: np.ndarray  # (1/2) f''
    drift: np.ndarray  # (log p)' f': the limit is A half_laplacian + B (1 - a) drift
    truncation_bound_operator: float  # the sparse kernel's truncation bound, divided by eps

    def limit(self, name: str, a: float) -> np.ndarray:
        """The limit ``name`` of CLAIMED on the grid (what a run asserting it compares with)."""
        lap, drift = CLAIMED[name]
        return lap * self.half_laplacian + drift * ((1.0 - a) * self.drift)


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What drift_diffusion measures on each tier it ran."""

    #: sampled tiers by name
    tiers: dict[str, Tier]
    #: the quantile-grid tier by point (None without circle_grid)
    grid: Grid | None = None
    #: sphere_continuum: slope in eps of |ratio - g - eps A (1/2) Delta g|, by Laplacian coefficient A of CLAIMED
    continuum_slope: dict[float, float] | None = None
    #: ... and that remainder at eps = 1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2
    continuum_remainder: dict[float, np.ndarray] | None = None


@CHECK.memory
def needs(p) -> dict:
    """The grid tier's sparse kernel (the streamed tiers hold block x n kernel rows only)."""
    # heat_markov's cutoff 6 sqrt(eps) on the von Mises (kappa 1) quantile grid, concentration I0(2) / I0(1)^2 =
    # 1.4221; tracemalloc peaks 257 / 970 MiB at grid_n 1e4 / 2e4 (all tiers, eps = 1e-3) fit 20 MB + 29 bytes
    # per stored entry; 36 bytes leave a margin.
    chord = 6 * math.sqrt(p.circle_grid_eps)
    if "circle_grid" not in p.tiers:
        estimate = lambda m: 0.0  # nothing n x n without the grid tier
    else:
        estimate = lambda m: (32 << 20) + 36 * circle_pairs(m, chord, concentration=1.4221)
    return {"sparse": PathNeed(estimate, p.grid_n, option="--grid-n", low=1400,
                               what=f"the circle_grid tier's sparse heat kernel at --grid-n {p.grid_n}",
                               other="--tiers without circle_grid")}


def _settings(p) -> dict:
    """Size, bandwidth and kernel path of each sampled tier."""
    out = {tier: dict(n=p.grid_n if tier == "circle_grid" else getattr(p, f"{tier}_n"),
                      eps=getattr(p, f"{tier}_eps"), method="streamed")
           for tier in _SAMPLED}
    out["circle_grid"]["method"] = "sparse"
    # R^2 has unbounded support: keep the points with at least 50 neighbours (see measure)
    out["mixture_fna"]["min_degree"] = out["mixture_mild"]["min_degree"] = 50
    return out


def _problem(tier, n, rng, a):
    """Points, the reference pieces ((1/2) Delta f, <grad log p, grad f>) and f values for one tier."""
    if tier == "circle_grid":
        dens = manifolds.VonMises(mu=0.3, kappa=1.0)
        x = dens.quantile_grid(n)
        fs = [manifolds.FourierMode(2, phase=-math.pi / 2), manifolds.FourierMode(1)]
    elif tier == "circle_iid":
        dens = manifolds.VonMises(mu=0.3, kappa=1.0)
        x = dens.sample(n, rng=rng)
        fs = [manifolds.FourierMode(1)]
    elif tier == "sphere_iid":
        dens = manifolds.VonMisesFisher(np.array([0.0, 0.6, 0.8]), kappa=2.0)
        x = dens.sample(n, rng=rng)
        fs = [manifolds.Coordinate(2, manifolds.Sphere(2))]
    elif tier == "mixture_fna":
        dens = manifolds.GaussianMixture.fna_three_modes()
        x = dens.sample(n, rng=rng)
        fs = [manifolds.Coordinate(0, manifolds.Euclidean(2))]
    else:
        dens = manifolds.GaussianMixture([[-1.0, 0.0], [1.0, 0.0]], 0.5)
        x = dens.sample(n, rng=rng)
        fs = [manifolds.Coordinate(0, manifolds.Euclidean(2))]
    vals = np.stack([np.asarray(f(x)) for f in fs], axis=1)
    # the limit (1/2) Delta f + (1 - a) <grad log p, grad f> is affine in a: a = 1 is its Laplacian part
    half_lap = np.stack([np.asarray(manifolds.drift_diffusion(f, dens, x, a=1.0)) for f in fs], axis=1)
    drift = np.stack([np.asarray(manifolds.drift_diffusion(f, dens, x, a=0.0)) for f in fs], axis=1) - half_lap
    truth = np.stack([np.asarray(manifolds.drift_diffusion(f, dens, x, a=a)) for f in fs], axis=1)
    return x, vals, half_lap, drift, truth


def _continuum_remainders(lap_coefs):
    """Quadrature on S^2 at the pole for g = P_2(z): ratio(eps) - g - eps * A (1/2) Delta g and its slope in eps.

    With x the pole, |x - y|^2 = 2 - 2 z, so the kernel ratio is a 1-D integral in z with the uniform
    surface measure (dA = dz dphi). g(pole) = 1, Delta g = -6 g, uniform density (no drift). One
    remainder per Laplacian coefficient A of ``lap_coefs``.
    """
    from scipy.integrate import quad

    eps_grid = np.asarray(CONTINUUM_EPS)
    ratios = []
    for e in eps_grid:
        w = lambda z: math.exp((z - 1.0) / e)
        num = quad(lambda z: w(z) * 0.5 * (3 * z * z - 1), -1, 1, epsabs=0, epsrel=1e-13, points=(1 - 40 * e,))[0]
        den = quad(w, -1, 1, epsabs=0, epsrel=1e-13, points=(1 - 40 * e,))[0]
        ratios.append(num / den)
    slopes, remainders = {}, {}
    for lap_coef in lap_coefs:
        rem = np.asarray([abs(r - 1.0 - e * lap_coef * 0.5 * (-6.0)) for r, e in zip(ratios, eps_grid)])
        slopes[lap_coef], remainders[lap_coef] = fit_power_law(eps_grid, rem).slope, rem
    return slopes, remainders


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """(1/eps)(S^(a) - I) f on each sampled tier against the pieces of the limit; the continuum remainders."""
    xp = ctx.xp
    settings = _settings(p)
    tiers, grid, slopes, remainders = {}, None, None, None
    for tier in p.tiers:
        if tier == "sphere_continuum":
            with ctx.timed(tier):
                slopes, remainders = _continuum_remainders(sorted({lap for lap, _ in CLAIMED.values()}))
            continue
        st = settings[tier]
        with ctx.timed(tier):
            x, vals, half_lap, drift, truth = _problem(tier, st["n"], child_rng(p.seed, tier), p.a)
            # the streamed kernel runs in the device namespace; the sparse one is host-only
            to_device = xp.asarray if st["method"] == "streamed" else np.asarray
            hm = spectral.heat_markov(to_device(x), eps=st["eps"], a=p.a, method=st["method"])
            op = to_numpy(hm.generator(to_device(vals)))
            deg = to_numpy(hm.degrees)
        keep = np.ones(len(x), dtype=bool)
        kept = None
        if "min_degree" in st:
            # R^2 has unbounded support: in the tails N p (2 pi eps) is tiny and the sampling error
            # ~ (N p eps^(d/2))^-1/2 eps^-1/2 dominates. D_ii - 1 (kernel mass of the other points)
            # is the data's own estimate of that neighbour count; keep points with >= min_degree.
            # (a NaN degree is kept: its NaN operator row must reach the fit, not leave with the tails)
            keep = ~(deg - 1.0 < st["min_degree"])
            kept = float(keep.mean())
        opk = op[keep]
        # least-squares coefficients op ~ A (1/2 Delta f) + B <grad log p, grad f>
        lap_identifiable = np.any(np.abs(half_lap[keep]) > 0)
        cols = [half_lap[keep].ravel()] if lap_identifiable else []
        cols.append(drift[keep].ravel())
        coef, *_ = np.linalg.lstsq(np.stack(cols, axis=1), opk.ravel(), rcond=None)
        rms = None
        if "min_degree" not in st:
            rms = {}
            for name, (lap_claim, drift_claim) in CLAIMED.items():
                claimed = lap_claim * half_lap[keep] + drift_claim * ((1.0 - p.a) * drift[keep])
                rms[name] = float(np.sqrt(np.mean((opk - claimed) ** 2)) / np.sqrt(np.mean(claimed**2)))
        tiers[tier] = Tier(laplacian_coef=float(coef[0]) if lap_identifiable else None, drift_coef=float(coef[-1]),
                           relative_rms=rms, kept_fraction=kept)
        if tier == "circle_grid":
            grid = Grid(theta=np.arctan2(x[:, 1], x[:, 0]), operator=op[:, 0], reference=truth[:, 0],
                        half_laplacian=half_lap[:, 0], drift=drift[:, 0],
                        truncation_bound_operator=float(hm.truncation_bound / st["eps"]))
    return Quantities(tiers=tiers, grid=grid, continuum_slope=slopes, continuum_remainder=remainders)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Fitted coefficients and relative RMS per tier against the limit asserted; the continuum slope."""
    asserted = asserted_limit(p)
    lap_claim, drift_claim = CLAIMED[asserted]
    for tier in p.tiers:
        if tier == "sphere_continuum":
            # continuum form of DRIFT-4 (curvature cancels in the ratio): the drift cannot show (uniform density)
            record_rate(rec, "sphere_continuum_remainder_slope", q.continuum_slope[lap_claim], 2.0,
                        atol=CALIBRATION.get("sphere_continuum_remainder_slope", p), x=CONTINUUM_EPS,
                        errors=q.continuum_remainder[lap_claim], asymptote="small",
                        label=f"sphere_continuum: ratio - g - eps A g does not decay like eps^2 ({asserted} limit)")
            continue
        t = q.tiers[tier]
        if t.kept_fraction is not None:
            rec.info(f"{tier}_kept_fraction", t.kept_fraction)
        if t.laplacian_coef is not None:
            name = f"{tier}_laplacian_coef"
            rec.close(name, t.laplacian_coef, lap_claim, atol=_tolerance(name, p),
                      label=f"{tier}: Laplacian coefficient differs from the {asserted} limit")
        name = f"{tier}_drift_coef"
        rec.close(name, t.drift_coef, drift_claim * (1.0 - p.a), atol=_tolerance(name, p),
                  label=f"{tier}: drift coefficient differs from the {asserted} limit")
        if t.relative_rms is not None:
            name = f"{tier}_relative_rms"
            rec.at_most(name, t.relative_rms[asserted], _tolerance(name, p),
                        label=f"{tier}: relative RMS of (1/eps) L f against the {asserted} limit")
        if tier == "circle_grid":
            rec.info("circle_grid_truncation_bound_operator", q.grid.truncation_bound_operator)
    statement = (f"(1/eps)(rownorm(D^-a W D^-a) - I) f -> (1/2)(Delta f + 2(1-a) <grad log p, grad f>) with a = "
                 f"{p.a:g} on {', '.join(p.tiers)} (drift coefficient {2 * (1 - p.a):g})")
    if asserted != "corrected":
        statement = f"[{asserted} limit asserted] " + statement
    return statement


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
