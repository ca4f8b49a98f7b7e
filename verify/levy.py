"""Levy-stable ground truth of the FNA paper: the constant c_{d,alpha}, stable increments, tails, eqs. 12 and 9.

Five claims, each against an independent reference. FNA-1: the singular-integral constant
c_{d,alpha} of eq. (7) applied to a Gaussian equals the Fourier symbol |xi|^alpha (radial quadrature,
d = 1, 2, 3, at x = 0 and at x != 0 in 1-D). FNA-2: Chambers-Mallows-Stuck increments have the
characteristic function exp(-t|u|^alpha), follow scipy.stats.levy_stable (KS) and are
self-similar (L_2t ~ 2^(1/alpha) L_t). FNA-4: x^(1+alpha) p_1(x) -> Gamma(1+alpha) sin(pi alpha/2)/pi
(scipy's pdf), the tail exponent of the samples is alpha (truncated-Pareto MLE in the far tail),
Gaussian tails at alpha = 2. FNA-3: the Poisson kernel as printed in eq. (12) has divergent mass,
the corrected one has mass 1, Fourier transform exp(-t|xi|) and the semigroup property. FNA-5: for
alpha > 2 the "heat kernel" inverse FT of exp(-|xi|^alpha) takes negative values and
(-Delta)^(alpha/2) is non-local (it moves mass outside the support of a bump, matching the
distributional kernel -c_{1,alpha}|x|^-(1+alpha)), so it is neither a heat kernel nor local.

``claim="printed"`` asserts the two printed statements instead: the eq. (12) kernel as printed is a
probability density (FNA-3), and alpha > 2 gives a local generator with a positive heat kernel
(FNA-5); both fail, each on its own records.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import graphs
from manifolds import stable
from manifolds.kernel_spectra import fractional_constant
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.cpu import AVX2, AVX512
from verify.core.memory import PathNeed
from verify.core.params import Int, Real, Reals
from verify.core.progress import progress
from verify.core.reduce import least, worst
from verify.core.result import Recorder

CHECK = Check("levy",
              host_only="one-dimensional work, linear in the samples: Gauss-Legendre sums and SciPy quadratures "
                        "(quad, QAWF), and sorts, scipy.stats KS tests and a tail fit of N <= 1e8 samples",
              printed="the printed statements: the eq. (12) kernel as printed is a probability density (FNA-3) and "
                      "alpha > 2 gives a local generator with a positive heat kernel (FNA-5), which fail")

#: calibrated on the cheapest sample settings: these numbers do not depend on the samples
_NO_SAMPLES = {"alphas": ((2.0,),), "n_samples": (100_000,), "n_ks": (300,)}
_QUADRATURE = ("quadrature-limited: Gauss-Legendre panels against the symbol; a c_(d,alpha) off by 1e-6 relative is "
               "caught")
_TAIL = ("truncated-Pareto MLE between tail probabilities 3e-3 and 1e-5; the error grows with alpha (the second-order "
         "tail term), so each alpha takes the row of the next calibrated alpha above it")
_PDF_TAIL = ("against the two-term tail series: largest at alpha = 0.5 (the third term); a one-term 2 % test fails for "
             "alpha < 1 (0.9752 at 0.7)")
_PDF_TAIL_GRID = {"alphas": ((0.5, 0.7, 1.0, 1.2, 1.5, 1.8, 1.95),), "n_samples": (100_000,), "n_ks": (300,)}

#: The measured tolerances (the others are sampling theory or quadrature floors next to their assertion).
CALIBRATION = Calibration(
    Tolerance("c_dalpha_rel_err_origin", 1e-7, measured=1.22e-15, over=_NO_SAMPLES,
              why=_QUADRATURE + " (at x = 0, d = 1, 2, 3)"),
    Tolerance("c_1alpha_rel_err_x", 1e-7, measured=4.2e-16, over=_NO_SAMPLES, why=_QUADRATURE + " (1-D, x != 0)"),
    Tolerance("tail_exponent_a1.2", 0.05, measured=0.0171, over={"seed": (0, 1, 2, 3)}, why=_TAIL + " (alpha <= 1.2)"),
    Tolerance("tail_exponent_a1.5", 0.1, measured=0.0113, over={"seed": (0, 1, 2, 3)}, why=_TAIL + " (alpha <= 1.5)"),
    Tolerance("tail_exponent_a1.8", 0.2, measured=0.0668, over={"seed": (0, 1, 2, 3)}, why=_TAIL + " (alpha < 2)"),
    *(Tolerance(f"pdf_tail_ratio_x100_a{a:g}", 0.005, measured=m, over=_PDF_TAIL_GRID, why=_PDF_TAIL)
      for a, m in ((0.5, 2.5e-3), (0.7, 9.8e-5), (1.0, 1.0e-4), (1.2, 2.0e-5), (1.5, 6.6e-6), (1.8, 4.0e-6),
                   (1.95, 2.2e-6))),
    Tolerance("poisson_corrected_mass_err", 1e-8, measured=2e-16, over=_NO_SAMPLES,
              why="adaptive quadrature at epsrel 1e-12; the printed kernel's mass is > 2"),
    Tolerance("poisson_corrected_ft_err", 1e-6, measured=2e-16, over=_NO_SAMPLES,
              why="QAWF Fourier quadrature (epsabs 1e-13)"),
    Tolerance("poisson_corrected_semigroup_err", 1e-6, measured=2e-16, over=_NO_SAMPLES,
              why="quadrature convolution at epsrel 1e-12"),
    Tolerance("poisson_printed_mass_growth_1e4_to_1e8", 1.1, setting={"claim": "corrected"}, measured=1.93,
              over=_NO_SAMPLES,
              why="divergent mass grows between radii 1e4 and 1e8 (d = 1 logarithmically); a normalisable kernel's "
                  "mass would change by < 1e-3 there"),
    *(Tolerance(f"outside_support_rel_err_a{a:g}", 1e-4, measured=m, over=_NO_SAMPLES, cpu=(AVX512, AVX2),
                why="FFT (2^16 points on [-32, 32)) against the periodised kernel by 200-point Gauss-Legendre; the "
                    "FFT's round-off floor is about eps xi_max^alpha relative (0.05-3x it measured on both classes: "
                    "AVX2 gives up to 10x the AVX-512 value); above alpha = 3 the floor itself sets the tolerance "
                    "(FFT_FLOOR_FACTOR)")
      for a, m in ((2.2, 3.2e-8), (2.5, 1.7e-7), (3.0, 6.9e-6))),
)
#: The multiplier |xi|^alpha of the FFT reaches xi_max = pi 2^16 / 64; its round-off, eps xi_max^alpha relative to the
#: value at x = 3, was measured at 0.05-1.9x (AVX-512) and 0.9-5x (AVX2) for alpha in [2.05, 3.9]: the tolerance of
#: outside_support_rel_err is at least 30x that floor (1e-4 up to alpha = 2.9, 2.2e-4 at 3, 0.32 at 3.9, where a local
#: operator still gives 1).
FFT_FLOOR_FACTOR = 30.0
_FFT_XI_MAX = math.pi * 2**16 / 64.0


@CHECK.parameters
class Params:
    alphas: tuple = Reals((1.2, 1.5, 1.8, 2.0), "Stable indices alpha of the increments and tails (FNA eqs. 8, 10, 26)",
                          low=0.5, high=2.0)
    const_alphas: tuple = Reals((0.5, 1.0, 1.2, 1.5, 1.8), "Orders alpha for the constant c_{d,alpha} (FNA eq. 7)",
                                low=0, high=2, low_open=True, high_open=True)
    high_alphas: tuple = Reals((2.2, 2.5, 3.0), "Orders alpha claimed 'local' (FNA text after eq. 7, eq. 9); at most "
                               "3.9 (toward 4 the kernel's constant vanishes and the FFT's round-off, eps "
                               "xi_max^alpha, reaches its value)",
                               low=2, high=3.9, low_open=True)
    n_samples: int = Int(4_000_000, "Stable increments per alpha (Chambers-Mallows-Stuck)", low=100_000, high=10**8,
                         unit="samples")
    n_ks: int = Int(1500, "Subsample size for the KS test against scipy.stats.levy_stable (its cdf is slow); at most "
                    "n_samples / 3", low=100, high=100_000, unit="samples")
    t: float = Real(0.5, "Time of the increments: scale t^(1/alpha) (FNA eq. 26)", low=0, high=100, low_open=True)
    constant_scale: float = Real(1.0, "Factor applied to c_{d,alpha} before the comparison (1 = eq. 7; any other value "
                                 "is a negative control)", low=0, high=10, low_open=True)
    sampler_alpha_shift: float = Real(0.0, "Draw increments with alpha + shift while claiming alpha (a negative "
                                      "control; 0 = honest)", low=-0.5, high=0.5)

    def resolve(self):
        """The rules between parameters: the KS subsample and the shifted sampler's index."""
        if self.n_ks > self.n_samples // 3:
            raise InputError(f"n_ks must be <= n_samples/3 = {self.n_samples // 3}, got {self.n_ks}")
        for a in self.alphas:
            if not 0 < a + self.sampler_alpha_shift <= 2:
                raise InputError(f"sampler_alpha_shift must keep alpha + shift in (0, 2], got {a} + "
                                 f"{self.sampler_alpha_shift}")
        return self


