"""FNA Theorem 2 with a density: (A f - f)/t -> -(1/M0) [L(f rho) - f L(rho)] / rho on S^1 (FNA-12).

Points on S^1 at the quantiles of a non-uniform density rho (1 + 0.5 cos x and von Mises), scores
Phi(d/s) = (1 + d/s)^-(1+alpha) of the geodesic distance, A = N_R(C), t = s^alpha, f = cos(k x).
The discrete (A f - f)/t on a subset of query rows (each row uses every point as a key, diagonal
included: on the quantile grid the self term is the midpoint-rule weight of the kernel core) is
compared with the exact limit: L the geodesic Fourier multiplier m(k) = int_{-pi}^{pi}
(1 - cos k y)|y|^-(1+alpha) dy, M0 = int Phi = 2/alpha, applied to the Fourier series of f rho and
rho (FFT) and evaluated at the points. Reported: relative L2 error, the fitted constant (times M0)
and its sign, the split into discretisation (against the exact finite-s operator, also by FFT) and
finite-s bias (FNA-13), and the effect of dropping the diagonal. Negative controls (option
`operator`): no density terms, the wrong sign, eq. (18) without the constant c, and the spectral
(periodised) |k|^alpha instead of the geodesic multiplier; each fails at the default setting.
I.i.d. points: compared with the exact finite-s operator (their unbiased target), diagonal
dropped, and with the diagonal kept to show its 1/D bias.
"""

from __future__ import annotations

import math

import numpy as np

from verify.core import Timer, cli_main, make_result, require, require_int, require_range

CHECK = "fractional_limit"
CLAIMS = ("FNA-12",)
OPERATORS = ("theorem2", "no-density", "wrong-sign", "eq18", "spectral")
DENSITIES = ("cosine", "vonmises")

HELP = {
    "alpha": "FNA order alpha in (1, 2) (FNA eq. 10 profile, d_M = 1; Theorem 2 eq. 18 / Lemma 1 eq. 27)",
    "scale": "kernel scale s (the paper's kappa); t = s^alpha (FNA eq. 17)",
    "n": "number of quantile-grid points (keys) per density",
    "queries": "number of query rows evaluated (evenly spaced among the points)",
    "mode": "Fourier mode k of the test function f = cos(k x)",
    "densities": "densities rho on S^1: 'cosine' (1 + 0.5 cos x)/(2 pi) and/or 'vonmises' (kappa = 1)",
    "operator": "limit compared with: 'theorem2' (-(1/M0)[L(f rho) - f L rho]/rho, geodesic L), 'no-density' "
                "(-(1/M0) L f), 'wrong-sign', 'eq18' (eq. 18: +[.]/rho with the spectral symbol, no constant), "
                "'spectral' (periodised |k|^alpha with c = 1/(M0 c_{1,alpha}))",
    "iid_n": "number of i.i.d. points for the random-point part (all rows evaluated); 0 skips it",
    "iid_scale": "kernel scale for the i.i.d. part (compared with the exact finite-s operator)",
    "seed": "seed of the i.i.d. sample",
    "device": "array device (this check evaluates its kernel rows on the host; 'gpu' only validates availability)",
}

# Tolerances, measured with this module at the defaults (alpha 1.2, s 2e-4, n 4e5, 64 queries, k 2):
# relative L2 error against the Theorem-2 limit 0.008 (cosine) / 0.011 (von Mises), of which the
# finite-s bias (FNA-13, ~C (k s)^0.8) is 0.006 and the discretisation 0.003 / 0.006. Tolerance 0.03:
# 3x the measured error and still 2.2x below the closest wrong limit (spectral multiplier, 0.068 / 0.075).
_LIMIT_TOL = 0.03
# fitted constant times M0: within 1.1 % of 1 (same bias) -> tolerance 0.03.
_CONSTANT_TOL = 0.03
# i.i.d. points (n 4000, s 0.03, all rows, diagonal dropped): relative L2 error against the exact
# finite-s operator 0.137-0.184 over seeds 0-9 (sampling noise ~ s^(1/2-alpha)/sqrt(n rho)) -> 0.3,
# scaled by sqrt(4000 / iid_n): at iid_n = 1000 seeds 0-9 give 0.279-0.391 (mean 2.07x that of 4000,
# as 1/sqrt(n)), so a fixed 0.3 failed seed 0 (0.349); scaled tolerance 0.6, margin 1.5.
# The diagonal multiplies each row by D_off/(D_off + 1): measured shrink 0.963-0.964 (D ~ 27).
_IID_TOL = 0.3


