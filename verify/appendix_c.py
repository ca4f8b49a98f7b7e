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

import dataclasses
import math

import numpy as np

from spectral.floor.validation import InputError
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.params import Real
from verify.core.result import Recorder

__all__ = ["CALIBRATION", "CHECK", "main", "run"]

CHECK = Check("appendix_c",
              host_only="fixed-size trapezoid quadratures (12001 nodes in 1-D, 561^2 in 2-D) at 4 values of eps "
                        "and closed forms; no size option",
              printed="Proposition 1 as printed (the Laplacian and density-drift terms divided by m0), which fails")

_WHY = ("3 Richardson levels leave an O(eps^4) remainder and quadrature round-off 1e-12 / eps_min far below 1e-4, "
        "largest at the corners of the allowed range (eps_max / c <= 0.01; 3.1e-3 at 0.02), in 1-D at c = 0.5, "
        "eps_max = 0.005, d3 = 1, a = -2; the printed coefficients differ by O(1) (0.448 vs 1.350 in 1-D)")
#: the corners of the allowed range (c in [0.5, 10], d3 in [-1, 1], a in [-2, 2], eps_max / c <= 0.01)
_CORNERS = ({"c": (0.5,), "eps_max": (1e-4, 0.005), "d3": (-1.0, 1.0), "a": (-2.0, 2.0)},
            {"c": (2.0,), "eps_max": (4e-3, 0.02), "d3": (-1.0, 0.6, 1.0), "a": (-2.0, 0.5, 2.0)},
            {"c": (10.0,), "eps_max": (1e-4, 0.02), "d3": (-1.0, 1.0), "a": (-2.0, 2.0)})

#: The measured tolerances (deterministic quadrature: the seed is unused).
CALIBRATION = Calibration(
    Tolerance("coefficient_1d", 1e-4, measured=9.4e-5, over=_CORNERS, why=_WHY),
    Tolerance("coefficient_2d", 1e-4, measured=4.0e-6, over=_CORNERS, why=_WHY),
)


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


@CHECK.parameters
class Params:
    c: float = Real(2.0, "1-D curvature f''(0) = c of the pseudo-metric at the nearest point", low=0.5, high=10.0)
    d3: float = Real(0.6, "1-D cubic coefficient f'''(0) (asymmetry drift)", low=-1.0, high=1.0)
    a: float = Real(0.5, "Density p = exp(a y) in 1-D, exp(a (v1 + v2) / 2) in 2-D (grad log p)", low=-2.0, high=2.0)
    eps_max: float = Real(4e-3, "Largest eps of the Richardson sequence eps_max / 2^k, k = 0..3 (eps_max / c <= "
                                "0.01)", low=1e-4, high=0.02)

    def resolve(self):
        """eps_max / c <= 0.01: the Richardson remainder is O((eps_max / c)^4)."""
        # measured max |quadrature - corrected| 9.4e-5 for eps_max / c <= 0.01 over the corners of the allowed c, d3, a
        # (tolerance 1e-4; CALIBRATION) but 3.1e-3 at eps_max / c = 0.02, so larger ratios are refused rather than
        # reported as failures
        if self.eps_max / self.c > 0.01 + 1e-12:
            raise InputError(f"eps_max / c must be <= 0.01 (Richardson remainder), got eps_max={self.eps_max!r}, "
                             f"c={self.c!r}")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """Quadrature difference quotients, their Richardson limits and the closed-form coefficients."""

    eps: np.ndarray  # eps_max / 2^k, k = 0..3
    difference_quotient_1d: np.ndarray  # (R(eps) - g(0)) / eps per eps
    difference_quotient_2d: np.ndarray
    coefficient_1d: float  # Richardson-extrapolated to eps -> 0
    coefficient_2d: float
    #: the closed forms: Laplace's method (corrected), Proposition 1 as printed, and m0 = int exp(-v^T C v / 4) dv
    corrected_1d: float
    corrected_2d: float
    printed_1d: float
    printed_2d: float
    m0_1d: float
    m0_2d: float


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """(R(eps) - g(0)) / eps by trapezoid quadrature on the Richardson sequence, and the closed forms."""
    eps_seq = [p.eps_max / 2**k for k in range(4)]
    with ctx.timed("quadrature_1d"):
        g0 = _g1(0.0)
        d1 = [(_ratio_1d(e, p.c, p.d3, p.a) - g0) / e for e in eps_seq]
        coef1 = _richardson(d1)
    with ctx.timed("quadrature_2d"):
        d2 = [(_ratio_2d(e, p.a) - 0.0) / e for e in eps_seq]
        coef2 = _richardson(d2)
    corr1, print1, m0_1 = _coefficients_1d(p.c, p.d3, p.a)
    corr2, print2, m0_2 = _coefficients_2d(p.a)
    return Quantities(eps=np.asarray(eps_seq), difference_quotient_1d=np.asarray(d1),
                      difference_quotient_2d=np.asarray(d2), coefficient_1d=coef1, coefficient_2d=coef2,
                      corrected_1d=corr1, corrected_2d=corr2, printed_1d=print1, printed_2d=print2, m0_1d=m0_1,
                      m0_2d=m0_2)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Both extrapolated coefficients against the asserted formula."""
    corrected = p.claim == "corrected"
    claim1, claim2 = (q.corrected_1d, q.corrected_2d) if corrected else (q.printed_1d, q.printed_2d)
    rec.close("coefficient_1d", q.coefficient_1d, claim1, atol=CALIBRATION.get("coefficient_1d", p),
              label=f"1-D quadrature vs the {p.claim} Proposition 1 coefficient")
    rec.close("coefficient_2d", q.coefficient_2d, claim2, atol=CALIBRATION.get("coefficient_2d", p),
              label=f"2-D quadrature vs the {p.claim} Proposition 1 coefficient")
    rec.info("raw_ratio_1d_at_eps_min", q.difference_quotient_1d[-1])
    rec.info("printed_1d", q.printed_1d)
    rec.info("printed_2d", q.printed_2d)
    rec.info("m0_1d", q.m0_1d)
    rec.info("m0_2d", q.m0_2d)
    if corrected:
        return ("(R(eps) - g(y'))/eps -> tr(C^-1 grad^2 g) + 2<C^-1 grad log p, grad g> - <C^-1(d:C^-1), grad g> "
                "(no 1/m0 on the Laplacian and density-drift terms)")
    return "(R(eps) - g(y'))/eps -> Proposition 1 as printed (Laplacian and density drift divided by m0)"


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
