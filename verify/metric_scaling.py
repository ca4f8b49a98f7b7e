"""Metric scaling: shrinking distances by m speeds the drift-diffusion up by m^2 (DRIFT section 3.2).

For ``g2 = g1 / m^2`` the paper states ``Delta_g2 = m^2 Delta_g1``, and the whole attention limit
``At = Delta + 2 <grad log p, grad>`` scales by ``m^2`` (the density rescales by a constant, so
``grad log p`` keeps its direction and the drift scales with ``g^-1`` too). Checked (i) exactly:
``W(x / m; eps) = W(x; m^2 eps)`` entrywise, and (ii) spectrally: the low generator eigenvalues
``(1 - eta_k) / eps`` of heat-kernel attention on a quantile grid of ``p ~ 1 + 0.5 cos theta`` on
the circle scaled by ``1/m`` (``m = 1, 2, 4``, fixed ``eps``) grow like ``m^2``.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.validation import InputError, check_int, check_real, check_reals
from verify.core.check import Check
from verify.core.memory import circle_pairs, require_memory
from verify.core.result import Recorder

CHECK = Check("metric_scaling", claims=("DRIFT-6",))


def _low_eigenvalues(x, eps, k):
    """Largest ``k + 1`` eigenvalues of ``D^-1 W`` via the sparse symmetric conjugate (host ARPACK)."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import eigsh

    from spectral import heat_kernel_sparse

    w = heat_kernel_sparse(x, eps=eps, cutoff=7.0).matrix
    d = np.asarray(w.sum(axis=1)).ravel()
    s = sp.diags_array(d**-0.5) @ w @ sp.diags_array(d**-0.5)
    v0 = np.sqrt(d)  # the top eigenvector: deterministic start
    vals = eigsh(s, k=k + 1, which="LA", v0=v0, tol=1e-12)[0]
    return np.sort(vals)[::-1]


