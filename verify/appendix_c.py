"""First-order coefficient of the pseudo-metric attention limit (DRIFT Appendix C, Proposition 1).

Near the nearest point ``y'`` write ``f = rho + v^T C v / 2 + d_klm v_k v_l v_m / 6 + ...`` and use the
kernel ``exp(-f / (2 eps))`` (covariance ``2 eps C^-1``). Laplace's method gives

    R(eps) = int e^{-f/2eps} p g / int e^{-f/2eps} p
           = g + eps [ tr(C^-1 grad^2 g) + 2 <C^-1 grad log p, grad g> - <C^-1 (d : C^-1), grad g> ] + O(eps^2).

The printed Proposition 1 divides the Laplacian and density-drift terms by
``m0 = int exp(-v^T C v / 4) dv`` as well (only the cubic-asymmetry drift carries a ``V / m0``
normalisation). The check evaluates ``(R(eps) - g(0)) / eps`` by trapezoid quadrature (1-D and 2-D),
Richardson-extrapolates to ``eps -> 0`` and compares with the corrected (``claim="corrected"``) or
the printed (``claim="printed"``) coefficient.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.validation import InputError, check_option, check_real
from verify.core.check import Check
from verify.core.result import Recorder

CHECK = Check("appendix_c", claims=("DRIFT-13",))

_CLAIMS = ("corrected", "printed")


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
    """(corrected, printed, m0) first-order coefficients of the 1-D problem in closed form."""
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
    """(corrected, printed, m0) first-order coefficients of the 2-D problem in closed form."""
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


def _richardson(values):
    """Extrapolate D(eps) = D0 + D1 eps + D2 eps^2 + ... on eps_k = eps_0 / 2^k (Neville table)."""
    table = [list(values)]
    for level in range(1, len(values)):
        prev = table[-1]
        fac = 2.0**level
        table.append([(fac * prev[i + 1] - prev[i]) / (fac - 1) for i in range(len(prev) - 1)])
    return table[-1][0]


@CHECK.define
def run(*, claim="corrected", c=2.0, d3=0.6, a=0.5, eps_max=4e-3, seed=0, device="cpu"):
    """Compare the quadrature first-order coefficient with Proposition 1 (corrected or as printed).

    Parameters
    ----------
    claim : {"corrected", "printed"}
        Coefficient asserted: "corrected" (Laplace's method: no 1/m0 on the Laplacian and
        density-drift terms) or "printed" (Proposition 1 as printed, both divided by m0; fails).
    c : float
        1-D curvature f''(0) = c of the pseudo-metric at the nearest point, in [0.5, 10].
    d3 : float
        1-D cubic coefficient f'''(0) (asymmetry drift), in [-1, 1].
    a : float
        Density p = exp(a y) in 1-D, exp(a (v1 + v2) / 2) in 2-D (grad log p), in [-2, 2].
    eps_max : float
        Largest eps of the Richardson sequence eps_max / 2^k, k = 0..3, in [1e-4, 0.02] with
        eps_max / c <= 0.01.
    seed : int
        Unused: the check is deterministic quadrature (the option is common to every check).
    device : {"cpu"}
        Array device; this check runs on the host only.

    Returns
    -------
    CheckResult
        Passes when both extrapolated coefficients (1-D and 2-D) agree with the asserted formula
        to 1e-4.
    """
    claim = check_option("claim", claim, _CLAIMS)
    c = check_real("c", c, low=0.5, high=10.0)
    d3 = check_real("d3", d3, low=-1.0, high=1.0)
    a = check_real("a", a, low=-2.0, high=2.0)
    eps_max = check_real("eps_max", eps_max, low=1e-4, high=0.02)
    # Richardson remainder O((eps_max / c)^4): over c in [0.5, 10], d3 in [-1, 1], a in [-2, 2] the
    # measured max |quadrature - corrected| is 4.0e-5 for eps_max / c <= 0.01 (tolerance 1e-4) but
    # 3.1e-3 at eps_max / c = 0.02, so larger ratios are refused rather than reported as failures.
    if eps_max / c > 0.01 + 1e-12:
        raise InputError(f"eps_max / c must be <= 0.01 (Richardson remainder), got eps_max={eps_max!r}, c={c!r}")
    rec = Recorder()
    eps_seq = [eps_max / 2**k for k in range(4)]
    with rec.timed("quadrature_1d"):
        g0 = _g1(0.0)
        d1 = [(_ratio_1d(e, c, d3, a) - g0) / e for e in eps_seq]
        coef1 = _richardson(d1)
    with rec.timed("quadrature_2d"):
        d2 = [(_ratio_2d(e, a) - 0.0) / e for e in eps_seq]
        coef2 = _richardson(d2)
    corr1, print1, m0_1 = _coefficients_1d(c, d3, a)
    corr2, print2, m0_2 = _coefficients_2d(a)
    claim1, claim2 = (corr1, corr2) if claim == "corrected" else (print1, print2)
    why = ("3 Richardson levels leave an O(eps^4) remainder and quadrature round-off 1e-12 / eps_min far "
           "below 1e-4: measured |quadrature - corrected| = 1.4e-12 (1-D), 2.4e-9 (2-D) at eps_max = 4e-3, "
           "<= 4.0e-5 over the allowed range; the printed coefficients differ by O(1) (0.448 vs 1.350 in 1-D)")
    rec.close("coefficient_1d", coef1, claim1, atol=1e-4, why=why,
              label=f"1-D quadrature vs the {claim} Proposition 1 coefficient")
    rec.close("coefficient_2d", coef2, claim2, atol=1e-4, why=why,
              label=f"2-D quadrature vs the {claim} Proposition 1 coefficient")
    rec.info("raw_ratio_1d_at_eps_min", d1[-1])
    rec.info("printed_1d", print1)
    rec.info("printed_2d", print2)
    rec.info("m0_1d", m0_1)
    rec.info("m0_2d", m0_2)
    rec.array("eps", np.asarray(eps_seq))
    rec.array("difference_quotient_1d", np.asarray(d1))
    rec.array("difference_quotient_2d", np.asarray(d2))
    if claim == "corrected":
        statement = ("(R(eps) - g(y'))/eps -> tr(C^-1 grad^2 g) + 2<C^-1 grad log p, grad g> - <C^-1(d:C^-1), grad g> "
                     "(no 1/m0 on the Laplacian and density-drift terms)")
    else:
        statement = "(R(eps) - g(y'))/eps -> Proposition 1 as printed (Laplacian and density drift divided by m0)"
    return rec.finish(statement)


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
