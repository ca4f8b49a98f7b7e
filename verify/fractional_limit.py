"""FNA Theorem 2 with a density: (A f - f)/t -> -(1/M0) [L(f rho) - f L(rho)] / rho on S^1 (FNA-12).

Points on S^1 at the quantiles of a non-uniform density rho (1 + 0.5 cos x and von Mises), scores
Phi(d/s) = (1 + d/s)^-(1+alpha) of the geodesic distance, A = N_R(C), t = s^alpha, f = cos(k x).
The discrete (A f - f)/t on a subset of query rows (each row uses every point as a key, diagonal
included: on the quantile grid the self term is the midpoint-rule weight of the kernel core) is
compared with the exact limit: L the geodesic Fourier multiplier m(k) = int_{-pi}^{pi}
(1 - cos k y)|y|^-(1+alpha) dy, M0 = int Phi = 2/alpha, applied to the Fourier series of f rho and
rho (FFT, :func:`manifolds.theorem2_operator`) and evaluated at the points. Reported: relative L2
error, the fitted constant (times M0) and its sign, the split into discretisation (against the
exact finite-s operator, :func:`manifolds.operators.attention_increment`) and finite-s bias
(FNA-13), and the effect of dropping the diagonal.

``claim`` selects the limit asserted: "corrected" (the above), "printed" (eq. 18 as printed: +[.]/rho
with the spectral symbol |k|^alpha and no constant), and three wrong readings as negative controls:
"no-density" (-(1/M0) L f), "wrong-sign" and "spectral" (periodised |k|^alpha with
c = 1/(M0 c_{1,alpha})); each fails at the default setting. I.i.d. points: compared with the exact
finite-s operator (their unbiased target), diagonal dropped, and with the diagonal kept to show its
1/D bias.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import manifolds
import spectral
from manifolds import kernel_spectra
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.memory import PathNeed
from verify.core.params import Int, Options, Real
from verify.core.result import Recorder

#: claim -> the limit operator it asserts (names used in the record names ``rel_l2_vs_<operator>_*``)
OPERATORS = {"corrected": "theorem2", "printed": "eq18", "no-density": "no-density", "wrong-sign": "wrong-sign",
             "spectral": "spectral"}

CHECK = Check("fractional_limit", devices=("cpu", "gpu"),
              printed="eq. (18) as printed: +[L(f rho) - f L rho]/rho with the spectral symbol |k|^alpha and no "
                      "constant, which fails",
              claim_modes=tuple(OPERATORS),
              claim_doc='The limit asserted: "corrected" -(1/M0)[L(f rho) - f L rho]/rho with the geodesic '
                        'multiplier; "printed" eq. (18) as printed (+[.]/rho, spectral symbol |k|^alpha, no '
                        'constant); the others are wrong readings (negative controls): "no-density" -(1/M0) L f, '
                        '"wrong-sign" the corrected limit with + sign, "spectral" the periodised |k|^alpha with '
                        "c = 1/(M0 c_{1,alpha})")

# The limit's tolerance, measured with this module at the defaults (alpha 1.2, s 2e-4, n 4e5, 64 queries,
# k 2): relative L2 error against the Theorem-2 limit 0.008 (cosine) / 0.011 (von Mises), of which the
# finite-s bias (FNA-13, ~C (k s)^0.8) is 0.006 and the discretisation 0.003 / 0.006.
# i.i.d. points: the relative L2 error against the exact finite-s operator is sampling noise; its model
# (iid_noise_factor, constants IID_*) and its tolerance (the iid_rel_l2 rows' value times F) live below.
# The diagonal multiplies each row by D_off/(D_off + 1): measured shrink 0.963-0.964 (D ~ 27).
_LIMIT_WHY = ("the error at the defaults is the finite-s bias plus the grid's (larger for von Mises); 0.03 is 2.2x "
              "below the closest wrong limit (spectral multiplier, 0.068 / 0.075)")
#: the i.i.d. part's calibrated setting: the iid_rel_l2 rows were measured there (the defaults)
_IID_AT = {"iid_n": (4000,), "iid_scale": (0.03,), "alpha": (1.2,)}
_CONSTANT_WHY = "the fitted constant against 1/M0 at the defaults (the same finite-s bias)"
CALIBRATION = Calibration(
    Tolerance("rel_l2_cosine", 0.03, measured=0.0080, why=_LIMIT_WHY),
    Tolerance("rel_l2_vonmises", 0.03, measured=0.0106, why=_LIMIT_WHY),
    Tolerance("constant_times_M0_cosine", 0.03, measured=0.0078, why=_CONSTANT_WHY),
    Tolerance("constant_times_M0_vonmises", 0.03, measured=0.0096, why=_CONSTANT_WHY),
    Tolerance("iid_rel_l2_cosine", 0.3, measured=0.174, over={**_IID_AT, "n": (1000,), "queries": (4,),
                                                                "seed": tuple(range(10))},
              why="at IID_REFERENCE, times the noise factor F of iid_noise_factor (at iid_n = "
                  "1000 the error doubles, 0.28-0.39, as 1/sqrt(n)); the grid part does not enter this record"),
    Tolerance("iid_rel_l2_vonmises", 0.3, measured=0.176,
              over={**_IID_AT, "densities": (("vonmises",),), "n": (1000,), "queries": (4,),
                    "seed": tuple(range(10))},
              why="the cosine density's tolerance at IID_REFERENCE, times the noise factor F, when the i.i.d. "
                  "part samples von Mises (densities listing it first; the grid part does not enter this record)"),
)
_LIMIT_TOL = CALIBRATION.get("rel_l2_cosine").value
_IID_TOL = CALIBRATION.get("iid_rel_l2_cosine").value

#: the i.i.d. part's calibrated setting (iid_n, iid_scale, alpha), where F = 1: the iid_rel_l2 rows' grid
IID_REFERENCE = tuple(_IID_AT[k][0] for k in ("iid_n", "iid_scale", "alpha"))
#: growth of the i.i.d. noise with alpha at the reference n and scale, per unit alpha (exponential rate): measured
#: (x86-64 AVX-512) as the mean error over seeds 0-3 at alpha 1.05 / 1.2 / 1.5 / 1.9: 0.122 / 0.144 / 0.207 / 0.368,
#: e^(IID_ALPHA_RATE (alpha - alpha0)) within 4 %
IID_ALPHA_RATE = 1.3
#: the largest noise factor F accepted: the tolerance (row value times F) then reaches twice the row value, which still
#: fails an operator of the wrong sign (error ~2), zero (1) or with 0.4 of its constant (0.6 + noise); beyond it the
#: tolerance nears the operator's own size and the i.i.d. part cannot decide
IID_MAX_NOISE_FACTOR = 2.0


def iid_noise_factor(iid_n: int, iid_scale: float, alpha: float) -> float:
    """Sampling noise of the i.i.d. part over that at :data:`IID_REFERENCE` (n0, s0, alpha0):
    F = sqrt(n0/n) (s0/s)^(alpha - 1/2) e^(IID_ALPHA_RATE (alpha - alpha0)).

    The variance of a kernel row's sum over n points with width s, divided by t = s^alpha, gives
    n^-1/2 s^(1/2 - alpha). Checked at alpha0 and n0 over seeds 0-3: the mean error / F is flat within 8 %
    from iid_scale s0 down to 0.003 (0.136 / 0.133 / 0.143 at 0.015 / 0.0075 / 0.003), 0.131 at iid_n 8000 and iid_scale 0.0075;
    at iid_scale 0.001 (about 0.6 points per kernel width) the ratio is 0.19 and the gain 1.57: the
    model, and the check, stop there (refused: F = 10.8). The alpha factor overestimates the noise at
    alpha 1.9 and small scales (F 17 predicted, 12.5 measured at iid_scale 0.0075): a wider tolerance there, refused anyway.
    """
    n0, s0, a0 = IID_REFERENCE
    return math.sqrt(n0 / iid_n) * (s0 / iid_scale) ** (alpha - 0.5) * math.exp(IID_ALPHA_RATE * (alpha - a0))


#: the densities on S^1 (manifolds.CIRCLE_DENSITIES)
DENSITIES = ("cosine", "vonmises")


@CHECK.parameters
class Params:
    alpha: float = Real(1.2, "FNA order alpha (FNA eq. 10 profile, d_M = 1; Theorem 2 eq. 18 / Lemma 1 eq. 27)",
                        low=1, high=2, low_open=True, high_open=True)
    scale: float = Real(2e-4, "Kernel scale s (the paper's kappa); t = s^alpha (FNA eq. 17)", low=1e-5, high=0.1)
    n: int = Int(400_000, "Number of quantile-grid points (keys) per density", low=1000, high=5_000_000,
                 unit="points")
    queries: int = Int(64, "Number of query rows evaluated (evenly spaced among the points), at most n", low=4,
                       high=5_000_000)
    mode: int = Int(2, "Fourier mode k of the test function f = cos(k x)", low=1, high=20)
    densities: tuple = Options(DENSITIES, DENSITIES, "Densities rho on S^1: cosine ((1 + 0.5 cos x)/(2 pi)) and "
                             "vonmises (kappa = 1); the i.i.d. part uses the first")
    iid_n: int = Int(4000, "Number of i.i.d. points for the random-point part (all rows evaluated): 0 skips it, "
                     f"else at least 500 and enough that the noise factor F <= {IID_MAX_NOISE_FACTOR:g} "
                     "(iid_noise_factor)",
                     low=0, high=40_000, unit="points")
    iid_scale: float = Real(0.03, "Kernel scale for the i.i.d. part (compared with the exact finite-s operator)",
                            low=1e-3, high=0.5)

    def resolve(self):
        """The rules between parameters: queries <= n; iid_n 0 or >= 500; the noise factor F <= IID_MAX_NOISE_FACTOR."""
        if self.queries > self.n:
            raise InputError(f"queries must be an integer in [4, {self.n}] (at most n), got {self.queries}")
        if 0 < self.iid_n < 500:
            raise InputError(f"iid_n must be 0 (skip) or in [500, 40000], got {self.iid_n}")
        if self.iid_n:
            _refuse_noisy_iid(self.iid_n, self.iid_scale, self.alpha)
        return self


def _refuse_noisy_iid(iid_n: int, iid_scale: float, alpha: float) -> None:
    factor = iid_noise_factor(iid_n, iid_scale, alpha)
    if factor <= IID_MAX_NOISE_FACTOR:
        return
    need_n = math.ceil(iid_n * (factor / IID_MAX_NOISE_FACTOR) ** 2)
    need_s = iid_scale * (factor / IID_MAX_NOISE_FACTOR) ** (1 / (alpha - 0.5))
    fix = [f"raise iid_n to at least {need_n}"] if need_n <= 40_000 else []
    if need_s <= 0.5:
        fix.append(f"raise iid_scale to at least {need_s:.3g}")
    fix.append("set iid_n 0 to skip the i.i.d. part")
    n0, s0, a0 = IID_REFERENCE
    raise InputError(f"iid_scale = {iid_scale:g} with iid_n = {iid_n} (alpha {alpha:g}) cannot decide the i.i.d. part: "
                     f"its sampling noise is F = {factor:.3g} x that at iid_n {n0}, iid_scale {s0:g}, alpha {a0:g} "
                     f"(~ n^-1/2 s^(1/2-alpha)), above {IID_MAX_NOISE_FACTOR:g}, where the tolerance {_IID_TOL:g} F nears the "
                     f"operator's own size; {', or '.join(fix)}")


@dataclasses.dataclass(frozen=True)
class DensityLimit:
    """(A f - f)/t on the quantile grid of one density, against every candidate limit."""

    #: the query angles
    theta: np.ndarray
    #: (A f - f)/t at the query points (diagonal kept: the midpoint-rule weight of the kernel core)
    discrete: np.ndarray
    #: the candidate limits at the query points: operator name (OPERATORS' values) -> values
    limits: dict[str, np.ndarray]
    #: relative L2 error of (A f - f)/t against each candidate limit
    rel_l2: dict[str, float]
    #: the same with the diagonal self score dropped
    rel_l2_no_diagonal: dict[str, float]
    #: the constant fitted to the Theorem-2 shape, times M0 (1 for the corrected limit)
    constant_times_M0: float
    #: relative L2 error against the exact finite-s operator (the grid's discretisation)
    discretisation: float
    #: relative L2 distance of the exact finite-s operator from the Theorem-2 limit (FNA-13)
    finite_s_bias: float
    #: widest gap of the quantile grid over the scale
    widest_gap_over_scale: float


@dataclasses.dataclass(frozen=True)
class IidPart:
    """(A f - f)/t on i.i.d. points against the exact finite-s operator (all rows)."""

    #: the density sampled (the first of ``densities``)
    density: str
    #: relative L2 error, diagonal dropped (the asserted one) and kept
    rel_l2: float
    rel_l2_with_diagonal: float
    #: least-squares gain against the finite-s operator, diagonal dropped and kept (~ 1 - 1/D kept)
    gain_no_diagonal: float
    gain_with_diagonal: float


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What fractional_limit measures."""

    #: density name -> the comparison on its quantile grid
    densities: dict[str, DensityLimit]
    #: the i.i.d. part (None: iid_n = 0)
    iid: IidPart | None


