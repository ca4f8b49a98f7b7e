"""The low-rank premise of FMA (FMA-11): far-field attention blocks are low rank only for smooth tokens.

FMA borrows from the fast multipole method and H-matrices the premise that interactions between
well-separated index blocks are of low rank, so a few summaries per group lose little (section 1:
"long range context captured efficiently through coarse, low rank interactions"). That is a property
of the data, not of the mechanism. Three token sequences (n = 1024, d = 64) are compared:

* ``smooth``: ``q = x W_q``, ``k = x W_k`` with ``x_i`` random-phase sinusoids of position whose
  wavelengths are at least ``n / max_frequency`` (``W`` Gaussian, variance ``1/d``);
* ``mix``: the same plus i.i.d. Gaussian noise of standard deviation ``noise``;
* ``iid``: i.i.d. standard Gaussian queries and keys.

For each, (1) the epsilon-rank (singular values above ``eps sigma_1``, SVD) of the blocks ``I x J`` of
``exp(Q K^T / sqrt(d))`` with ``|I| = |J| = s`` and a gap of ``s`` between them, and (2) how far
FMA's attention rows are from softmax attention: the mean total-variation distance
``(1/2) sum_j |Â_ij - A_ij|`` for the joint normalisation with uniform summaries (group means of
``p`` equal sub-blocks, ``p = 1, 2, 4``) and for an oracle that replaces every far block of the exact
kernel by its best rank-``p`` approximation (block SVD): no rank-``p`` summary of that block can do
better in the Frobenius norm.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import spectral
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.params import Int, Ints, Real
from verify.core.reduce import least
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread

CHECK = Check("fma_lowrank",
              printed="the far field is low rank and well summarised whatever the tokens (no smoothness "
                      "assumption), which fails on the i.i.d. sequence",
              host_only="dense (n, n) kernels and an SVD per block (n <= 2048), run with one BLAS thread")

#: The measured tolerances (seeds 0-9 at the defaults). The ratio and error records are named after the
#: largest and smallest summary ranks; the table holds them for p = 4 against p = 1 (the default ranks).
_SEEDS = {"seed": tuple(range(10))}
_RANKS = {"ranks": ((1, 2, 4),)}
CALIBRATION = Calibration(
    Tolerance("iid_eps_rank_1e-3_over_block_size", 0.9, setting={"claim": "corrected"}, measured=0.984,
              over=_SEEDS,
              why="i.i.d. tokens give lognormal-like kernel blocks of full rank (min over block sizes of rank / s); "
                  "smooth tokens give <= 0.19"),
    Tolerance("smooth_block_svd_error_ratio_p4_over_p1", 0.25, measured=0.070, over=_SEEDS,
              valid=_RANKS,
              why="the optimal rank-p far-field error of smooth tokens falls fast with p (p 4 against 1); i.i.d. "
                  "tokens give 0.94"),
    Tolerance("smooth_uniform_error_ratio_p4_over_p1", 0.5, measured=0.30, over=_SEEDS,
              valid=_RANKS,
              why="uniform sub-block summaries of smooth tokens improve with p (p 4 against 1; the oracle ratio is 5x "
                  "smaller: the rest is the choice of pi)"),
    Tolerance("iid_block_svd_error_p4", 0.2, setting={"claim": "corrected"}, measured=0.335,
              over=_SEEDS, valid=_RANKS,
              why="with full-rank far blocks even the best rank-p summary misplaces a large share of the attention "
                  "mass at p = 4; smooth tokens give 0.002-0.011"),
)

KINDS = ("smooth", "mix", "iid")


@CHECK.parameters
class Params:
    n: int = Int(1024, "Sequence length", low=256, high=2048, unit="tokens")
    d: int = Int(64, "Query/key dimension", low=8, high=128)
    r: int = Int(16, "FMA base cell, at most n / 8", low=4, high=256, unit="tokens")
    ranks: tuple = Ints((1, 2, 4), "Summary ranks p, each at most r (sorted, repeats dropped)", low=1, high=256)
    block_sizes: tuple = Ints((16, 32, 64, 128), "Block sizes s of the epsilon-rank test, each at most n / 4 (blocks "
                              "[a, a+s) x [a+2s, a+3s); sorted, repeats dropped)", low=4, high=512, unit="tokens")
    noise: float = Real(0.3, 'Standard deviation of the i.i.d. part of the "mix" tokens', low=0.0, high=2.0)
    max_frequency: float = Real(4.0, "Largest number of sinusoid cycles over the sequence for the smooth tokens",
                                low=0.25, high=64.0, low_open=True)

    def resolve(self):
        """r at most n / 8, ranks at most r, block sizes at most n / 4; ranks and sizes sorted without repeats."""
        for name, values, low, high in (("r", (self.r,), 4, self.n // 8), ("ranks", self.ranks, 1, self.r),
                                        ("block_sizes", self.block_sizes, 4, self.n // 4)):
            for v in values:
                if v > high:
                    raise InputError(f"{name} must be an integer in [{low}, {high}], got {v}")
        return dataclasses.replace(self, ranks=tuple(sorted(set(self.ranks))),
                                   block_sizes=tuple(sorted(set(self.block_sizes))))


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What fma_lowrank measures per token kind ("smooth", "mix", "iid")."""

    #: max over separated blocks of the eps-rank of exp(Q K^T / sqrt d), keyed (kind, s, eps)
    eps_rank: dict[tuple[str, int, float], int]
    #: mean total-variation distance of FMA rows (joint, uniform summaries of rank p) from softmax rows, (kind, p)
    tv_uniform: dict[tuple[str, int], float]
    #: the same with every far block of the exact kernel replaced by its best rank-p approximation (no "mix")
    tv_block_svd: dict[tuple[str, int], float]