@dataclasses.dataclass(frozen=True)
class Increments:
    """The Chambers-Mallows-Stuck increments of one alpha (FNA-2, FNA-4) and the Fig. 1 data drawn from them."""

    #: max over u in {0.1, 0.3, 1, 2, 3} of |empirical char. function - exp(-t|u|^alpha)|
    ecf_max_err: float
    #: KS p-value of the first n_ks samples against scipy.stats.levy_stable(alpha, 0, t^(1/alpha))
    ks_pvalue: float
    #: two-sample KS p-value of L_2t (sum of two thirds) against 2^(1/alpha) L_t (the last third)
    selfsim_pvalue: float
    #: truncated-Pareto MLE of the tail exponent of |X| / t^(1/alpha) between tail probabilities 3e-3 and 1e-5
    tail_exponent: float
    #: samples in that window
    tail_count: int
    #: sample variance (alpha = 2 only: 2t expected), None for alpha < 2
    variance: float | None
    #: Fig. 1: |X| / t^(1/alpha) at 400 log-spaced ranks (decreasing) and their tail probabilities
    ccdf_x: np.ndarray
    ccdf_p: np.ndarray
    #: Fig. 1: a 2-D flight of 2000 isotropic steps (radius |X| / t^(1/alpha), uniform angle), (2000, 2)
    path: np.ndarray