def _densities(names):
    from manifolds.densities import CosineDensity, VonMises

    table = {"cosine": lambda: CosineDensity(0.5, 0.0), "vonmises": lambda: VonMises(0.0, 1.0)}
    return [(name, table[name]()) for name in names]


def _angle_pdf(density, theta):
    pts = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    return np.asarray(density.pdf(pts))


def quantile_angles(density, n: int) -> np.ndarray:
    """Angles at the quantiles ``(j + 1/2)/n`` of a circle law, by Hermite inversion of its exact CDF.

    The CDF (``density.cdf``) and pdf on 2^14 equispaced angles define a cubic Hermite interpolant of
    the inverse CDF (slopes ``1/pdf``); its error is ~1e-13 for the smooth densities used here
    (tests compare with ``density.quantile_grid``, whose Newton iteration on the series CDF costs
    ~12 s at n = 2e5 for the von Mises law).
    """
    from scipy.interpolate import CubicHermiteSpline

    theta = np.linspace(0.0, 2 * math.pi, 2**14 + 1)
    cdf = np.asarray(density.cdf(theta))
    inverse = CubicHermiteSpline(cdf, theta, 1.0 / _angle_pdf(density, theta))
    return inverse((np.arange(n) + 0.5) / n)


def _coefficients(values):
    return np.fft.rfft(values) / values.size


def _evaluate(coef, multiplier, theta):
    """``sum_k m(k) g_k e^{ikx}`` at arbitrary angles from the half spectrum ``coef`` of a real g."""
    k = np.arange(coef.size)
    weight = np.where(k == 0, 1.0, 2.0)
    cc = coef * multiplier * weight
    return np.cos(np.outer(theta, k)) @ cc.real - np.sin(np.outer(theta, k)) @ cc.imag


def discrete_operator(theta, rows, *, alpha, scale, f, block=16):
    """``((A f)(x_i) - f(x_i))/t`` for the query indices ``rows``, A = N_R(Phi(d/s)) over all points.

    Returns ``(with_diagonal, without_diagonal)``: the numerator ``sum_j C_ij (f_j - f_i)`` does not
    see the self term, only the degree does, so dropping it multiplies row i by ``D_i/(D_i - Phi(0))``.
    """
    from spectral.kernels import fna_kernel, fna_time

    fx = f(theta)
    t = fna_time(scale, alpha)
    kept, dropped = np.empty(len(rows)), np.empty(len(rows))
    for b in range(0, len(rows), block):
        idx = rows[b:b + block]
        d = np.abs(theta[idx, None] - theta[None, :])
        d = np.minimum(d, 2 * math.pi - d)
        c = fna_kernel(d, alpha=alpha, scale=scale, dim=1)
        degree = np.sum(c, axis=1)
        num = c @ fx - degree * fx[idx]
        kept[b:b + block] = num / degree / t
        dropped[b:b + block] = num / (degree - c[np.arange(len(idx)), idx]) / t
    return kept, dropped


