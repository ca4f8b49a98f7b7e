"""The FNA generator converges like scale^(2-alpha), not like t = scale^alpha (FNA-13, proof of Lemma 1).

On the equispaced S^1 grid (circulant path, h = scale/h_ratio so discretisation is negligible) the
generator eigenvalues lambda_k(s) = -log(eta_k)/s^alpha of A = N_R(Phi(d/s)) are compared with
their exact limit m(k)/M0 (the geodesic multiplier of the non-periodised kernel). The relative bias
lambda_k(s)/lambda_k - 1 = -C_alpha (k s)^(2-alpha) + C'_alpha (k s) + ... has the closed-form
constants of :func:`manifolds.fractional.generator_bias_constants`. The exponent is fitted on a scale
ladder after removing the C' term, and also reported raw. The paper's proof implies a bias
O(t) = O(s^alpha); that is what ``claim="printed"`` asserts (and fails). Control: with Phi replaced by
the exact periodised stable density the eigenvalues are k^alpha at every s, to round-off.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.validation import InputError, check_int, check_option, check_real, check_reals
from verify.core.check import Check
from verify.core.fits import fit_power_law
from verify.core.result import Recorder

CHECK = Check("fna_rate", claims=("FNA-13",), devices=("cpu", "gpu"))

# Exponent after removing the C' term, measured with this module (ladder 2e-4..1e-2, 6 scales,
# h_ratio 64, modes 2 and 5): 0.786-0.788 (alpha 1.2), 0.496-0.497 (1.5), 0.1996-0.1998 (1.8).
_EXPONENT_TOL = 0.03
_EXPONENT_WHY = ("measured |p - (2 - alpha)| <= 0.015 (alpha 1.2-1.8, modes 2 and 5; the residual at 1.2 is the "
                 "next-order (k s)^(2(2-alpha)) term): 2x margin; the paper's O(t) is off by >= 1.6")
# Amplitude against C_alpha: 7-9 % low at alpha 1.2 (the same next-order term), <= 2.5 % at 1.5, <= 0.5 % at 1.8.
_AMPLITUDE_RTOL = 0.15
_AMPLITUDE_WHY = "measured 7-9 % below C_alpha at alpha 1.2 (next-order term), <= 2.5 % at 1.5, <= 0.5 % at 1.8"
# Stable-kernel control: |lambda_k/k^alpha - 1| measured <= 3e-13 (round-off of -log(eta)/t with
# 1 - eta ~ (k s)^alpha >= 1e-7); tolerance 1e-8, still 5 orders below the smallest FNA bias.
_CONTROL_TOL = 1e-8
#: the ladder and resolution of ``full=True``
_FULL = {"scale_min": 3e-5, "scale_max": 1e-2, "n_scales": 10, "h_ratio": 64.0}


def _grid_distances(n: int, xp):
    j = xp.arange(n, dtype=xp.float64)
    return (2 * math.pi / n) * xp.minimum(j, n - j)


def _grid_size(scale: float, h_ratio: float) -> int:
    n = int(round(2 * math.pi * h_ratio / scale))
    return n + n % 2


def _modes_eta(first_row, modes):
    """eta_k of the circulant Markov matrix for the requested Fourier indices (spectral.circulant_spectrum)."""
    from spectral import circulant_spectrum
    from spectral.backend import to_numpy

    spec = circulant_spectrum(first_row, k=2 * max(modes) + 1)
    freqs = to_numpy(spec.frequencies)
    eta = to_numpy(spec.eigenvalues)
    out = []
    for k in modes:
        hit = np.flatnonzero(freqs == k)
        if hit.size == 0:  # an FNA or stable kernel row is positive definite and decreasing in k: a bug
            raise RuntimeError(f"mode {k} is not among the {2 * max(modes) + 1} leading circulant eigenvalues")
        out.append(float(eta[hit[0]]))
    return np.array(out)


def fna_eigenvalues(alpha: float, scale: float, modes, *, h_ratio: float, xp=np) -> np.ndarray:
    """``lambda_k = -log(eta_k)/scale^alpha`` of the FNA kernel on an equispaced grid, h = scale/h_ratio.

    The kernel row is built in the namespace ``xp`` (the check's device); the eigenvalues come back
    to the host once.
    """
    from spectral import fna_kernel, fna_time

    d = _grid_distances(_grid_size(scale, h_ratio), xp)
    row = fna_kernel(d[None, :], alpha=alpha, scale=scale, dim=1)[0, :]
    return -np.log(_modes_eta(row, modes)) / fna_time(scale, alpha)


def stable_eigenvalues(alpha: float, scale: float, modes, *, h_ratio: float) -> np.ndarray:
    """Same with the exact periodised stable density as the kernel row (host reference)."""
    from manifolds.stable import periodised_stable_pdf

    row = periodised_stable_pdf(_grid_distances(_grid_size(scale, h_ratio), np), alpha, scale)
    return -np.log(_modes_eta(row, modes)) / scale**alpha


#: peak bytes of the check: a constant and a slope per point of the smallest scale's grid (measured above)
_BASE_BYTES, _BYTES_PER_POINT = 40 << 20, 32


def _require_grid_memory(n: int, *, scale_min: float, h_ratio: float) -> None:
    """Refuse the grid of ``n`` points before building it when it would not fit; advise the --scale-min that does."""
    from spectral.memory import check_memory
    from verify.core.check import current_device
    from verify.core.memory import available_memory_bytes  # the running check's device: host or GPU

    device = current_device()
    needed = _BASE_BYTES + _BYTES_PER_POINT * n
    limit = available_memory_bytes()  # the running check's device
    if needed <= limit:
        return
    if limit > _BASE_BYTES + _BYTES_PER_POINT * 2:
        # n ~ 2 pi h_ratio / scale_min (+ 1 for rounding to even); three digits rounded up
        fit = 2 * math.pi * h_ratio * _BYTES_PER_POINT / (limit - _BASE_BYTES - _BYTES_PER_POINT)
        digits = 10 ** (math.floor(math.log10(fit)) - 2)
        advice = f"raise --scale-min (at least {math.ceil(fit / digits) * digits:.3g} fits now) or lower --h-ratio"
    else:
        advice = "even the coarsest grid does not fit now"
    check_memory(needed, what=f"the FNA kernel rows on n = {n} grid points (--scale-min {scale_min:g}, "
                              f"--h-ratio {h_ratio:g})", alternative=advice, device=device)


@CHECK.define
def run(*, alphas=(1.2, 1.5, 1.8), modes=(2, 5), scale_min=2e-4, scale_max=1e-2, n_scales=6, h_ratio=64.0,
        claim="corrected", control_scales=2, full=False, seed=0, device="cpu"):
    """Fit the FNA generator bias exponent on a scale ladder (FNA-13).

    Parameters
    ----------
    alphas : tuple of float
        FNA orders alpha in (1, 2) (FNA eq. 10 profile (1+z)^-(1+alpha), d_M = 1).
    modes : tuple of int
        Fourier modes k in [1, 50] whose eigenvalues are tracked (FNA Theorem 2, Fig. 2a).
    scale_min : float
        Smallest kernel scale s (the paper's kappa; t = s^alpha, FNA eq. 17), in [1e-6, 0.05].
    scale_max : float
        Largest kernel scale s, in (scale_min, 0.05].
    n_scales : int
        Number of scales on the geometric ladder, in [4, 40].
    h_ratio : float
        Grid resolution s/h (h = 2 pi/n) in [24, 512]; discretisation error ~ alpha(1+alpha)/(12 h_ratio^2).
        The grid of the smallest scale holds 2 pi h_ratio / scale_min <= 1e8 points.
    claim : {"corrected", "printed"}
        "corrected": relative bias ~ C_alpha (k s)^(2-alpha) (FNA-13); "printed": bias ~ t = s^alpha,
        as the proof of Lemma 1 (eq. 30) implies.
    control_scales : int
        Number of ladder scales (largest first: cheapest grids) at which the stable-kernel control
        runs, in [0, n_scales].
    full : bool
        Heavier sweep: scales 3e-5..1e-2, 10 scales, h_ratio 64 (n up to 1.3e7); overrides the ladder.
    seed : int
        Unused (deterministic check); recorded for the contract.
    device : {"cpu", "gpu"}
        Array device of the FNA kernel rows and their FFT spectra (the stable control is a host reference).

    Returns
    -------
    CheckResult
        Passes when every fitted exponent is within 0.03 of the asserted one, every amplitude within
        15 % of C_alpha ("corrected"), the grid is discretisation-free and the stable control unbiased.
    """
    from manifolds import generator_bias_constants
    from manifolds.kernel_spectra import circle_generator_eigenvalues, limit_generator_eigenvalues

    alphas = check_reals("alphas", alphas, low=1, high=2, low_open=True, high_open=True)
    if isinstance(modes, (str, bytes)) or not hasattr(modes, "__iter__") or not tuple(modes):
        raise InputError(f"modes must be a non-empty sequence of integers in [1, 50], got {modes!r}")
    modes = tuple(check_int("modes", k, low=1, high=50) for k in modes)
    claim = check_option("claim", claim, ("corrected", "printed"))
    rec = Recorder()
    if full:
        scale_min, scale_max, n_scales, h_ratio = (_FULL[k] for k in ("scale_min", "scale_max", "n_scales", "h_ratio"))
        for key, value in _FULL.items():
            rec.resolve(key, value)
    scale_min = check_real("scale_min", scale_min, low=1e-6, high=0.05)
    scale_max = check_real("scale_max", scale_max, low=scale_min, high=0.05, low_open=True)
    n_scales = check_int("n_scales", n_scales, low=4, high=40)
    # s/h below 24 leaves grid error in the bias fit: h_ratio 16 gave exponent 0.761 (raw 0.672) for
    # alpha 1.2, k 2 (need 0.8 +- 0.03); 24, 32, 48, 64, 128 pass at the default ladder.
    h_ratio = check_real("h_ratio", h_ratio, low=24, high=512)
    if 2 * math.pi * h_ratio / scale_min > 1e8:
        raise InputError(f"scale_min and h_ratio give n = {2 * math.pi * h_ratio / scale_min:.3g} grid points "
                         "(limit 1e8): raise scale_min or lower h_ratio")
    control_scales = check_int("control_scales", control_scales, low=0, high=n_scales)
    # Memory first: the smallest scale's grid holds n = 2 pi h_ratio / scale_min points: distances, FNA
    # row and its real FFT. tracemalloc peaks (one alpha, 4 scales) 6.2 / 11.8 / 111.9 MiB at n = 2.0e5 /
    # 4.0e5 / 4.0e6 fit 0.6 MiB + 29.2 bytes per point; the stable control stays near 39 MiB (n = 2e5 -
    # 4e6). 40 MiB + 32 bytes per point leave a margin (2.4 GiB at the 1e8-point limit).
    _require_grid_memory(_grid_size(scale_min, h_ratio), scale_min=scale_min, h_ratio=h_ratio)
    from verify.core.check import device_namespace  # looked up at run time (tests stand in array_api_strict)

    xp = device_namespace(device)

    scales = np.geomspace(scale_min, scale_max, n_scales)
    rec.array("scales", scales)
    for alpha in alphas:
        tag = f"{alpha:g}"
        limit = np.asarray(limit_generator_eigenvalues(np.array(modes), alpha=alpha))
        big_c, c_prime = generator_bias_constants(alpha)
        bias = np.empty((n_scales, len(modes)))
        disc = np.empty((n_scales, len(modes)))
        with rec.timed("fna_spectra"):
            for i, s in enumerate(scales):
                lam = fna_eigenvalues(alpha, float(s), modes, h_ratio=h_ratio, xp=xp)
                bias[i] = lam / limit - 1
                cont = np.asarray(circle_generator_eigenvalues(np.array(modes), alpha=alpha, scale=float(s)))
                disc[i] = lam / cont - 1
        rec.array(f"bias_a{tag}", bias)
        # discretisation: ~ -alpha(1+alpha)/(12 h_ratio^2) for every k (midpoint rule of the kernel core)
        disc_bound = 2 * alpha * (1 + alpha) / (12 * h_ratio**2)
        rec.at_most(f"discretisation_max_a{tag}", float(np.max(np.abs(disc))), disc_bound,
                    why="2x the midpoint-rule error alpha (1 + alpha) / (12 h_ratio^2) of the kernel core",
                    label=f"alpha = {tag}: the grid spectrum differs from the finite-scale continuum (the ladder is "
                          "not discretisation-free)")
        # The fit reads the bias of the grid spectrum, so the grid's own error must be small against the
        # smallest bias on the ladder. Measured (all three alphas): ratios 0.009 (defaults), 0.052 (--scale-min
        # 2e-5), 0.063 (--h-ratio 24), 0.098 (--scale-min 5e-5 --h-ratio 32), 0.102 (--scale-min 1e-4 --h-ratio 24)
        # passed; 0.16 (--scale-min 5e-5 --h-ratio 24) and 0.28 (--scale-min 2e-5 --h-ratio 24: exponent 0.748,
        # amplitude 2.69 at alpha 1.2, k = 2) failed. A failure above 0.1 names the grid.
        grid_error = alpha * (1 + alpha) / (12 * h_ratio**2)
        grid_share = grid_error / float(np.min(np.abs(bias)))
        rec.info(f"grid_error_over_smallest_bias_a{tag}", grid_share)
        grid_hint = (f"outside the measured regime: the grid error alpha (1 + alpha) / (12 h_ratio^2) = {grid_error:.2g} "
                     f"is {grid_share:.2g} of the smallest bias on the ladder (measured to pass up to 0.10, to fail "
                     "from 0.16): raise --h-ratio or --scale-min") if grid_share > 0.1 else ""
        claimed = 2 - alpha if claim == "corrected" else alpha
        what = "s^(2-alpha)" if claim == "corrected" else "t = s^alpha (the paper's O(t))"
        for j, k in enumerate(modes):
            key = f"a{tag}_k{k}"
            raw = fit_power_law(scales, np.abs(bias[:, j]))
            leading = -(bias[:, j] - c_prime * k * scales)
            if np.all(leading > 0):
                fit = fit_power_law(scales, leading)
                slope, amp, hint = fit.slope, math.exp(fit.intercept) / k**fit.slope, grid_hint
            else:  # the expansion does not hold on this ladder: nothing to fit
                slope, amp = math.nan, math.nan
                hint = "the bias without the C' term changes sign on the ladder: lower scale_max"
            rec.info(f"exponent_raw_{key}", raw.slope)
            rec.close(f"exponent_{key}", slope, claimed, atol=_EXPONENT_TOL, why=_EXPONENT_WHY,
                      label=f"alpha = {tag}, k = {k}: bias exponent (raw {raw.slope:.4f}) as {what} requires",
                      hint=hint)
            if claim == "corrected":
                rec.close(f"amplitude_{key}", amp, big_c, rtol=_AMPLITUDE_RTOL, why=_AMPLITUDE_WHY,
                          label=f"alpha = {tag}, k = {k}: bias amplitude against C_alpha", hint=hint)
            else:
                rec.info(f"amplitude_{key}", amp)
            rec.info(f"bias_smallest_scale_{key}", float(bias[0, j]))
        if control_scales:
            with rec.timed("stable_control"):
                worst = 0.0
                for s in scales[n_scales - control_scales:]:
                    lam = stable_eigenvalues(alpha, float(s), modes, h_ratio=8.0)
                    worst = max(worst, float(np.max(np.abs(lam / np.array(modes, dtype=float) ** alpha - 1))))
            rec.at_most(f"stable_control_bias_a{tag}", worst, _CONTROL_TOL,
                        why="round-off of -log(eta)/t: measured <= 3e-13; 1e-8 is 5 orders below the smallest FNA bias",
                        label=f"alpha = {tag}: with the periodised stable kernel lambda_k/k^alpha - 1 is not 0")
    if claim == "corrected":
        statement = ("the FNA generator eigenvalues on S^1 approach m(k)/M0 with relative bias "
                     "-C_alpha (k s)^(2-alpha) (not O(t) = O(s^alpha) as the proof of Lemma 1 implies); the exact "
                     "stable kernel has no bias")
    else:
        statement = "the FNA generator bias is O(t) = O(s^alpha) (proof of Lemma 1, eq. 30)"
    return rec.finish(statement)


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
