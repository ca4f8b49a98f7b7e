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

import dataclasses

import numpy as np

import spectral
from manifolds.references import fma
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.params import Choice, Int, Ints
from verify.core.reduce import least, worst
from verify.core.result import Recorder

CHECK = Check("fma_hmatrix",
              printed="the per-level normalisation as printed (eqs. 4, 6) is exact on keys constant on every far "
                      "group, which fails: its rows sum to the number of levels",
              host_only="dense (n, n) effective matrices and an SVD per far block (n <= 1024) against references "
                        "summed query by query on the host")

#: The measured tolerances (the others are exact identities at rounding level, next to their assertion).
CALIBRATION = Calibration(
    Tolerance("max_relative_reconstruction_error", 1e-13, measured=3.6e-15, over={"seed": (0, 1, 2)},
              why="A_hat V and fma_attention vs eq. (4) summed query by query with random pi of rank <= 4: rounding "
                  "of sums of <= 3r + 3p(L-1) terms; a dense softmax matrix in place of A_hat gives O(1)"),
    Tolerance("n24_r8_joint_deviation", 0.05, measured=0.374, over={"seed": (0, 1, 2)},
              why="for n > 2r the far keys enter as group means: an O(1) deviation on unit Gaussian tokens, d = 16 "
                  "(min over n = 24, 32, joint; per-level larger), far above rounding"),
    Tolerance("per_level_deviation_group_constant_keys", 0.05, setting={"claim": "corrected"}, measured=1.6,
              over={"seed": (0, 1, 2)},
              why="per-level rows sum to L (FMA-8), so the output is not full attention even on group-constant keys "
                  "(an O(1) deviation)"),
)

MATRICES = ("fma", "full")


@CHECK.parameters
class Params:
    n: int = Int(256, "Sequence length of the rank test (FMA-7)", low=64, high=1024, unit="tokens")
    r: int = Int(8, "Base cell of the rank test, at most n / 8 (at least 3 levels)", low=8, high=128, unit="tokens")
    ranks: tuple = Ints((1, 2, 4), "Summary ranks p with random aggregation vectors (at most 8 <= r)", low=1,
                        high=8)
    d: int = Int(16, "Query/key/value dimension", low=2, high=128)
    matrix: str = Choice("fma", MATRICES,
                         'The matrix whose far blocks are tested: "fma" (spectral.fma_matrix); "full" substitutes '
                         "dense softmax attention, whose far blocks have full rank (a negative control: fails)")

    def resolve(self):
        """At least three levels: r <= n / 8 (ranks <= 8 <= r, so every p fits in a group)."""
        if self.r > self.n // 8:
            raise InputError(f"r must be an integer in [8, {self.n // 8}], got {self.r}")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What fma_hmatrix measures."""

    #: max over far blocks of numerical rank - p (singular values above 1e-12 sigma_1)
    max_far_block_rank_minus_p: int
    #: max relative |A_hat V - eq. (4)| and |fma_attention - eq. (4)| over p and both normalisations
    max_relative_reconstruction_error: float
    far_blocks_tested: int
    #: far blocks per (p, numerical rank)
    block_ranks: dict[tuple[int, int], int]
    #: FMA Fig. 7: the per-level matrix at n = 64, r = 4 on random tokens, and its level map
    fig7_matrix: np.ndarray
    fig7_levels: np.ndarray
    #: FMA-9 (a): max |FMA - softmax attention| at n = 16, r = 8 (both normalisations); the joint one's min at
    #: n = 24, 32
    n16_r8_max_deviation: float
    n24_r8_joint_deviation: float
    #: FMA-9 (b): max |FMA - softmax attention| on keys constant on blocks of r 2^(L-2), causal or not
    joint_deviation_group_constant_keys: float
    per_level_deviation_group_constant_keys: float
    #: the joint one with keys constant only on base blocks (n = 64, r = 8, L = 3)
    joint_deviation_keys_constant_on_base_blocks_n64_r8: float


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Far-block ranks and eq. (4) reconstruction; the Fig. 7 matrix; FMA against softmax attention."""
    with ctx.timed("hmatrix"):
        ranks = _far_blocks(p)
    fig7 = _fig7(p.d, p.seed)
    with ctx.timed("exactness"):
        exact = _exactness(p.n, p.r, p.d, p.seed)
    return Quantities(**ranks, **fig7, **exact)


