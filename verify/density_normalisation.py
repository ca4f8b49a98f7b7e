"""Density normalisation of FNA attention (FNA A.4, eqs. 40-48): stationary law rho^(1-2a), column sums 1 (FNA-14).

Points on S^1 at the quantiles of a non-uniform density rho; C = Phi(d/s); the a-normalised
attention A^(a) = rownorm(D^-a C D^-a) (spectral.normalize.anisotropic_normalize). A^(a) is reversible
with stationary vector pi_i proportional to the row sums of K = D^-a C D^-a (checked to machine
precision: pi A = pi), and since D_i ~ n s M0 rho(x_i), pi_i ~ rho(x_i)^(1-2a): the fitted slope of
log pi against log rho is compared with 1 - 2a for a = 0, 1/2, 1. Eq. (43) states that the column
sums (1/n) sum_i A_ij are proportional to rho + O(eps); in fact A^(a)_ij ~ K_ij / d_j locally, so the
column sums tend to 1 for every a (slope of log column sum against log rho ~ 0, not 1). The check
asserts the corrected statements; `--column-claim paper` asserts eq. (43) (and fails), and
`--law rho` asserts a stationary law proportional to rho for every a (and fails for a > 0).
"""

from __future__ import annotations

import math

import numpy as np

from verify.core import Timer, cli_main, fit_linear, make_result, require, require_int, require_range

CHECK = "density_normalisation"
CLAIMS = ("FNA-14",)
COLUMN_CLAIMS = ("corrected", "paper")
LAWS = ("corrected", "rho")
DENSITIES = ("cosine", "vonmises")

HELP = {
    "alphas": "FNA orders (FNA eq. 10 profile for alpha < 2, eq. 9 Gaussian for alpha = 2), d_M = 1",
    "exponents": "normalisation exponents a in [0, 1] of A^(a) = rownorm(D^-a C D^-a) (FNA A.4 eqs. 40-42)",
    "scale": "kernel scale s (the paper's kappa = sqrt(eps))",
    "n": "number of quantile-grid points per density (dense n x n matrix)",
    "densities": "densities on S^1: 'cosine' (1 + 0.5 cos x)/(2 pi), 'vonmises' (kappa = 1)",
    "column_claim": "'corrected': column sums -> 1 for every a; 'paper': eq. (43), column sums proportional to rho",
    "law": "'corrected': stationary law ~ rho^(1-2a); 'rho': stationary law ~ rho for every a (negative control)",
    "seed": "unused (deterministic quantile grid); recorded for the contract",
    "device": "array device (host numerics here; 'gpu' only validates availability)",
}

# Tolerances, measured with this module (n 2000, s 0.02, both densities):
# slope of log pi vs log rho: |slope - (1 - 2a)| <= 0.05 for alpha 1.2 (0.028-0.036 cosine, 0.036-0.05
# von Mises; the O(s^alpha) heavy-tail term of the degree and the grid's h/s <= 0.25 discretisation)
# -> 0.1; <= 3e-4 for alpha 2 (the Gaussian Riemann sum is spectrally accurate) -> 0.01.
# Column sums: max |c_j - 1| 0.012 / 0.018 (alpha 1.2), 1.2e-4 (alpha 2) -> 0.05 / 0.005; slope of
# log c_j vs log rho 0.013-0.015 (alpha 1.2) -> |slope| <= 0.1 (eq. 43 would give 1).
# Stationarity pi A = pi: exact algebra, measured <= 4e-15 relative -> 1e-12 (~ 4.5 n eps).
_EXACT_TOL = 1e-12


def _slope_tol(alpha: float) -> float:
    return 0.01 if alpha >= 2 else 0.1


def _column_tol(alpha: float) -> float:
    return 0.005 if alpha >= 2 else 0.05


