"""Metric scaling: shrinking distances by m speeds the drift-diffusion up by m^2 (DRIFT section 3.2).

For ``g2 = g1 / m^2`` the paper states ``Delta_g2 = m^2 Delta_g1``, and the whole attention limit
``At = Delta + 2 <grad log p, grad>`` scales by ``m^2`` (the density rescales by a constant, so
``grad log p`` keeps its direction and the drift scales with ``g^-1`` too). Checked (i) exactly:
``W(x / m; eps) = W(x; m^2 eps)`` entrywise, and (ii) spectrally: the low generator eigenvalues
``(1 - eta_k) / eps`` of heat-kernel attention on a quantile grid of ``p ~ 1 + 0.5 cos theta`` on
the circle scaled by ``1/m`` (``m = 1, 2, 4``, fixed ``eps``) grow like ``m^2``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import manifolds
import spectral
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.memory import PathNeed, circle_pairs
from verify.core.params import Int, Real, Reals
from verify.core.reduce import worst
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread

CHECK = Check("metric_scaling",
              host_only="sparse heat kernels (k-d tree pairs within 7 sqrt(eps), SciPy CSR) and their low spectrum "
                        "by ARPACK (scipy.sparse.linalg.eigsh); the entrywise identity takes 400 points")

#: The measured tolerances (the entrywise identity is exact algebra, next to its assertion).
CALIBRATION = Calibration(
    # Resolution: the eps bias of the ratio is ~ c k^2 eps |m^2 - m_ref^2|; c <= 0.062 over
    # k in {3, 6, 12}, eps in [1e-4, 3e-4], m in {(1, 2), (1, 2, 4)}, n = 8000 (e.g. 2.7 % at eps = 1e-3,
    # k = 6, m = 4). A failure where this predicted bias exceeds tol / 2 is named as unresolved.
    Tolerance("max_relative_ratio_deviation", 0.02, measured=0.0027, over={"n": (2000, 3000, 6000)},
              why="finite-eps bias O(k^2 m^2 eps) relative over k <= 6, m in {2, 4} at eps = 1e-4 (the eps bias, not "
                  "the grid); a claimed m^1 gives 300 %"),
)


@CHECK.parameters
class Params:
    power: float = Real(2.0, "Claimed exponent q in At_(g/m^2) = m^q At_g (DRIFT section 3.2: q = 2; any other "
                             "value is a negative control)", low=-4.0, high=4.0)
    n: int = Int(3000, "Quantile-grid points on S^1 (density 1 + 0.5 cos theta)", low=500, high=100000,
                 unit="points")
    eps: float = Real(1e-4, "Heat-kernel bandwidth eps, fixed while the data are scaled by 1/m", low=1e-6, high=1e-2)
    scales: tuple = Reals((1.0, 2.0, 4.0), "Scale factors m; the first is the reference", low=0.25, high=16,
                          min_len=2)
    modes: int = Int(6, "Number of low non-trivial modes compared", low=1, high=20)

    def resolve(self):
        """The grid must resolve the kernel: the widest gap, (2 pi / n) / (p_min / p_mean) / m_min with
        p_min / p_mean = 0.5, must not exceed the kernel width sqrt(eps)."""
        h_max = 2 * np.pi / self.n / 0.5 / min(self.scales)
        if h_max > np.sqrt(self.eps):
            raise InputError(f"n too small for eps: largest grid gap {h_max:.3g} exceeds sqrt(eps) = "
                             f"{np.sqrt(self.eps):.3g}; increase n or eps")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What metric_scaling measures."""

    #: max |W(x/m; eps) - W(x; m^2 eps)| over 400 random points, m in scales and 3
    entrywise_max_difference: float
    #: m -> the generator eigenvalues (1 - eta_k) / eps, k = 1..modes, of the circle scaled by 1/m
    generator: dict[float, np.ndarray]