def references(density, theta, *, alpha, scale, mode, n_fft=256):
    """Exact limit candidates and the exact finite-s operator at the angles ``theta`` (FFT of f rho, rho)."""
    from manifolds.kernel_spectra import circle_relaxation, fractional_constant, geodesic_multiplier, profile_mass

    grid = 2 * math.pi * np.arange(n_fft) / n_fft
    rho_g = _angle_pdf(density, grid)
    f_g = np.cos(mode * grid)
    c_frho, c_rho, c_f = _coefficients(f_g * rho_g), _coefficients(rho_g), _coefficients(f_g)
    k = np.arange(n_fft // 2 + 1)
    rho = _angle_pdf(density, theta)
    f = np.cos(mode * theta)
    m0, c1 = profile_mass(alpha, 1), fractional_constant(1, alpha)
    geo = geodesic_multiplier(k, alpha=alpha)
    spec = k.astype(float) ** alpha

    def theorem2(mult):
        return (_evaluate(c_frho, mult, theta) - f * _evaluate(c_rho, mult, theta)) / rho

    shape = -theorem2(geo)  # the limit without its constant 1/M0
    eta = 1.0 - circle_relaxation(k, alpha=alpha, scale=scale)
    t = scale**alpha
    finite = (_evaluate(c_frho, eta, theta) - f * _evaluate(c_rho, eta, theta)) / (t * _evaluate(c_rho, eta, theta))
    return {
        "theorem2": shape / m0,
        "no-density": -_evaluate(c_f, geo, theta) / m0,
        "wrong-sign": -shape / m0,
        "eq18": theorem2(spec),
        "spectral": -theorem2(spec) / (m0 * c1),
        "finite_s": finite,
        "shape": shape,
    }


def _rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def run(*, alpha=1.2, scale=2e-4, n=400_000, queries=64, mode=2, densities=("cosine", "vonmises"),
        operator="theorem2", iid_n=4000, iid_scale=0.03, seed=0, device="cpu"):
    """Compare (A f - f)/t with the Theorem-2 limit on S^1 with a density; see the module docstring."""
    from manifolds.kernel_spectra import profile_mass
    from spectral.backend import require_device

    require_range("alpha", alpha, low=1, high=2, low_open=True, high_open=True)
    require_range("scale", scale, low=1e-5, high=0.1)
    require_int("n", n, low=1000, high=5_000_000)
    require_int("queries", queries, low=4, high=n)
    require_int("mode", mode, low=1, high=20)
    densities = tuple(densities) if not isinstance(densities, str) else (densities,)
    require(len(densities) >= 1 and all(d in DENSITIES for d in densities),
            f"densities must be a subset of {', '.join(DENSITIES)}, got {densities!r}")
    require(operator in OPERATORS, f"operator must be one of {', '.join(OPERATORS)}, got {operator!r}")
    require_int("iid_n", iid_n, low=0, high=40_000)
    require(iid_n == 0 or iid_n >= 500, f"iid_n must be 0 (skip) or >= 500, got {iid_n}")
    require_range("iid_scale", iid_scale, low=1e-3, high=0.5)
    require_int("seed", seed, low=0)
    require_device(device)

    timer = Timer()
    m0 = profile_mass(alpha, 1)
    f = lambda th: np.cos(mode * th)  # noqa: E731
    measured, expected, tolerance, failures, arrays = {}, {}, {}, [], {}
    for name, density in _densities(densities):
        with timer("grid"):
            theta = quantile_angles(density, n)
        rows = np.unique(np.linspace(0, n - 1, queries).round().astype(int))
        with timer("discrete"):
            disc, disc_nodiag = discrete_operator(theta, rows, alpha=alpha, scale=scale, f=f)
        with timer("reference"):
            ref = references(density, theta[rows], alpha=alpha, scale=scale, mode=mode)
        target = ref[operator]
        err = _rel(disc, target)
        const = float(np.dot(disc, ref["shape"]) / np.dot(ref["shape"], ref["shape"])) * m0
        measured[f"rel_l2_{name}"] = err
        expected[f"rel_l2_{name}"] = 0.0
        tolerance[f"rel_l2_{name}"] = _LIMIT_TOL
        measured[f"constant_times_M0_{name}"] = const
        measured[f"discretisation_{name}"] = _rel(disc, ref["finite_s"])
        measured[f"finite_s_bias_{name}"] = _rel(ref["finite_s"], ref["theorem2"])
        measured[f"rel_l2_no_diagonal_{name}"] = _rel(disc_nodiag, target)
        for other in OPERATORS:
            if other != operator:
                measured[f"rel_l2_vs_{other}_{name}"] = _rel(disc, ref[other])
        arrays[f"theta_{name}"] = theta[rows]
        arrays[f"discrete_{name}"] = disc
        arrays[f"limit_{name}"] = target
        # Name an unresolved setting: both parts of the error are known exactly (FFT references).
        # Measured outside the defaults: alpha = 1.5 / 1.9 (s = 2e-4) errors 0.036 / 0.49, all finite-s
        # bias (rate (k s)^(2 - alpha), FNA-13); n = 2e4 / 1e5 (grid gap ~ s) 0.34 / 0.04, discretisation.
        why = []
        if measured[f"finite_s_bias_{name}"] > _LIMIT_TOL / 2:
            why.append(f"finite-s bias {measured[f'finite_s_bias_{name}']:.3g} > {_LIMIT_TOL / 2:g}: the rate "
                       f"(k s)^(2-alpha) is slow at alpha={alpha:g}, lower scale")
        if measured[f"discretisation_{name}"] > _LIMIT_TOL / 2:
            why.append(f"discretisation {measured[f'discretisation_{name}']:.3g} > {_LIMIT_TOL / 2:g}: widest "
                       f"grid gap / scale = {float(np.max(np.diff(theta))) / scale:.2g}, raise n or scale")
        note = f" [not resolved: {'; '.join(why)}]" if why else ""
        if err > _LIMIT_TOL:
            failures.append(f"{name}: (A f - f)/t differs from the '{operator}' limit by {err:.3g} relative L2 "
                            f"(tolerance {_LIMIT_TOL}){note}")
        if operator == "theorem2":
            expected[f"constant_times_M0_{name}"] = 1.0
            tolerance[f"constant_times_M0_{name}"] = _CONSTANT_TOL
            if not (const > 0):
                failures.append(f"{name}: fitted constant {const:.4g} has the wrong sign (the generator is dissipative)")
            elif abs(const - 1) > _CONSTANT_TOL:
                failures.append(f"{name}: fitted constant x M0 = {const:.4f}, expected 1 +- {_CONSTANT_TOL}{note}")

    if iid_n:
        name, density = _densities(densities)[0]
        with timer("iid"):
            pts = density.sample(iid_n, rng=seed)
            theta = np.mod(np.arctan2(pts[:, 1], pts[:, 0]), 2 * math.pi)
            rows = np.arange(iid_n)
            kept, dropped = discrete_operator(theta, rows, alpha=alpha, scale=iid_scale, f=f, block=256)
            ref = references(density, theta, alpha=alpha, scale=iid_scale, mode=mode)
        err = _rel(dropped, ref["finite_s"])
        iid_tol = _IID_TOL * math.sqrt(4000 / iid_n)
        measured[f"iid_rel_l2_{name}"] = err
        expected[f"iid_rel_l2_{name}"] = 0.0
        tolerance[f"iid_rel_l2_{name}"] = iid_tol
        fit = lambda v: float(np.dot(v, ref["finite_s"]) / np.dot(ref["finite_s"], ref["finite_s"]))  # noqa: E731
        measured[f"iid_gain_no_diagonal_{name}"] = fit(dropped)
        measured[f"iid_gain_with_diagonal_{name}"] = fit(kept)
        measured[f"iid_diagonal_shrink_{name}"] = fit(kept) / fit(dropped)  # ~ 1 - 1/D, D the degree
        measured[f"iid_rel_l2_with_diagonal_{name}"] = _rel(kept, ref["finite_s"])
        if err > iid_tol:
            failures.append(f"i.i.d. {name}: (A f - f)/t differs from the exact finite-s operator by {err:.3g} "
                            f"relative L2 (tolerance {iid_tol:.3g} = {_IID_TOL} sqrt(4000/iid_n))")

    statement = ("on S^1 with a non-uniform density, (A f - f)/t -> -(1/M0) [L(f rho) - f L(rho)]/rho with the "
                 "geodesic multiplier m(k) and M0 = 2/alpha (c = 1/(M0 c_{1,alpha}) for |k|^alpha), negative sign")
    if operator != "theorem2":
        statement = f"(A f - f)/t tends to the '{operator}' operator (a wrong reading of Theorem 2)"
    return make_result(check=CHECK, claims=CLAIMS, statement=statement, measured=measured, expected=expected,
                       tolerance=tolerance,
                       parameters=dict(alpha=alpha, scale=scale, n=n, queries=queries, mode=mode, densities=densities,
                                       operator=operator, iid_n=iid_n, iid_scale=iid_scale, seed=seed, device=device),
                       failures=failures, timings=timer.timings, arrays=arrays)


def plot(result, path):
    """Discrete (A f - f)/t at the query points against the compared limit, per density."""
    from figures._plotting import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name in result.parameters["densities"]:
        th = np.asarray(result.arrays[f"theta_{name}"])
        ax.plot(th, np.asarray(result.arrays[f"limit_{name}"]), "-", lw=1, label=f"limit ({name})")
        ax.plot(th, np.asarray(result.arrays[f"discrete_{name}"]), ".", ms=4, label=f"(A f - f)/t ({name})")
    ax.set_xlabel("angle")
    ax.legend(fontsize=7)
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    return cli_main(run, argv, help=HELP, plot=plot, choices={"operator": OPERATORS, "device": ("cpu", "gpu")},
                    annotations={"densities": tuple})


if __name__ == "__main__":
    raise SystemExit(main())