def run(*, alphas=(1.2, 2.0), exponents=(0.0, 0.5, 1.0), scale=0.02, n=2000, densities=("cosine", "vonmises"),
        column_claim="corrected", law="corrected", seed=0, device="cpu"):
    """Stationary law and column sums of a-normalised FNA attention on S^1; see the module docstring."""
    from spectral.backend import require_device
    from spectral.kernels import fna_kernel
    from spectral.normalize import anisotropic_normalize
    from verify.fractional_limit import _angle_pdf, _densities, quantile_angles

    alphas = tuple(float(a) for a in alphas)
    exponents = tuple(float(a) for a in exponents)
    require(len(alphas) >= 1, "alphas must name at least one alpha")
    for a in alphas:
        require_range("alphas", a, low=0.5, high=2.0)
    require(len(exponents) >= 1, "exponents must name at least one a")
    for a in exponents:
        require_range("exponents", a, low=0.0, high=1.0)
    require_range("scale", scale, low=1e-3, high=0.5)
    require_int("n", n, low=200, high=6000)
    densities = tuple(densities) if not isinstance(densities, str) else (densities,)
    require(len(densities) >= 1 and all(d in DENSITIES for d in densities),
            f"densities must be a subset of {', '.join(DENSITIES)}, got {densities!r}")
    require(column_claim in COLUMN_CLAIMS, f"column_claim must be one of {', '.join(COLUMN_CLAIMS)}, got {column_claim!r}")
    require(law in LAWS, f"law must be one of {', '.join(LAWS)}, got {law!r}")
    require_int("seed", seed, low=0)
    require_device(device)

    timer = Timer()
    measured, expected, tolerance, failures, arrays = {}, {}, {}, [], {}
    for name, density in _densities(densities):
        theta = quantile_angles(density, n)
        rho = _angle_pdf(density, theta)
        log_rho = np.log(rho)
        srt = np.sort(theta)
        gap = float(max(np.max(np.diff(srt)), 2 * math.pi - srt[-1] + srt[0]))
        measured[f"grid_gap_over_scale_{name}"] = gap / scale
        dist = np.abs(theta[:, None] - theta[None, :])
        dist = np.minimum(dist, 2 * math.pi - dist)
        for alpha in alphas:
            with timer("kernel"):
                c = fna_kernel(dist, alpha=alpha, scale=scale, dim=1)
                degree = np.sum(c, axis=1)
            for a in exponents:
                tag = f"{name}_alpha{alpha:g}_a{a:g}"
                with timer("normalise"):
                    k = c / np.outer(degree**a, degree**a)
                    pi = np.sum(k, axis=1)
                    pi = pi / np.sum(pi)
                    attn = anisotropic_normalize(c, a)
                    resid = float(np.max(np.abs(pi @ attn - pi)) / np.max(pi))
                    cols = np.sum(attn, axis=0)
                law_fit = fit_linear(log_rho, np.log(pi))
                col_fit = fit_linear(log_rho, np.log(cols))
                col_dev = float(np.max(np.abs(cols - 1)))
                claimed = 1 - 2 * a if law == "corrected" else 1.0
                measured[f"stationarity_resid_{tag}"] = resid
                expected[f"stationarity_resid_{tag}"] = 0.0
                tolerance[f"stationarity_resid_{tag}"] = _EXACT_TOL
                measured[f"law_slope_{tag}"] = law_fit.slope
                expected[f"law_slope_{tag}"] = claimed
                tolerance[f"law_slope_{tag}"] = _slope_tol(alpha)
                measured[f"column_sum_max_dev_{tag}"] = col_dev
                measured[f"column_sum_slope_{tag}"] = col_fit.slope
                if resid > _EXACT_TOL:
                    failures.append(f"{tag}: pi A != pi ({resid:.3g}); A^(a) is not reversible with pi ~ rowsum(D^-a C D^-a)")
                if abs(law_fit.slope - claimed) > _slope_tol(alpha):
                    failures.append(f"{tag}: stationary law ~ rho^{law_fit.slope:.4f}, claimed rho^{claimed:g} "
                                    f"(tolerance {_slope_tol(alpha)})")
                if column_claim == "corrected":
                    expected[f"column_sum_max_dev_{tag}"] = 0.0
                    tolerance[f"column_sum_max_dev_{tag}"] = _column_tol(alpha)
                    expected[f"column_sum_slope_{tag}"] = 0.0
                    tolerance[f"column_sum_slope_{tag}"] = 0.1
                    if col_dev > _column_tol(alpha) or abs(col_fit.slope) > 0.1:
                        failures.append(f"{tag}: column sums deviate from 1 by {col_dev:.3g} (slope {col_fit.slope:.3g} "
                                        f"in log rho)")
                else:
                    expected[f"column_sum_slope_{tag}"] = 1.0
                    tolerance[f"column_sum_slope_{tag}"] = 0.1
                    if abs(col_fit.slope - 1) > 0.1:
                        failures.append(f"{tag}: eq. (43) as printed: column sums should be proportional to rho, but "
                                        f"they scale like rho^{col_fit.slope:.3g} (max |c_j - 1| = {col_dev:.3g})")
                if a == exponents[0] and alpha == alphas[0]:
                    arrays[f"rho_{name}"] = rho
                arrays[f"pi_{tag}"] = pi
    # Regime: the tolerances above were measured at alpha in {1.2, 2}, s = 0.02, n = 2000 (widest grid
    # gap / s = 0.31 cosine, 0.54 von Mises). Outside it the check was seen to fail at alpha = 0.8
    # (column sums 0.066), s = 0.05 / 0.1 (0.053 / 0.059) and n = 500 (gap / s 2.2; law slope 0.79):
    # heavy-tail and finite-s bias or discretisation, which a failure there names.
    outside = []
    if min(alphas) < 1.2:
        outside.append(f"alpha {min(alphas):g} < 1.2 (heavy-tail part of the degree)")
    if scale > 0.02:
        outside.append(f"scale {scale:g} > 0.02 (finite-s bias)")
    worst_gap = max(v for k, v in measured.items() if k.startswith("grid_gap_over_scale_"))
    if worst_gap > 0.6:
        outside.append(f"grid gap / scale {worst_gap:.2g} > 0.6 (discretisation; raise n)")
    if failures and outside:
        failures = [f + f" [outside the measured regime: {', '.join(outside)}]" for f in failures]
    statement = ("A^(a) = rownorm(D^-a C D^-a) on points from rho has stationary law ~ rho^(1-2a) and column sums "
                 "-> 1 for every a (eq. (43)'s 'column sums ~ rho' does not hold)")
    if column_claim == "paper":
        statement = "eq. (43): the column sums (1/n) sum_i A^(a)_ij are proportional to rho(x_j)"
    if law == "rho":
        statement = "the stationary law of A^(a) is proportional to rho for every a"
    return make_result(check=CHECK, claims=CLAIMS, statement=statement, measured=measured, expected=expected,
                       tolerance=tolerance,
                       parameters=dict(alphas=alphas, exponents=exponents, scale=scale, n=n, densities=densities,
                                       column_claim=column_claim, law=law, seed=seed, device=device),
                       failures=failures, timings=timer.timings, arrays=arrays)


def plot(result, path):
    """log pi against log rho for each a (first density, first alpha) with slopes 1 - 2a."""
    from figures._plotting import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    name = result.parameters["densities"][0]
    alpha = result.parameters["alphas"][0]
    rho = np.asarray(result.arrays[f"rho_{name}"])
    for a in result.parameters["exponents"]:
        pi = np.asarray(result.arrays[f"pi_{name}_alpha{alpha:g}_a{a:g}"])
        ax.loglog(rho, pi * len(pi), ".", ms=2, label=f"a = {a:g} (slope {1 - 2 * a:g})")
    ax.set_xlabel("rho(x_i)")
    ax.set_ylabel("n pi_i")
    ax.legend(fontsize=7)
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    return cli_main(run, argv, help=HELP, plot=plot,
                    choices={"column_claim": COLUMN_CLAIMS, "law": LAWS, "device": ("cpu", "gpu")},
                    annotations={"densities": tuple})


if __name__ == "__main__":
    raise SystemExit(main())