def _low_eigenvalues(x, eps, k):
    """Largest ``k + 1`` eigenvalues of ``D^-1 W`` via the sparse symmetric conjugate (host ARPACK)."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import eigsh

    w = spectral.heat_kernel_sparse(x, eps=eps, cutoff=7.0).matrix
    d = np.asarray(w.sum(axis=1)).ravel()
    s = sp.diags_array(d**-0.5) @ w @ sp.diags_array(d**-0.5)
    v0 = np.sqrt(d)  # the top eigenvector: deterministic start
    vals = eigsh(s, k=k + 1, which="LA", v0=v0, tol=1e-12)[0]
    return -np.sort(-vals)  # decreasing with a NaN last: np.sort(vals)[::-1] put it first, where [1:] dropped it


@CHECK.memory
def needs(p: Params) -> dict:
    """The sparse kernel cut at 7 sqrt(eps) on the smallest circle (radius 1 / max m: the largest m shrinks it
    most) holds circle_pairs(...) entries (within 1 % of the stored count at n = 4000); tracemalloc peaks
    55.7 / 149.1 MiB at n = 3000 / 6000 fit 24.5 MiB + 36 bytes per entry (cKDTree pairs, CSR, the scaled
    conjugate, ARPACK); 44 bytes leave a margin."""
    eps, scales = p.eps, p.scales

    def peak(m):
        return (32 << 20) + 44 * circle_pairs(m, 7 * math.sqrt(eps), radius=1 / max(scales),
                                              concentration=1 + 0.5**2 / 2)

    return {"sparse": PathNeed(peak, p.n, "--n", 500,
                               f"the sparse heat kernels (cut at 7 sqrt(eps)) at --n {p.n}, --eps {eps:g}",
                               "a smaller --eps or smaller --scales (fewer neighbours within the cutoff)")}


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """The entrywise kernel identity and the low generator eigenvalues of the scaled circles."""
    eps = p.eps
    rng = child_rng(p.seed, "entrywise")
    with ctx.timed("entrywise"):
        pts = rng.standard_normal((400, 3))
        largest = 0.0
        for m in tuple(p.scales) + (3.0,):  # 3 is not a power of two: d/m rounds
            d_scaled = np.sqrt(np.sum((pts[:, None, :] / m - pts[None, :, :] / m) ** 2, axis=2))
            d_orig = np.sqrt(np.sum((pts[:, None, :] - pts[None, :, :]) ** 2, axis=2))
            a = spectral.heat_kernel(d_scaled, eps=eps * 100)
            b = spectral.heat_kernel(d_orig, eps=m * m * eps * 100)
            largest = worst(largest, float(np.max(np.abs(a - b))))
    # one BLAS thread: ARPACK's small dense steps oversubscribe a loaded machine (see verify.core.threads)
    with ctx.timed("spectra"), single_blas_thread():
        x0 = manifolds.CosineDensity(0.5).quantile_grid(p.n)
        lam = {m: (1.0 - _low_eigenvalues(x0 / m, eps, p.modes)[1:]) / eps for m in p.scales}
    return Quantities(entrywise_max_difference=largest, generator=lam)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """The entrywise identity to rounding; every eigenvalue ratio within 2 % of m^power."""
    rec.at_most("entrywise_max_difference", q.entrywise_max_difference, 1e-14,
                why="rounding of d/m and of the exponent: |exponent| <= 40, so <= 40 * 2 eps(float64) on "
                    "entries <= 1 (measured 4.4e-16, from m = 3; powers of two are exact)",
                label="W(x/m; eps) != W(x; m^2 eps)")
    scales, lam, power = p.scales, q.generator, p.power
    ratios = {m: lam[m] / lam[scales[0]] for m in scales[1:]}
    # np.max, not max(): a NaN for any m must not be skipped
    max_dev = float(np.max([np.max(np.abs(r / (m / scales[0]) ** power - 1.0)) for m, r in ratios.items()]))
    bias = 0.065 * p.modes**2 * p.eps * max(abs(m * m - scales[0] ** 2) for m in scales[1:])
    tol = CALIBRATION.get("max_relative_ratio_deviation", p)
    rec.at_most("max_relative_ratio_deviation", max_dev, tol,
                label=f"generator eigenvalue ratios deviate from m^{power:g}",
                hint=(f"predicted eps bias 0.065 k^2 eps |m^2 - m_ref^2| = {bias:.1%} > {tol.value / 2:.0%}: "
                      f"lower eps or modes") if bias > tol.value / 2 else "")
    rec.info("predicted_eps_bias", bias)
    for m, r in ratios.items():
        rec.info(f"ratio_m{m:g}_mode1", float(r[0]))
        if p.modes > 1:  # (modes = 1 made the same record twice before)
            rec.info(f"ratio_m{m:g}_mode{p.modes}", float(r[-1]))
    return (f"W(x/m; eps) = W(x; m^2 eps) and the generator of heat-kernel attention on S^1 scaled "
            f"by 1/m is m^{power:g} times the unscaled one (m in {tuple(scales)})")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
