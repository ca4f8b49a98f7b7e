"""Metric scaling: shrinking distances by m speeds the drift-diffusion up by m^2 (DRIFT section 3.2).

For ``g2 = g1 / m^2`` the paper states ``Delta_g2 = m^2 Delta_g1``, and the whole attention limit
``At = Delta + 2 <grad log p, grad>`` scales by ``m^2`` (the density rescales by a constant, so
``grad log p`` keeps its direction and the drift scales with ``g^-1`` too). Checked (i) exactly:
``W(x / m; eps) = W(x; m^2 eps)`` entrywise, and (ii) spectrally: the low generator eigenvalues
``(1 - eta_k) / eps`` of heat-kernel attention on a quantile grid of ``p ~ 1 + 0.5 cos theta`` on
the circle scaled by ``1/m`` (``m = 1, 2, 4``, fixed ``eps``) grow like ``m^2``.
"""

from __future__ import annotations

import numpy as np

from verify.core import Timer, cli_main, make_result, require, require_int, require_range

CHECK = "metric_scaling"
CLAIMS = ("DRIFT-6",)
HELP = {
    "power": "claimed exponent q in At_(g/m^2) = m^q At_g (DRIFT section 3.2: q = 2)",
    "n": "quantile-grid points on S^1 (density 1 + 0.5 cos theta)",
    "eps": "heat-kernel bandwidth eps (fixed while the data are scaled by 1/m)",
    "scales": "scale factors m (comma-separated; the first is the reference)",
    "modes": "number of low non-trivial modes compared",
    "seed": "seed of the random points of the entrywise identity",
    "device": "array device: cpu or gpu (the Lanczos step runs on the host)",
}


