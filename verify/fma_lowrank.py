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

import numpy as np

from spectral.validation import check_int, check_ints, check_option, check_real
from verify.core.check import Check
from verify.core.result import Recorder

CHECK = Check("fma_lowrank", claims=("FMA-11",))

KINDS = ("smooth", "mix", "iid")


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


@CHECK.define
def run(*, n=1024, d=64, r=16, ranks=(1, 2, 4), block_sizes=(16, 32, 64, 128), noise=0.3, max_frequency=4.0,
        claim="corrected", seed=0, device="cpu"):
    """Epsilon-ranks of separated attention blocks and FMA's attention error on smooth vs i.i.d. tokens.

    Parameters
    ----------
    n : int
        Sequence length, in [256, 2048].
    d : int
        Query/key dimension, in [8, 128].
    r : int
        FMA base cell, in [4, n / 8].
    ranks : tuple of int
        Summary ranks p, each in [1, r].
    block_sizes : tuple of int
        Block sizes s of the epsilon-rank test, each in [4, n / 4] (blocks [a, a+s) x [a+2s, a+3s)).
    noise : float
        Standard deviation of the i.i.d. part of the "mix" tokens, in [0, 2].
    max_frequency : float
        Largest number of sinusoid cycles over the sequence for the smooth tokens, in (0.25, 64].
    claim : {"corrected", "printed"}
        "corrected": low rank and small FMA error for smooth tokens, neither for i.i.d. tokens (the
        premise holds only under a smoothness assumption). "printed": the far field is low rank and
        well summarised whatever the tokens; fails on the i.i.d. sequence.
    seed : int
        Seed of the token draws.
    device : {"cpu"}
        Array device; this check runs on the host only.

    Returns
    -------
    CheckResult
        Passes when smooth tokens give small epsilon-ranks and a rank-p error falling with p, and
        i.i.d. tokens give full epsilon-ranks and an error p cannot reduce (corrected claim).
    """
    from spectral import fma_groups, fma_levels, fma_matrix
    from spectral.validation import child_rng
    from verify.core.threads import single_blas_thread

    n = check_int("n", n, low=256, high=2048)
    d = check_int("d", d, low=8, high=128)
    r = check_int("r", r, low=4, high=n // 8)
    ranks = tuple(sorted(set(check_ints("ranks", ranks, low=1, high=r))))
    block_sizes = tuple(sorted(set(check_ints("block_sizes", block_sizes, low=4, high=n // 4))))
    noise = check_real("noise", noise, low=0.0, high=2.0)
    max_frequency = check_real("max_frequency", max_frequency, low=0.25, high=64.0, low_open=True)
    check_option("claim", claim, ("corrected", "printed"))

    rec = Recorder()
    levels = fma_levels(n, r=r)
    structure = fma_groups(n, r=r)
    erank, tv_uniform, tv_oracle = {}, {}, {}
    with single_blas_thread():
        for kind in KINDS:
            with rec.timed(kind):
                q, k = _tokens(kind, n, d, noise, max_frequency, child_rng(seed, "tokens", kind))
                logits = q @ k.T / np.sqrt(d)
                kernel = np.exp(logits - logits.max(axis=1, keepdims=True))  # row scaling keeps block ranks
                exact = kernel / kernel.sum(axis=1, keepdims=True)
                for s in block_sizes:
                    for eps in (1e-3, 1e-6):
                        erank[(kind, s, eps)] = max(_eps_rank(kernel[a:a + s, a + 2 * s:a + 3 * s], eps)
                                                    for a in range(0, n - 3 * s + 1, s))
                for p in ranks:
                    a = fma_matrix(q, k, r=r, p=p, normalisation="joint")
                    tv_uniform[(kind, p)] = float(np.mean(0.5 * np.abs(a - exact).sum(axis=1)))
                if kind != "mix":
                    oracle = _oracle_rows(kernel, levels, structure.groups, structure.group_size, ranks)
                    for p in ranks:
                        tv_oracle[(kind, p)] = float(np.mean(0.5 * np.abs(oracle[p] - exact).sum(axis=1)))
    for (kind, s, eps), value in erank.items():
        rec.info(f"eps_rank_{kind}_s{s}_eps{eps:g}", value)
    for (kind, p), value in tv_uniform.items():
        rec.info(f"tv_uniform_{kind}_p{p}", value)
    for (kind, p), value in tv_oracle.items():
        rec.info(f"tv_block_svd_{kind}_p{p}", value)

    s_max, p_lo, p_hi = block_sizes[-1], ranks[0], ranks[-1]
    smooth_rank = erank[("smooth", s_max, 1e-6)]
    iid_rank = min(erank[("iid", s, 1e-3)] / s for s in block_sizes)
    rec.at_most("smooth_eps_rank_1e-6_largest_block", smooth_rank, s_max // 8,
                why="FMA-11: exp of a smooth kernel is analytic, eps-ranks ~ log(1/eps): seeds 0-9 give 7-9 at "
                    "s = 128, "
                    "eps = 1e-6 (5-6 at s = 64); bound s/8, i.e. >= 8x compression (i.i.d.: 128)",
                label="FMA-11: separated blocks of smooth-token attention are not low rank")
    if claim == "corrected":
        rec.at_least("iid_eps_rank_1e-3_over_block_size", iid_rank, 0.9,
                     why="FMA-11: i.i.d. tokens give lognormal-like kernel blocks of full rank (seeds 0-9: min over "
                         "block sizes of rank / s = 0.984-0.992; smooth tokens: <= 0.19)",
                     label="FMA-11: i.i.d.-token blocks are unexpectedly compressible")
    else:
        rec.at_most("iid_eps_rank_1e-3_over_block_size", iid_rank, 0.5,
                    why="the premise as stated (no smoothness assumption): far blocks compress at least 2x",
                    label="FMA-11 (printed): i.i.d.-token far blocks are full rank, not low rank")
    if p_hi > p_lo:
        gain = tv_oracle[("smooth", p_hi)] / tv_oracle[("smooth", p_lo)]
        rec.at_most(f"smooth_block_svd_error_ratio_p{p_hi}_over_p{p_lo}", gain, 0.25,
                    why="FMA-11: the optimal rank-p far-field error of smooth tokens falls fast with p (seeds 0-9: "
                        "0.020-0.070 for p 4 vs 1; i.i.d. tokens: 0.94)",
                    label="FMA-11: raising p barely helps on smooth tokens")
        gain_u = tv_uniform[("smooth", p_hi)] / tv_uniform[("smooth", p_lo)]
        rec.at_most(f"smooth_uniform_error_ratio_p{p_hi}_over_p{p_lo}", gain_u, 0.5,
                    why="FMA-11: uniform sub-block summaries of smooth tokens improve with p (seeds 0-9: "
                        "0.27-0.30 for p 4 vs 1; the oracle ratio is 5x smaller: the rest is the choice of pi)",
                    label="FMA-11: uniform rank-p summaries do not improve with p on smooth tokens")
    iid_best = tv_oracle[("iid", p_hi)]
    if claim == "corrected":
        rec.at_least(f"iid_block_svd_error_p{p_hi}", iid_best, 0.2,
                     why="FMA-11: with full-rank far blocks even the best rank-p summary misplaces a large share of "
                         "the attention mass (seeds 0-9: 0.335-0.340 at p = 4; smooth tokens: 0.002-0.011)",
                     label="FMA-11: i.i.d.-token far fields are unexpectedly well summarised")
    else:
        rec.at_most(f"iid_block_svd_error_p{p_hi}", iid_best, 0.05,
                    why="the premise as stated: rank-p summaries lose little (smooth tokens measure 0.002-0.011)",
                    label="FMA-11 (printed): the best rank-p far field of i.i.d. tokens misplaces much attention")
    rec.note("Errors are mean total-variation distances between FMA attention rows (joint normalisation) and "
             "softmax rows. 'block SVD' is an oracle: each far block of the exact kernel replaced by its best "
             "rank-p approximation, a lower bound for any rank-p summary, not an FMA with shared per-level pi.")
    return rec.finish("far-field attention blocks are low rank and FMA's rank-p summaries converge with p for smooth "
                      "tokens, but not for i.i.d. tokens: the premise is an assumption on the data"
                      if claim == "corrected" else
                      "far-field attention blocks are low rank for any tokens (as stated)")


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
