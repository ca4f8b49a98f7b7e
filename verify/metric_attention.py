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

import dataclasses
import math

import numpy as np

import spectral
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.memory import PathNeed
from verify.core.params import Choice, Int, Real
from verify.core.reduce import count_bad
from verify.core.result import Recorder

CHECK = Check("metric_attention", devices=("cpu", "gpu"))

#: The measured tolerances (the others are exact, or the claim's "most" tokens, next to their assertion).
CALIBRATION = Calibration(
    Tolerance("tensor_relative_error", 0.02, measured=0.0119,
              over={"eps": (2.5e-4, 5e-4, 1e-3)},
              why="DRIFT-14: coefficients +- 2 %; finite-eps bias ~ 12 eps (the constant fitted over eps in "
                  "[2.5e-4, 1e-2]), lattice aliasing ~ exp(-2 pi^2) negligible; the direct tensor P^T P is off by "
                  "87 %"),
)

_TOKENS = 512  # tokens of the nearest-point comparison


@CHECK.parameters
class Params:
    distance: str = Choice("metric", ("metric", "squared"),
                           'Distance tested for the triangle inequality: "metric" |g(x) - g(y)|, or "squared" '
                           "|g(x) - g(y)|^2 (negative control: not a metric, violations expected)")
    tensor: str = Choice("inverse", ("inverse", "direct"),
                         'Claimed diffusion tensor of the linear pull-back P: "inverse" (P^T P)^-1, or "direct" '
                         "P^T P (negative control: off by 87 percent)")
    dim: int = Int(8, "Token dimension of the residual-MLP metric", low=2, high=256)
    gain: float = Real(0.2, "Scale of the residual branch's output weights; Lip(h) < 1 (needed for the "
                            "injectivity bound, asserted only then) holds at the default",
                       low=0.0, high=10.0, low_open=True)
    triples: int = Int(20000, "Random triples for the triangle inequality", low=100, high=10**7)
    grid: int = Int(128, "Torus grid points per side for the pull-back tensor; the spacing 1/grid must resolve "
                         "the narrowest kernel direction sqrt(eps)/2", low=32, high=1024)
    eps: float = Real(2.5e-4, "Bandwidth eps of exp(-|P(x - y)|^2 / (2 eps)) on the torus", low=1e-5, high=1e-2)

    def resolve(self):
        """The grid must resolve the narrowest kernel direction sqrt(eps) / 2 (P's largest singular value 2)."""
        if 1.0 / self.grid > math.sqrt(self.eps) / 2:
            raise InputError(f"grid too coarse for eps: spacing {1 / self.grid:.3g} > sqrt(eps)/2 = "
                             f"{math.sqrt(self.eps) / 2:.3g}; increase grid to >= {math.ceil(2 / math.sqrt(self.eps))} "
                             f"or eps")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What metric_attention measures."""

    #: random triples violating the triangle inequality for the distance ``p.distance`` (slack 64 eps max sum)
    triangle_violations: int
    #: the bound on Lip(h) of the residual branch (product of the layers' spectral norms)
    residual_lipschitz_bound: float
    #: min over the triples of |g(x) - g(y)| / |x - y|
    min_expansion_ratio: float
    #: fractions of 512 unit tokens whose nearest point is not themselves: metric attention (argmin of
    #: |g(x) - g(y)|^2), dot product with a random Q^T K, dot product with Q^T K = I
    metric_not_self_fraction: float
    dp_not_self_fraction: float
    dp_identity_not_self_fraction: float
    #: the diffusion tensor fitted from five Fourier modes of the torus kernel of the linear pull-back P
    fitted_tensor: np.ndarray
    #: P^T P (the claim is its inverse)
    metric_tensor: np.ndarray


def _fraction(xp, mask) -> float:
    return float(to_numpy(xp.mean(xp.astype(mask, xp.float64))))


@CHECK.memory
def needs(p: Params) -> dict:
    """The triples (3 x triples x dim), their MLP images (hidden width 4 dim) and the distances, then the
    token part (512 x 512 x dim differences).

    tracemalloc peaks: 39.1 / 76.6 MiB at triples 2e4 / 8e4 (dim 8), 267 MiB at 8e4 (dim 32): about 100
    bytes per triple and coordinate; 112 and 24 bytes per token pair and coordinate leave a margin.
    """
    dim = p.dim
    return {"dense": PathNeed(lambda t: (32 << 20) + 112 * t * dim + 24 * _TOKENS**2 * dim, p.triples,
                              "--triples", 100,
                              f"the random triples and their MLP images at --triples {p.triples}, --dim {dim}",
                              "a smaller --dim")}


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Triangle inequality, injectivity, self-nearest tokens and the pull-back diffusion tensor."""
    xp = ctx.xp
    dim = p.dim
    g = spectral.ResidualMLP(dim, 4 * dim, rng=child_rng(p.seed, "mlp"), gain=p.gain)
    lip = g.residual_lipschitz_bound()
    with ctx.timed("metric"):
        pts = xp.asarray(child_rng(p.seed, "triples").standard_normal((3, p.triples, dim)))
        gx, gy, gz = (g(pts[i, ...]) for i in range(3))

        def dist(a, b):
            d2 = xp.sum((a - b) ** 2, axis=1)
            return xp.sqrt(d2) if p.distance == "metric" else d2

        dxy, dyz, dxz = dist(gx, gy), dist(gy, gz), dist(gx, gz)
        scale = float(to_numpy(xp.max(dxy + dyz)))
        slack = 64 * float(np.finfo(np.float64).eps) * scale
        # a NaN distance (or slack) compares false: count_bad counts it as a violation, not as a pass
        violations = count_bad(dxz, dxz <= dxy + dyz + slack)
        raw = xp.sqrt(xp.sum((pts[0, ...] - pts[1, ...]) ** 2, axis=1))
        expansion_min = float(to_numpy(xp.min(xp.sqrt(xp.sum((gx - gy) ** 2, axis=1)) / raw)))
        # nearest tokens: metric attention vs dot-product scores with a random Q^T K on the sphere
        tok = child_rng(p.seed, "tokens").standard_normal((_TOKENS, dim))
        tx = xp.asarray(tok / np.linalg.norm(tok, axis=1, keepdims=True))
        gt = g(tx)
        sq = xp.sum((gt[:, None, :] - gt[None, :, :]) ** 2, axis=2)
        own = xp.arange(_TOKENS, dtype=xp.int64)
        metric_not_self = _fraction(xp, xp.argmin(sq, axis=1) != own)
        m = xp.asarray(child_rng(p.seed, "scores").standard_normal((dim, dim)))
        dp_not_self = _fraction(xp, xp.argmax((tx @ m) @ tx.T, axis=1) != own)
        ident_not_self = _fraction(xp, xp.argmax(tx @ tx.T, axis=1) != own)

    with ctx.timed("tensor"):
        grid, eps = p.grid, p.eps
        rot = np.array([[math.cos(0.5), -math.sin(0.5)], [math.sin(0.5), math.cos(0.5)]])
        p_mat = rot @ np.diag([2.0, 1.0]) @ rot.T
        side = (np.arange(grid) / grid + 0.5) % 1.0 - 0.5  # wrapped offsets in [-1/2, 1/2)
        o1, o2 = np.meshgrid(side, side, indexing="ij")
        offs = xp.asarray(np.stack([o1.ravel(), o2.ravel()], axis=1))
        pm = xp.asarray(p_mat)
        row = spectral.metric_kernel(offs, lambda z: z @ pm.T, eps=eps, y=xp.asarray(np.zeros((1, 2))))[:, 0]
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
    return Quantities(triangle_violations=violations, residual_lipschitz_bound=float(lip),
                      min_expansion_ratio=expansion_min, metric_not_self_fraction=metric_not_self,
                      dp_not_self_fraction=dp_not_self, dp_identity_not_self_fraction=ident_not_self,
                      fitted_tensor=fitted, metric_tensor=p_mat.T @ p_mat)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """No triangle violations, the injectivity bound, self-nearest tokens, the fitted tensor."""
    rec.equal("triangle_violations", q.triangle_violations, 0,
              why="a metric has none; the slack 64 eps(float64) max(d(x,y) + d(y,z)) covers the round-off of "
                  "three norms",
              label=f"random triples (of {p.triples}) violate the triangle inequality for the {p.distance} distance")
    lip = q.residual_lipschitz_bound
    rec.info("residual_lipschitz_bound", lip)
    if not lip >= 1:  # a NaN bound is asserted (and fails), never skipped
        rec.at_least("min_expansion_ratio", q.min_expansion_ratio, 1.0 - lip - 1e-12,
                     why="|g(x) - g(y)| >= (1 - Lip h)|x - y| holds exactly for a residual map; 1e-12 is round-off",
                     label="injectivity bound broken: min |g(x) - g(y)|/|x - y| < 1 - Lip(h)")
    else:
        rec.info("min_expansion_ratio", q.min_expansion_ratio)
        rec.note(f"the bound on Lip(h) is {lip:.3g} >= 1: injectivity is not guaranteed and not asserted "
                 f"(lower gain)")
    rec.equal("metric_not_self_fraction", q.metric_not_self_fraction, 0.0,
              why="exact: d(x, x) = 0 < d(x, y) for y != x when g is injective",
              label="metric attention: some tokens are not their own nearest point")
    # DRIFT-11 contrast: measured 0.986-1.0 (seeds 0-29, d = 8) of tokens with a non-self nearest
    # point for a random Q^T K; the bound only asserts "most", as DRIFT-14 states
    rec.at_least("dp_not_self_fraction", q.dp_not_self_fraction, (_TOKENS // 2 + 1) / _TOKENS,
                 why="DRIFT-14: 'most' tokens, i.e. more than half (measured 0.986-1.0 over seeds 0-29 at d = 8)",
                 label="dot product with a random Q^T K: no majority of tokens with a non-self nearest point")
    rec.info("dp_identity_not_self_fraction", q.dp_identity_not_self_fraction)

    fitted, ptp = q.fitted_tensor, q.metric_tensor
    claimed = np.linalg.inv(ptp) if p.tensor == "inverse" else ptp
    tens_err = float(np.max(np.abs(fitted - claimed)) / np.max(np.abs(claimed)))
    # a failure where the predicted finite-eps bias 12 eps exceeds half the tolerance is named as unresolved
    bias = 12.0 * p.eps
    rec.at_most("tensor_relative_error", tens_err, CALIBRATION.get("tensor_relative_error", p),
                label=f"fitted diffusion tensor {np.round(fitted, 4).tolist()} differs from the {p.tensor} claim "
                      f"{np.round(claimed, 4).tolist()}",
                hint=(f"predicted finite-eps bias 12 eps = {bias:.1%} > 1 %: lower eps (and raise grid)"
                      if bias > 0.01 else ""))
    rec.info("fitted_t11", float(fitted[0, 0]))
    rec.info("fitted_t12", float(fitted[0, 1]))
    rec.info("fitted_t22", float(fitted[1, 1]))
    return ("d(x,y) = |g(x)-g(y)| (residual MLP, Lip(h) < 1) is a metric with every token its own nearest point "
            f"(unlike DP with a generic Q^T K), and the linear pull-back P has diffusion tensor "
            f"{'(P^T P)^-1' if p.tensor == 'inverse' else 'P^T P'}")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
