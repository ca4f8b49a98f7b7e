"""Theorem 4 (conformal rewriting) and the heat-conduction form with invariant measure p^2 (DRIFT).

Symbolic part (sympy, flat metric ``g = delta`` in ``R^n``, symbolic ``p = e^phi`` and ``u``):
``At u = Delta u + 2 <grad log p, grad u>`` equals ``f Delta_gt u`` with ``gt = f g`` and
``f = p^(4/(n-2))`` (the printed "p^(4/n-2)" read with the parenthesisation of the proof's
``lambda = 2 log p / (n-2)``) for n = 1, 3, 4; the literal reading ``p^(4/n - 2)`` fails; for n = 2
``f Delta_(f delta) = Delta`` for every ``f`` (conformal covariance), so no conformal form exists,
while the heat-conduction form ``At = p^-2 div(p^2 grad)`` holds for every n.
Numerical part (S^1, von Mises density): ``At`` is symmetric in ``L^2(p^2 dtheta)`` (quadrature);
``S = D^-1 W`` is reversible with ``pi_i ~ D_i``, and ``D_i / p(x_i)`` is flat, i.e. the stationary
density of the attention chain is proportional to ``p^2``.
"""

from __future__ import annotations

import functools

import numpy as np

from verify.core import Timer, cli_main, make_result, require, require_int, require_range

CHECK = "conformal"
CLAIMS = ("DRIFT-7", "DRIFT-8")
EXPONENTS = ("corrected", "literal")
HELP = {
    "exponent": "reading of Theorem 4's exponent: 'corrected' 4/(n-2) or 'literal' 4/n - 2",
    "weight_power": "power w of the invariant density p^w tested (DRIFT-8 claims w = 2)",
    "kappa": "von Mises concentration of the density p on S^1",
    "n": "number of i.i.d. samples on S^1 for the reversibility and stationary-density tests",
    "eps": "heat-kernel parameter eps of W = exp(-|x-y|^2/(2 eps)) (DRIFT C-convention)",
    "bins": "number of angular bins for the stationary-density profile",
    "seed": "seed of the samples on S^1",
    "device": "array device: cpu or gpu",
}


@functools.lru_cache(maxsize=2)
def _symbolic(exponent):
    """sympy differences ``At u - f Delta_gt u`` and ``At u - p^-2 div(p^2 grad u)`` per dimension."""
    try:
        import sympy as sp
    except ImportError as exc:  # sympy is in the 'test' extra, not a core dependency
        raise RuntimeError("verify.conformal needs sympy (pip install 'attention-limits[test]' or sympy)") from exc

    out = {}
    for n in (1, 2, 3, 4):
        xs = sp.symbols(f"x1:{n + 1}", real=True)
        phi = sp.Function("phi")(*xs)
        u = sp.Function("u")(*xs)
        p = sp.exp(phi)
        lap = sum(sp.diff(u, x, 2) for x in xs)
        at = lap + 2 * sum(sp.diff(sp.log(p), x) * sp.diff(u, x) for x in xs)
        heat = p**-2 * sum(sp.diff(p**2 * sp.diff(u, x), x) for x in xs)
        out[f"heat_form_n{n}"] = sp.simplify(sp.expand(at - heat))
        if n == 2:
            # general conformal factor f = e^(2 lam): Delta_(f delta) u = f^(-n/2) div(f^((n-2)/2) grad u)
            lam = sp.Function("lam")(*xs)
            f = sp.exp(2 * lam)
            lg = f ** sp.Rational(-n, 2) * sum(sp.diff(f ** sp.Rational(n - 2, 2) * sp.diff(u, x), x) for x in xs)
            out["n2_f_lap_minus_lap"] = sp.simplify(sp.expand(f * lg - lap))
            continue
        e = sp.Rational(4, n - 2) if exponent == "corrected" else sp.Rational(4, n) - 2
        f = p**e
        lg = f ** sp.Rational(-n, 2) * sum(sp.diff(f ** sp.Rational(n - 2, 2) * sp.diff(u, x), x) for x in xs)
        diff = sp.simplify(sp.expand(at - f * lg))
        # a nonzero symbolic remainder is confirmed numerically with concrete phi, u at a point
        concrete = {phi: sum((k + 1) * x / 3 for k, x in enumerate(xs)) + xs[0] ** 2 / 5,
                    u: sp.sin(xs[0]) + sum(x**2 for x in xs) / 2}
        value = diff.subs(concrete).doit()
        value = float(sp.N(value.subs({x: sp.Rational(3, 10) for x in xs})))
        out[f"theorem4_n{n}"] = (diff, value)
    return out


