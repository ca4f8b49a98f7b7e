"""How far information spreads under the PDE refinement, and how fast it decays with distance (PDE-8, 9, 12).

One explicit key-axis diffusion step convolves each attention row with ``[r, 1 - 2r, r]``
(``r = alpha dt / ds^2``), a kernel with mean 0 and variance ``2 r ds^2 = 2 alpha dt``. Away from the
ends, therefore:

PDE-8 (Thm. 1, D.1 item 1, E.1). ``Var_n = Var_0 + 2 alpha n dt`` exactly, the spread is
``sqrt(Var_0 + 2 alpha t)`` (slope 1/2 in t on log-log axes) and the support grows by exactly one token
per side and step; with zero-flux ends the variance saturates at ``(T^2 - 1) / 12`` (uniform row).
The paper's "propagation speed v_eff = Omega(t^(1/2))" has the wrong sign of the exponent: the
spread grows like ``t^(1/2)``, so its speed falls like ``t^(-1/2)``.

PDE-9 (Thm. D.1 item 2). After ``N_t`` steps a row started from a delta is exactly zero beyond ``N_t``
tokens (compact support); in the continuum limit it is the Gaussian
``exp(-s^2 / (4 alpha t)) / sqrt(4 pi alpha t)``, which decays faster than any exponential in the
distance s. The only power law is the peak height ``(4 pi alpha t)^(-1/2)`` in pseudo-time. Vanilla
softmax attention of random tokens without positional bias has no distance decay at all (the mean
weight is flat in ``|i - j|``), so there is no "exponential decay" to improve on.

PDE-12 (Thm. D.2 item 3). A linear range bound ``R(t) >= R(0) + k t`` holds for the support width
(``R_0 + 2n`` exactly) and for the wave front (speed c), not for the diffusive spread: extrapolating
its early rate overshoots at large t.

Rows are evolved through the factored path of :func:`spectral.evolve_attention` (each row is a
column of the key factor, so T = 1024 costs O(T) per step).

``claim="printed"`` asserts the printed statements: the spread speed grows like ``t^(1/2)``, PDE
attention decays polynomially in distance (positive weights everywhere, power-law shape), vanilla
attention decays exponentially with distance, and the diffusive range grows linearly. All fail.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.validation import check_int, check_option, check_real, child_rng
from verify.core.check import Check
from verify.core.result import Recorder

CHECK = Check("pde_spread", claims=("PDE-8", "PDE-9", "PDE-12"))


def _evolve_rows(rows: np.ndarray, steps: int, *, alpha: float, pde: str = "diffusion", c: float = 0.15,
                 boundary: str = "neumann") -> np.ndarray:
    """Evolve each row of ``rows`` (shape (m, T)) along its keys: the key factor of phi(Q) phi(K)^T."""
    from spectral import FactoredAttention, evolve_attention

    key = np.ascontiguousarray(rows.T)
    fa = FactoredAttention(np.ones_like(key), key)
    res = evolve_attention(fa, pde=pde, steps=steps, alpha=alpha, c=c, boundary=boundary)
    return res.attention.key.T


def _moments(rows: np.ndarray):
    """Mean and variance of each row as a distribution over positions (centred to avoid cancellation)."""
    j = np.arange(rows.shape[1], dtype=float) - rows.shape[1] // 2
    mass = rows.sum(axis=1)
    mean = rows @ j / mass
    var = rows @ (j * j) / mass - mean * mean
    return mean, var


@CHECK.define
def run(*, size=1024, rates=(0.1, 0.25, 0.5), steps=200, random_rows=4, variance_rate=2.0, softmax_draws=32,
        claim="corrected", seed=0, device="cpu"):
    """Exact variance growth, compact/Gaussian decay, range growth of the refinement.

    Parameters
    ----------
    size : int
        Sequence length T; rows start at the centre and stay away from the ends for ``steps``
        steps, in [256, 8192].
    rates : tuple of float
        Mesh ratios r = alpha dt / ds^2 (dt = ds = 1), each in (0, 0.5].
    steps : int
        Steps n (pseudo-time t = n), in [16, size / 2 - 40].
    random_rows : int
        Random non-negative rows (support 65 tokens) besides the delta row, in [1, 64].
    variance_rate : float
        Claimed coefficient q in Var_n = Var_0 + q alpha n dt (2 is exact; other values are negative
        controls), in (0, 8].
    softmax_draws : int
        Random softmax matrices (T = 256, d = 16) for the distance profile of vanilla attention, in [8, 256].
    claim : {"corrected", "printed"}
        "corrected" asserts the exact spread laws; "printed" asserts a growing spread speed,
        polynomial decay in distance, exponential decay of vanilla attention and linear diffusive range
        growth (fail).
    seed : int
        Seed of the random rows and of the softmax draws.
    device : {"cpu"}
        Array device; this check runs on the host only.

    Returns
    -------
    CheckResult
        Passes when the variance identity holds to rounding and the decay and range laws hold.
    """
    from verify.core.fits import fit_linear, fit_power_law
    from manifolds.references.pde import heat_kernel_1d, softmax_attention
    from spectral.validation import InputError

    size = check_int("size", size, low=256, high=8192)
    rates = tuple(check_real("rates", r, low=0.0, high=0.5, low_open=True) for r in rates)
    if not rates:
        raise InputError("rates must hold at least one value")
    steps = check_int("steps", steps, low=16, high=size // 2 - 40)
    random_rows = check_int("random_rows", random_rows, low=1, high=64)
    variance_rate = check_real("variance_rate", variance_rate, low=0.0, high=8.0, low_open=True)
    softmax_draws = check_int("softmax_draws", softmax_draws, low=8, high=256)
    claim = check_option("claim", claim, ("corrected", "printed"))

    T, centre = size, size // 2
    rng = child_rng(seed, "rows")
    rows0 = np.zeros((1 + random_rows, T))
    rows0[0, centre] = 1.0
    w = rng.random((random_rows, 65))
    rows0[1:, centre - 32:centre + 33] = w / w.sum(axis=1, keepdims=True)
    _, var0 = _moments(rows0)
    rec = Recorder()
    ns = np.unique(np.round(np.geomspace(1, steps, 24)).astype(int))
    var_err = 0.0
    support_err = 0
    spread, speed_slopes = {}, {}
    with rec.timed("diffusion"):
        for r in rates:
            cur, done = rows0, 0
            std_delta = []
            for n in ns:
                cur = _evolve_rows(cur, int(n - done), alpha=r)
                done = n
                _, var = _moments(cur)
                expect = var0 + variance_rate * r * n
                var_err = max(var_err, float(np.max(np.abs(var - expect) / expect)))
                nz = np.nonzero(cur[0])[0]
                support_err = max(support_err, abs(int(nz[0]) - (centre - n)), abs(int(nz[-1]) - (centre + n)))
                std_delta.append(math.sqrt(var[0]))
            std_delta = np.array(std_delta)
            spread[r] = std_delta
            rec.array(f"spread_std_r{r:g}", std_delta)
            t_mid = np.sqrt(ns[1:] * ns[:-1])
            speed = np.diff(std_delta) / np.diff(ns)
            speed_slopes[r] = fit_power_law(t_mid, speed).slope
    rec.array("spread_steps", ns)
    rec.at_most("variance_identity_relative_error", var_err, 1e-12,
                why="each step convolves with [r, 1-2r, r] (variance 2r); exact up to rounding of sums of T terms "
                    "(centred positions; measured <= 1e-13)",
                label=f"Var_n is not Var_0 + {variance_rate:g} alpha n dt")
    rec.equal("support_extent_error", support_err, 0,
              why="the three-point stencil moves the outermost non-zero entry by exactly one token per step "
                  "(r^n >= 1e-61 does not underflow for n <= 200, r >= 0.1)",
              label="the support of a delta row does not grow by one token per side and step")
    slope = max(abs(fit_power_law(ns, spread[r]).slope - 0.5) for r in rates)
    rec.at_most("spread_slope_deviation", slope, 1e-10,
                why="from a delta the spread is sqrt(2 alpha t) exactly: slope 1/2 to rounding",
                label="the spread does not grow like t^(1/2)")
    # saturation with zero-flux ends: T = 32, the variance reaches the uniform (T^2 - 1) / 12
    small = np.zeros((1, 32))
    small[0, 3] = 1.0
    sat = _evolve_rows(small, 3000, alpha=0.5)
    _, var_sat = _moments(sat)
    rec.close("saturated_variance", float(var_sat[0]), (32 ** 2 - 1) / 12.0, rtol=1e-6,
              why="Neumann ends: the row tends to uniform at rate (1 - r mu_1)^n = e^-14 after 3000 steps "
                  "(measured relative 1e-8)",
              label="the variance does not saturate at (T^2 - 1)/12 with zero-flux ends")
    if claim == "corrected":
        rec.close("spread_speed_exponent", float(np.mean(list(speed_slopes.values()))), -0.5, atol=0.02,
                  why="d/dt sqrt(2 alpha t) ~ t^(-1/2); finite differences on a geometric grid bias the fitted "
                      "exponent by < 0.01 (measured -0.499)",
                  label="the spread speed does not fall like t^(-1/2)")
    else:
        rec.close("printed_spread_speed_exponent", float(np.mean(list(speed_slopes.values()))), 0.5, atol=0.05,
                  why="Thm. D.1(1) as printed: v_eff = Omega(t^(1/2)), a speed growing like t^(1/2)",
                  label="Thm. D.1(1) as printed: the spread speed falls like t^(-1/2) instead of growing")

    # PDE-9: compact support and Gaussian shape of the evolved delta
    with rec.timed("decay"):
        beyond = 0
        for n in (1, 2, 4):
            prof = _evolve_rows(rows0[:1], n, alpha=0.25)[0]
            s = np.abs(np.arange(T) - centre)
            beyond += int(np.count_nonzero(prof[s > n]))
        r_shape, n_shape = 0.25, steps
        prof = _evolve_rows(rows0[:1], n_shape, alpha=r_shape)[0]
        s = np.arange(T) - centre
        sigma = math.sqrt(2 * r_shape * n_shape)
        window = (s > 0) & (s <= 3 * sigma)
        heat = heat_kernel_1d(s[window], r_shape * n_shape)
        heat_err = float(np.max(np.abs(prof[window] / heat - 1.0)))
        logp = np.log(prof[window])
        gauss = fit_linear(s[window] ** 2, logp)
        expo = fit_linear(s[window], logp)
        power = fit_linear(np.log(s[window]), logp)
        peaks = []
        cur, done = rows0[:1], 0
        for n in ns:
            cur = _evolve_rows(cur, int(n - done), alpha=r_shape)
            done = n
            peaks.append(float(cur[0, centre]))
        late = ns >= 16
        peak_slope = fit_power_law(ns[late], np.array(peaks)[late]).slope
        rec.array("profile_offsets", s[window])
        rec.array("profile_discrete", prof[window])
        rec.array("profile_heat_kernel", heat)
    rec.equal("nonzero_beyond_steps", beyond, 0,
              why="after N_t steps of a three-point stencil a delta is exactly 0 beyond N_t tokens",
              label="weights appear beyond N_t tokens")
    rec.at_most("heat_kernel_relative_error", heat_err, 0.02,
                why="local CLT for the [r, 1-2r, r] walk: relative error O(s^4 / (n sigma^4) + 1/n) within 3 sigma "
                    "(measured 0.011 at n = 200, r = 1/4)",
                label="the evolved delta is not the heat kernel exp(-s^2/(4 alpha t)) / sqrt(4 pi alpha t)")
    rec.info("gaussian_fit_r2", gauss.r_squared)
    rec.info("exponential_fit_r2", expo.r_squared)
    rec.info("power_fit_r2", power.r_squared)
    rec.close("peak_height_exponent", peak_slope, -0.5, atol=0.01,
              why="peak ~ (4 pi alpha t)^(-1/2) (1 + O(1/t)); fitted over t >= 16 (measured -0.497)",
              label="the peak height does not decay like t^(-1/2)")
    # vanilla softmax: mean weight against |i - j| (random tokens, no positional bias)
    Ts, nb = 256, 8
    dists = np.abs(np.subtract.outer(np.arange(Ts), np.arange(Ts)))
    edges = np.linspace(1, Ts, nb + 1)
    bins = np.digitize(dists, edges) - 1
    per_draw = []
    for k in range(softmax_draws):
        a = softmax_attention(child_rng(seed, "vanilla", k), Ts, 16)
        per_draw.append([a[(bins == b) & (dists > 0)].mean() for b in range(nb)])
    per_draw = np.array(per_draw) * Ts  # in units of the uniform weight 1/T
    means = per_draw.mean(axis=0)
    stderr = per_draw.std(axis=0, ddof=1) / math.sqrt(softmax_draws)
    z = float(np.max(np.abs(means - 1.0) / np.maximum(stderr, 1e-300)))
    from scipy import stats

    # family-wise level 1e-3 over the bins: Bonferroni with Student t (draws - 1 degrees of freedom)
    z_crit = float(stats.t.ppf(1.0 - 1e-3 / (2 * nb), softmax_draws - 1))
    trend = fit_linear(0.5 * (edges[1:] + edges[:-1]), np.log(means))
    rec.array("vanilla_bin_means", means)
    rec.info("vanilla_log_slope_per_token", trend.slope)
    if claim == "corrected":
        rec.at_least("gaussian_over_exponential_r2", gauss.r_squared - expo.r_squared, 0.01,
                     why="log a is quadratic in s (Gaussian, R^2 = 1.000); linear (exponential) and log-log (power) "
                         "fits are worse (measured R^2 0.94 and 0.66)",
                     label="the decay in distance is not better described by a Gaussian than by an exponential")
        rec.at_most("vanilla_max_bin_z", z, z_crit,
                    why="no positional bias: keys are exchangeable, so E[A_ij] = 1/T for every |i - j|; 8 distance "
                        "bins, Student t over the draws at family-wise level 1e-3 (measured max 2.7 over seeds 0-29)",
                    label="vanilla softmax attention decays with distance without a positional bias")
    else:
        rec.at_least("printed_power_over_gaussian_r2", power.r_squared - gauss.r_squared, 0.0,
                     why="Thm. D.1(2) as printed: distant interactions decay polynomially (a power law fits best)",
                     label="Thm. D.1(2) as printed: the decay in distance is Gaussian (and exactly zero beyond N_t), "
                           "not polynomial")
        rec.at_most("printed_vanilla_log_slope", trend.slope, -3 * trend.slope_stderr,
                    why="Thm. D.1(2) as printed: vanilla attention decays exponentially with distance "
                        "(a negative log-slope beyond 3 standard errors)",
                    label="Thm. D.1(2) as printed: vanilla attention without positional bias does not decay with distance")

    # PDE-12: range growth laws
    with rec.timed("range"):
        std = spread[rates[0]]
        t = ns.astype(float)
        early = t <= 10
        k_early = float(np.max((std[early] - 0.0) / t[early]))  # the best early linear rate
        overshoot = float((std[0] + k_early * (t[-1] - t[0])) / std[-1])
        widths = []
        cur, done = rows0[1:2], 0
        for n in (10, 50, 100):
            cur = _evolve_rows(cur, n - done, alpha=0.25)
            done = n
            nz = np.nonzero(cur[0])[0]
            widths.append(int(nz[-1] - nz[0] + 1))
        width_err = max(abs(wd - (65 + 2 * n)) for wd, n in zip(widths, (10, 50, 100)))
        pulse = np.exp(-0.5 * ((np.arange(T) - centre) / 8.0) ** 2)[None, :]
        c, fronts, wave_t = 0.15, [], []
        cur = pulse
        from spectral import FactoredAttention, evolve_attention

        key = np.ascontiguousarray(pulse.T)
        res = evolve_attention(FactoredAttention(np.ones_like(key), key), pde="wave", steps=0, c=c)
        for n in range(200, min(2001, int((T / 2 - 60) / c)), 200):
            res = evolve_attention(res.attention, pde="wave", steps=200, c=c, velocity=res.velocity)
            right = res.attention.key[centre:, 0]
            fronts.append(float(np.argmax(right)))
            wave_t.append(float(n))
        front_speed = fit_linear(wave_t, fronts).slope
        rec.array("wave_front_times", np.array(wave_t))
        rec.array("wave_front_positions", np.array(fronts))
    rec.equal("support_width_error", width_err, 0,
              why="support width R_0 + 2n exactly (linear in n, trivially)",
              label="the support width does not grow by 2 per step")
    rec.close("wave_front_speed", front_speed, c, rtol=0.02,
              why="discrete group velocity c cos(kappa/2) / sqrt(1 - nu^2 sin^2(kappa/2)) ~ c (1 - 0.002) for a "
                  "pulse of width 8 tokens; argmax on the integer grid (measured 0.1497)",
              label="the wave front does not move at speed c")
    if claim == "corrected":
        rec.at_least("linear_extrapolation_overshoot", overshoot, 2.0,
                     why="the spread is sqrt(2 alpha t): the early linear rate over-predicts the spread at t = n_max "
                         "by a large factor (measured 14 at n = 200, r = 0.1, from a delta)",
                     label="the diffusive spread grows linearly")
    else:
        rec.at_most("printed_linear_range_ratio", overshoot, 1.0,
                    why="Thm. D.2(3) as printed: R(t) >= R(0) + k_r t with the rate k_r of the early steps",
                    label="Thm. D.2(3) as printed: the diffusive spread falls below R(0) + k_r t (it grows like t^(1/2))")
    return rec.finish(
        "Var_n = Var_0 + 2 alpha n dt exactly and the support grows by one token per side and step; the spread "
        "is sqrt(Var_0 + 2 alpha t) (its speed falls like t^(-1/2)); influence is exactly zero beyond N_t tokens "
        "and Gaussian in distance, only the peak decays polynomially (t^(-1/2)); vanilla attention has no "
        "distance decay; range grows linearly for the support and the wave front, not for the diffusive spread"
        if claim == "corrected" else
        "the spread speed grows like t^(1/2), PDE attention decays polynomially in distance while vanilla "
        "attention decays exponentially, and the range grows linearly (PDE-8, 9, 12 as printed)")


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
