"""The FNA generator converges like scale^(2-alpha), not like t = scale^alpha (FNA-13, proof of Lemma 1).

On the equispaced S^1 grid (circulant path, h = scale/h_ratio so discretisation is negligible) the
generator eigenvalues lambda_k(s) = -log(eta_k)/s^alpha of A = N_R(Phi(d/s)) are compared with
their exact limit m(k)/M0 (geodesic multiplier, DESIGN.md 3.1). The relative bias
lambda_k(s)/lambda_k - 1 = -C_alpha (k s)^(2-alpha) + C'_alpha (k s) + ..., with
C_alpha = -2 Gamma(alpha-2) c_{1,alpha}/Gamma(alpha+1) (the finite-part second moment of Phi) and
C'_alpha = -tan(pi alpha/2) (the |xi|^(alpha+1) term of Phi's tail expansion). The exponent is fitted
on a scale ladder after removing the C' term, and also reported raw. The paper's proof implies a
bias O(t) = O(s^alpha); that is what `--rate paper` asserts (and fails). Control: with Phi replaced
by the exact periodised stable density the eigenvalues are k^alpha at every s, to round-off.
"""

from __future__ import annotations

import math

import numpy as np

from verify.core import Timer, cli_main, fit_power_law, make_result, require, require_int, require_range

CHECK = "fna_rate"
CLAIMS = ("FNA-13",)
RATES = ("corrected", "paper")

HELP = {
    "alphas": "FNA orders alpha in (1, 2) (FNA eq. 10 profile (1+z)^-(1+alpha), d_M = 1)",
    "modes": "Fourier modes k whose eigenvalues are tracked (FNA Theorem 2, Fig. 2a)",
    "scale_min": "smallest kernel scale s (the paper's kappa; t = s^alpha, FNA eq. 17)",
    "scale_max": "largest kernel scale s",
    "n_scales": "number of scales on the geometric ladder (>= 4)",
    "h_ratio": "grid resolution s/h (h = 2 pi/n); discretisation error ~ alpha(1+alpha)/(12 h_ratio^2)",
    "rate": "'corrected': bias ~ s^(2-alpha) (FNA-13); 'paper': bias ~ t = s^alpha as the proof of Lemma 1 implies",
    "control_scales": "number of ladder scales (largest first: cheapest grids) at which the stable-kernel control runs",
    "full": "heavier sweep: scales 3e-5..1e-2, 10 scales (n up to 1.3e7)",
    "seed": "unused (deterministic check); recorded for the contract",
    "device": "array device for the kernel row and the FFT ('cpu' or 'gpu')",
}

# Tolerances (measured with this module, ladder 2e-4..1e-2, 6 scales, h_ratio 64, modes 2 and 5):
# exponent after removing the C' term: 0.786-0.788 (alpha 1.2), 0.496-0.497 (1.5), 0.1996-0.1998 (1.8)
# -> |p - (2 - alpha)| <= 0.015; tolerance 0.03 (2x margin; the residual at alpha 1.2 is the next
# order (k s)^(2(2-alpha)) term). Amplitude against C_alpha: 7-9 % low at 1.2 (same next-order term),
# <= 2.5 % at 1.5, <= 0.5 % at 1.8 -> tolerance 15 %.
_EXPONENT_TOL = 0.03
_AMPLITUDE_TOL = 0.15
# Stable-kernel control: |lambda_k/k^alpha - 1| measured <= 3e-13 (round-off of -log(eta)/t with
# 1 - eta ~ (k s)^alpha >= 1e-7); tolerance 1e-8, still 5 orders below the smallest FNA bias.
_CONTROL_TOL = 1e-8


def bias_constants(alpha: float) -> tuple[float, float]:
    """``(C_alpha, C'_alpha)`` of ``lambda_k(s)/lambda_k - 1 = -C (k s)^(2-alpha) + C' (k s) + ...``."""
    from manifolds.kernel_spectra import fractional_constant

    c1 = fractional_constant(1, alpha)
    return -2 * math.gamma(alpha - 2) * c1 / math.gamma(alpha + 1), -math.tan(math.pi * alpha / 2)


def _grid_distances(n: int, xp):
    j = xp.arange(n, dtype=xp.float64)
    return (2 * math.pi / n) * xp.minimum(j, n - j)


def _modes_eta(first_row, modes):
    """eta_k of the circulant Markov matrix for the requested Fourier indices (spectral.eigen path)."""
    from spectral.backend import to_numpy
    from spectral.eigen import circulant_spectrum

    spec = circulant_spectrum(first_row, k=2 * max(modes) + 1)
    freqs = to_numpy(spec.frequencies)
    eta = to_numpy(spec.eigenvalues)
    out = []
    for k in modes:
        hit = np.flatnonzero(freqs == k)
        require(hit.size > 0, f"mode {k} not among the leading eigenvalues (kernel not monotone in k?)")
        out.append(float(eta[hit[0]]))
    return np.array(out)


