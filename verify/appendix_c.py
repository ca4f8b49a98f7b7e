"""First-order coefficient of the pseudo-metric attention limit (DRIFT Appendix C, Proposition 1).

Near the nearest point ``y'`` write ``f = rho + v^T C v / 2 + d_klm v_k v_l v_m / 6 + ...`` and use the
kernel ``exp(-f / (2 eps))`` (covariance ``2 eps C^-1``). Laplace's method gives

    R(eps) = int e^{-f/2eps} p g / int e^{-f/2eps} p
           = g + eps [ tr(C^-1 grad^2 g) + 2 <C^-1 grad log p, grad g> - <C^-1 (d : C^-1), grad g> ] + O(eps^2).

The printed Proposition 1 divides the Laplacian and density-drift terms by
``m0 = int exp(-v^T C v / 4) dv`` as well (only the cubic-asymmetry drift carries a ``V / m0``
normalisation). The check evaluates ``(R(eps) - g(0)) / eps`` by adaptive (1-D) and trapezoid (2-D)
quadrature, Richardson-extrapolates to ``eps -> 0`` and compares with both coefficients.
"""

from __future__ import annotations

import math

import numpy as np

from verify.core import Timer, cli_main, make_result, require, require_int, require_range

CHECK = "appendix_c"
CLAIMS = ("DRIFT-13",)
FORMULAS = ("corrected", "printed")
HELP = {
    "formula": "first-order coefficient asserted: 'corrected' (Laplace's method) or 'printed' (Prop. 1, "
               "Laplacian and density drift divided by m0)",
    "c": "1-D curvature f''(0) = c of the pseudo-metric at the nearest point",
    "d3": "1-D cubic coefficient f'''(0) (asymmetry drift)",
    "a": "density p = exp(a y) (1-D) / exp(a (v1 + v2)/2) (2-D): grad log p",
    "eps_max": "largest eps of the Richardson sequence eps_max / 2^k, k = 0..3",
    "seed": "unused (deterministic quadrature); kept for the common CLI",
    "device": "array device (quadrature runs on the host)",
}


def _g1(y):
    return np.sin(y) + y**2


def _ratio_1d(eps, c, d3, a):
    s = math.sqrt(eps)
    # scaled variable t = y / sqrt(eps): Gaussian of variance 2/c <= 4; |t| <= 30 leaves < e^{-c 225}
    # of the mass outside. Trapezoid on a smooth, rapidly decaying integrand is spectrally accurate
    # (spacing 0.005 vs width sqrt(2/c) >= 0.45); adaptive quad with epsabs = 0 raised round-off
    # IntegrationWarnings where g changes sign (a < 0, eps_max = 1e-4).
    t = np.linspace(-30.0, 30.0, 12001)
    y = s * t
    f = c / 2 * y**2 + d3 / 6 * y**3 + 0.05 * y**4
    w = np.exp(-f / (2 * eps) + a * y)
    return float(np.sum(w * _g1(y)) / np.sum(w))


def _coefficients_1d(c, d3, a):
    g1p, g2p = 1.0, 2.0  # g = sin y + y^2: g'(0) = 1, g''(0) = 2
    corrected = (g2p + 2 * a * g1p - (d3 / c) * g1p) / c
    m0 = math.sqrt(4 * math.pi / c)  # int exp(-c v^2 / 4) dv
    printed = (g2p / c + 2 * a * g1p / c) / m0 - (d3 / c**2) * g1p
    return corrected, printed, m0


# 2-D analogue: anisotropic C, a symmetric cubic tensor, density exp(a (v1 + v2) / 2)
_C2 = np.array([[2.0, 0.5], [0.5, 1.0]])
_D2 = {(0, 0, 0): 0.6, (0, 0, 1): 0.2, (0, 1, 1): -0.1, (1, 1, 1): 0.3}


def _cubic(v1, v2):
    d = _D2
    return (d[0, 0, 0] * v1**3 + 3 * d[0, 0, 1] * v1**2 * v2 + 3 * d[0, 1, 1] * v1 * v2**2 + d[1, 1, 1] * v2**3)


def _ratio_2d(eps, a):
    s = math.sqrt(eps)
    # scaled grid t = v / sqrt(eps); trapezoid on a rapidly decaying smooth integrand is spectrally
    # accurate; |t| <= 14 leaves exp(-lambda_min(C) 196 / 4) ~ 1e-17 of the mass outside
    t = np.linspace(-14, 14, 561)
    t1, t2 = np.meshgrid(t, t, indexing="ij")
    v1, v2 = s * t1, s * t2
    quad_form = 0.5 * (_C2[0, 0] * v1**2 + 2 * _C2[0, 1] * v1 * v2 + _C2[1, 1] * v2**2)
    f = quad_form + _cubic(v1, v2) / 6 + 0.05 * (v1**2 + v2**2) ** 2
    w = np.exp(-f / (2 * eps) + a * (v1 + v2) / 2)
    g = np.sin(v1) + v1 * v2 + v2**2
    return float(np.sum(w * g) / np.sum(w))


