"""Metric-attention satisfies Assumption 2 (DRIFT section 4.1, Algorithm 1).

``d(x, y) = |g(x) - g(y)|`` with a residual MLP ``g(x) = x + h(x)`` is a pseudo-metric, and a metric
when ``g`` is injective, which ``Lip(h) < 1`` guarantees (``|g(x) - g(y)| >= (1 - Lip h)|x - y|``).
Checked: no triangle-inequality violations on random triples (the squared distance, which the
kernel exponent actually uses, violates it), the injectivity bound, and every token being its own
nearest point (for dot-product scores with a generic ``Q^T K`` most tokens are not: DRIFT-11).
Pull-back tensor: for a linear map ``g = P`` on the flat torus the generator
``(S - I)/eps`` of ``exp(-|P(x - y)|^2 / (2 eps))`` tends to ``(1/2) div((P^T P)^-1 grad)``; the
tensor is fitted from Fourier modes and compared with ``(P^T P)^-1``.
"""

from __future__ import annotations

import math

import numpy as np

from verify.core import Timer, cli_main, make_result, require, require_int, require_range

CHECK = "metric_attention"
CLAIMS = ("DRIFT-14",)
DISTANCES = ("metric", "squared")
TENSORS = ("inverse", "direct")
HELP = {
    "distance": "distance tested for the triangle inequality: 'metric' |g(x)-g(y)| or 'squared' "
                "|g(x)-g(y)|^2 (negative control)",
    "tensor": "claimed diffusion tensor of the linear pull-back P: 'inverse' (P^T P)^-1 or 'direct' P^T P",
    "dim": "token dimension of the residual-MLP metric",
    "gain": "scale of the residual branch's output weights (Lip(h) < 1 needed for injectivity)",
    "triples": "random triples for the triangle inequality",
    "grid": "torus grid points per side for the pull-back tensor",
    "eps": "bandwidth eps of exp(-|P(x-y)|^2 / (2 eps)) on the torus",
    "seed": "seed of the MLP weights, tokens and Q^T K",
    "device": "array device: cpu or gpu",
}