def run(*, exponent="corrected", weight_power=2.0, kappa=1.0, n=4000, eps=1e-3, bins=16, seed=0,
        device="cpu"):
    """Check Theorem 4 symbolically and the p^2 invariant measure numerically on S^1."""
    require_int("seed", seed, low=0)
    require(exponent in EXPONENTS, f"exponent must be one of {EXPONENTS}, got {exponent!r}")
    require_range("weight_power", weight_power, low=-4, high=4)
    require_range("kappa", kappa, low=0.0, high=5.0, low_open=True)
    require_int("n", n, low=200, high=20000)
    require_range("eps", eps, low=1e-5, high=0.1)
    require_int("bins", bins, low=4, high=200)
    require(n / bins >= 50, f"n / bins must be >= 50 for a stable profile, got n={n}, bins={bins}")
    # Resolution of the stationary-density test (quantile grid, kernel width sqrt(eps)), measured at
    # kappa in [0.5, 5], n in [1000, 20000], eps in [1e-5, 1e-2]: deviation <= 0.4 kappa^2 eps (kernel
    # bias; 1.0 % at kappa^2 eps = 0.027) while the widest grid gap 1/(n p_min) <= 1.71 sqrt(eps), but
    # 0.25-2.9 once it is >= 3.5 sqrt(eps) (e.g. 0.58 at kappa = 3, n = 4000, eps = 1e-3). Refused
    # rather than reported as a failure of the claim.
    p_min = float(np.exp(-kappa) / (2 * np.pi * _i0(kappa)))
    gap = 1.0 / (n * p_min)
    require(gap <= 2 * np.sqrt(eps), f"n too small for kappa and eps: widest quantile-grid gap 1/(n p_min) = "
            f"{gap:.3g} exceeds 2 sqrt(eps) = {2 * np.sqrt(eps):.3g}; increase n or eps, or lower kappa")
    require(kappa**2 * eps <= 0.04, f"eps too large for kappa: kernel bias ~0.4 kappa^2 eps = "
            f"{0.4 * kappa**2 * eps:.3g} must stay <= 0.016 (tolerance 0.02); lower eps or kappa")
    from spectral.backend import require_device, to_numpy

    xp = require_device(device)
    timer = Timer()
    failures = []
    measured, expected, tolerance = {}, {}, {}

    with timer("sympy"):
        sym = _symbolic(exponent)
    for key, val in sym.items():
        if key.startswith("theorem4"):
            diff, value = val
            is_zero = diff == 0
            measured[key + "_remainder_at_point"] = abs(value)
            expected[key + "_remainder_at_point"] = 0.0
            # exact symbolic identity: remainder must simplify to 0 (float evaluation of 0 is exactly 0)
            tolerance[key + "_remainder_at_point"] = 0.0
            if not is_zero:
                failures.append(f"Theorem 4 with f = p^({exponent} exponent) fails for n={key[-1]}: "
                                f"At u - f Delta_gt u = {value:.4g} at a test point")
        else:
            measured[key + "_is_zero"] = bool(val == 0)
            expected[key + "_is_zero"] = True
            if val != 0:
                failures.append(f"{key}: symbolic remainder {val} is not zero")

    # ---- DRIFT-7 numerically on S^1 (n = 1): spectrum of f Delta_(f g) (finite differences in the
    # arclength of g~ = f g) against that of At (Fourier collocation), p ~ 1 + 0.5 cos theta
    with timer("spectra"):
        spec_err, spec_pair = _spectrum_comparison(exponent)
    measured["s1_spectrum_relative_error"] = spec_err
    expected["s1_spectrum_relative_error"] = 0.0
    # second differences on 4000 arclength cells: relative error ~ lambda_k h^2 / 12 (measured 1.4e-5 for
    # the 8 lowest modes); the literal exponent (f = p^2) is off by 0.167. Tolerance 1e-3.
    tolerance["s1_spectrum_relative_error"] = 1e-3
    if spec_err > 1e-3:
        failures.append(f"S^1: spectrum of f Delta_gt ({exponent} exponent) differs from that of At by "
                        f"{spec_err:.3g} (relative, 8 lowest modes)")

    # ---- DRIFT-8 on S^1: symmetry of At in L^2(p^w), reversibility, stationary density p^2
    rng = np.random.default_rng(seed)
    m = 4096  # trapezoid on a periodic analytic integrand: error ~ I_m(kappa)-small (machine precision)
    th = 2 * np.pi * np.arange(m) / m
    logp_d = -kappa * np.sin(th)
    pden = np.exp(kappa * np.cos(th)) / (2 * np.pi * _i0(kappa))
    u, du, d2u = (np.cos(th) + 0.5 * np.sin(2 * th), -np.sin(th) + np.cos(2 * th), -np.cos(th) - 2 * np.sin(2 * th))
    v, dv, d2v = (np.sin(3 * th) + 0.3 * np.cos(th), 3 * np.cos(3 * th) - 0.3 * np.sin(th),
                  -9 * np.sin(3 * th) - 0.3 * np.cos(th))
    at_u = d2u + 2 * logp_d * du
    at_v = d2v + 2 * logp_d * dv
    wgt = pden**weight_power
    lhs = float(np.mean(at_u * v * wgt))
    rhs = float(np.mean(u * at_v * wgt))
    asym = abs(lhs - rhs) / max(abs(lhs), abs(rhs))
    measured["at_asymmetry_in_L2_p^w"] = asym
    expected["at_asymmetry_in_L2_p^w"] = 0.0
    # quadrature is exact to round-off (measured ~1e-15 for w = 2); w = 1 gives O(1)
    tolerance["at_asymmetry_in_L2_p^w"] = 1e-10
    if asym > 1e-10:
        failures.append(f"At is not symmetric in L^2(p^{weight_power:g}): relative asymmetry {asym:.3e} > 1e-10")

    from scipy.stats import vonmises

    def degrees(theta):
        x = xp.asarray(np.stack([np.cos(theta), np.sin(theta)], axis=1))
        # |x_i - x_j|^2 = 2 - 2 x_i.x_j on the unit circle (clipped at 0 against round-off)
        sq = xp.clip(2.0 - 2.0 * (x @ x.T), 0.0, None)
        w = xp.exp(-sq / (2 * eps))
        return w, xp.sum(w, axis=1)

    with timer("reversibility"):
        theta_iid = vonmises.rvs(kappa, size=min(n, 2000), random_state=rng)
        w, deg = degrees(theta_iid)
        s = w / deg[:, None]
        pi = deg / xp.sum(deg)
        flow = pi[:, None] * s
        rev = float(to_numpy(xp.max(xp.abs(flow - flow.T)) / xp.max(flow)))
    measured["reversibility_defect"] = rev
    expected["reversibility_defect"] = 0.0
    # exact algebra: pi_i S_ij = W_ij / sum(D); round-off ~ few eps(float64) relative (measured ~4e-16)
    tolerance["reversibility_defect"] = 1e-14
    if rev > 1e-14:
        failures.append(f"S = D^-1 W is not reversible w.r.t. pi ~ D: defect {rev:.3e} > 1e-14")

    # Stationary density: pi_i ~ D_i ~ N sqrt(2 pi eps) p(x_i), so the pi-mass per unit angle is
    # ~ p * p. Tested on the deterministic quantile grid theta_i = F^-1((i + 1/2)/n): on i.i.d. samples
    # the binned pi-mass carries the Poisson noise of the sample (measured 9-16 % at n = 4000 over
    # seeds 0-3), which hides the 2 % statement; the grid leaves only the O(eps) kernel bias.
    with timer("stationary"):
        theta = _vonmises_quantiles(n, kappa)
        _, deg = degrees(theta)
        deg_np = to_numpy(deg)
    p_at = np.exp(kappa * np.cos(theta)) / (2 * np.pi * _i0(kappa))
    ratio = deg_np / p_at ** (weight_power - 1.0)
    edges = np.linspace(-np.pi, np.pi, bins + 1)
    idx = np.clip(np.searchsorted(edges, theta, side="right") - 1, 0, bins - 1)
    prof = np.array([ratio[idx == b].mean() if np.any(idx == b) else np.nan for b in range(bins)])
    prof = prof[np.isfinite(prof)]
    flat = float(np.max(np.abs(prof / np.mean(prof) - 1.0)))
    measured["stationary_profile_deviation"] = flat
    expected["stationary_profile_deviation"] = 0.0
    # DRIFT-8 tolerance 2 %: O(eps (p''/p)) kernel bias plus the grid's self-term offset 1/(n sqrt(2 pi
    # eps) p); measured 7.1e-4 (eps = 1e-3), 2.1e-3 (3e-3), 7.1e-3 (1e-2) at n = 4000, kappa = 1, for
    # w = 2; w = 1 (density p) gives 1.08 (~ e^(2 kappa) - 1 over the bins).
    tolerance["stationary_profile_deviation"] = 0.02
    if flat > 0.02:
        failures.append(f"stationary density is not proportional to p^{weight_power:g}: binned "
                        f"D_i/p^{weight_power - 1:g} deviates by {flat:.3f} > 0.02")

    statement = ("At = Delta + 2<grad log p, grad> = f Delta_(f g) with f = p^(4/(n-2)) for n = 1, 3, 4 (none "
                 "for n = 2) and = p^-2 div(p^2 grad) for every n; At is symmetric in L^2(p^2) and the "
                 "attention chain S = D^-1 W is reversible with stationary density ~ p^2")
    return make_result(
        check=CHECK, claims=CLAIMS, statement=statement, measured=measured, expected=expected,
        tolerance=tolerance,
        parameters={"exponent": exponent, "weight_power": weight_power, "kappa": kappa, "n": n, "eps": eps,
                    "bins": bins, "seed": seed, "device": device},
        failures=failures, timings=timer.timings, arrays={"stationary_profile": prof},
    )