def fna_eigenvalues(alpha: float, scale: float, modes, *, h_ratio: float, xp=np) -> tuple[np.ndarray, int]:
    """``lambda_k = -log(eta_k)/scale^alpha`` of the FNA kernel on an equispaced grid, h = scale/h_ratio."""
    from spectral.kernels import fna_kernel, fna_time

    n = int(round(2 * math.pi * h_ratio / scale))
    n += n % 2
    d = _grid_distances(n, xp)
    row = fna_kernel(d[None, :], alpha=alpha, scale=scale, dim=1)[0, :]
    eta = _modes_eta(row, modes)
    return -np.log(eta) / fna_time(scale, alpha), n


def stable_eigenvalues(alpha: float, scale: float, modes, *, h_ratio: float) -> np.ndarray:
    """Same with the exact periodised stable density as the kernel row (host reference)."""
    from verify._stable import periodised_stable_pdf

    n = int(round(2 * math.pi * h_ratio / scale))
    n += n % 2
    d = _grid_distances(n, np)
    row = periodised_stable_pdf(d, alpha, scale)
    eta = _modes_eta(row, modes)
    return -np.log(eta) / scale**alpha


def run(*, alphas=(1.2, 1.5, 1.8), modes=(2, 5), scale_min=2e-4, scale_max=1e-2, n_scales=6, h_ratio=64.0,
        rate="corrected", control_scales=2, full=False, seed=0, device="cpu"):
    """Fit the FNA generator bias exponent on a scale ladder; see the module docstring."""
    from manifolds.kernel_spectra import circle_generator_eigenvalues, limit_generator_eigenvalues
    from spectral.backend import require_device

    alphas = tuple(float(a) for a in alphas)
    modes = tuple(int(k) for k in modes)
    require(len(alphas) >= 1, "alphas must name at least one alpha")
    for a in alphas:
        require_range("alphas", a, low=1, high=2, low_open=True, high_open=True)
    require(len(modes) >= 1, "modes must name at least one mode")
    for k in modes:
        require_int("modes", k, low=1, high=50)
    require(rate in RATES, f"rate must be one of {', '.join(RATES)}, got {rate!r}")
    require(isinstance(full, bool), f"full must be true or false, got {full!r}")
    if full:
        scale_min, scale_max, n_scales, h_ratio = 3e-5, 1e-2, 10, 64.0
    require_range("scale_min", scale_min, low=1e-6, high=0.05)
    require_range("scale_max", scale_max, low=scale_min, high=0.05, low_open=True)
    require_int("n_scales", n_scales, low=4, high=40)
    # s/h below 24 leaves grid error in the bias fit: h_ratio 16 gave exponent 0.761 (raw 0.672) for
    # alpha 1.2, k 2 (need 0.8 +- 0.03); 24, 32, 48, 64, 128 pass at the default ladder.
    require_range("h_ratio", h_ratio, low=24, high=512)
    require(2 * math.pi * h_ratio / scale_min <= 1e8,
            f"scale_min/h_ratio give n = {2 * math.pi * h_ratio / scale_min:.3g} grid points (limit 1e8)")
    require_int("control_scales", control_scales, low=0, high=n_scales)
    require_int("seed", seed, low=0)
    xp = require_device(device)

    timer = Timer()
    scales = np.geomspace(scale_min, scale_max, n_scales)
    measured, expected, tolerance, failures, arrays = {}, {}, {}, [], {"scales": scales}
    for alpha in alphas:
        tag = f"{alpha:g}"
        limit = np.asarray(limit_generator_eigenvalues(np.array(modes), alpha=alpha))
        big_c, c_prime = bias_constants(alpha)
        bias = np.empty((n_scales, len(modes)))
        disc = np.empty((n_scales, len(modes)))
        with timer("fna_spectra"):
            for i, s in enumerate(scales):
                lam, _ = fna_eigenvalues(alpha, float(s), modes, h_ratio=h_ratio, xp=xp)
                bias[i] = lam / limit - 1
                cont = np.asarray(circle_generator_eigenvalues(np.array(modes), alpha=alpha, scale=float(s)))
                disc[i] = lam / cont - 1
        arrays[f"bias_a{tag}"] = bias
        # discretisation: ~ -alpha(1+alpha)/(12 h_ratio^2) for every k (DESIGN.md 3.1); allow 2x.
        disc_bound = 2 * alpha * (1 + alpha) / (12 * h_ratio**2)
        measured[f"discretisation_max_a{tag}"] = float(np.max(np.abs(disc)))
        expected[f"discretisation_max_a{tag}"] = 0.0
        tolerance[f"discretisation_max_a{tag}"] = disc_bound
        if np.max(np.abs(disc)) > disc_bound:
            failures.append(f"alpha = {tag}: grid spectrum differs from the finite-scale continuum by "
                            f"{np.max(np.abs(disc)):.3g} (> {disc_bound:.3g}); the ladder is not discretisation-free")
        claimed = 2 - alpha if rate == "corrected" else alpha
        for j, k in enumerate(modes):
            raw = fit_power_law(scales, np.abs(bias[:, j]))
            leading = -(bias[:, j] - c_prime * k * scales)
            require(bool(np.all(leading > 0)), f"alpha = {tag}, k = {k}: bias without the C' term changes sign")
            fit = fit_power_law(scales, leading)
            amp = math.exp(fit.intercept) / k ** fit.slope
            key = f"a{tag}_k{k}"
            measured[f"exponent_raw_{key}"] = raw.slope
            measured[f"exponent_{key}"] = fit.slope
            expected[f"exponent_{key}"] = claimed
            tolerance[f"exponent_{key}"] = _EXPONENT_TOL
            measured[f"amplitude_{key}"] = amp
            measured[f"bias_smallest_scale_{key}"] = float(bias[0, j])
            if abs(fit.slope - claimed) > _EXPONENT_TOL:
                what = "s^(2-alpha)" if rate == "corrected" else "t = s^alpha (the paper's O(t))"
                failures.append(f"alpha = {tag}, k = {k}: bias exponent {fit.slope:.4f} (raw {raw.slope:.4f}) is not "
                                f"{claimed:.3g} +- {_EXPONENT_TOL} as {what} requires")
            if rate == "corrected":
                expected[f"amplitude_{key}"] = big_c
                tolerance[f"amplitude_{key}"] = _AMPLITUDE_TOL * big_c
                if abs(amp / big_c - 1) > _AMPLITUDE_TOL:
                    failures.append(f"alpha = {tag}, k = {k}: bias amplitude {amp:.4g} differs from C_alpha = {big_c:.4g} "
                                    f"by more than {_AMPLITUDE_TOL:.0%}")
        with timer("stable_control"):
            worst = 0.0
            for s in (scales[n_scales - control_scales:] if control_scales else ()):
                lam = stable_eigenvalues(alpha, float(s), modes, h_ratio=8.0)
                worst = max(worst, float(np.max(np.abs(lam / np.array(modes, dtype=float) ** alpha - 1))))
        if control_scales:
            measured[f"stable_control_bias_a{tag}"] = worst
            expected[f"stable_control_bias_a{tag}"] = 0.0
            tolerance[f"stable_control_bias_a{tag}"] = _CONTROL_TOL
            if worst > _CONTROL_TOL:
                failures.append(f"alpha = {tag}: with the periodised stable kernel lambda_k/k^alpha - 1 = {worst:.3g} "
                                f"(> {_CONTROL_TOL:g})")
    statement = ("the FNA generator eigenvalues on S^1 approach m(k)/M0 with relative bias -C_alpha (k s)^(2-alpha) "
                 "(not O(t) = O(s^alpha) as the proof of Lemma 1 implies); the exact stable kernel has no bias")
    if rate == "paper":
        statement = "the FNA generator bias is O(t) = O(s^alpha) (proof of Lemma 1, eq. 30)"
    return make_result(check=CHECK, claims=CLAIMS, statement=statement, measured=measured, expected=expected,
                       tolerance=tolerance,
                       parameters=dict(alphas=alphas, modes=modes, scale_min=scale_min, scale_max=scale_max,
                                       n_scales=n_scales, h_ratio=h_ratio, rate=rate, control_scales=control_scales,
                                       full=full, seed=seed, device=device),
                       failures=failures, timings=timer.timings, arrays=arrays)


def plot(result, path):
    """Relative bias |lambda_k(s)/lambda_k - 1| against s (log-log) with the s^(2-alpha) guides."""
    from figures._plotting import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    scales = np.asarray(result.arrays["scales"])
    modes = result.parameters["modes"]
    for alpha in result.parameters["alphas"]:
        bias = np.abs(np.asarray(result.arrays[f"bias_a{alpha:g}"]))
        for j, k in enumerate(modes):
            line, = ax.loglog(scales, bias[:, j], "o-", ms=3, label=f"alpha {alpha:g}, k {k}")
            ax.loglog(scales, bias[0, j] * (scales / scales[0]) ** (2 - alpha), ":", color=line.get_color(), lw=0.8)
    ax.set_xlabel("scale s")
    ax.set_ylabel("|lambda_k(s) / lambda_k - 1|")
    ax.legend(fontsize=7)
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    return cli_main(run, argv, help=HELP, plot=plot, choices={"rate": RATES, "device": ("cpu", "gpu")})


if __name__ == "__main__":
    raise SystemExit(main())
