"""Normalisation constants of eps-graph, k-NN and Gaussian graph Laplacians against exact spectra (GL-1, GL-2).

GL-1 (Calder & Garcia Trillos, ACHA 2022, arXiv 1910.13476, section 2 and their experiment code; Garcia
Trillos, Gerlach, Hein & Slepcev, FoCM 2020): the eps-graph Laplacian ``2 / (sigma_eta p n eps^(m+2))
(D - W)``, ``W_ij = 1{|x_i - x_j| <= eps}``, ``sigma_eta = int_{B_1} z_1^2 dz = alpha_m / (m + 2)``, and the
k-NN Laplacian with ``eps`` replaced by ``eps_k = (k / (n p alpha_m))^(1/m)`` approximate ``-Delta``.
GL-2 (Cheng & Wu, ACHA 2022, arXiv 2101.09875, section 2 and their code for Fig. 2): with ``W_ij =
eps^(-d/2) h(|x_i - x_j|^2 / eps)``, ``h(r) = exp(-r/4) / (4 pi)^(d/2)``, ``m_0 = 1`` and ``m_2 = 2``,
``L_un = (D - W) / ((m_2/2) eps p N)``, ``L_rw = (I - D^-1 W) / (eps m_2 / (2 m_0))`` and the
density-corrected ``L_rw`` of ``D^-1 W D^-1`` approximate ``-Delta``.

Three parts, each against references computed independently of ``spectral.graph_laplacians``
(``manifolds.references.graph_laplacian``):

* the constants ``alpha_m``, ``sigma_eta``, ``m_0``, ``m_2`` of the library against quadrature (m = 1 .. 6);
* the continuum operators at finite ``eps`` on S^1 and S^2 (uniform density; closed forms by Funk-Hecke:
  Legendre polynomials for the indicator, Bessel functions for the Gaussian) tend to the Laplace-Beltrami
  eigenvalues ``l (l + m - 1)`` with a bias of order ``eps^2`` (indicator: the symmetric chord ball
  cancels the odd terms) and ``eps`` (Gaussian, whose ``eps`` is a squared length);
* the sampled graph Laplacians of the library at ``n`` uniform points have, for degrees ``l = 1, 2, 3``, the
  eigenvalues of the continuum operator at the same ``eps`` (the k-NN graph at ``eps_k``), up to sampling:
  a wrong constant (``alpha_m / m`` for ``sigma_eta``, ``eps^(m+1)``, a wrong ``m`` or ``p``) is off by a
  factor, far outside the calibrated tolerances. The k-NN graph symmetrised by the maximum joins pairs
  within ``max(r_i, r_j)``: its effective radius exceeds ``eps_k`` by ``O(1/sqrt(k))``, which its own
  tolerance allows.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import manifolds
import spectral.graph_laplacians as lib
from manifolds.references import graph_laplacian as ref
from spectral import graph_laplacians
from spectral.floor.validation import child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.fits import fit_power_law
from verify.core.params import Int
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread

CHECK = Check("gl_constants",
              host_only="the sampled graphs are small (n <= 20000; cKDTree neighbour search, n x n Gaussian kernels)")

#: the sampled spectra: seeds 0-5 at n = 2000, where they were measured and from which they hold
_SAMPLED = {"over": {"seed": tuple(range(6))}, "valid": {"n": (2000, None)}}
CALIBRATION = Calibration(
    Tolerance("GL-1_sampled_vs_continuum", 0.08, measured=0.044, **_SAMPLED,
              why="the eigenvalues of the sampled eps-graphs (n = 2000, about 125 neighbours) sit 2-4 % below the "
                  "continuum ones (a sampling bias that falls with the degree); sigma_eta = alpha_m / m (a factor 2) "
                  "or eps^(m+1) (a factor 2-4) is off by 50-300 %"),
    Tolerance("GL-1_knn_sampled_vs_continuum", 0.15, measured=0.080, **_SAMPLED,
              why="the k-NN graph (k = n^(2/3) = 158) joins pairs within max(r_i, r_j), above eps_k by O(1/sqrt(k)): "
                  "its eigenvalues sit 6-8 % above the continuum ones at eps_k; a missing (n alpha_m / k)^(2/m) "
                  "factor is off by orders of magnitude"),
    Tolerance("GL-2_sampled_vs_continuum", 0.04, measured=0.020, **_SAMPLED,
              why="the sampled Gaussian Laplacians (eps = 0.05) sit within 2 % of the continuum eigenvalues; m_2 = 1 "
                  "instead of 2, or (4 pi)^(-d/2) dropped, is off by 100 % or more"),
)

#: library constant -> dimensions compared with quadrature
DIMENSIONS = tuple(range(1, 7))
#: Laplace-Beltrami degrees compared (multiplicities 2 on S^1, 2l + 1 on S^2)
DEGREES = (1, 2, 3)
#: (kernel, normalization, sphere) -> eps grid of the continuum bias fit and its expected order in eps
BIAS_FITS = {
    ("indicator", "unnormalized", 1): ((0.2, 0.1, 0.05, 0.025, 0.0125), 2.0),
    ("indicator", "unnormalized", 2): ((0.2, 0.1, 0.05, 0.025, 0.0125), 2.0),
    ("indicator", "random_walk", 1): ((0.2, 0.1, 0.05, 0.025, 0.0125), 2.0),
    ("indicator", "random_walk", 2): ((0.2, 0.1, 0.05, 0.025, 0.0125), 2.0),
    ("gaussian", "unnormalized", 1): ((0.02, 0.01, 0.005, 0.0025, 0.00125), 1.0),
    ("gaussian", "unnormalized", 2): ((0.02, 0.01, 0.005, 0.0025, 0.00125), 1.0),
    ("gaussian", "random_walk", 1): ((0.02, 0.01, 0.005, 0.0025, 0.00125), 1.0),
    ("gaussian", "random_walk", 2): ((0.02, 0.01, 0.005, 0.0025, 0.00125), 1.0),
}
#: sampled construction -> (ledger id, graph, sphere dimension, normalization, eps; None: k-NN with k = n^(2/3))
SAMPLED = {
    "eps S^1 unnormalized": ("GL-1", "eps", 1, "unnormalized", 0.25),
    "eps S^2 unnormalized": ("GL-1", "eps", 2, "unnormalized", 0.5),
    "eps S^2 random_walk": ("GL-1", "eps", 2, "random_walk", 0.5),
    "knn S^2 unnormalized": ("GL-1", "knn", 2, "unnormalized", None),
    "gaussian S^1 unnormalized": ("GL-2", "gaussian", 1, "unnormalized", 0.05),
    "gaussian S^1 random_walk": ("GL-2", "gaussian", 1, "random_walk", 0.05),
    "gaussian S^2 unnormalized": ("GL-2", "gaussian", 2, "unnormalized", 0.05),
    "gaussian S^2 random_walk": ("GL-2", "gaussian", 2, "random_walk", 0.05),
    "gaussian S^2 density_corrected": ("GL-2", "gaussian", 2, "density_corrected", 0.05),
}


@CHECK.parameters
class Params:
    n: int = Int(2000, "Points of each sampled graph (uniform on S^1 and S^2)", low=200, high=20000, unit="points")
    repeats: int = Int(2, "Independent samples per construction", low=1, high=50)


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What gl_constants measures."""

    #: max relative difference of alpha_m, sigma_eta (m = 1..6) and m_0, m_2 (m = 1..6): library vs quadrature
    constants_error: float
    #: "kernel normalization S^m" -> eps grid of the continuum bias fit
    bias_eps: dict[str, np.ndarray]
    #: "kernel normalization S^m" -> max over degrees 2, 3 of |lambda_l(eps) / (l (l + m - 1)) - 1|
    bias: dict[str, np.ndarray]
    #: "kernel normalization S^m" -> fitted order in eps, and the expected one
    bias_order: dict[str, float]
    bias_order_expected: dict[str, float]
    #: construction -> [repeat, degree] relative difference of the mean sampled eigenvalue of each degree
    #: of DEGREES from the continuum eigenvalue at the same eps
    sampled_deviation: dict[str, np.ndarray]
    #: construction -> the eps used (the k-NN radius eps_k for the k-NN graph)
    sampled_eps: dict[str, float]


