"""FMA as an H-matrix: far blocks of rank <= p (FMA-7), and when FMA equals softmax attention (FMA-9).

FMA-7 (FMA Fig. 2 caption and "Coarse level rank p": "a specific instance of an H-matrix ... low-rank
off-diagonal blocks"). The effective matrix ``Â`` of :func:`spectral.fma_matrix` has
``Â_ij = alpha_ij`` in the near field and ``Â_ij = sum_s beta^l_{i,G,s} pi^v(s)_{j - start(G)}`` for
``j`` in a far group ``G``. For random ``Q, K, V`` and random aggregation vectors ``pi^k, pi^v`` of
rank ``p``, every far block (the queries ``i`` with ``G in G_l(i)``, times ``G``; the queries come
from the definition-based sets) has numerical rank <= ``p`` (SVD), and ``Â V`` reproduces eq. (4)
computed query by query from the sets (:func:`manifolds.references.fma.eq4_reference`).

FMA-9 (derived exactness limits), against dense softmax attention ``softmax(Q K^T / sqrt(d)) V``:
(a) ``n <= 2r`` (``L <= 1``): the near field is everything and FMA is full attention, for both
normalisations; for ``n > 2r`` it is not. (b) When the keys are constant on every far group (here:
constant on blocks of the largest group length ``r 2^(L-2)``), the joint normalisation with group
means and the ``+ log|G|`` correction equals full attention (causal too); the per-level
normalisation as printed does not, even then.
"""

from __future__ import annotations

import numpy as np

from spectral.validation import check_int, check_option
from verify.core.check import Check
from verify.core.result import Recorder

CHECK = Check("fma_hmatrix", claims=("FMA-7", "FMA-9"))

MATRICES = ("fma", "full")


def _ranks(ints, name):
    from spectral.validation import InputError

    if isinstance(ints, (str, bytes)) or not hasattr(ints, "__iter__") or not len(ints):
        raise InputError(f"{name} must be a non-empty sequence of integers, got {ints!r}")
    return tuple(check_int(name, v, low=1, high=8) for v in ints)