def _rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def discrete_operator(theta, rows, *, alpha, scale, f, block=16, xp=np):
    """``((A f)(x_i) - f(x_i))/t`` for the query indices ``rows``, A = N_R(Phi(d/s)) over all points.

    Returns host arrays ``(with_diagonal, without_diagonal)``: the numerator ``sum_j C_ij (f_j - f_i)``
    does not see the self term, only the degree does, so dropping it multiplies row i by
    ``D_i/(D_i - Phi(0))``. The kernel rows are built ``block`` at a time in the namespace ``xp``
    (``block x n`` distances and kernel values at once) and brought back once.
    """
    t = spectral.fna_time(scale, alpha)
    th, fx = xp.asarray(theta), xp.asarray(f(theta))
    phi0 = float(spectral.fna_kernel(np.zeros(1), alpha=alpha, scale=scale, dim=1)[0])  # the self term Phi(0)
    kept, dropped = [], []
    for b in range(0, len(rows), block):
        idx = xp.asarray(rows[b:b + block])
        d = xp.abs(xp.take(th, idx)[:, None] - th[None, :])
        d = xp.minimum(d, 2 * math.pi - d)
        c = spectral.fna_kernel(d, alpha=alpha, scale=scale, dim=1)
        degree = xp.sum(c, axis=1)
        num = c @ fx - degree * xp.take(fx, idx)
        kept.append(num / degree / t)
        dropped.append(num / (degree - phi0) / t)
    return to_numpy(xp.concat(kept)), to_numpy(xp.concat(dropped))