def _coefficients_2d(a):
    ci = np.linalg.inv(_C2)
    grad_g = np.array([1.0, 0.0])
    hess_g = np.array([[0.0, 1.0], [1.0, 2.0]])
    grad_logp = np.array([a / 2, a / 2])
    dt = np.zeros((2, 2, 2))
    for (k, l_, m), val in _D2.items():
        for perm in {(k, l_, m), (k, m, l_), (l_, k, m), (l_, m, k), (m, k, l_), (m, l_, k)}:
            dt[perm] = val
    dc = np.einsum("klm,lm->k", dt, ci)
    lap = float(np.trace(ci @ hess_g))
    drift = float(2 * grad_logp @ ci @ grad_g)
    asym = float(-(ci @ dc) @ grad_g)
    m0 = 2 * math.pi / math.sqrt(np.linalg.det(_C2 / 2))  # int exp(-v^T C v / 4) dv
    return lap + drift + asym, (lap + drift) / m0 + asym, m0


def _richardson(eps_seq, values):
    """Extrapolate D(eps) = D0 + D1 eps + D2 eps^2 + ... on eps_k = eps_0 / 2^k (Neville table)."""
    table = [list(values)]
    for level in range(1, len(values)):
        prev = table[-1]
        fac = 2.0**level
        table.append([(fac * prev[i + 1] - prev[i]) / (fac - 1) for i in range(len(prev) - 1)])
    return table[-1][0], table


def run(*, formula="corrected", c=2.0, d3=0.6, a=0.5, eps_max=4e-3, seed=0, device="cpu"):
    """Compare the quadrature first-order coefficient with the corrected and printed Proposition 1."""
    require(formula in FORMULAS, f"formula must be one of {FORMULAS}, got {formula!r}")
    require_range("c", c, low=0.5, high=10.0)
    require_range("d3", d3, low=-1.0, high=1.0)
    require_range("a", a, low=-2.0, high=2.0)
    require_range("eps_max", eps_max, low=1e-4, high=0.02)
    # Richardson remainder O((eps_max / c)^4): over c in [0.5, 10], d3 in [-1, 1], a in [-2, 2] the
    # measured max |quadrature - corrected| is 4.0e-5 for eps_max / c <= 0.01 (tolerance 1e-4) but
    # 3.1e-3 at eps_max / c = 0.02, so larger ratios are refused rather than reported as failures.
    require(eps_max / c <= 0.01 + 1e-12,
            f"eps_max / c must be <= 0.01 (Richardson remainder), got eps_max={eps_max!r}, c={c!r}")
    require_int("seed", seed, low=0)
    from spectral.backend import require_device

    require_device(device)
    timer = Timer()
    eps_seq = [eps_max / 2**k for k in range(4)]
    with timer("quadrature_1d"):
        g0 = _g1(0.0)
        d1 = [(_ratio_1d(e, c, d3, a) - g0) / e for e in eps_seq]
        coef1, _ = _richardson(eps_seq, d1)
    with timer("quadrature_2d"):
        d2 = [(_ratio_2d(e, a) - 0.0) / e for e in eps_seq]
        coef2, _ = _richardson(eps_seq, d2)
    corr1, print1, m0_1 = _coefficients_1d(c, d3, a)
    corr2, print2, m0_2 = _coefficients_2d(a)
    claim1 = corr1 if formula == "corrected" else print1
    claim2 = corr2 if formula == "corrected" else print2
    # Tolerance 1e-4 (ledger): after 3 Richardson levels the O(eps^4) remainder and quadrature
    # round-off (1e-12 / eps_min = 2e-9) are far below it; measured |quad - corrected| = 1.4e-12 (1-D),
    # 2.4e-9 (2-D) at eps_max = 4e-3. The printed coefficients differ by O(1): 0.448 vs 1.350 (1-D),
    # 0.277 vs 1.939 (2-D).
    tol = 1e-4
    failures = []
    for name, got, want in (("coefficient_1d", coef1, claim1), ("coefficient_2d", coef2, claim2)):
        if abs(got - want) > tol:
            failures.append(f"{name}: quadrature {got:.6f} vs {formula} Proposition 1 {want:.6f} (|diff| > {tol:.0e})")
    statement = ("(R(eps) - g(y'))/eps -> tr(C^-1 grad^2 g) + 2<C^-1 grad log p, grad g> - <C^-1(d:C^-1), grad g> "
                 "(no 1/m0 on the Laplacian and density-drift terms)")
    return make_result(
        check=CHECK, claims=CLAIMS, statement=statement,
        measured={"coefficient_1d": coef1, "coefficient_2d": coef2,
                  "raw_ratio_1d_at_eps_min": d1[-1], "printed_1d": print1, "printed_2d": print2,
                  "m0_1d": m0_1, "m0_2d": m0_2},
        expected={"coefficient_1d": claim1, "coefficient_2d": claim2},
        tolerance={"coefficient_1d": tol, "coefficient_2d": tol},
        parameters={"formula": formula, "c": c, "d3": d3, "a": a, "eps_max": eps_max, "seed": seed,
                    "device": device},
        failures=failures, timings=timer.timings,
        arrays={"eps": np.asarray(eps_seq), "difference_quotient_1d": np.asarray(d1),
                "difference_quotient_2d": np.asarray(d2)},
    )


def main(argv=None) -> int:
    return cli_main(run, argv, help=HELP, choices={"formula": FORMULAS})


if __name__ == "__main__":
    raise SystemExit(main())