def _tokens(kind, n, d, noise, max_frequency, rng):
    if kind == "iid":
        return rng.standard_normal((n, d)), rng.standard_normal((n, d))
    i = np.arange(n)[:, None]
    nu = rng.uniform(0.25, max_frequency, d)  # cycles per sequence
    x = np.sqrt(2.0) * np.sin(2 * np.pi * nu * i / n + rng.uniform(0, 2 * np.pi, d))
    wq, wk = rng.standard_normal((2, d, d)) / np.sqrt(d)
    q, k = x @ wq, x @ wk
    if kind == "mix":
        q = q + noise * rng.standard_normal((n, d))
        k = k + noise * rng.standard_normal((n, d))
    return q, k


def _eps_rank(block, eps):
    s = np.linalg.svd(block, compute_uv=False)
    return int(np.count_nonzero(s > eps * s[0]))


def _oracle_rows(kernel, levels, groups, sizes, ranks):
    """Attention rows with every far block of ``kernel`` replaced by its best rank-p approximation."""
    n = kernel.shape[0]
    out = {p: np.where(levels == 0, kernel, 0.0) for p in ranks}
    for lev, g in enumerate(sizes, start=1):
        members = groups[lev - 1]
        for m in range(-(-n // g)):
            rows = np.flatnonzero((members == m).any(axis=1))
            if not rows.size:
                continue
            cols = np.arange(m * g, min((m + 1) * g, n))
            u, s, vt = np.linalg.svd(kernel[np.ix_(rows, cols)], full_matrices=False)
            for p in ranks:
                out[p][np.ix_(rows, cols)] = (u[:, :p] * s[:p]) @ vt[:p]
    return {p: a / a.sum(axis=1, keepdims=True) for p, a in out.items()}


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Eps-ranks of separated blocks and FMA's attention error (uniform and block-SVD summaries) per token kind."""
    n, d, r = p.n, p.d, p.r
    levels = spectral.fma_levels(n, r=r)
    structure = spectral.fma_groups(n, r=r)
    erank, tv_uniform, tv_oracle = {}, {}, {}
    with single_blas_thread():
        for kind in KINDS:
            with ctx.timed(kind):
                q, k = _tokens(kind, n, d, p.noise, p.max_frequency, child_rng(p.seed, "tokens", kind))
                logits = q @ k.T / np.sqrt(d)
                kernel = np.exp(logits - logits.max(axis=1, keepdims=True))  # row scaling keeps block ranks
                exact = kernel / kernel.sum(axis=1, keepdims=True)
                for s in p.block_sizes:
                    for eps in (1e-3, 1e-6):
                        erank[(kind, s, eps)] = max(_eps_rank(kernel[a:a + s, a + 2 * s:a + 3 * s], eps)
                                                    for a in range(0, n - 3 * s + 1, s))
                for rank in p.ranks:
                    a = spectral.fma_matrix(q, k, r=r, p=rank, normalisation="joint")
                    tv_uniform[(kind, rank)] = float(np.mean(0.5 * np.abs(a - exact).sum(axis=1)))
                if kind != "mix":
                    oracle = _oracle_rows(kernel, levels, structure.groups, structure.group_size, p.ranks)
                    for rank in p.ranks:
                        tv_oracle[(kind, rank)] = float(np.mean(0.5 * np.abs(oracle[rank] - exact).sum(axis=1)))
    return Quantities(eps_rank=erank, tv_uniform=tv_uniform, tv_block_svd=tv_oracle)


def _calibrated(name: str, calibrated_as: str, p: Params):
    """The calibrated tolerance of ``calibrated_as`` for the record ``name`` (named after the run's ranks)."""
    tol = CALIBRATION.get(calibrated_as, p)
    return tol if name == calibrated_as else dataclasses.replace(tol, name=name)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Low eps-ranks and converging rank-p errors for smooth tokens, neither for i.i.d. tokens (corrected)."""
    printed = p.claim == "printed"
    for (kind, s, eps), value in q.eps_rank.items():
        rec.info(f"eps_rank_{kind}_s{s}_eps{eps:g}", value)
    for (kind, rank), value in q.tv_uniform.items():
        rec.info(f"tv_uniform_{kind}_p{rank}", value)
    for (kind, rank), value in q.tv_block_svd.items():
        rec.info(f"tv_block_svd_{kind}_p{rank}", value)

    s_max, p_lo, p_hi = p.block_sizes[-1], p.ranks[0], p.ranks[-1]
    iid_rank = least(q.eps_rank[("iid", s, 1e-3)] / s for s in p.block_sizes)  # a NaN rank must fail
    rec.at_most("smooth_eps_rank_1e-6_largest_block", q.eps_rank[("smooth", s_max, 1e-6)], s_max // 8,
                why="FMA-11: exp of a smooth kernel is analytic, eps-ranks ~ log(1/eps): seeds 0-9 give 7-9 at "
                    "s = 128, eps = 1e-6 (5-6 at s = 64); bound s/8, i.e. >= 8x compression (i.i.d.: 128)",
                label="FMA-11: separated blocks of smooth-token attention are not low rank")
    if not printed:
        rec.at_least("iid_eps_rank_1e-3_over_block_size", iid_rank,
                     CALIBRATION.get("iid_eps_rank_1e-3_over_block_size", p),
                     label="FMA-11: i.i.d.-token blocks are unexpectedly compressible")
    else:
        rec.at_most("iid_eps_rank_1e-3_over_block_size", iid_rank, 0.5,
                    why="the premise as stated (no smoothness assumption): far blocks compress at least 2x",
                    label="FMA-11 (printed): i.i.d.-token far blocks are full rank, not low rank")
    if p_hi > p_lo:
        name = f"smooth_block_svd_error_ratio_p{p_hi}_over_p{p_lo}"
        rec.at_most(name, q.tv_block_svd[("smooth", p_hi)] / q.tv_block_svd[("smooth", p_lo)],
                    _calibrated(name, "smooth_block_svd_error_ratio_p4_over_p1", p),
                    label="FMA-11: raising p barely helps on smooth tokens")
        name = f"smooth_uniform_error_ratio_p{p_hi}_over_p{p_lo}"
        rec.at_most(name, q.tv_uniform[("smooth", p_hi)] / q.tv_uniform[("smooth", p_lo)],
                    _calibrated(name, "smooth_uniform_error_ratio_p4_over_p1", p),
                    label="FMA-11: uniform rank-p summaries do not improve with p on smooth tokens")
    iid_best = q.tv_block_svd[("iid", p_hi)]
    name = f"iid_block_svd_error_p{p_hi}"
    if not printed:
        rec.at_least(name, iid_best, _calibrated(name, "iid_block_svd_error_p4", p),
                     label="FMA-11: i.i.d.-token far fields are unexpectedly well summarised")
    else:
        rec.at_most(name, iid_best, 0.05,
                    why="the premise as stated: rank-p summaries lose little (smooth tokens measure 0.002-0.011)",
                    label="FMA-11 (printed): the best rank-p far field of i.i.d. tokens misplaces much attention")
    rec.note("Errors are mean total-variation distances between FMA attention rows (joint normalisation) and "
             "softmax rows. 'block SVD' is an oracle: each far block of the exact kernel replaced by its best "
             "rank-p approximation, a lower bound for any rank-p summary, not an FMA with shared per-level pi.")
    if printed:
        return "far-field attention blocks are low rank for any tokens (as stated)"
    return ("far-field attention blocks are low rank and FMA's rank-p summaries converge with p for smooth tokens, "
            "but not for i.i.d. tokens: the premise is an assumption on the data")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