@dataclasses.dataclass(frozen=True)
class TailLaw:
    """scipy's pdf of record against the tail law of one alpha < 2 (FNA-4 a, b)."""

    #: x^(1+alpha) p_1(x) / (Gamma(1+alpha) sin(pi alpha/2)/pi) at x = 100
    pdf_tail_ratio_x100: float
    #: min and max of p_1(x)(1+x)^(1+alpha) on x in [1e-3, 1e3]
    bound_ratio_min: float
    bound_ratio_max: float


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What levy measures: the constant, the increments per alpha, the tail law, the Poisson kernel, alpha > 2."""

    #: FNA-1: max |singular integral / symbol - 1| at x = 0 over d = 1, 2, 3 and const_alphas
    c_dalpha_rel_err_origin: float
    #: FNA-1: max |singular integral - symbol| / |symbol(0)| in 1-D at x = 0.5, 1, 2
    c_1alpha_rel_err_x: float
    #: FNA-2 / FNA-4: the increments of each alpha
    increments: dict[float, Increments]
    #: FNA-4: the density's tail law of each alpha < 2
    tail_law: dict[float, TailLaw]
    #: FNA-3: max |mass - 1| of the corrected Poisson kernel (d = 1, 2, 3, t = 0.7)
    poisson_corrected_mass_err: float
    #: FNA-3: max |FT of the 1-D kernel - exp(-t|xi|)| and max relative |k_s * k_t - k_(s+t)|
    poisson_corrected_ft_err: float
    poisson_corrected_semigroup_err: float
    #: FNA-3: min over d of the printed kernel's mass on |x| <= 1e8, and of its growth from radius 1e4 to 1e8
    poisson_printed_mass: float
    poisson_printed_mass_growth: float
    #: FNA-5: min over x in [0, 12] of the inverse FT of exp(-|xi|^alpha), alpha in (1.5, 2) + high_alphas
    kernel_min: dict[float, float]
    #: FNA-5: (-Delta)^(alpha/2) of a bump at x = 3, outside its support (alpha = 2 and high_alphas)
    outside_support: dict[float, float]
    #: FNA-5: its relative difference from the kernel -c_(1,alpha)|x|^-(1+alpha) (high_alphas)
    outside_support_rel_err: dict[float, float]


_TAIL_WINDOW = (3e-3, 1e-5)  # tail probabilities bounding the exponent fit (~12000 samples at N = 4e6)
_PATH_STEPS = 2000  # steps of the 2-D flight stored for FNA Fig. 1


# ------------------------------------------------------------------------------------------ FNA-1


_R0 = 1e-14


def _half_line_rule(tail_start: float = 12.0):
    """Gauss-Legendre nodes/weights on [R0, tail_start], R0 = 1e-14: geometric panels to 1, then width 1/4.

    Callers add the integral over (0, R0) from the leading small-r term in closed form.
    """
    edges = np.concatenate([np.geomspace(_R0, 1.0, 70), np.arange(1.25, tail_start + 1e-12, 0.25)])
    return stable.gauss_legendre_panels(edges, order=20)


def _singular_integral_origin(d: int, alpha: float, c: float) -> float:
    """``c p.v. int (u(0) - u(y)) |y|^-(d+alpha) dy`` for ``u = exp(-|x|^2/2)`` (radial quadrature).

    Composite Gauss-Legendre on (0, 12] plus the tail ``int_12^inf r^-(1+alpha) dr`` in closed form
    (``exp(-72)`` is below double precision).
    """
    r, w = _half_line_rule()
    sphere = 2 * math.pi ** (d / 2) / math.gamma(d / 2)
    head = _R0 ** (2 - alpha) / (2 * (2 - alpha))  # int_0^R0 (r^2/2) r^-(1+alpha) dr
    val = head + float(np.sum(w * -np.expm1(-r * r / 2) * r ** (-1 - alpha))) + 12.0 ** (-alpha) / alpha
    return c * sphere * val


def _symbol_origin(d: int, alpha: float) -> float:
    """``(2 pi)^-d int |xi|^alpha u_hat(xi) d xi`` with ``u_hat = (2 pi)^(d/2) exp(-|xi|^2/2)``."""
    r, w = _half_line_rule(40.0)
    sphere = 2 * math.pi ** (d / 2) / math.gamma(d / 2)
    val = float(np.sum(w * r ** (alpha + d - 1) * np.exp(-r * r / 2)))
    return (2 * math.pi) ** (-d / 2) * sphere * val


def _singular_integral_1d(x: float, alpha: float, c: float) -> float:
    """1-D ``c int_0^inf (2u(x) - u(x+z) - u(x-z)) z^-(1+alpha) dz``, ``u = exp(-x^2/2)``.

    The second difference is ``2 u(x) (1 - exp(-z^2/2) cosh(x z))``, evaluated without cancellation
    as ``-2 u(x) expm1(-z^2/2 + log1p(2 sinh(x z / 2)^2))``; Gauss-Legendre on (0, 12 + |x|] and
    the closed-form tail ``2 u(x) int z^-(1+alpha)`` beyond (the Gaussians are < exp(-72) there).
    """
    top = 12.0 + abs(x)
    z, w = _half_line_rule(top)
    ux = math.exp(-x * x / 2)
    diff = -2 * ux * np.expm1(-z * z / 2 + np.log1p(2 * np.sinh(x * z / 2) ** 2))
    head = ux * (1 - x * x) * _R0 ** (2 - alpha) / (2 - alpha)  # diff ~ u(x)(1 - x^2) z^2 on (0, R0)
    val = head + float(np.sum(w * diff * z ** (-1 - alpha))) + 2 * ux * top ** (-alpha) / alpha
    return c * val


def _symbol_1d(x: float, alpha: float) -> float:
    """``(1/pi) int_0^inf xi^alpha sqrt(2 pi) exp(-xi^2/2) cos(xi x) d xi`` (Gauss-Legendre to 40)."""
    r, w = _half_line_rule(40.0)
    return float(np.sum(w * r**alpha * math.sqrt(2 * math.pi) * np.exp(-r * r / 2) * np.cos(r * x))) / math.pi


# ------------------------------------------------------------------------------------------ FNA-3


def _poisson_mass(d: int, t: float, *, printed: bool, radius: float = math.inf) -> float:
    """Mass of the eq. (12) Poisson kernel on the ball of ``radius`` (radial quadrature)."""
    from scipy.integrate import quad

    ct = math.gamma((d + 1) / 2) / math.pi ** ((d + 1) / 2)
    sphere = 2 * math.pi ** (d / 2) / math.gamma(d / 2)
    if printed:
        f = lambda r: r ** (d - 1) * (1 + r / t**2) ** (-(d + 1) / 2)  # noqa: E731
    else:
        f = lambda r: r ** (d - 1) * (1 + r * r / t**2) ** (-(d + 1) / 2)  # noqa: E731
    edges = [0.0, t, 10 * t, 100 * t]
    edges = [e for e in edges if e < radius] + [radius]
    total = sum(quad(f, a, b, epsabs=0, epsrel=1e-12, limit=400)[0] for a, b in zip(edges[:-1], edges[1:]))
    return ct * t ** (-d) * sphere * total


def _cauchy(x, t):
    return t / (math.pi * (t * t + x * x))


def _poisson_ft_error(t: float, xis) -> float:
    """max |int k_t(x) cos(xi x) dx - exp(-t|xi|)| in 1-D (QAWF Fourier quadrature)."""
    from scipy.integrate import quad

    err = 0.0
    for xi in xis:
        val = 2 * quad(lambda x: _cauchy(x, t), 0, np.inf, weight="cos", wvar=xi, epsabs=1e-13)[0]
        err = worst(err, abs(val - math.exp(-t * xi)))
    return err


def _poisson_semigroup_error(s: float, t: float, xs) -> float:
    """max relative |(k_s * k_t)(x) - k_{s+t}(x)| in 1-D (quadrature convolution)."""
    from scipy.integrate import quad

    err = 0.0
    for x in xs:
        f = lambda y: _cauchy(y, s) * _cauchy(x - y, t)  # noqa: E731
        pts = sorted({0.0, float(x)})
        val = quad(f, -np.inf, pts[0], epsabs=0, epsrel=1e-12, limit=400)[0]
        for a, b in zip(pts[:-1], pts[1:]):
            val += quad(f, a, b, epsabs=0, epsrel=1e-12, limit=400)[0]
        val += quad(f, pts[-1], np.inf, epsabs=0, epsrel=1e-12, limit=400)[0]
        ref = _cauchy(x, s + t)
        err = worst(err, abs(val / ref - 1))
    return err


# ------------------------------------------------------------------------------------------ FNA-5


def _bump_operator(alpha: float, *, box: float = 32.0, n: int = 2**16, at: float = 3.0):
    """(-Delta)^(alpha/2) of the bump exp(-1/(1-x^2)) by FFT on [-box, box); value at ``at``,
    and the reference ``-c_{1,alpha} int u(y) sum_m |at - y + 2 box m|^-(1+alpha) dy``
    (the periodised distributional kernel; image sums by the Hurwitz zeta function)."""
    from scipy.special import zeta

    x = -box + 2 * box * np.arange(n) / n
    u = np.zeros(n)
    inside = np.abs(x) < 1
    u[inside] = np.exp(-1 / (1 - x[inside] ** 2))
    xi = 2 * np.pi * np.fft.fftfreq(n, d=2 * box / n)
    out = np.fft.ifft(np.abs(xi) ** alpha * np.fft.fft(u)).real
    i = int(np.argmin(np.abs(x - at)))
    y, w = np.polynomial.legendre.leggauss(200)
    dist = x[i] - y
    period = 2 * box
    kern = dist ** (-1 - alpha) + period ** (-1 - alpha) * (zeta(1 + alpha, 1 + dist / period) + zeta(1 + alpha, 1 - dist / period))
    ref = -stable.density_tail_constant(alpha) * float(np.sum(w * np.exp(-1 / (1 - y**2)) * kern))
    return float(out[i]), ref


# ------------------------------------------------------------------------------------------ measure


@CHECK.memory
def needs(p: Params) -> dict:
    """The Chambers-Mallows-Stuck samples and their temporaries (sorted copy, empirical characteristic function).

    tracemalloc peaks 189.4 / 352.1 MiB at n_samples 4e6 / 8e6 fit 26 MiB + 40.7 bytes per sample; 48 bytes leave
    a margin (1e8 samples: 4.5 GiB).
    """
    return {"dense": PathNeed(lambda m: (32 << 20) + 48 * m, p.n_samples, "--n-samples", 100_000,
                              f"the stable samples at --n-samples {p.n_samples}")}


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """The constant c_{d,alpha}, stable increments and tails, the eq. (12) Poisson kernel and alpha > 2."""
    with ctx.timed("fna1_constant"):
        worst0, worst1 = _constant(p.const_alphas, p.constant_scale)
    increments = _increments(p, ctx)
    with ctx.timed("fna4_density"):
        tail_law = {a: _tail_law(a) for a in p.alphas if a < 2}
    with ctx.timed("fna3_poisson"):
        poisson = _poisson()
    with ctx.timed("fna5_locality"):
        grid = np.linspace(0, 12, 2401)
        mins = {a: float(np.min(stable.pdf_quadrature(grid, a))) for a in (1.5, 2.0) + p.high_alphas}
        values, errors = {}, {}
        for a in (2.0,) + p.high_alphas:
            val, ref = _bump_operator(a)
            values[a] = val
            if a != 2.0:
                errors[a] = abs(val - ref) / worst(abs(ref), 1e-300)
    return Quantities(c_dalpha_rel_err_origin=worst0, c_1alpha_rel_err_x=worst1, increments=increments,
                      tail_law=tail_law, **poisson, kernel_min=mins, outside_support=values,
                      outside_support_rel_err=errors)


def _poisson(t_p: float = 0.7) -> dict:
    """FNA-3: the corrected kernel's mass, Fourier transform and semigroup errors; the printed kernel's mass."""
    return dict(
        poisson_corrected_mass_err=worst(abs(_poisson_mass(d, t_p, printed=False) - 1) for d in (1, 2, 3)),
        poisson_printed_mass_growth=least(_poisson_mass(d, t_p, printed=True, radius=1e8)
                                          / _poisson_mass(d, t_p, printed=True, radius=1e4) for d in (1, 2, 3)),
        poisson_printed_mass=least(_poisson_mass(d, t_p, printed=True, radius=1e8) for d in (1, 2, 3)),
        poisson_corrected_ft_err=_poisson_ft_error(t_p, (0.1, 0.5, 1.0, 2.0, 5.0)),
        poisson_corrected_semigroup_err=_poisson_semigroup_error(0.3, t_p, (0.0, 0.5, 2.0, 10.0)))


def _constant(const_alphas, constant_scale) -> tuple[float, float]:
    """FNA-1: c_{d,alpha} (times ``constant_scale``) in the singular integral against the symbol on a Gaussian."""
    worst0 = 0.0
    for d in (1, 2, 3):
        for a in const_alphas:
            c = constant_scale * fractional_constant(d, a)
            lhs, rhs = _singular_integral_origin(d, a, c), _symbol_origin(d, a)
            worst0 = worst(worst0, abs(lhs / rhs - 1))
    worst1 = 0.0
    for a in const_alphas:
        c = constant_scale * fractional_constant(1, a)
        scale0 = abs(_symbol_1d(0.0, a))
        for x in (0.5, 1.0, 2.0):
            worst1 = worst(worst1, abs(_singular_integral_1d(x, a, c) - _symbol_1d(x, a)) / scale0)
    return worst0, worst1


def _increments(p: Params, ctx: Context) -> dict[float, Increments]:
    """FNA-2 / FNA-4: increments of each alpha from its own child stream, their statistics and the Fig. 1 data."""
    from scipy import stats

    u_grid = np.array([0.1, 0.3, 1.0, 2.0, 3.0])
    n_samples, t = p.n_samples, p.t
    out = {}
    # progress on stderr per alpha: 1e8 samples take minutes (silenced by --quiet)
    for a in progress(p.alphas, desc="levy increments", label=lambda a: f"alpha={a:g}"):
        scale = t ** (1 / a)
        rng = child_rng(p.seed, "increments", a)
        with ctx.timed("fna2_sampling"):
            x = stable.cms_sample(a + p.sampler_alpha_shift, n_samples, scale=scale, rng=rng)
        with ctx.timed("fna2_ecf"):
            ecf = np.array([np.mean(np.cos(u * x)) for u in u_grid])
            ecf_err = float(np.max(np.abs(ecf - np.exp(-t * u_grid**a))))
        with ctx.timed("fna2_ks"):
            ks = stats.kstest(x[:p.n_ks], lambda v: stats.levy_stable.cdf(v, a, 0.0, scale=scale))
            third = n_samples // 3
            two_t = x[:third] + x[third:2 * third]
            self_sim = stats.ks_2samp(two_t, 2 ** (1 / a) * x[2 * third:3 * third])
        with ctx.timed("fna4_tail"):
            z = np.abs(x) / scale  # unit-scale magnitudes
            lo, hi = np.quantile(z, [1 - _TAIL_WINDOW[0], 1 - _TAIL_WINDOW[1]])
            fit = graphs.tail_exponent(z, r_min=float(lo), r_max=float(hi), method="truncated-pareto")
        variance = float(np.var(x)) if a >= 2 else None
        # Fig. 1 data: empirical CCDF of |X| (unit scale) at 400 log-spaced ranks, and a 2-D flight of
        # _PATH_STEPS isotropic steps (radius |X|, uniform angle) from the same stream.
        zs = np.sort(z)[::-1]
        keep = np.unique(np.geomspace(1, n_samples, 400).astype(int)) - 1
        angle = rng.uniform(0, 2 * math.pi, _PATH_STEPS)
        steps = z[:_PATH_STEPS, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1)
        out[a] = Increments(ecf_max_err=ecf_err, ks_pvalue=float(ks.pvalue), selfsim_pvalue=float(self_sim.pvalue),
                            tail_exponent=float(fit.alpha), tail_count=int(fit.count), variance=variance,
                            ccdf_x=zs[keep], ccdf_p=(keep + 1) / n_samples, path=np.cumsum(steps, axis=0))
        del x, z, zs
    return out


def _tail_law(a: float) -> TailLaw:
    """FNA-4 (a), (b): the density tail constant and the two-sided power-law bound with scipy's pdf of record."""
    from scipy import stats

    c1 = stable.density_tail_constant(a)
    ratio100 = float(stats.levy_stable.pdf(100.0, a, 0.0)) * 100.0 ** (1 + a) / c1
    grid = np.geomspace(1e-3, 1e3, 61)
    bound = stable.stable_pdf(grid, a) * (1 + grid) ** (1 + a)
    return TailLaw(pdf_tail_ratio_x100=ratio100, bound_ratio_min=float(bound.min()), bound_ratio_max=float(bound.max()))