@CHECK.define
def run(*, n=256, r=8, ranks=(1, 2, 4), d=16, matrix="fma", claim="corrected", seed=0, device="cpu"):
    """Far-block ranks and eq. (4) reconstruction of the FMA matrix; exactness limits of FMA.

    Parameters
    ----------
    n : int
        Sequence length of the rank test (FMA-7), in [64, 1024].
    r : int
        Base cell of the rank test, in [8, n / 8] (at least 3 levels).
    ranks : tuple of int
        Summary ranks p with random aggregation vectors, each in [1, min(8, r)].
    d : int
        Query/key/value dimension, in [2, 128].
    matrix : {"fma", "full"}
        The matrix whose far blocks are tested: "fma" (spectral.fma_matrix); "full" substitutes dense
        softmax attention, whose far blocks have full rank (a negative control: fails).
    claim : {"corrected", "printed"}
        FMA-9 (b): "corrected" asserts that the joint normalisation is exact on keys constant on every
        far group and the per-level one is not; "printed" asserts that the per-level normalisation as
        printed (eqs. 4, 6) is exact there (fails: its rows sum to the number of levels).
    seed : int
        Seed of the random tokens and aggregation vectors.
    device : {"cpu"}
        Array device; this check runs on the host only.

    Returns
    -------
    CheckResult
        Passes when every far block has rank <= p, Â V equals eq. (4), FMA equals full attention
        exactly at n <= 2r and (joint) on group-constant keys, and differs otherwise.
    """
    from spectral import fma_attention, fma_levels, fma_matrix
    from spectral.validation import InputError, child_rng
    from manifolds.references.fma import depth, eq4_reference, hierarchy_1d, softmax_attention

    n = check_int("n", n, low=64, high=1024)
    r = check_int("r", r, low=8, high=n // 8)
    ranks = _ranks(ranks, "ranks")
    if max(ranks) > r:
        raise InputError(f"ranks must be at most r = {r}, got {max(ranks)}")
    d = check_int("d", d, low=2, high=128)
    check_option("matrix", matrix, MATRICES)
    check_option("claim", claim, ("corrected", "printed"))

    rec = Recorder()
    h = hierarchy_1d(n, r)
    worst_excess, worst_recon, blocks, rank_hist = -n, 0.0, 0, {}
    with rec.timed("hmatrix"):
        for p in ranks:
            rng = child_rng(seed, "fma7", p)
            q, k, v = rng.standard_normal((3, n, d))
            pik = [rng.standard_normal((p, r * 2 ** (lev - 1))) for lev in range(1, h.depth)]
            piv = [rng.standard_normal((p, r * 2 ** (lev - 1))) for lev in range(1, h.depth)]
            weights = list(zip(pik, piv))
            for norm in ("per-level", "joint"):
                a = fma_matrix(q, k, r=r, p=p, normalisation=norm, weights=weights)
                if matrix == "full":
                    s = q @ k.T / np.sqrt(d)
                    e = np.exp(s - s.max(axis=1, keepdims=True))
                    a = e / e.sum(axis=1, keepdims=True)
                ref = eq4_reference(q, k, v, h, normalisation=norm, pik=pik, piv=piv)
                out = fma_attention(q, k, v, r=r, p=p, normalisation=norm, weights=weights)
                scale = float(np.max(np.abs(ref)))
                worst_recon = max(worst_recon, float(np.max(np.abs(a @ v - ref))) / scale,
                                  float(np.max(np.abs(out - ref))) / scale)
                for lev in range(1, h.depth):
                    for m, cols in enumerate(h.group_members[lev - 1]):
                        rows = [i for i in range(n) if m in h.groups[lev - 1][i]]
                        if not rows:
                            continue
                        sv = np.linalg.svd(a[np.ix_(rows, cols)], compute_uv=False)
                        rank = int(np.count_nonzero(sv > 1e-12 * sv[0])) if sv[0] > 0 else 0
                        worst_excess = max(worst_excess, rank - p)
                        rank_hist[(p, rank)] = rank_hist.get((p, rank), 0) + 1
                        blocks += 1
    rec.at_most("max_far_block_rank_minus_p", worst_excess, 0,
                why="FMA-7 exact: a far block is (beta: rows x p) @ (pi^v: p x |G|); numerical rank = singular "
                    "values above 1e-12 sigma_1 (seeds 0-2: trailing sigma_(p+1) <= 3.9e-16 sigma_1, kept "
                    "sigma_p >= 5e-5 sigma_1)",
                label=f"FMA-7: a far block of the {matrix} matrix has rank above p")
    rec.at_most("max_relative_reconstruction_error", worst_recon, 1e-13,
                why="FMA-7: A_hat V and fma_attention vs eq. (4) summed query by query (measured <= 1e-14 "
                    "relative with random pi of rank <= 4; rounding of sums of <= 3r + 3p(L-1) terms)",
                label="FMA-7: A_hat V differs from eq. (4)")
    rec.info("far_blocks_tested", blocks)
    for (p, rank), count in sorted(rank_hist.items()):
        rec.info(f"blocks_p{p}_rank{rank}", count)

    # FMA Fig. 7: the per-level (printed) matrix at n = 64, r = 4 (4 levels, n / r = 16) and its level map
    rng = child_rng(seed, "fig7")
    q7, k7 = rng.standard_normal((2, 64, d))
    rec.array("fig7_matrix", fma_matrix(q7, k7, r=4))
    rec.array("fig7_levels", fma_levels(64, r=4))

    # FMA-9 (a): n <= 2r is full attention; n > 2r is not
    with rec.timed("exactness"):
        small = {}
        for m in (16, 24, 32):
            rng = child_rng(seed, "fma9a", m)
            q, k, v = rng.standard_normal((3, m, d))
            ref = softmax_attention(q, k, v)
            for norm in ("per-level", "joint"):
                small[(m, norm)] = float(np.max(np.abs(fma_attention(q, k, v, r=8, normalisation=norm) - ref)))
        # FMA-9 (b): keys constant on blocks of the largest group length r 2^(L-2)
        cases = ((64, 8), (100, 5), (n, r))
        exact = {"per-level": 0.0, "joint": 0.0}
        for m, cell in cases:
            top = cell * 2 ** (depth(m, cell) - 2)
            rng = child_rng(seed, "fma9b", m, cell)
            q, v = rng.standard_normal((2, m, d))
            k = rng.standard_normal((-(-m // top), d))[np.arange(m) // top]
            for causal in (False, True):
                ref = softmax_attention(q, k, v, causal=causal)
                for norm in exact:
                    out = fma_attention(q, k, v, r=cell, normalisation=norm, causal=causal)
                    exact[norm] = max(exact[norm], float(np.max(np.abs(out - ref))))
        rng = child_rng(seed, "fma9b-base-blocks")
        q, v = rng.standard_normal((2, 64, d))
        k = rng.standard_normal((8, d))[np.arange(64) // 8]
        base_blocks = float(np.max(np.abs(fma_attention(q, k, v, r=8, normalisation="joint")
                                            - softmax_attention(q, k, v))))
    rec.at_most("n16_r8_max_deviation", max(small[(16, nm)] for nm in ("per-level", "joint")), 1e-13,
                why="FMA-9 (a) exact: n = 2r gives L = 1, N(i) = [n], one softmax over all keys (measured 0)",
                label="FMA-9: FMA at n <= 2r differs from full attention")
    rec.at_least("n24_r8_joint_deviation", min(small[(24, "joint")], small[(32, "joint")]), 0.05,
                 why="FMA-9 (a): for n > 2r the far keys enter as group means; measured min 0.51 over n = 24, 32 "
                     "(joint; per-level larger) on unit Gaussian tokens, d = 16: O(1), far above rounding",
                 label="FMA-9: FMA at n > 2r is indistinguishable from full attention")
    if claim == "corrected":
        rec.at_most("joint_deviation_group_constant_keys", exact["joint"], 1e-13,
                    why="FMA-9 (b) exact: sum_(j in G) e^(q.k_j) v_j = |G| e^(q.k_G) mean(v) when k is constant "
                        "on G (measured 3e-16 at (64,8), (100,5), (256,8), causal or not)",
                    label="FMA-9: joint FMA differs from full attention on group-constant keys")
        rec.at_least("per_level_deviation_group_constant_keys", exact["per-level"], 0.05,
                     why="FMA-9 (b): per-level rows sum to L (FMA-8), so the output is not full attention "
                         "(measured 0.96-1.75)",
                     label="FMA-9: per-level FMA unexpectedly equals full attention on group-constant keys")
    else:
        rec.at_most("per_level_deviation_group_constant_keys", exact["per-level"], 1e-13,
                    why="the printed per-level normalisation taken as a drop-in for softmax attention: it would "
                        "have to be exact wherever the joint softmax is",
                    label="FMA-9 (printed): per-level FMA is not full attention even on group-constant keys")
    rec.info("joint_deviation_keys_constant_on_base_blocks_n64_r8", base_blocks)
    rec.note("Keys constant only on base blocks of length r make the joint variant exact just for L <= 2: with "
             f"L = 3 (n = 64, r = 8) the level-2 groups mix two blocks and the deviation is {base_blocks:.3g}. "
             "Exactness needs keys constant on every far group, i.e. on blocks of r 2^(L-2).")
    return rec.finish("the FMA matrix is an H-matrix with far blocks of rank <= p reproducing eq. (4); FMA is full "
                      "attention at n <= 2r and, with the joint normalisation, on keys constant on every far group")


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