def _low_eigenvalues(x, eps, k):
    """Largest ``k + 1`` eigenvalues of ``D^-1 W`` via the sparse symmetric conjugate (host ARPACK)."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import eigsh

    from spectral.kernels import heat_kernel_sparse

    w = heat_kernel_sparse(x, eps=eps, cutoff=7.0).matrix
    d = np.asarray(w.sum(axis=1)).ravel()
    s = sp.diags_array(d**-0.5) @ w @ sp.diags_array(d**-0.5)
    v0 = np.sqrt(d)  # the top eigenvector: deterministic start
    vals = eigsh(s, k=k + 1, which="LA", v0=v0, tol=1e-12)[0]
    return np.sort(vals)[::-1]


def run(*, power=2.0, n=3000, eps=1e-4, scales=(1.0, 2.0, 4.0), modes=6, seed=0, device="cpu"):
    """Entrywise kernel identity and the m^2 scaling of generator eigenvalues."""
    require_int("seed", seed, low=0)
    require_range("power", power, low=-4.0, high=4.0)
    require_int("n", n, low=500, high=100000)
    require_range("eps", eps, low=1e-6, high=1e-2)
    require_int("modes", modes, low=1, high=20)
    require(len(scales) >= 2 and all(0.25 <= m <= 16 for m in scales),
            f"scales must hold >= 2 values in [0.25, 16], got {scales!r}")
    # the grid must resolve the kernel: the widest gap, (2 pi / n) / (p_min / p_mean) / m_min with
    # p_min / p_mean = 0.5, must not exceed the kernel width sqrt(eps)
    h_max = 2 * np.pi / n / 0.5 / min(scales)
    require(h_max <= np.sqrt(eps), f"n too small for eps: largest grid gap {h_max:.3g} exceeds sqrt(eps) = "
            f"{np.sqrt(eps):.3g}; increase n or eps")
    from manifolds import CosineDensity
    from spectral.backend import require_device, to_numpy
    from spectral.kernels import heat_kernel

    xp = require_device(device)
    rng = np.random.default_rng(seed)
    timer = Timer()
    failures = []
    with timer("entrywise"):
        pts = xp.asarray(rng.standard_normal((400, 3)))
        worst = 0.0
        for m in tuple(scales) + (3.0,):  # 3 is not a power of two: d/m rounds
            d_scaled = xp.sqrt(xp.sum((pts[:, None, :] / m - pts[None, :, :] / m) ** 2, axis=2))
            d_orig = xp.sqrt(xp.sum((pts[:, None, :] - pts[None, :, :]) ** 2, axis=2))
            a = heat_kernel(d_scaled, eps=eps * 100)
            b = heat_kernel(d_orig, eps=m * m * eps * 100)
            worst = max(worst, float(to_numpy(xp.max(xp.abs(a - b)))))
    # exact up to rounding of d/m and of the exponent: |exponent| <= 40 here, so <= 40 * 2 eps(float64)
    # ~ 1e-14 absolute on entries <= 1 (measured: 4.4e-16, from m = 3; powers of two are exact).
    tol_exact = 1e-14
    if worst > tol_exact:
        failures.append(f"W(x/m; eps) != W(x; m^2 eps): max difference {worst:.3e} > {tol_exact:.0e}")
    with timer("spectra"):
        x0 = CosineDensity(0.5).quantile_grid(n)
        lam = {}
        for m in scales:
            eta = _low_eigenvalues(x0 / m, eps, modes)
            lam[m] = (1.0 - eta[1:]) / eps
    ref = lam[scales[0]]
    ratios = {m: lam[m] / ref for m in scales[1:]}
    max_dev = 0.0
    for m, r in ratios.items():
        claimed = (m / scales[0]) ** power
        dev = float(np.max(np.abs(r / claimed - 1.0)))
        max_dev = max(max_dev, dev)
    # Tolerance 2 % (ledger): the finite-eps bias of the generator is O(k^2 m^2 eps) relative; measured
    # max relative deviation from m^2 over k <= 6, m in {2, 4}: 0.27 % at n = 2000-6000, eps = 1e-4
    # (so it is the eps bias, not the grid); claimed m^1 gives 300 %.
    tol = 0.02
    # Resolution: the eps bias of the ratio is ~ c k^2 eps |m^2 - m_ref^2|; measured c <= 0.062 over
    # k in {3, 6, 12}, eps in [1e-4, 3e-4], m in {(1, 2), (1, 2, 4)}, n = 8000 (e.g. 2.7 % at eps = 1e-3,
    # k = 6, m = 4). A failure where this predicted bias exceeds tol / 2 is named as unresolved.
    bias = 0.065 * modes**2 * eps * max(abs(m * m - scales[0] ** 2) for m in scales[1:])
    if max_dev > tol:
        note = (f" [predicted eps bias 0.065 k^2 eps |m^2 - m_ref^2| = {bias:.1%} > {tol / 2:.0%}: "
                f"lower eps or modes]" if bias > tol / 2 else "")
        failures.append(f"generator eigenvalue ratios deviate from m^{power:g} by {max_dev:.3%} (> {tol:.0%})"
                        + note)
    measured = {"entrywise_max_difference": worst, "max_relative_ratio_deviation": max_dev,
                "predicted_eps_bias": bias}
    for m, r in ratios.items():
        measured[f"ratio_m{m:g}_mode1"] = float(r[0])
        measured[f"ratio_m{m:g}_mode{modes}"] = float(r[-1])
    expected = {"entrywise_max_difference": 0.0, "max_relative_ratio_deviation": 0.0}
    expected.update({f"ratio_m{m:g}_mode1": (m / scales[0]) ** power for m in ratios})
    statement = (f"W(x/m; eps) = W(x; m^2 eps) and the generator of heat-kernel attention on S^1 scaled by 1/m is "
                 f"m^{power:g} times the unscaled one (m in {tuple(scales)})")
    return make_result(
        check=CHECK, claims=CLAIMS, statement=statement, measured=measured, expected=expected,
        tolerance={"entrywise_max_difference": tol_exact, "max_relative_ratio_deviation": tol},
        parameters={"power": power, "n": n, "eps": eps, "scales": tuple(scales), "modes": modes, "seed": seed,
                    "device": device},
        failures=failures, timings=timer.timings,
        arrays={f"generator_m{m:g}": lam[m] for m in scales},
    )


def main(argv=None) -> int:
    return cli_main(run, argv, help=HELP)


if __name__ == "__main__":
    raise SystemExit(main())