def limits(density, theta, *, alpha, scale, mode, n_fft=256):
    """The candidate limits of ``(A f - f)/t`` at the angles ``theta``, from the exact FFT operators.

    ``f = cos(mode x)`` and ``rho`` are sampled on ``n_fft`` equispaced angles (their Fourier
    coefficients beyond 128 are below rounding for the densities here) and the multipliers applied
    by :func:`manifolds.theorem2_operator`, :func:`manifolds.fourier_multiplier` and
    :func:`manifolds.operators.attention_increment`. Keys: the operator names of :data:`OPERATORS`,
    ``"finite_s"`` (the exact finite-scale operator, with ``1 - circle_relaxation`` as kernel
    multiplier) and ``"shape"`` (the Theorem-2 limit without its constant ``1/M0``).
    """
    grid = 2 * math.pi * np.arange(n_fft) / n_fft
    rho_g, f_g = density.angle_pdf(grid), np.cos(mode * grid)
    m0, c1 = kernel_spectra.profile_mass(alpha, 1), kernel_spectra.fractional_constant(1, alpha)

    def geodesic(k):
        return kernel_spectra.geodesic_multiplier(k, alpha=alpha)

    def spectral(k):
        return k.astype(float) ** alpha

    def kernel(k):
        return 1.0 - kernel_spectra.circle_relaxation(k, alpha=alpha, scale=scale)

    shape = -manifolds.theorem2_operator(f_g, rho_g, geodesic, at=theta)
    printed = manifolds.theorem2_operator(f_g, rho_g, spectral, at=theta)
    return {
        "theorem2": shape / m0,
        "no-density": -manifolds.fourier_multiplier(f_g, geodesic, at=theta) / m0,
        "wrong-sign": -shape / m0,
        "eq18": printed,
        "spectral": -printed / (m0 * c1),
        "finite_s": manifolds.attention_increment(f_g, rho_g, kernel, at=theta) / scale**alpha,
        "shape": shape,
    }