# ------------------------------------------------------------------------------------------ assess


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """FNA-1..5 on the measured quantities (the printed FNA-3 and FNA-5 statements with claim="printed")."""
    printed = p.claim == "printed"
    rec.at_most("c_dalpha_rel_err_origin", q.c_dalpha_rel_err_origin, CALIBRATION.get("c_dalpha_rel_err_origin", p),
                label="FNA-1: singular integral with c_(d,alpha) differs from the symbol |xi|^alpha at x = 0 "
                      "(d = 1, 2, 3)")
    rec.at_most("c_1alpha_rel_err_x", q.c_1alpha_rel_err_x, CALIBRATION.get("c_1alpha_rel_err_x", p),
                label="FNA-1: 1-D singular integral differs from the symbol |xi|^alpha at x != 0")

    n_samples, t = p.n_samples, p.t
    p_floor = 0.01 / (2 * len(p.alphas))  # KS: Bonferroni over 2 tests x len(alphas), family-wise level 0.01
    for a in p.alphas:
        tag = f"{a:g}"
        inc = q.increments[a]
        rec.at_most(f"ecf_max_err_a{tag}", inc.ecf_max_err, 4 / math.sqrt(n_samples),
                    why="4/sqrt(N): Var cos(uX) <= 1/2, so this is >= 5.6 sd of the empirical mean",
                    label=f"FNA-2: empirical characteristic function differs from exp(-t|u|^{tag})")
        ks_why = "KS at family-wise level 0.01, Bonferroni over 2 tests per alpha"
        rec.at_least(f"ks_pvalue_a{tag}", inc.ks_pvalue, p_floor, why=ks_why,
                     label=f"FNA-2: KS test against levy_stable({tag}, 0, scale t^(1/alpha)) rejects")
        rec.at_least(f"selfsim_pvalue_a{tag}", inc.selfsim_pvalue, p_floor, why=ks_why,
                     label="FNA-2: L_2t and 2^(1/alpha) L_t differ in law (two-sample KS)")
        if a < 2:
            stated = CALIBRATION.borrow(f"tail_exponent_a{a:g}", p, "tail_exponent_a", at=a)  # FNA-4 (c)
            four_sd = round(4 * a / math.sqrt(max(inc.tail_count, 1)), 3)
            rec.close(f"tail_exponent_a{tag}", inc.tail_exponent, a,
                      atol=stated if stated.value >= four_sd else four_sd,
                      why="" if stated.value >= four_sd else
                      "4 sd = 4 alpha/sqrt(m) of the truncated-Pareto MLE: the window holds few samples m (the "
                      f"calibrated {stated.value:g} at N = 4e6, where 4 sd is 0.044-0.066)",
                      label=f"FNA-4: tail exponent of the alpha = {tag} increments (MLE on m = {inc.tail_count} "
                            "samples)")
        else:
            rec.at_least(f"tail_exponent_a{tag}", inc.tail_exponent, 4.0,
                         why="Gaussian: local exponent 8.5-12.8 in the same window (seeds 0-3); a power law here has "
                             "exponent <= 2, so > 4 (twice the largest stable index) separates them",
                         label="FNA-4: alpha = 2 increments should have Gaussian tails")
            rec.close("variance_a2", inc.variance, 2 * t, atol=6 * 2 * t * math.sqrt(2 / n_samples),
                      why="6 sd of the sample variance of N(0, 2t): relative sd sqrt(2/N) (7e-4 at N = 4e6)",
                      label="FNA-2: alpha = 2 increments have variance 2t")

    for a in (a for a in p.alphas if a < 2):
        tag = f"{a:g}"
        law = q.tail_law[a]
        # two-term tail series: relative correction c2 x^-alpha, c2 = a_2 / a_1 of manifolds.stable.series_terms
        c2 = -math.gamma(2 * a + 1) * math.sin(math.pi * a) / (2 * math.gamma(a + 1) * math.sin(math.pi * a / 2))
        rec.close(f"pdf_tail_ratio_x100_a{tag}", law.pdf_tail_ratio_x100, 1.0 + c2 * 100.0 ** (-a),
                  atol=CALIBRATION.borrow(f"pdf_tail_ratio_x100_a{a:g}", p, "pdf_tail_ratio_x100_a", at=a),
                  label=f"FNA-4: x^(1+alpha) p_1(x) / (Gamma(1+alpha) sin(pi alpha/2)/pi) at x = 100, alpha = {tag}")
        # FNA-4 (a), the two-sided bound p_1(x) ~ (1 + x)^-(1+alpha), is shown, not asserted: on a finite grid
        # "bounded away from 0 and from infinity" holds for every positive finite number, so it could decide
        # nothing. The bound follows from what is asserted: p_1 is positive and continuous with the limits
        # p_1(0) at 0 and the tail constant (pdf_tail_ratio_x100, tail_exponent) at infinity.
        rec.info(f"bound_ratio_min_a{tag}", law.bound_ratio_min)
        rec.info(f"bound_ratio_max_a{tag}", law.bound_ratio_max)

    poisson = "FNA-3: corrected Poisson kernel c_d t / (t^2 + |x|^2)^((d+1)/2)"
    rec.at_most("poisson_corrected_mass_err", q.poisson_corrected_mass_err,
                CALIBRATION.get("poisson_corrected_mass_err", p), label=f"{poisson}: mass != 1 (d = 1, 2, 3)")
    rec.at_most("poisson_corrected_ft_err", q.poisson_corrected_ft_err, CALIBRATION.get("poisson_corrected_ft_err", p),
                label=f"{poisson}: FT != exp(-t|xi|)")
    rec.at_most("poisson_corrected_semigroup_err", q.poisson_corrected_semigroup_err,
                CALIBRATION.get("poisson_corrected_semigroup_err", p), label=f"{poisson}: k_s * k_t != k_(s+t)")
    if printed:
        rec.close("poisson_printed_mass_R1e8", q.poisson_printed_mass, 1.0, atol=1e-8,
                  why="a probability density has mass 1 (the corrected kernel's mass is 1 to 2e-16)",
                  label="FNA-3 as printed: c_d t^-d (1 + |x|/t^2)^-(d+1)/2 is not a probability density")
        rec.at_most("poisson_printed_mass_growth_1e4_to_1e8", q.poisson_printed_mass_growth, 1 + 1e-8,
                    why="a normalisable kernel's mass stops growing beyond |x| = 1e4",
                    label="FNA-3 as printed: the kernel's mass diverges")
    else:
        rec.info("poisson_printed_mass_R1e8", q.poisson_printed_mass)
        rec.at_least("poisson_printed_mass_growth_1e4_to_1e8", q.poisson_printed_mass_growth,
                     CALIBRATION.get("poisson_printed_mass_growth_1e4_to_1e8", p),
                     label="FNA-3: the printed kernel's mass should diverge")

    # the inverse-FT quadrature is accurate to ~1e-15 absolute: a minimum below -1e-10 is real
    neg_floor = 1e-10
    neg_why = "inverse-FT quadrature accurate to ~1e-15 absolute (agrees with scipy's pdf to 1e-12 for alpha <= 2)"
    # FFT (2^16 points on [-32, 32)) of the bump: alpha = 2 gives 4.5e-12 at x = 3 (round-off); alpha > 2 gives
    # 3.6e-3..1.3e-2
    local_floor = 1e-9
    local_why = "FFT round-off: the Laplacian (alpha = 2) gives 4.5e-12 outside the support; alpha > 2 gives >= 3.6e-3"
    for a in (1.5, 2.0):
        rec.at_least(f"kernel_min_a{a:g}", q.kernel_min[a], -neg_floor, why=neg_why,
                     label="FNA-5 control: stable kernels for alpha <= 2 must be positive")
    for a in p.high_alphas:
        if printed:
            rec.at_least(f"kernel_min_a{a:g}", q.kernel_min[a], -neg_floor, why=neg_why,
                         label=f"FNA-5 as printed: the 'heat kernel' of (-Delta)^({a:g}/2) takes negative values")
        else:
            rec.at_most(f"kernel_min_a{a:g}", q.kernel_min[a], -neg_floor, why=neg_why,
                        label=f"FNA-5: inverse FT of exp(-|xi|^{a:g}) should take negative values")
    rec.within("outside_support_a2", q.outside_support[2.0], (-local_floor, local_floor), why=local_why,
               label="FNA-5 control: alpha = 2 (the Laplacian) should be local")
    for a in p.high_alphas:
        if printed:
            rec.within(f"outside_support_a{a:g}", q.outside_support[a], (-local_floor, local_floor), why=local_why,
                       label=f"FNA-5 as printed: (-Delta)^({a:g}/2) moves mass outside the support (at x = 3)")
        else:
            # the kernel -c_(1,alpha)|x|^-(1+alpha) is positive for alpha in (2, 4) (c_(1,alpha) < 0 there)
            rec.at_least(f"outside_support_a{a:g}", q.outside_support[a], local_floor, why=local_why,
                         label=f"FNA-5: (-Delta)^({a:g}/2) should be non-local (value at x = 3)")
        row = CALIBRATION.borrow(f"outside_support_rel_err_a{a:g}", p, "outside_support_rel_err_a", at=a)
        floor = FFT_FLOOR_FACTOR * np.finfo(float).eps * _FFT_XI_MAX ** a
        if floor > row.value:  # the FFT cannot do better: the round-off floor decides
            row = dataclasses.replace(row, value=floor, measured=None, over=(),
                                      why=f"{FFT_FLOOR_FACTOR:g} eps xi_max^alpha, the FFT's round-off floor at alpha "
                                          f"= {a:g} (above the calibrated 1e-4)")
        rec.at_most(f"outside_support_rel_err_a{a:g}", q.outside_support_rel_err[a], row,
                    label=f"FNA-5: (-Delta)^({a:g}/2) outside the support differs from the kernel "
                          f"-c_(1,alpha)|x|^-(1+alpha)")

    if printed:
        return ("(printed claims) the eq. (12) kernel c_d t^-d (1 + |x-y|/t^2)^-(d+1)/2 is a probability density, "
                "and for alpha > 2 (-Delta)^(alpha/2) is local with a positive heat kernel; c_{d,alpha}, increments "
                "and tails as in the corrected claim")
    return ("c_{d,alpha} of eq. (7) matches the symbol |xi|^alpha; CMS increments are S(alpha, 0, t^(1/alpha)) "
            "with tail exponent alpha and tail constant Gamma(1+alpha) sin(pi alpha/2)/pi; the corrected eq. (12) "
            "Poisson kernel is a semigroup of densities (the printed one is not normalisable); for alpha > 2 "
            "exp(-|xi|^alpha) is not a positive kernel and the operator is non-local")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
