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

import math

import numpy as np

from spectral.validation import InputError, check_int, check_option, check_real, child_rng
from verify.core.check import Check
from verify.core.memory import require_memory
from verify.core.result import Recorder

CHECK = Check("fractional_limit", claims=("FNA-12",), devices=("cpu", "gpu"))

#: claim -> the limit operator it asserts (names used in the record names ``rel_l2_vs_<operator>_*``)
OPERATORS = {"corrected": "theorem2", "printed": "eq18", "no-density": "no-density", "wrong-sign": "wrong-sign",
             "spectral": "spectral"}

# The limit's tolerance, measured with this module at the defaults (alpha 1.2, s 2e-4, n 4e5, 64 queries,
# k 2): relative L2 error against the Theorem-2 limit 0.008 (cosine) / 0.011 (von Mises), of which the
# finite-s bias (FNA-13, ~C (k s)^0.8) is 0.006 and the discretisation 0.003 / 0.006.
_LIMIT_TOL = 0.03
_LIMIT_WHY = ("3x the measured error at the defaults (0.008 cosine, 0.011 von Mises: finite-s bias 0.006 + grid "
              "0.003 / 0.006) and 2.2x below the closest wrong limit (spectral multiplier, 0.068 / 0.075)")
# i.i.d. points (n 4000, s 0.03, all rows, diagonal dropped): relative L2 error against the exact finite-s
# operator 0.137-0.184 over seeds 0-9 (sampling noise ~ s^(1/2-alpha)/sqrt(n rho)) -> 0.3 at iid_n = 4000,
# scaled by sqrt(4000 / iid_n): at iid_n = 1000 seeds 0-9 give 0.279-0.391 (2.07x those at 4000, as
# 1/sqrt(n)), so a fixed 0.3 failed seed 0 (0.349); the scaled tolerance is 0.6 there (margin 1.5).
# The diagonal multiplies each row by D_off/(D_off + 1): measured shrink 0.963-0.964 (D ~ 27).
_IID_TOL = 0.3


def _rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def discrete_operator(theta, rows, *, alpha, scale, f, block=16, xp=np):
    """``((A f)(x_i) - f(x_i))/t`` for the query indices ``rows``, A = N_R(Phi(d/s)) over all points.

    Returns host arrays ``(with_diagonal, without_diagonal)``: the numerator ``sum_j C_ij (f_j - f_i)``
    does not see the self term, only the degree does, so dropping it multiplies row i by
    ``D_i/(D_i - Phi(0))``. The kernel rows are built ``block`` at a time in the namespace ``xp``
    (``block x n`` distances and kernel values at once) and brought back once.
    """
    from spectral import fna_kernel, fna_time
    from spectral.backend import to_numpy

    t = fna_time(scale, alpha)
    th, fx = xp.asarray(theta), xp.asarray(f(theta))
    phi0 = float(fna_kernel(np.zeros(1), alpha=alpha, scale=scale, dim=1)[0])  # the self term Phi(0)
    kept, dropped = [], []
    for b in range(0, len(rows), block):
        idx = xp.asarray(rows[b:b + block])
        d = xp.abs(xp.take(th, idx)[:, None] - th[None, :])
        d = xp.minimum(d, 2 * math.pi - d)
        c = fna_kernel(d, alpha=alpha, scale=scale, dim=1)
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
    from manifolds import fourier_multiplier, theorem2_operator
    from manifolds.kernel_spectra import circle_relaxation, fractional_constant, geodesic_multiplier, profile_mass
    from manifolds import attention_increment

    grid = 2 * math.pi * np.arange(n_fft) / n_fft
    rho_g, f_g = density.angle_pdf(grid), np.cos(mode * grid)
    m0, c1 = profile_mass(alpha, 1), fractional_constant(1, alpha)

    def geodesic(k):
        return geodesic_multiplier(k, alpha=alpha)

    def spectral(k):
        return k.astype(float) ** alpha

    def kernel(k):
        return 1.0 - circle_relaxation(k, alpha=alpha, scale=scale)

    shape = -theorem2_operator(f_g, rho_g, geodesic, at=theta)
    printed = theorem2_operator(f_g, rho_g, spectral, at=theta)
    return {
        "theorem2": shape / m0,
        "no-density": -fourier_multiplier(f_g, geodesic, at=theta) / m0,
        "wrong-sign": -shape / m0,
        "eq18": printed,
        "spectral": -printed / (m0 * c1),
        "finite_s": attention_increment(f_g, rho_g, kernel, at=theta) / scale**alpha,
        "shape": shape,
    }