def run(*, distance="metric", tensor="inverse", dim=8, gain=0.2, triples=20000, grid=128, eps=2.5e-4, seed=0,
        device="cpu"):
    """Triangle inequality, injectivity, self-nearest tokens and the pull-back diffusion tensor."""
    require_int("seed", seed, low=0)
    require(distance in DISTANCES, f"distance must be one of {DISTANCES}, got {distance!r}")
    require(tensor in TENSORS, f"tensor must be one of {TENSORS}, got {tensor!r}")
    require_int("dim", dim, low=2, high=256)
    require_range("gain", gain, low=0.0, high=10.0, low_open=True)
    require_int("triples", triples, low=100, high=10**7)
    require_int("grid", grid, low=32, high=1024)
    require_range("eps", eps, low=1e-5, high=1e-2)
    # the grid must resolve the narrowest kernel direction sqrt(eps) / 2 (P's largest singular value 2)
    require(1.0 / grid <= math.sqrt(eps) / 2, f"grid too coarse for eps: spacing {1 / grid:.3g} > sqrt(eps)/2 = "
            f"{math.sqrt(eps) / 2:.3g}")
    from spectral.backend import require_device, to_numpy
    from spectral.kernels import ResidualMLP, metric_kernel

    xp = require_device(device)
    rng = np.random.default_rng(seed)
    timer = Timer()
    failures = []
    g = ResidualMLP(dim, 4 * dim, rng=rng, gain=gain)
    lip = g.residual_lipschitz_bound()
    with timer("metric"):
        pts = xp.asarray(rng.standard_normal((3, triples, dim)))
        gx, gy, gz = (g(pts[i]) for i in range(3))

        def dist(a, b):
            d2 = xp.sum((a - b) ** 2, axis=1)
            return xp.sqrt(d2) if distance == "metric" else d2

        dxy, dyz, dxz = dist(gx, gy), dist(gy, gz), dist(gx, gz)
        scale = xp.max(dxy + dyz)
        # round-off in three norms of O(scale) vectors: 64 eps(float64) * scale
        slack = 64 * float(np.finfo(np.float64).eps) * float(to_numpy(scale))
        violations = int(to_numpy(xp.sum(xp.astype(dxz > dxy + dyz + slack, xp.int64))))
        raw = xp.sqrt(xp.sum((pts[0] - pts[1]) ** 2, axis=1))
        expansion_min = float(to_numpy(xp.min(xp.sqrt(xp.sum((gx - gy) ** 2, axis=1)) / raw)))
        # nearest tokens: metric attention vs dot-product scores with a random Q^T K on the sphere
        tok = rng.standard_normal((512, dim))
        tok /= np.linalg.norm(tok, axis=1, keepdims=True)
        tx = xp.asarray(tok)
        gt = g(tx)
        sq = xp.sum((gt[:, None, :] - gt[None, :, :]) ** 2, axis=2)
        own = xp.asarray(np.arange(512))
        metric_not_self = float(to_numpy(xp.mean(xp.astype(xp.argmin(sq, axis=1) != own, xp.float64))))
        m = xp.asarray(rng.standard_normal((dim, dim)))
        dp = (tx @ m) @ tx.T
        dp_not_self = float(to_numpy(xp.mean(xp.astype(xp.argmax(dp, axis=1) != own, xp.float64))))
        ident_not_self = float(to_numpy(xp.mean(xp.astype(xp.argmax(tx @ tx.T, axis=1) != own, xp.float64))))
    if violations:
        failures.append(f"{violations}/{triples} random triples violate the triangle inequality for the {distance} distance")
    if lip < 1 and expansion_min < 1 - lip - 1e-12:
        failures.append(f"injectivity bound broken: min |g(x)-g(y)|/|x-y| = {expansion_min:.4f} < 1 - Lip(h) = {1 - lip:.4f}")
    if metric_not_self > 0:
        failures.append(f"metric attention: {metric_not_self:.1%} of tokens are not their own nearest point")
    # DRIFT-11 contrast: measured 0.996-1.0 (seeds 0-2) of tokens with a non-self DP nearest point for a random M (d = 8);
    # the threshold 0.5 only asserts "most", as the ledger states.
    if dp_not_self <= 0.5:
        failures.append(f"dot product with random Q^T K: only {dp_not_self:.1%} of tokens have a non-self nearest point")

    with timer("tensor"):
        rot = np.array([[math.cos(0.5), -math.sin(0.5)], [math.sin(0.5), math.cos(0.5)]])
        p_mat = rot @ np.diag([2.0, 1.0]) @ rot.T
        side = (np.arange(grid) / grid + 0.5) % 1.0 - 0.5  # wrapped offsets in [-1/2, 1/2)
        o1, o2 = np.meshgrid(side, side, indexing="ij")
        offs = xp.asarray(np.stack([o1.ravel(), o2.ravel()], axis=1))
        pm = xp.asarray(p_mat)
        row = metric_kernel(offs, lambda z: z @ pm.T, eps=eps, y=xp.asarray(np.zeros((1, 2))))[:, 0]
        row = row / xp.sum(row)
        ks = np.array([[1, 0], [0, 1], [1, 1], [1, -1], [2, 1]], dtype=float)
        gens = []
        for k in ks:
            phase = 2 * math.pi * (offs @ xp.asarray(k))
            lam = float(to_numpy(xp.sum(row * xp.cos(phase))))  # eigenvalue of the circulant S on cos(2 pi k.x)
            gens.append((lam - 1.0) / eps)
        gens = np.asarray(gens)
        # generator on cos(2 pi k.x) -> -(1/2)(2 pi)^2 k^T T k; solve for T = [[t11, t12], [t12, t22]]
        design = -0.5 * (2 * math.pi) ** 2 * np.stack([ks[:, 0] ** 2, 2 * ks[:, 0] * ks[:, 1], ks[:, 1] ** 2], axis=1)
        t11, t12, t22 = np.linalg.lstsq(design, gens, rcond=None)[0]
        fitted = np.array([[t11, t12], [t12, t22]])
    ptp = p_mat.T @ p_mat
    claim = np.linalg.inv(ptp) if tensor == "inverse" else ptp
    tens_err = float(np.max(np.abs(fitted - claim)) / np.max(np.abs(claim)))
    # Ledger DRIFT-14: coefficients +- 2 %. The finite-eps bias is O((2 pi)^2 |k|^2 eps |P^-1|^2) relative
    # (measured 1.2 % at eps = 1e-3, 0.30 % at the default 2.5e-4, grid 128: h / (sqrt(eps)/2) = 0.99, so
    # lattice aliasing ~ exp(-2 pi^2) is negligible). The direct tensor P^T P is off by 87 %.
    tol = 0.02
    if tens_err > tol:
        failures.append(f"fitted diffusion tensor {np.round(fitted, 4).tolist()} differs from the {tensor} claim "
                        f"{np.round(claim, 4).tolist()} by {tens_err:.2%} (> {tol:.0%})")
    statement = ("d(x,y) = |g(x)-g(y)| (residual MLP, Lip(h) < 1) is a metric with every token its own nearest point "
                 "(unlike DP with a generic Q^T K), and the linear pull-back P has diffusion tensor (P^T P)^-1")
    return make_result(
        check=CHECK, claims=CLAIMS, statement=statement,
        measured={"triangle_violations": violations, "residual_lipschitz_bound": lip,
                  "min_expansion_ratio": expansion_min, "metric_not_self_fraction": metric_not_self,
                  "dp_not_self_fraction": dp_not_self, "dp_identity_not_self_fraction": ident_not_self,
                  "tensor_relative_error": tens_err, "fitted_t11": float(t11), "fitted_t12": float(t12),
                  "fitted_t22": float(t22)},
        expected={"triangle_violations": 0, "min_expansion_ratio": f">= {1 - lip:.4f}", "metric_not_self_fraction": 0.0,
                  "dp_not_self_fraction": "> 0.5", "tensor_relative_error": 0.0,
                  "fitted_t11": float(claim[0, 0]), "fitted_t12": float(claim[0, 1]), "fitted_t22": float(claim[1, 1])},
        tolerance={"tensor_relative_error": tol},
        parameters={"distance": distance, "tensor": tensor, "dim": dim, "gain": gain, "triples": triples,
                    "grid": grid, "eps": eps, "seed": seed, "device": device},
        failures=failures, timings=timer.timings,
    )


def main(argv=None) -> int:
    return cli_main(run, argv, help=HELP, choices={"distance": DISTANCES, "tensor": TENSORS})


if __name__ == "__main__":
    raise SystemExit(main())