def _laplacian(x, **kwargs):
    """The graph Laplacian under test (a seam for the tests' wrong constructions)."""
    return graph_laplacians.graph_laplacian(x, **kwargs)


def _key(kernel, normalization, m) -> str:
    return f"{kernel} {normalization} S^{m}"


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Constants against quadrature, the continuum bias orders, and the sampled spectra against the continuum."""
    with ctx.timed("constants"):
        worst = 0.0
        for m in DIMENSIONS:
            pairs = [(lib.ball_volume(m), ref.unit_ball_volume(m)), (lib.indicator_moment(m), ref.indicator_moment(m))]
            pairs += list(zip(lib.gaussian_moments(m), ref.gaussian_moments(m)))
            worst = max(worst, *(abs(a / b - 1.0) for a, b in pairs))

    bias_eps, bias, order, expected = {}, {}, {}, {}
    with ctx.timed("continuum"):
        for (kernel, norm, m), (grid, want) in BIAS_FITS.items():
            key = _key(kernel, norm, m)
            b = np.asarray([max(abs(ref.continuum_eigenvalue(m, l, e, kernel=kernel, normalization=norm)
                                    / ref.laplace_beltrami_eigenvalue(m, l) - 1.0) for l in (2, 3)) for e in grid])
            bias_eps[key], bias[key] = np.asarray(grid), b
            order[key], expected[key] = float(fit_power_law(np.asarray(grid), b).slope), want

    deviation, used = {}, {}
    with ctx.timed("sampled"), single_blas_thread():
        for name, (_, graph, m, norm, eps) in SAMPLED.items():
            manifold = manifolds.Circle() if m == 1 else manifolds.Sphere(m)
            density = 1.0 / (2 * math.pi if m == 1 else 4 * math.pi)
            count = 1 + sum(manifolds.sphere_multiplicity(m, l) for l in DEGREES)
            rows = []
            for j in range(p.repeats):
                x = manifold.sample(p.n, rng=child_rng(p.seed, "gl_constants", name, j))
                kw = {"k": int(p.n ** (2.0 / 3.0))} if graph == "knn" else {"eps": eps}
                lap = _laplacian(x, graph=graph, m=m, density=density, normalization=norm, **kw)
                lam, _ = lap.eigenpairs(count)
                lam = np.asarray(lam)
                kernel = "gaussian" if graph == "gaussian" else "indicator"
                cont = "unnormalized" if norm == "unnormalized" else "random_walk"
                row, start = [], 1
                for l in DEGREES:
                    g = manifolds.sphere_multiplicity(m, l)
                    target = ref.continuum_eigenvalue(m, l, lap.eps, kernel=kernel, normalization=cont)
                    row.append(float(np.mean(lam[start:start + g])) / target - 1.0)
                    start += g
                rows.append(row)
                used[name] = float(lap.eps)
            deviation[name] = np.asarray(rows)
    return Quantities(constants_error=float(worst), bias_eps=bias_eps, bias=bias, bias_order=order,
                      bias_order_expected=expected, sampled_deviation=deviation, sampled_eps=used)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Constants to quadrature accuracy; continuum bias orders 2 and 1; sampled spectra on the continuum ones."""
    rec.at_most("constants_relative_error", q.constants_error, 1e-11,
                why="closed forms against adaptive quadrature at relative tolerance 1e-13 (measured <= 3e-15); "
                    "alpha_m / m for sigma_eta would give 0.5",
                label="GL-1/GL-2: a library constant (alpha_m, sigma_eta, m_0, m_2) differs from its quadrature")
    for key, got in q.bias_order.items():
        cid = "GL-2" if key.startswith("gaussian") else "GL-1"
        rec.close(f"{cid}_bias_order {key}", got, q.bias_order_expected[key], atol=0.05,
                  why="closed-form continuum eigenvalues at eps down to 1.25e-3 (Gaussian) and 1.25e-2 (indicator): the "
                      "local order differs from its limit by O(eps) (measured <= 0.014)",
                  label=f"{cid}: the continuum {key} Laplacian does not tend to -Delta at the expected order in eps")
    worst: dict[str, tuple[float, str]] = {}
    for name, dev in q.sampled_deviation.items():
        cid, graph = SAMPLED[name][0], SAMPLED[name][1]
        tol = "GL-1_knn_sampled_vs_continuum" if graph == "knn" else f"{cid}_sampled_vs_continuum"
        value = float(np.max(np.abs(np.mean(dev, axis=0))))
        rec.info(f"deviation {name}", value)
        if tol not in worst or (not math.isnan(worst[tol][0]) and not value <= worst[tol][0]):  # NaN wins and stays
            worst[tol] = (value, name)
    for tol, (value, name) in worst.items():
        rec.at_most(tol, value, CALIBRATION.get(tol, p),
                    label=f"{tol[:4]}: the sampled {name} Laplacian's eigenvalues (degrees 1-3) are off the continuum "
                          f"ones at eps = {q.sampled_eps[name]:.4g}")
    return ("the eps-graph (2 / (sigma_eta p n eps^(m+2)), sigma_eta = alpha_m / (m + 2)), k-NN (eps_k = (k / (n p "
            "alpha_m))^(1/m)) and Gaussian (m_0 = 1, m_2 = 2: L_un, L_rw, density-corrected) graph Laplacians have "
            "the spectra of their continuum operators on S^1 and S^2, which tend to l (l + m - 1) with bias O(eps^2) "
            "(indicator) and O(eps) (Gaussian)")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