@CHECK.define
def run(*, power=2.0, n=3000, eps=1e-4, scales=(1.0, 2.0, 4.0), modes=6, seed=0, device="cpu"):
    """Entrywise kernel identity and the m^2 scaling of generator eigenvalues.

    Parameters
    ----------
    power : float
        Claimed exponent q in At_(g/m^2) = m^q At_g (DRIFT section 3.2: q = 2; any other value is
        a negative control), in [-4, 4].
    n : int
        Quantile-grid points on S^1 (density 1 + 0.5 cos theta), in [500, 100000].
    eps : float
        Heat-kernel bandwidth eps, fixed while the data are scaled by 1/m, in [1e-6, 1e-2].
    scales : tuple of float
        Scale factors m, at least two in [0.25, 16]; the first is the reference.
    modes : int
        Number of low non-trivial modes compared, in [1, 20].
    seed : int
        Seed of the random points of the entrywise identity.
    device : {"cpu"}
        Array device; this check runs on the host only.

    Returns
    -------
    CheckResult
        Passes when the kernel identity holds to rounding and every eigenvalue ratio is within 2 %
        of m^power.
    """
    power = check_real("power", power, low=-4.0, high=4.0)
    n = check_int("n", n, low=500, high=100000)
    eps = check_real("eps", eps, low=1e-6, high=1e-2)
    modes = check_int("modes", modes, low=1, high=20)
    scales = check_reals("scales", scales, min_count=2, low=0.25, high=16)
    # the grid must resolve the kernel: the widest gap, (2 pi / n) / (p_min / p_mean) / m_min with
    # p_min / p_mean = 0.5, must not exceed the kernel width sqrt(eps)
    h_max = 2 * np.pi / n / 0.5 / min(scales)
    if h_max > np.sqrt(eps):
        raise InputError(f"n too small for eps: largest grid gap {h_max:.3g} exceeds sqrt(eps) = "
                         f"{np.sqrt(eps):.3g}; increase n or eps")
    # Memory first: the sparse kernel cut at 7 sqrt(eps) on the smallest circle (radius 1 / max m: the
    # largest m shrinks it most) holds circle_pairs(...) entries (within 1 % of the stored count at
    # n = 4000); tracemalloc peaks 55.7 / 149.1 MiB at n = 3000 / 6000 fit 24.5 MiB + 36 bytes per entry
    # (cKDTree pairs, CSR, the scaled conjugate, ARPACK); 44 bytes leave a margin.
    def peak(m):
        return (32 << 20) + 44 * circle_pairs(m, 7 * math.sqrt(eps), radius=1 / max(scales), concentration=1 + 0.5**2 / 2)

    require_memory(peak, n, option="--n", low=500,
                   what=f"the sparse heat kernels (cut at 7 sqrt(eps)) at --n {n}, --eps {eps:g}",
                   other="a smaller --eps or smaller --scales (fewer neighbours within the cutoff)")
    from manifolds import CosineDensity
    from spectral import heat_kernel
    from spectral.validation import child_rng

    rng = child_rng(seed, "entrywise")
    rec = Recorder()
    with rec.timed("entrywise"):
        pts = rng.standard_normal((400, 3))
        worst = 0.0
        for m in tuple(scales) + (3.0,):  # 3 is not a power of two: d/m rounds
            d_scaled = np.sqrt(np.sum((pts[:, None, :] / m - pts[None, :, :] / m) ** 2, axis=2))
            d_orig = np.sqrt(np.sum((pts[:, None, :] - pts[None, :, :]) ** 2, axis=2))
            a = heat_kernel(d_scaled, eps=eps * 100)
            b = heat_kernel(d_orig, eps=m * m * eps * 100)
            worst = max(worst, float(np.max(np.abs(a - b))))
    rec.at_most("entrywise_max_difference", worst, 1e-14,
                why="rounding of d/m and of the exponent: |exponent| <= 40, so <= 40 * 2 eps(float64) on "
                    "entries <= 1 (measured 4.4e-16, from m = 3; powers of two are exact)",
                label="W(x/m; eps) != W(x; m^2 eps)")
    with rec.timed("spectra"):
        x0 = CosineDensity(0.5).quantile_grid(n)
        lam = {m: (1.0 - _low_eigenvalues(x0 / m, eps, modes)[1:]) / eps for m in scales}
    ratios = {m: lam[m] / lam[scales[0]] for m in scales[1:]}
    max_dev = max(float(np.max(np.abs(r / (m / scales[0]) ** power - 1.0))) for m, r in ratios.items())
    # Resolution: the eps bias of the ratio is ~ c k^2 eps |m^2 - m_ref^2|; measured c <= 0.062 over
    # k in {3, 6, 12}, eps in [1e-4, 3e-4], m in {(1, 2), (1, 2, 4)}, n = 8000 (e.g. 2.7 % at eps = 1e-3,
    # k = 6, m = 4). A failure where this predicted bias exceeds tol / 2 is named as unresolved.
    bias = 0.065 * modes**2 * eps * max(abs(m * m - scales[0] ** 2) for m in scales[1:])
    tol = 0.02
    rec.at_most("max_relative_ratio_deviation", max_dev, tol,
                why="finite-eps bias O(k^2 m^2 eps) relative: measured 0.27 % over k <= 6, m in {2, 4} at "
                    "n = 2000-6000, eps = 1e-4 (the eps bias, not the grid); a claimed m^1 gives 300 %",
                label=f"generator eigenvalue ratios deviate from m^{power:g}",
                hint=(f"predicted eps bias 0.065 k^2 eps |m^2 - m_ref^2| = {bias:.1%} > {tol / 2:.0%}: "
                      f"lower eps or modes") if bias > tol / 2 else "")
    rec.info("predicted_eps_bias", bias)
    for m, r in ratios.items():
        rec.info(f"ratio_m{m:g}_mode1", float(r[0]))
        rec.info(f"ratio_m{m:g}_mode{modes}", float(r[-1]))
    for m in scales:
        rec.array(f"generator_m{m:g}", lam[m])
    return rec.finish(f"W(x/m; eps) = W(x; m^2 eps) and the generator of heat-kernel attention on S^1 scaled "
                      f"by 1/m is m^{power:g} times the unscaled one (m in {tuple(scales)})")


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