@CHECK.memory
def needs(p: Params) -> dict:
    """Per grid point the quantile grid, f and 16 kernel rows' temporaries; per i.i.d. point 256 rows'.

    tracemalloc peaks 216.6 / 418.1 MiB at n = 4e5 / 8e5 (iid_n 4000) fit 16 MiB + 528 bytes per grid
    point; 600 bytes per grid point and 12 KiB per i.i.d. point (256 x 8 bytes x 6 arrays) leave a margin.
    """
    iid_n = p.iid_n
    return {"dense": PathNeed(lambda m: (32 << 20) + 600 * m + (12 << 10) * iid_n, p.n, "--n", 1000,
                              f"the quantile grid and kernel rows at --n {p.n}, --iid-n {iid_n}",
                              other="a smaller --iid-n")}


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """(A f - f)/t on each density's quantile grid and on i.i.d. points, against the exact FFT operators."""
    xp = ctx.xp
    m0 = kernel_spectra.profile_mass(p.alpha, 1)
    mode = p.mode

    def f(th):
        return np.cos(mode * th)

    out = {}
    for name in p.densities:
        density = manifolds.circle_density(name)
        with ctx.timed("grid"):
            theta = density.quantile_angles(p.n)
        rows = np.unique(np.linspace(0, p.n - 1, p.queries).round().astype(int))
        with ctx.timed("discrete"):
            disc, disc_nodiag = discrete_operator(theta, rows, alpha=p.alpha, scale=p.scale, f=f, xp=xp)
        with ctx.timed("reference"):
            ref = limits(density, theta[rows], alpha=p.alpha, scale=p.scale, mode=mode)
        operators = tuple(OPERATORS.values())
        out[name] = DensityLimit(
            theta=theta[rows], discrete=disc, limits={k: ref[k] for k in operators},
            rel_l2={k: _rel(disc, ref[k]) for k in operators},
            rel_l2_no_diagonal={k: _rel(disc_nodiag, ref[k]) for k in operators},
            constant_times_M0=float(np.dot(disc, ref["shape"]) / np.dot(ref["shape"], ref["shape"])) * m0,
            discretisation=_rel(disc, ref["finite_s"]), finite_s_bias=_rel(ref["finite_s"], ref["theorem2"]),
            widest_gap_over_scale=float(np.max(np.diff(theta))) / p.scale)

    iid = None
    if p.iid_n:
        name = p.densities[0]
        density = manifolds.circle_density(name)
        with ctx.timed("iid"):
            pts = density.sample(p.iid_n, rng=child_rng(p.seed, "iid"))
            theta = np.mod(np.arctan2(pts[:, 1], pts[:, 0]), 2 * math.pi)
            rows = np.arange(p.iid_n)
            kept, dropped = discrete_operator(theta, rows, alpha=p.alpha, scale=p.iid_scale, f=f, block=256, xp=xp)
            ref = limits(density, theta, alpha=p.alpha, scale=p.iid_scale, mode=mode)

        def gain(v):
            return float(np.dot(v, ref["finite_s"]) / np.dot(ref["finite_s"], ref["finite_s"]))

        iid = IidPart(density=name, rel_l2=_rel(dropped, ref["finite_s"]), rel_l2_with_diagonal=_rel(kept, ref["finite_s"]),
                      gain_no_diagonal=gain(dropped), gain_with_diagonal=gain(kept))
        ctx.note("i.i.d. part: diagonal self-score dropped in iid_rel_l2 (kept in iid_rel_l2_with_diagonal)")
    return Quantities(densities=out, iid=iid)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Per density: (A f - f)/t against the asserted limit (and the constant); the i.i.d. part."""
    operator = OPERATORS[p.claim]
    for name in p.densities:
        d = q.densities[name]
        # Name an unresolved setting: both parts of the error are known exactly (FFT references).
        # Measured outside the defaults: alpha = 1.5 / 1.9 (s = 2e-4) errors 0.036 / 0.49, all finite-s
        # bias (rate (k s)^(2 - alpha), FNA-13); n = 2e4 / 1e5 (grid gap ~ s) 0.34 / 0.04, discretisation.
        why = []
        if d.finite_s_bias > _LIMIT_TOL / 2:
            why.append(f"finite-s bias {d.finite_s_bias:.3g} > {_LIMIT_TOL / 2:g}: the rate (k s)^(2-alpha) is slow "
                       f"at alpha={p.alpha:g}, lower scale")
        if d.discretisation > _LIMIT_TOL / 2:
            why.append(f"discretisation {d.discretisation:.3g} > {_LIMIT_TOL / 2:g}: widest grid gap / scale = "
                       f"{d.widest_gap_over_scale:.2g}, raise n or scale")
        hint = f"not resolved: {'; '.join(why)}" if why else ""
        rec.at_most(f"rel_l2_{name}", d.rel_l2[operator], CALIBRATION.get(f"rel_l2_{name}", p),
                    label=f"{name}: (A f - f)/t differs from the '{operator}' limit (relative L2)", hint=hint)
        const = d.constant_times_M0
        if p.claim == "corrected":
            rec.close(f"constant_times_M0_{name}", const, 1.0, atol=CALIBRATION.get(f"constant_times_M0_{name}", p),
                      label=f"{name}: fitted constant x M0",
                      hint=("the fitted constant has the wrong sign (the generator is dissipative)" if not const > 0
                            else hint))
        else:
            rec.info(f"constant_times_M0_{name}", const)
        rec.info(f"discretisation_{name}", d.discretisation)
        rec.info(f"finite_s_bias_{name}", d.finite_s_bias)
        rec.info(f"rel_l2_no_diagonal_{name}", d.rel_l2_no_diagonal[operator])
        for other in OPERATORS.values():
            if other != operator:
                rec.info(f"rel_l2_vs_{other}_{name}", d.rel_l2[other])

    if q.iid is not None:
        name = q.iid.density
        row = CALIBRATION.get(f"iid_rel_l2_{name}", p)
        factor = iid_noise_factor(p.iid_n, p.iid_scale, p.alpha)
        rec.at_most(f"iid_rel_l2_{name}", q.iid.rel_l2, dataclasses.replace(row, value=row.value * factor),
                    label=f"i.i.d. {name}: (A f - f)/t differs from the exact finite-s operator (relative L2)")
        rec.info(f"iid_gain_no_diagonal_{name}", q.iid.gain_no_diagonal)
        rec.info(f"iid_gain_with_diagonal_{name}", q.iid.gain_with_diagonal)
        rec.info(f"iid_diagonal_shrink_{name}", q.iid.gain_with_diagonal / q.iid.gain_no_diagonal)  # ~ 1 - 1/D
        rec.info(f"iid_rel_l2_with_diagonal_{name}", q.iid.rel_l2_with_diagonal)

    if p.claim == "corrected":
        return ("on S^1 with a non-uniform density, (A f - f)/t -> -(1/M0) [L(f rho) - f L(rho)]/rho with the "
                "geodesic multiplier m(k) and M0 = 2/alpha (c = 1/(M0 c_{1,alpha}) for |k|^alpha), negative sign")
    if p.claim == "printed":
        return "eq. (18) as printed: (A f - f)/t -> [(-Delta)^(alpha/2)(f rho) - f (-Delta)^(alpha/2) rho]/rho"
    return f"(A f - f)/t tends to the '{operator}' operator (a wrong reading of Theorem 2)"


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