@functools.lru_cache(maxsize=2)
def _spectrum_comparison(exponent, *, modes=8, cells=4000):
    """Relative difference of the lowest nonzero eigenvalues of At and of f Delta_gt on S^1 (n = 1)."""
    # At = d^2/dtheta^2 + 2 (log p)' d/dtheta by Fourier collocation (spectrally accurate)
    m = 256
    th = 2 * np.pi * np.arange(m) / m
    k = np.fft.fftfreq(m, d=1.0 / m)
    fh = np.fft.fft(np.eye(m), axis=0)
    k1 = 1j * k
    k1[m // 2] = 0.0
    d1 = np.real(np.fft.ifft(k1[:, None] * fh, axis=0))
    d2 = np.real(np.fft.ifft(-(k**2)[:, None] * fh, axis=0))
    logp_d = -0.5 * np.sin(th) / (1 + 0.5 * np.cos(th))
    at = d2 + 2 * logp_d[:, None] * d1
    lam_at = np.sort(-np.real(np.linalg.eigvals(at)))[1:modes + 1]
    # f Delta_gt with gt = f dtheta^2: arclength s = int sqrt(f) dtheta, Delta_gt = d^2/ds^2 (1-D)
    power = -4.0 if exponent == "corrected" else 2.0  # 4/(n-2) vs 4/n - 2 at n = 1
    fine = np.linspace(0, 2 * np.pi, 2**16 + 1)
    sqrt_f = (1 + 0.5 * np.cos(fine)) ** (power / 2)
    s_cum = np.concatenate([[0.0], np.cumsum((sqrt_f[1:] + sqrt_f[:-1]) / 2 * np.diff(fine))])
    h = s_cum[-1] / cells
    theta_s = np.interp(h * np.arange(cells), s_cum, fine)
    f_vals = (1 + 0.5 * np.cos(theta_s)) ** power
    import scipy.sparse as sp
    from scipy.sparse.linalg import eigsh

    ones = np.ones(cells)
    lap = sp.diags_array([ones[:-1], -2 * ones, ones[:-1], [1.0], [1.0]], offsets=[-1, 0, 1, cells - 1, -(cells - 1)],
                         shape=(cells, cells), format="csc") / h**2
    sf = sp.diags_array(np.sqrt(f_vals))
    neg = -(sf @ lap @ sf).tocsc()  # similar to -diag(f) lap: symmetric positive semidefinite
    vals = eigsh(neg, k=modes + 1, sigma=-0.5, which="LM", v0=np.ones(cells), return_eigenvectors=False)
    lam_conf = np.sort(vals)[1:modes + 1]
    return float(np.max(np.abs(lam_conf / lam_at - 1.0))), (lam_at, lam_conf)


def _vonmises_quantiles(n, kappa):
    """Quantile grid ``F^-1((i + 1/2)/n)`` of the von Mises law on [-pi, pi) (CDF by trapezoid on 2^16 cells)."""
    grid = np.linspace(-np.pi, np.pi, 2**16 + 1)
    dens = np.exp(kappa * (np.cos(grid) - 1.0))
    cdf = np.concatenate([[0.0], np.cumsum((dens[1:] + dens[:-1]) / 2)])
    cdf /= cdf[-1]
    return np.interp((np.arange(n) + 0.5) / n, cdf, grid)


def _i0(kappa):
    from scipy.special import i0

    return float(i0(kappa))


def main(argv=None) -> int:
    return cli_main(run, argv, help=HELP, choices={"exponent": EXPONENTS})


if __name__ == "__main__":
    raise SystemExit(main())