@CHECK.define
def run(*, alpha=1.2, scale=2e-4, n=400_000, queries=64, mode=2, densities=("cosine", "vonmises"),
        claim="corrected", iid_n=4000, iid_scale=0.03, seed=0, device="cpu"):
    """Compare (A f - f)/t with the Theorem-2 limit on S^1 with a density (FNA-12).

    Parameters
    ----------
    alpha : float
        FNA order alpha in (1, 2) (FNA eq. 10 profile, d_M = 1; Theorem 2 eq. 18 / Lemma 1 eq. 27).
    scale : float
        Kernel scale s (the paper's kappa) in [1e-5, 0.1]; t = s^alpha (FNA eq. 17).
    n : int
        Number of quantile-grid points (keys) per density, in [1000, 5000000].
    queries : int
        Number of query rows evaluated (evenly spaced among the points), in [4, n].
    mode : int
        Fourier mode k of the test function f = cos(k x), in [1, 20].
    densities : tuple of str
        Densities rho on S^1, a non-empty subset of "cosine" ((1 + 0.5 cos x)/(2 pi)) and "vonmises"
        (kappa = 1); the i.i.d. part uses the first.
    claim : {"corrected", "printed", "no-density", "wrong-sign", "spectral"}
        The limit asserted: "corrected" -(1/M0)[L(f rho) - f L rho]/rho with the geodesic multiplier;
        "printed" eq. (18) as printed (+[.]/rho, spectral symbol |k|^alpha, no constant); the others
        are wrong readings (negative controls): "no-density" -(1/M0) L f, "wrong-sign" the corrected
        limit with + sign, "spectral" the periodised |k|^alpha with c = 1/(M0 c_{1,alpha}).
    iid_n : int
        Number of i.i.d. points for the random-point part (all rows evaluated): 0 skips it, else in
        [500, 40000].
    iid_scale : float
        Kernel scale for the i.i.d. part (compared with the exact finite-s operator), in [1e-3, 0.5].
    seed : int
        Seed of the i.i.d. sample (stream "iid").
    device : {"cpu", "gpu"}
        Array device of the kernel rows, degrees and products (the exact FFT references on the host).

    Returns
    -------
    CheckResult
        Passes when (A f - f)/t is within 3 % relative L2 of the asserted limit for every density
        (and, for "corrected", the fitted constant times M0 is 1 +- 0.03), and the i.i.d. run is
        within 0.3 sqrt(4000 / iid_n) of the exact finite-s operator.
    """
    from manifolds import CIRCLE_DENSITIES, circle_density
    from manifolds.kernel_spectra import profile_mass

    alpha = check_real("alpha", alpha, low=1, high=2, low_open=True, high_open=True)
    scale = check_real("scale", scale, low=1e-5, high=0.1)
    n = check_int("n", n, low=1000, high=5_000_000)
    queries = check_int("queries", queries, low=4, high=n)
    mode = check_int("mode", mode, low=1, high=20)
    densities = (densities,) if isinstance(densities, str) else tuple(densities)
    if not densities:
        raise InputError(f"densities must name at least one of {', '.join(CIRCLE_DENSITIES)}")
    for name in densities:
        check_option("densities", name, CIRCLE_DENSITIES)
    claim = check_option("claim", claim, tuple(OPERATORS))
    iid_n = check_int("iid_n", iid_n, low=0, high=40_000)
    if 0 < iid_n < 500:
        raise InputError(f"iid_n must be 0 (skip) or in [500, 40000], got {iid_n}")
    iid_scale = check_real("iid_scale", iid_scale, low=1e-3, high=0.5)

    # Memory first: per grid point the quantile grid, f and 16 kernel rows' temporaries (block 16 x n);
    # per i.i.d. point 256 rows' (block 256 x iid_n). tracemalloc peaks 216.6 / 418.1 MiB at n = 4e5 /
    # 8e5 (iid_n 4000) fit 16 MiB + 528 bytes per grid point; 600 bytes per grid point and 12 KiB per
    # i.i.d. point (256 x 8 bytes x 6 arrays) leave a margin.
    require_memory(lambda m: (32 << 20) + 600 * m + (12 << 10) * iid_n, n, option="--n", low=1000,
                   what=f"the quantile grid and kernel rows at --n {n}, --iid-n {iid_n}", other="a smaller --iid-n")
    from verify.core.check import device_namespace  # looked up at run time (tests stand in array_api_strict)

    xp = device_namespace(device)
    operator = OPERATORS[claim]
    m0 = profile_mass(alpha, 1)

    def f(th):
        return np.cos(mode * th)

    rec = Recorder()
    for name in densities:
        density = circle_density(name)
        with rec.timed("grid"):
            theta = density.quantile_angles(n)
        rows = np.unique(np.linspace(0, n - 1, queries).round().astype(int))
        with rec.timed("discrete"):
            disc, disc_nodiag = discrete_operator(theta, rows, alpha=alpha, scale=scale, f=f, xp=xp)
        with rec.timed("reference"):
            ref = limits(density, theta[rows], alpha=alpha, scale=scale, mode=mode)
        target = ref[operator]
        const = float(np.dot(disc, ref["shape"]) / np.dot(ref["shape"], ref["shape"])) * m0
        discretisation, bias = _rel(disc, ref["finite_s"]), _rel(ref["finite_s"], ref["theorem2"])
        # Name an unresolved setting: both parts of the error are known exactly (FFT references).
        # Measured outside the defaults: alpha = 1.5 / 1.9 (s = 2e-4) errors 0.036 / 0.49, all finite-s
        # bias (rate (k s)^(2 - alpha), FNA-13); n = 2e4 / 1e5 (grid gap ~ s) 0.34 / 0.04, discretisation.
        why = []
        if bias > _LIMIT_TOL / 2:
            why.append(f"finite-s bias {bias:.3g} > {_LIMIT_TOL / 2:g}: the rate (k s)^(2-alpha) is slow at "
                       f"alpha={alpha:g}, lower scale")
        if discretisation > _LIMIT_TOL / 2:
            why.append(f"discretisation {discretisation:.3g} > {_LIMIT_TOL / 2:g}: widest grid gap / scale = "
                       f"{float(np.max(np.diff(theta))) / scale:.2g}, raise n or scale")
        hint = f"not resolved: {'; '.join(why)}" if why else ""
        rec.at_most(f"rel_l2_{name}", _rel(disc, target), _LIMIT_TOL, why=_LIMIT_WHY,
                    label=f"{name}: (A f - f)/t differs from the '{operator}' limit (relative L2)", hint=hint)
        if claim == "corrected":
            rec.close(f"constant_times_M0_{name}", const, 1.0, atol=0.03,
                      why="the fitted constant is within 1.1 % of 1/M0 at the defaults (the same finite-s bias)",
                      label=f"{name}: fitted constant x M0",
                      hint=("the fitted constant has the wrong sign (the generator is dissipative)" if not const > 0
                            else hint))
        else:
            rec.info(f"constant_times_M0_{name}", const)
        rec.info(f"discretisation_{name}", discretisation)
        rec.info(f"finite_s_bias_{name}", bias)
        rec.info(f"rel_l2_no_diagonal_{name}", _rel(disc_nodiag, target))
        for other in OPERATORS.values():
            if other != operator:
                rec.info(f"rel_l2_vs_{other}_{name}", _rel(disc, ref[other]))
        rec.array(f"theta_{name}", theta[rows])
        rec.array(f"discrete_{name}", disc)
        rec.array(f"limit_{name}", target)

    if iid_n:
        name = densities[0]
        density = circle_density(name)
        with rec.timed("iid"):
            pts = density.sample(iid_n, rng=child_rng(seed, "iid"))
            theta = np.mod(np.arctan2(pts[:, 1], pts[:, 0]), 2 * math.pi)
            rows = np.arange(iid_n)
            kept, dropped = discrete_operator(theta, rows, alpha=alpha, scale=iid_scale, f=f, block=256, xp=xp)
            ref = limits(density, theta, alpha=alpha, scale=iid_scale, mode=mode)
        iid_tol = _IID_TOL * math.sqrt(4000 / iid_n)
        rec.at_most(f"iid_rel_l2_{name}", _rel(dropped, ref["finite_s"]), iid_tol,
                    why=f"{_IID_TOL} sqrt(4000/iid_n): seeds 0-9 gave 0.137-0.184 at iid_n = 4000 and 0.279-0.391 "
                        "at 1000 (sampling noise ~ 1/sqrt(n))",
                    label=f"i.i.d. {name}: (A f - f)/t differs from the exact finite-s operator (relative L2)")

        def gain(v):
            return float(np.dot(v, ref["finite_s"]) / np.dot(ref["finite_s"], ref["finite_s"]))

        rec.info(f"iid_gain_no_diagonal_{name}", gain(dropped))
        rec.info(f"iid_gain_with_diagonal_{name}", gain(kept))
        rec.info(f"iid_diagonal_shrink_{name}", gain(kept) / gain(dropped))  # ~ 1 - 1/D, D the degree
        rec.info(f"iid_rel_l2_with_diagonal_{name}", _rel(kept, ref["finite_s"]))
        rec.note("i.i.d. part: diagonal self-score dropped in iid_rel_l2 (kept in iid_rel_l2_with_diagonal)")

    if claim == "corrected":
        statement = ("on S^1 with a non-uniform density, (A f - f)/t -> -(1/M0) [L(f rho) - f L(rho)]/rho with the "
                     "geodesic multiplier m(k) and M0 = 2/alpha (c = 1/(M0 c_{1,alpha}) for |k|^alpha), negative sign")
    elif claim == "printed":
        statement = "eq. (18) as printed: (A f - f)/t -> [(-Delta)^(alpha/2)(f rho) - f (-Delta)^(alpha/2) rho]/rho"
    else:
        statement = f"(A f - f)/t tends to the '{operator}' operator (a wrong reading of Theorem 2)"
    return rec.finish(statement)


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