def _far_blocks(p: Params) -> dict:
    """FMA-7: the SVD of every far block of the effective matrix, and A_hat V against eq. (4)."""
    n, r, d = p.n, p.r, p.d
    h = fma.hierarchy_1d(n, r)
    worst_excess, worst_recon, blocks, rank_hist = -n, 0.0, 0, {}
    for rank_p in p.ranks:
        rng = child_rng(p.seed, "fma7", rank_p)
        q, k, v = rng.standard_normal((3, n, d))
        pik = [rng.standard_normal((rank_p, r * 2 ** (lev - 1))) for lev in range(1, h.depth)]
        piv = [rng.standard_normal((rank_p, r * 2 ** (lev - 1))) for lev in range(1, h.depth)]
        weights = list(zip(pik, piv))
        for norm in ("per-level", "joint"):
            a = spectral.fma_matrix(q, k, r=r, p=rank_p, normalisation=norm, weights=weights)
            if p.matrix == "full":
                s = q @ k.T / np.sqrt(d)
                e = np.exp(s - s.max(axis=1, keepdims=True))
                a = e / e.sum(axis=1, keepdims=True)
            ref = fma.eq4_reference(q, k, v, h, normalisation=norm, pik=pik, piv=piv)
            out = spectral.fma_attention(q, k, v, r=r, p=rank_p, normalisation=norm, weights=weights)
            scale = float(np.max(np.abs(ref)))
            worst_recon = worst(worst_recon, float(np.max(np.abs(a @ v - ref))) / scale,
                              float(np.max(np.abs(out - ref))) / scale)
            for lev in range(1, h.depth):
                for m, cols in enumerate(h.group_members[lev - 1]):
                    rows = [i for i in range(n) if m in h.groups[lev - 1][i]]
                    if not rows:
                        continue
                    sv = np.linalg.svd(a[np.ix_(rows, cols)], compute_uv=False)
                    rank = int(np.count_nonzero(sv > 1e-12 * sv[0])) if sv[0] > 0 else 0
                    worst_excess = max(worst_excess, rank - rank_p)
                    rank_hist[(rank_p, rank)] = rank_hist.get((rank_p, rank), 0) + 1
                    blocks += 1
    return dict(max_far_block_rank_minus_p=worst_excess, max_relative_reconstruction_error=worst_recon,
                far_blocks_tested=blocks, block_ranks=dict(sorted(rank_hist.items())))


def _fig7(d, seed) -> dict:
    """FMA Fig. 7: the per-level (printed) matrix at n = 64, r = 4 (4 levels, n / r = 16) and its level map."""
    q7, k7 = child_rng(seed, "fig7").standard_normal((2, 64, d))
    return dict(fig7_matrix=spectral.fma_matrix(q7, k7, r=4), fig7_levels=spectral.fma_levels(64, r=4))


