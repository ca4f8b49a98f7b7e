"""Fast Multipole Attention (FMA): the paper's claims that the toolkit checks, as data. One entry per claim: its id,
title, priority, the verdict expected for the statement as printed, the check that decides it, and its details (where
the paper makes it, what it says, what the toolkit asserts instead); see :mod:`verify.papers`.
"""

from verify.core.ledger import Claim, ClaimDetails

PREFIX = "FMA"
NAME = "fast-multipole-attention"
TITLE = "Fast Multipole Attention"

CLAIMS = (
    Claim("FMA-1", NAME, "Near/far-field sets form a disjoint cover (1-D)", "P1", "should hold", check="fma_structure",
          details=ClaimDetails(
              where="§3, 'FMA in 1D' (near- and far-field sets)",
              claim="For every query i the near field N(i) and the far fields F_ℓ(i), ℓ = 1 … L − 1 with L = "
                    "⌈log₂(n/r)⌉, are pairwise disjoint and together cover all n tokens, also when r does not "
                    "divide n or n/r is not a power of 2.")),
    Claim("FMA-2", NAME, "Far-field sets are tiled exactly by level-ℓ groups; ≤ 3 groups per level; windows nested",
          "P1", "should hold", check="fma_structure",
          details=ClaimDetails(
              where="definitions of the groups G_{ℓ,m} and G_ℓ(i); Fig. 1",
              claim="Each far field F_ℓ(i) is tiled exactly by level-ℓ groups of length r2^{ℓ−1}, at most 3 per "
                    "level, and the level windows are nested, so eq. (4) uses every token once. (The windows use "
                    "blocks of length r2^ℓ while the groups have length r2^{ℓ−1}; 'Coarse level rank' gives π_ℓ "
                    "length 2^ℓ where r2^{ℓ−1} is meant.)")),
    Claim("FMA-3", NAME, "Source counts: ≤ 3r + 3(L−1) per query (1-D), O(n log n) total; memory O(rn + np log(n/r))",
          "P1", "should hold", check="fma_structure",
          details=ClaimDetails(
              where="after eq. (4); §4.5",
              claim="Each query sees at most 3r + 3(L − 1) sources in 1-D (3r + O(log n)), O(n log n) in total, and "
                    "the memory is O(rn + np log(n/r)).")),
    Claim("FMA-4", NAME, "Query downsampling gives O(n) (FMA-linear)", "P2", "should hold", check="fma_counts",
          details=ClaimDetails(
              where="after eq. (4) and eq. (6)",
              claim="Downsampling the queries on the coarse levels makes the cost O(n) (FMA-linear).",
              asserted="With queries pooled over blocks of length r2^{ℓ−1} (the pooling is not specified; this is "
                       "the toolkit's reading) the number of scores is at most 3rn + 6pn/r, linear in n; how pooled "
                       "outputs return to the tokens is not specified.")),
    Claim("FMA-5", NAME, "2-D quadtree: disjoint cover, tiling, ≤ 9r² + 27(L−1) sources; non-divisible W", "P1",
          "should hold", check="fma_quadtree",
          details=ClaimDetails(
              where="'FMA in 2D'",
              claim="In 2-D the quadtree near and far fields are disjoint and cover every pixel, the far fields are "
                    "tiled by squares of side r2^{ℓ−1}, and each pixel sees at most 9r² + 27(L − 1) sources, also "
                    "when r does not divide the image width W. (The text's 'base cell of size 3r×3r' and 'squares "
                    "of side r2^ℓ' are slips: the base cell is r×r, the near field 3r×3r.)")),
    Claim("FMA-6", NAME, "2-D stencil \"isotropic … independent of the query's location\"", "P3",
          "partly false as stated", check="fma_quadtree",
          details=ClaimDetails(
              where="§2, the Swin paragraph",
              claim="The 2-D stencil is isotropic (3×3 at the finest level, an almost isotropic 6×6 footprint at the "
                    "first coarse tier) and independent of the query's location.",
              asserted="The footprint is almost isotropic, but it depends on where the query is: the near window sits "
                       "at offset 1 or 2 inside the 6×6 footprint depending on the parity of the query's block on "
                       "each axis, so there are 4 distinct stencils in 2-D (2 in 1-D) per level.",
              split="'almost isotropic' holds; 'independent of the query's location' does not")),
    Claim("FMA-7", NAME, "Hierarchical-matrix structure of the effective attention matrix (far blocks have rank ≤ p)",
          "P1", "should hold", check="fma_hmatrix",
          details=ClaimDetails(
              where="Fig. 2 caption; §3 (H-matrix); 'Coarse level rank p'",
              claim="The effective attention matrix is a hierarchical matrix: every far block has rank ≤ p, and the "
                    "matrix reproduces eq. (4) exactly.")),
    Claim("FMA-8", NAME, "Normalisation: per-level softmax ⇒ effective row sums ≠ 1", "P1",
          "suspicious / likely false as stated", check="fma_contract",
          details=ClaimDetails(
              where="eqs. (4) and (6)",
              claim="FMA is a drop-in replacement for softmax attention: each output is a convex combination of "
                    "values (implicit).",
              asserted="With the near-field weights normalised over N(i) and each level's weights normalised "
                       "separately (as printed), the effective row sums are 1 + (number of non-empty levels), so "
                       "outputs are not convex combinations and their scale grows with log n. One joint softmax "
                       "over the near field and all groups (logits q·k̄_G/√d + log|G|) has row sums 1; the toolkit "
                       "implements and labels both.")),
    Claim("FMA-9", NAME, "Exactness limits", "P2", "partly false as stated", check="fma_hmatrix",
          details=ClaimDetails(
              where="derived from eqs. (4) and (6)",
              claim="FMA is exact in two limits: n ≤ 2r (the near field is everything), and keys constant within each "
                    "far group (a far group's mean key then loses nothing).",
              asserted="Exact at n ≤ 2r with either normalisation. On keys constant within each far group it is exact "
                       "only with one joint softmax over the near field and all groups (group-mean keys and values, "
                       "logits q·k̄_G/√d + log|G|; the toolkit's variant, FMA-8); the per-level normalisation of eqs. "
                       "(4) and (6) as printed is not (largest deviation from full attention 1.60 at n = 256, r = 8: "
                       "its rows sum to 1 + the number of levels).",
              split="exactness at n ≤ 2r holds as printed; exactness on group-constant keys holds for the joint "
                    "softmax, not for the per-level normalisation of eqs. (4) and (6)")),
    Claim("FMA-10", NAME, "Causal compatibility: no far group straddles its query", "P2", "should hold",
          check="fma_structure",
          details=ClaimDetails(
              where="§1; §4.1 (autoregressive use)",
              claim="FMA works for causal attention: no far group straddles its query, so far groups can be masked "
                    "whole and only the near field needs a causal mask inside the block.")),
    Claim("FMA-11", NAME, "Premise that far-field interactions are low rank (FMM/H-matrix analogy)", "P2",
          "holds only under stated assumptions", check="fma_lowrank",
          details=ClaimDetails(
              where="§1; §3 (the fast-multipole / H-matrix analogy)",
              claim="Far-field interactions are low rank, so coarse group summaries lose little.",
              asserted="Off-diagonal blocks of exp(QK^T/√d) between well-separated intervals have small numerical "
                       "rank only when queries and keys depend smoothly on position; for independent tokens the "
                       "ε-rank is about the block size and a small p gives large errors. Low rank is a property of "
                       "the data, not of the mechanism.")),
    Claim("FMA-12", NAME, "Near-field share at the reported configurations", "P2", "should hold", check="fma_counts",
          details=ClaimDetails(
              where="the experimental configurations (1-D r = 64 up to n = 1024, r = 128 above; 2-D r = 4 at 224², r "
                    "= 8 at 384²); §4.3 memory claims",
              claim="The memory savings reported at these configurations come from the hierarchical structure.",
              asserted="The near-field share Σ_i |N(i)| / n², computed exactly from the definitions, is about one "
                       "half at the 2-D ImageNet sizes (45–60 % of all pairs are computed exactly), so the savings "
                       "reported there cannot come from the asymptotic O(n log n) structure.")),
)