def _exactness(n, r, d, seed) -> dict:
    """FMA-9: FMA against softmax attention at n <= 2r, beyond it, and on keys constant on every far group."""
    # (a) n <= 2r is full attention; n > 2r is not
    small = {}
    for m in (16, 24, 32):
        rng = child_rng(seed, "fma9a", m)
        q, k, v = rng.standard_normal((3, m, d))
        ref = fma.softmax_attention(q, k, v)
        for norm in ("per-level", "joint"):
            small[(m, norm)] = float(np.max(np.abs(spectral.fma_attention(q, k, v, r=8, normalisation=norm) - ref)))
    # (b) keys constant on blocks of the largest group length r 2^(L-2)
    exact = {"per-level": 0.0, "joint": 0.0}
    for m, cell in ((64, 8), (100, 5), (n, r)):
        top = cell * 2 ** (fma.depth(m, cell) - 2)
        rng = child_rng(seed, "fma9b", m, cell)
        q, v = rng.standard_normal((2, m, d))
        k = rng.standard_normal((-(-m // top), d))[np.arange(m) // top]
        for causal in (False, True):
            ref = fma.softmax_attention(q, k, v, causal=causal)
            for norm in exact:
                out = spectral.fma_attention(q, k, v, r=cell, normalisation=norm, causal=causal)
                exact[norm] = worst(exact[norm], float(np.max(np.abs(out - ref))))
    rng = child_rng(seed, "fma9b-base-blocks")
    q, v = rng.standard_normal((2, 64, d))
    k = rng.standard_normal((8, d))[np.arange(64) // 8]
    base_blocks = float(np.max(np.abs(spectral.fma_attention(q, k, v, r=8, normalisation="joint")
                                                 - fma.softmax_attention(q, k, v))))
    return dict(n16_r8_max_deviation=worst(small[(16, norm)] for norm in ("per-level", "joint")),
                n24_r8_joint_deviation=least(small[(24, "joint")], small[(32, "joint")]),
                joint_deviation_group_constant_keys=exact["joint"],
                per_level_deviation_group_constant_keys=exact["per-level"],
                joint_deviation_keys_constant_on_base_blocks_n64_r8=base_blocks)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Far blocks of rank <= p reproducing eq. (4) (FMA-7); FMA against softmax attention (FMA-9)."""
    rec.at_most("max_far_block_rank_minus_p", q.max_far_block_rank_minus_p, 0,
                why="FMA-7 exact: a far block is (beta: rows x p) @ (pi^v: p x |G|); numerical rank = singular "
                    "values above 1e-12 sigma_1 (seeds 0-2: trailing sigma_(p+1) <= 3.9e-16 sigma_1, kept "
                    "sigma_p >= 5e-5 sigma_1)",
                label=f"FMA-7: a far block of the {p.matrix} matrix has rank above p")
    rec.at_most("max_relative_reconstruction_error", q.max_relative_reconstruction_error,
                CALIBRATION.get("max_relative_reconstruction_error", p), label="FMA-7: A_hat V differs from eq. (4)")
    rec.info("far_blocks_tested", q.far_blocks_tested)
    for (rank_p, rank), count in q.block_ranks.items():
        rec.info(f"blocks_p{rank_p}_rank{rank}", count)
    rec.at_most("n16_r8_max_deviation", q.n16_r8_max_deviation, 1e-13,
                why="FMA-9 (a) exact: n = 2r gives L = 1, N(i) = [n], one softmax over all keys (measured 0)",
                label="FMA-9: FMA at n <= 2r differs from full attention")
    rec.at_least("n24_r8_joint_deviation", q.n24_r8_joint_deviation, CALIBRATION.get("n24_r8_joint_deviation", p),
                 label="FMA-9: FMA at n > 2r is indistinguishable from full attention")
    if p.claim == "corrected":
        rec.at_most("joint_deviation_group_constant_keys", q.joint_deviation_group_constant_keys, 1e-13,
                    why="FMA-9 (b) exact: sum_(j in G) e^(q.k_j) v_j = |G| e^(q.k_G) mean(v) when k is constant "
                        "on G (measured 3e-16 at (64,8), (100,5), (256,8), causal or not)",
                    label="FMA-9: joint FMA differs from full attention on group-constant keys")
        rec.at_least("per_level_deviation_group_constant_keys", q.per_level_deviation_group_constant_keys,
                     CALIBRATION.get("per_level_deviation_group_constant_keys", p),
                     label="FMA-9: per-level FMA unexpectedly equals full attention on group-constant keys")
    else:
        rec.at_most("per_level_deviation_group_constant_keys", q.per_level_deviation_group_constant_keys, 1e-13,
                    why="the printed per-level normalisation taken as a drop-in for softmax attention: it would "
                        "have to be exact wherever the joint softmax is",
                    label="FMA-9 (printed): per-level FMA is not full attention even on group-constant keys")
    base_blocks = q.joint_deviation_keys_constant_on_base_blocks_n64_r8
    rec.info("joint_deviation_keys_constant_on_base_blocks_n64_r8", base_blocks)
    rec.note("Keys constant only on base blocks of length r make the joint variant exact just for L <= 2: with "
             f"L = 3 (n = 64, r = 8) the level-2 groups mix two blocks and the deviation is {base_blocks:.3g}. "
             "Exactness needs keys constant on every far group, i.e. on blocks of r 2^(L-2).")
    return ("the FMA matrix is an H-matrix with far blocks of rank <= p reproducing eq. (4); FMA is full attention "
            "at n <= 2r and, with the joint normalisation, on keys constant on every far group")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
