"""The claims ledger in code: claim id -> paper, statement, expected verdict and covering check.

Every checkable claim of the five papers, restated precisely, with the verdict expected for the
paper's printed statement. ``CHECKS`` maps each check module ``verify.<name>`` to the ledger ids it
covers (derived from ``Claim.check``); :func:`available_checks` lists those that exist in this
installation. Claims covered by structural tests rather than a CLI check name the test file.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import re
from collections.abc import Iterable, Mapping
from typing import Any

from spectral.floor.validation import InputError

__all__ = ["Claim", "ClaimDetails", "LEDGER", "DETAILS", "CHECKS", "PAPERS", "PAPER_TITLES", "READINGS",
           "VERDICT_NAMES", "claim", "details", "available_checks", "load_check", "paper_reading",
           "outcome_category", "claim_records", "setting", "settings", "claims_in", "decided_by", "deciding_result",
           "run_label", "setting_at_defaults", "printed_disagreements", "CONTRACT_CHECKS"]

PAPERS = {
    "FNA": "fractional-neural-attention",
    "DRIFT": "attention-drift-diffusion-metric",
    "PDE": "pde-guided-attention",
    "FMA": "fast-multipole-attention",
    "NEURAL": "neural-attention-mlp-scores",
    "SA": "self-attention-particles",
    "GL": "graph-laplacian-spectral-convergence",
    "SK": "sinkformers",
    "GA": "transformer-pde-gaussian",
    "MS": "metastable-clusters",
}


#: Full titles of the papers, by ledger prefix.
PAPER_TITLES = {
    "FNA": "Fractional Neural Attention",
    "DRIFT": "Attention as drift-diffusion and metric attention",
    "PDE": "PDE-guided attention",
    "FMA": "Fast Multipole Attention",
    "NEURAL": "Neural Attention (MLP scores)",
    "SA": "Self-attention as interacting particles (clusters, Geshkovski et al.)",
    "GL": "Graph-Laplacian spectral convergence (Calder & García Trillos 2022; Cheng & Wu 2022; "
          "García Trillos, Gerlach, Hein & Slepčev 2020)",
    "SK": "Sinkformers: doubly stochastic attention (Sander, Ablin, Blondel & Peyré 2022) and bistochastic kernel "
          "limits (Marshall & Coifman 2019; Landa, Coifman & Kluger 2021; Agarwal, Harchaoui, Mulcahy & Pal 2024)",
    "GA": "Gaussian tokens under the Transformer PDE (Castin, Ablin, Carrillo & Peyré 2025)",
    "MS": "Metastable clusters from near-uniform tokens (Bruno, Pasqualotto & Agazzi 2025; Geshkovski, Koubbi, "
          "Polyanskiy & Rigollet 2024)",
}


@dataclasses.dataclass(frozen=True)
class Claim:
    """One ledger entry: the paper, a short title, the priority, the expected verdict on the printed claim, and
    the check (``verify.<check>``) or test file that covers it.

    ``setting`` holds the parameters of the run that decides the claim where they differ from the
    check's defaults (``{"manifold": "sphere"}``: FNA-11 is decided on S^2, not by the default run on
    S^1); it is stored as sorted ``(name, value)`` pairs and read with :func:`setting`. A check whose
    claims need several settings is run once per distinct setting (:func:`settings`), and each claim
    takes its deciding records from the run in its own setting (:func:`decided_by`).
    """

    id: str
    paper: str
    title: str
    priority: str
    verdict: str
    check: str | None = None
    test: str | None = None
    setting: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self):
        value = self.setting
        if isinstance(value, Mapping):
            value = value.items()
        object.__setattr__(self, "setting", tuple(sorted((str(k), v) for k, v in value)))


LEDGER: tuple[Claim, ...] = (
    Claim('FNA-1', 'fractional-neural-attention', 'Normalising constant of the fractional Laplacian', 'P2', 'should hold', check='levy', test=None),
    Claim('FNA-2', 'fractional-neural-attention', 'Heat kernels, Lévy increments and self-similarity', 'P2', 'should hold', check='levy', test=None),
    Claim('FNA-3', 'fractional-neural-attention', 'Poisson kernel at α = 1 (eq. 12)', 'P2', 'suspicious / likely false as stated', check='levy', test=None),
    Claim('FNA-4', 'fractional-neural-attention', 'Power-law heat-kernel bounds, tail constant, heavy-tailed jumps (Fig. 1)', 'P1', 'should hold', check='levy', test=None),
    Claim('FNA-5', 'fractional-neural-attention', '"For α∈[2, d_M+1] the operator is local / reduces to the Laplacian"', 'P2', 'suspicious / likely false as stated', check='levy', test=None),
    Claim('FNA-6', 'fractional-neural-attention', 'Proposition 1: orthogonal-projection equivalence (+ multi-head slices, A.3)', 'P1', 'should hold', check=None, test='tests/spectral/test_kernel_identities.py'),
    Claim('FNA-7', 'fractional-neural-attention', 'Real, positive spectrum of Ã (ordering in eq. 19/20 and eq. 34)', 'P1', 'holds only under stated assumptions', check=None, test='tests/spectral/test_kernel_identities.py'),
    Claim('FNA-8', 'fractional-neural-attention', 'Markov-chain diagonalisation: left/right eigenvectors, bi-orthonormality, spectral decomposition', 'P1', 'should hold', check=None, test='tests/spectral/test_diffmaps.py'),
    Claim('FNA-9', 'fractional-neural-attention', 'Diffusion distance = Euclidean distance in full diffusion-map coordinates (eqs. 36–37)', 'P1', 'holds only under stated assumptions', check=None, test='tests/spectral/test_diffmaps.py'),
    Claim('FNA-10', 'fractional-neural-attention', 'Fig. 2a: Weyl-type scaling λ_j ∝ j^α of FNA on S¹', 'P1', 'holds only under stated assumptions', check='weyl', test=None),
    Claim('FNA-11', 'fractional-neural-attention', 'Weyl law depends on the manifold dimension', 'P2', 'holds only under stated assumptions', check='weyl', test=None, setting={'manifold': 'sphere'}),
    Claim('FNA-12', 'fractional-neural-attention', 'Theorem 2 / Lemma 1: limit operator, constant and sign', 'P1', 'holds only under stated assumptions', check='fractional_limit', test=None),
    Claim('FNA-13', 'fractional-neural-attention', 'Convergence rate of the FNA generator: O(κ^{2−α}), not O(ε)', 'P1', 'suspicious / likely false as stated', check='fna_rate', test=None),
    Claim('FNA-14', 'fractional-neural-attention', 'Density-normalisation claims (eq. 43; A.4 a-normalisation)', 'P3', 'partly false as stated', check='density_normalisation', test=None),
    Claim('FNA-15', 'fractional-neural-attention', 'Fig. 2b/2c: inter-cluster edges for α<2, intra-cluster only for α=2', 'P2', 'holds only under stated assumptions', check='fig2bc', test=None),
    Claim('FNA-16', 'fractional-neural-attention', 'Bandwidth conventions make FNA rows nearly uniform (diagnostic for FNA-17/18)', 'P1', 'should hold', check='multiscale', test=None),
    Claim('FNA-17', 'fractional-neural-attention', 'Larger spectral gap for α<2 than for α=2 and DP (Fig. 5a mechanism)', 'P1', 'holds only under stated assumptions', check='multiscale', test=None),
    Claim('FNA-18', 'fractional-neural-attention', 'Shortest-path hop counts ≈ 1 for α<2, growing with n for α=2 and DP (Fig. 5c–e)', 'P1', 'holds only under stated assumptions', check='multiscale', test=None),
    Claim('FNA-19', 'fractional-neural-attention', 'Diffusion-map embeddings "in close proximity" for α=1.2, "apart" for α=2 (Fig. 5b)', 'P2', 'holds only under stated assumptions', check='multiscale', test=None),
    Claim('FNA-20', 'fractional-neural-attention', 'Heavy-tailed jump lengths of the FNA random walk (tail exponent α)', 'P2', 'should hold', check='levy_jumps', test=None),
    Claim('DRIFT-1', 'attention-drift-diffusion-metric', 'Dot-product softmax = Gaussian kernel on the sphere (Example 1)', 'P1', 'suspicious / likely false as stated', check='sphere_softmax', test=None),
    Claim('DRIFT-2', 'attention-drift-diffusion-metric', 'Similarity taxonomy (Defs. 1–10, Table 1, §2.2) reproduces the classical kernels', 'P3', 'partly false as stated', check='similarity_taxonomy', test=None),
    Claim('DRIFT-3', 'attention-drift-diffusion-metric', 'Theorem 1 (Singer 2006): graph Laplacian convergence rate', 'P1', 'should hold', check='heat_rate', test=None),
    Claim('DRIFT-4', 'attention-drift-diffusion-metric', 'Theorem 2 (Coifman–Lafon, a=0): drift coefficient exactly 2', 'P1', 'partly false as stated', check='drift_diffusion', test=None),
    Claim('DRIFT-5', 'attention-drift-diffusion-metric', 'Theorem 3: attention is a first-order (Euler) approximator of the drift–diffusion PDE; Fig. 2', 'P1', 'holds only under stated assumptions', check='euler_steps', test=None),
    Claim('DRIFT-6', 'attention-drift-diffusion-metric', 'Metric scaling: g₂ = g₁/m² ⇒ At_{g₂} = m² At_{g₁}', 'P2', 'should hold', check='metric_scaling', test=None),
    Claim('DRIFT-7', 'attention-drift-diffusion-metric', 'Theorem 4: conformal rewriting At_{g,p} = f Δ_{g̃}', 'P2', 'partly false as stated', check='conformal', test=None),
    Claim('DRIFT-8', 'attention-drift-diffusion-metric', 'Heat-conduction form and invariant measure p²', 'P3', 'should hold', check='conformal', test=None),
    Claim('DRIFT-9', 'attention-drift-diffusion-metric', 'Stationary states = constants; number of near-1 eigenvalues = number of clusters; collapse without residuals', 'P1', 'should hold', check='clusters', test=None),
    Claim('DRIFT-10', 'attention-drift-diffusion-metric', 'Multi-head algebraic identity (§3.3)', 'P3', 'should hold', check=None, test='tests/spectral/test_kernel_identities.py'),
    Claim('DRIFT-11', 'attention-drift-diffusion-metric', 'Example 3: nearest point under a bilinear pseudo-metric on the sphere', 'P1', 'suspicious / likely false as stated', check='nearest_point', test=None),
    Claim('DRIFT-12', 'attention-drift-diffusion-metric', 'Theorems 5/6: zeroth order = value at the pseudo-metric nearest point(s)', 'P2', 'should hold', check='nearest_point', test=None),
    Claim('DRIFT-13', 'attention-drift-diffusion-metric', 'Appendix C Proposition 1: first-order coefficient (spurious 1/m₀)', 'P2', 'suspicious / likely false as stated', check='appendix_c', test=None),
    Claim('DRIFT-14', 'attention-drift-diffusion-metric', 'Metric-attention satisfies Assumption 2', 'P3', 'should hold', check='metric_attention', test=None),
    Claim('PDE-1', 'pde-guided-attention', 'Row-sum (stochasticity) and positivity preservation of the refinement step', 'P1', 'holds only under stated assumptions', check='pde_conservation', test=None),
    Claim('PDE-2', 'pde-guided-attention', 'CFL thresholds (eqs. 24 and 28) and "wave is more restrictive"', 'P1', 'partly false as stated', check='pde_stability', test=None),
    Claim('PDE-3', 'pde-guided-attention', 'Mode damping (1 − aμΔt)^L vs exp(−aμLΔt); "high frequencies decay, low preserved"', 'P1', 'holds only under stated assumptions', check='pde_modes', test=None),
    Claim('PDE-4', 'pde-guided-attention', 'Eq. (21): |c_k^{(n)}| ≤ exp(−αλ_kT)|c_k^{(0)}|', 'P1', 'suspicious / likely false as stated', check='pde_modes', test=None),
    Claim('PDE-5', 'pde-guided-attention', 'Global error ≤ CΔt(1+t) (Prop. D.4(3), eq. 17)', 'P2', 'should hold', check='pde_flow', test=None),
    Claim('PDE-6', 'pde-guided-attention', '"L layers with one step each ≡ one evolution of length LΔt" (Prop. D.4(2))', 'P2', 'holds only under stated assumptions', check='pde_flow', test=None),
    Claim('PDE-7', 'pde-guided-attention', 'Prop. D.5: hybrid error bound and "A_true is stationary"', 'P1', 'suspicious / likely false as stated', check='pde_flow', test=None),
    Claim('PDE-8', 'pde-guided-attention', '√t spread of information (Thm. 1 / D.1 item 1; E.1 "diffusion length √(2αt)")', 'P1', 'should hold', check='pde_spread', test=None),
    Claim('PDE-9', 'pde-guided-attention', '"Polynomial instead of exponential decay of distant interactions" (Thm. D.1 item 2)', 'P1', 'suspicious / likely false as stated', check='pde_spread', test=None),
    Claim('PDE-10', 'pde-guided-attention', 'Bounded gradients / contraction; "8 steps → NaN as predicted" (Thm. D.1 item 3; §5.4.1, C.5)', 'P2', 'partly false as stated', check='pde_stability', test=None),
    Claim('PDE-11', 'pde-guided-attention', 'Smoothness and consistency decay (Thm. D.2 items 1–2)', 'P2', 'holds only under stated assumptions', check='pde_smoothing', test=None),
    Claim('PDE-12', 'pde-guided-attention', 'Linear range growth R_h(t) ≥ R_h(0) + k_r t (Thm. D.2 item 3)', 'P2', 'suspicious / likely false as stated', check='pde_spread', test=None),
    Claim('PDE-13', 'pde-guided-attention', 'Thm. D.3: PL-type exponential convergence', 'P3', 'holds only under stated assumptions', check='pde_convergence', test=None),
    Claim('PDE-14', 'pde-guided-attention', 'Parameter scaling α ∝ 1/N², Δt ∝ 1/N (App. E.1)', 'P3', 'suspicious / likely false as stated', check='pde_stability', test=None),
    Claim('PDE-15', 'pde-guided-attention', 'Causal leakage of the Laplacian step; implausible reported perplexities', 'P1', 'suspicious / likely false as stated', check='pde_causal', test=None),
    Claim('PDE-16', 'pde-guided-attention', 'Cost of the refinement: "O(N_t N) flops, near-linear overall" (D.0.5 Complexity)', 'P2', 'holds only under stated assumptions', check='pde_cost', test=None),
    Claim('PDE-17', 'pde-guided-attention', 'The one-sided causal stencil of the public code is unstable for every α > 0', 'P2', 'suspicious / likely false as stated', check='pde_causal', test=None),
    Claim('PDE-18', 'pde-guided-attention', 'Query-axis diffusion of A followed by AV equals diffusing the outputs', 'P3', 'should hold', check='pde_cost', test=None),
    Claim('FMA-1', 'fast-multipole-attention', 'Near/far-field sets form a disjoint cover (1-D)', 'P1', 'should hold', check='fma_structure', test=None),
    Claim('FMA-2', 'fast-multipole-attention', 'Far-field sets are tiled exactly by level-ℓ groups; ≤ 3 groups per level; windows nested', 'P1', 'should hold', check='fma_structure', test=None),
    Claim('FMA-3', 'fast-multipole-attention', 'Source counts: ≤ 3r + 3(L−1) per query (1-D), O(n log n) total; memory O(rn + np log(n/r))', 'P1', 'should hold', check='fma_structure', test=None),
    Claim('FMA-4', 'fast-multipole-attention', 'Query downsampling gives O(n) (FMA-linear)', 'P2', 'should hold', check='fma_counts', test=None),
    Claim('FMA-5', 'fast-multipole-attention', '2-D quadtree: disjoint cover, tiling, ≤ 9r² + 27(L−1) sources; non-divisible W', 'P1', 'should hold', check='fma_quadtree', test=None),
    Claim('FMA-6', 'fast-multipole-attention', '2-D stencil "isotropic … independent of the query\'s location"', 'P3', 'partly false as stated', check='fma_quadtree', test=None),
    Claim('FMA-7', 'fast-multipole-attention', 'Hierarchical-matrix structure of the effective attention matrix (far blocks have rank ≤ p)', 'P1', 'should hold', check='fma_hmatrix', test=None),
    Claim('FMA-8', 'fast-multipole-attention', 'Normalisation: per-level softmax ⇒ effective row sums ≠ 1', 'P1', 'suspicious / likely false as stated', check='fma_contract', test=None),
    Claim('FMA-9', 'fast-multipole-attention', 'Exactness limits', 'P2', 'partly false as stated', check='fma_hmatrix', test=None),
    Claim('FMA-10', 'fast-multipole-attention', 'Causal compatibility: no far group straddles its query', 'P2', 'should hold', check='fma_structure', test=None),
    Claim('FMA-11', 'fast-multipole-attention', 'Premise that far-field interactions are low rank (FMM/H-matrix analogy)', 'P2', 'holds only under stated assumptions', check='fma_lowrank', test=None),
    Claim('FMA-12', 'fast-multipole-attention', 'Near-field share at the reported configurations', 'P2', 'should hold', check='fma_counts', test=None),
    Claim('NEURAL-1', 'neural-attention-mlp-scores', 'Dot-product score matrix has rank ≤ d (≤ d′ after down-projection); the softmax matrix does not', 'P1', 'should hold', check='neural_rank', test=None),
    Claim('NEURAL-2', 'neural-attention-mlp-scores', '"A dot product only lets same-index elements interact"', 'P1', 'suspicious / likely false as stated', check='neural_equivalence', test=None),
    Claim('NEURAL-3', 'neural-attention-mlp-scores', 'Neural Attention with shared weights is exactly additive (Bahdanau) attention', 'P1', 'suspicious / likely false as stated', check='neural_equivalence', test='tests/spectral/test_kernel_identities.py'),
    Claim('NEURAL-4', 'neural-attention-mlp-scores', 'Rank and expressivity of MLP scores depend on σ; softmax removes query-only terms', 'P1', 'partly false as stated', check='neural_rank', test=None),
    Claim('NEURAL-5', 'neural-attention-mlp-scores', 'Fig. 1 geometry: paraboloid vs piecewise-linear surface', 'P3', 'should hold', check='neural_geometry', test=None),
    Claim('NEURAL-6', 'neural-attention-mlp-scores', 'Per-pair parameters (eq. 8, App. B) vs reported parameter counts; table arithmetic', 'P2', 'suspicious / likely false as stated', check='neural_cost', test=None),
    Claim('NEURAL-7', 'neural-attention-mlp-scores', 'Tensor construction and cost (eq. 7, Alg. 1; §3.2 "identical O(n²) time complexity, much worse memory")', 'P2', 'should hold', check='neural_cost', test=None),
    Claim('NEURAL-8', 'neural-attention-mlp-scores', 'Expressivity proxy: non-bilinear score targets', 'P2', 'should hold', check='neural_expressivity', test=None),
    Claim('SA-1', 'self-attention-particles', 'Theorem 6.1: for d ≥ 3 and β ≥ 0, (SA) and (USA) reach one cluster from almost every start', 'P1', 'should hold', check='sa_clustering', test=None),
    Claim('SA-2', 'self-attention-particles', 'Lemma 6.4 and Theorem 6.3: tokens in an open hemisphere cluster exponentially fast; n ≤ d uniform tokens are in one', 'P1', 'should hold', check='sa_hemisphere', test=None),
    Claim('SA-3', 'self-attention-particles', 'Metastability: multi-cluster plateaus whose length grows with β (Problem 1, Fig. 3)', 'P1', 'holds only under stated assumptions', check='sa_metastability', test=None),
    Claim('SA-4', 'self-attention-particles', 'V = I_d, QᵀK ≻ 0: rescaled tokens converge to the boundary of a convex polytope, generically its vertices (clustering paper, Theorem 3.1 and section 8)', 'P2', 'should hold', check='sa_polytope', test=None),
    Claim('SA-5', 'self-attention-particles', 'd = 1: the self-attention matrix converges to a low-rank Boolean matrix (clustering paper, Theorem 2.1)', 'P2', 'should hold', check='sa_boolean', test=None),
    Claim('SA-6', 'self-attention-particles', 'Theorem 6.8: equiangular tokens follow one ODE for ρ; 1 − ρ ~ e^{−2t} (SA), e^{−2e^β t} (USA)', 'P1', 'should hold', check='sa_equiangular', test=None),
    Claim('SA-7', 'self-attention-particles', 'Theorem 6.9 and §6.3: for d ≫ n random tokens follow the equiangular curve γ_β; the phase-transition curve', 'P2', 'holds only under stated assumptions', check='sa_high_dimension', test=None),
    Claim('GL-1', 'graph-laplacian-spectral-convergence', 'ε-graph and k-NN Laplacian normalisation: 2/(σ_η p n ε^{m+2}), σ_η = α_m/(m+2), ε_k = (k/(n p α_m))^{1/m}', 'P1', 'should hold', check='gl_constants', test=None),
    Claim('GL-2', 'graph-laplacian-spectral-convergence', 'Gaussian-kernel Laplacians L_un, L_rw and density-corrected: m_0 = 1, m_2 = 2 (Cheng–Wu)', 'P1', 'should hold', check='gl_constants', test=None),
    Claim('GL-3', 'graph-laplacian-spectral-convergence', 'ε-graph eigenvalues and eigenvectors: error O(ε), n^{-1/(m+4)} at the best ε (Calder–García Trillos)', 'P1', 'should hold', check='gl_eps_knn', test=None),
    Claim('GL-4', 'graph-laplacian-spectral-convergence', 'k-NN graph eigenvalues and eigenvectors: error O((k/n)^{1/m}), n^{-1/(m+4)} at k = n^{4/(m+4)} (Calder–García Trillos)', 'P1', 'should hold', check='gl_eps_knn', test=None),
    Claim('GL-5', 'graph-laplacian-spectral-convergence', 'ε-graph eigenvalues and eigenvectors at O((log n/n)^{1/(2m)}) (García Trillos–Gerlach–Hein–Slepčev)', 'P2', 'should hold', check='gl_eps_knn', test=None),
    Claim('GL-6', 'graph-laplacian-spectral-convergence', 'Gaussian kernel, ε ~ (log N/N)^{1/(d/2+2)}: eigenvalues N^{-1/(d/2+2)}, eigenvectors N^{-1/(d+4)} (Cheng–Wu)', 'P1', 'should hold', check='gl_gaussian', test=None),
    Claim('GL-7', 'graph-laplacian-spectral-convergence', 'Gaussian kernel, ε ~ (log N/N)^{1/(d/2+3)}: eigenvalues and eigenvectors N^{-1/(d/2+3)} (Cheng–Wu)', 'P2', 'should hold', check='gl_gaussian', test=None),
    Claim('GL-8', 'graph-laplacian-spectral-convergence', 'Density-corrected Laplacian on non-uniform samples converges to −Δ at the same rates (Cheng–Wu)', 'P2', 'should hold', check='gl_gaussian', test=None),
    # -- Sinkformers (SK) --
    Claim('SK-1', 'sinkformers', 'Heat diffusion: rescaled Sinkformer layers move the tokens\' density by ∂ₜp = ½Δp (row softmax on the sphere: ∂ₜp = Δp)', 'P1', 'holds only under stated assumptions', check='sk_heat', test=None),
    Claim('SK-2', 'sinkformers', 'Generator on functions: Sinkhorn (1/ε)(P − I) → ½(Δ + ⟨∇log p, ∇⟩), half the softmax drift, not Laplace–Beltrami; scaling d ∝ p^{−1/2}', 'P1', 'should hold', check='sk_generator', test=None),
    Claim('SK-3', 'sinkformers', 'Rates of both generators: bias O(ε) in the bandwidth, sampling error O(n^{−1/2}) at fixed ε', 'P2', 'should hold', check='sk_rates', test=None),
    Claim('SK-4', 'sinkformers', 'Sinkhorn convergence: alternating sweeps at λ₂(P)² (∝ 1/ε sweeps); symmetric scaling D C D at ≤ ½ per update (bounded)', 'P2', 'should hold', check='sk_convergence', test=None),
    Claim('GA-1', 'transformer-pde-gaussian', 'Softmax attention maps Gaussians to Gaussians: α′ = V(I + βΣBᵀ)α, Σ′ = β(VΣBᵀΣ + ΣBΣVᵀ); n tokens follow at n^{-1/2}', 'P1', 'should hold', check='ga_moments', test=None),
    Claim('GA-2', 'transformer-pde-gaussian', 'L2 attention maps Gaussians to Gaussians (closed moment ODEs); n tokens follow at n^{-1/2}', 'P2', 'should hold', check='ga_moments', test=None),
    Claim('GA-3', 'transformer-pde-gaussian', 'Multi-head attention maps Gaussians to Gaussians (the heads\' moment ODEs add); n tokens follow at n^{-1/2}', 'P2', 'should hold', check='ga_moments', test=None),
    Claim('GA-4', 'transformer-pde-gaussian', 'Sinkhorn attention maps Gaussians to Gaussians: α′ = Vα, Σ′ = VCᵀ + CVᵀ (closed-form entropic coupling); n tokens follow at n^{-1/2}', 'P1', 'should hold', check='ga_moments', test=None),
    Claim('GA-5', 'transformer-pde-gaussian', 'Covariance dynamics: closed form for V = λI, finite-time blow-up (softmax, multi-head) vs none (L2, Sinkhorn), collapse onto ker Q for K = −Q (rank ≤ (d+1)/2)', 'P1', 'should hold', check='ga_covariance', test=None),
    Claim('GA-6', 'transformer-pde-gaussian', 'The Gaussian solution is the n → ∞ limit of the token system at n^{-1/2} only while κ = β‖Σ^{1/2}BΣ^{1/2}‖ < 1 (softmax)', 'P1', 'holds only under stated assumptions', check='ga_conditions', test=None),
    Claim('MS-1', 'metastable-clusters', 'Linear phase: mode k of the uniform state grows at k²I_k(β)/β (rescaled Gegenbauer coefficient; Theorem 4.3)', 'P1', 'should hold', check='ms_growth', test=None),
    Claim('MS-2', 'metastable-clusters', 'The number of metastable clusters is the index k*(β) maximising the rescaled Gegenbauer coefficient (abstract, Theorem 4.3)', 'P1', 'holds only under stated assumptions', check='ms_phase', test=None),
    Claim('MS-3', 'metastable-clusters', 'Fig. 4: from a perturbed uniform state at β = 5 a 3-periodic solution emerges', 'P2', 'holds only under stated assumptions', check='ms_phase', test=None),
    Claim('MS-4', 'metastable-clusters', 'Dynamic metastability: k separated clusters persist for a time ≥ (ε/n)e^{(1−α)β} (Geshkovski, Koubbi, Polyanskiy & Rigollet, §2 main theorem)', 'P1', 'holds only under stated assumptions', check='ms_escape', test=None),
)

def _checks_from_ledger() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for c in LEDGER:
        if c.check is not None:
            out.setdefault(c.check, []).append(c.id)
    return {name: tuple(ids) for name, ids in out.items()}


#: check name -> the ledger ids it covers, derived from ``Claim.check`` (the ledger is the one source)
CHECKS: dict[str, tuple[str, ...]] = _checks_from_ledger()

_BY_ID = {c.id: c for c in LEDGER}


def claim(claim_id: str) -> Claim:
    """The ledger entry ``claim_id``; InputError (a ValueError) for an unknown id."""
    try:
        return _BY_ID[claim_id]
    except KeyError:
        raise InputError(f"unknown claim id {claim_id!r}; ledger ids are e.g. FNA-10, DRIFT-4") from None


#: Checks that decide no claim of the ledger: contracts a user's own implementation is held to (their
#: default run holds the toolkit's own implementation to the same contract). Listed after the ledger's.
CONTRACT_CHECKS = ("pde_contract", "attention_contract")


def available_checks() -> list[str]:
    """Names of the checks in :data:`CHECKS` (in ledger order), then :data:`CONTRACT_CHECKS`, whose module exists."""
    return [name for name in (*CHECKS, *CONTRACT_CHECKS) if importlib.util.find_spec(f"verify.{name}") is not None]


def load_check(name: str):
    """Import ``verify.<name>``; ValueError naming the available checks if it does not exist."""
    available = available_checks()
    if name not in available:
        raise InputError(f"unknown check {name!r}; available: {', '.join(available) or 'none'}")
    return importlib.import_module(f"verify.{name}")


#: The ledger's verdict on a paper's printed statement -> how a reader should read a PASS of the
#: check (which asserts the corrected, precise statement).
READINGS = {
    "should hold": "confirmed",
    "holds only under stated assumptions": "holds only under stated assumptions",
    "suspicious / likely false as stated": "false as stated -> corrected statement holds",
    "partly false as stated": "partly false as stated -> corrected statement holds",
}

#: Short names of the ledger's verdicts on the printed claims, for tables (README, docs, report).
#: ``"partly false as stated"`` marks a claim with parts of different verdicts (:attr:`ClaimDetails.split`).
VERDICT_NAMES = {
    "should hold": "holds as printed",
    "holds only under stated assumptions": "holds under stated assumptions",
    "suspicious / likely false as stated": "false as printed",
    "partly false as stated": "partly false as printed",
}


def _reading(verdict: str) -> str:
    return READINGS.get(verdict, verdict)


def paper_reading(claim_ids, *, printed: bool = False) -> str:
    """What the check's claims say about the paper, e.g. ``paper: false as stated -> corrected statement holds``.

    With several claims of different verdicts, each verdict lists its ids. ``printed=True`` (a run
    that asserts the printed statement) states the ledger's verdict on the printed statement in the
    words of the README's tables (:data:`VERDICT_NAMES`: holds as printed, holds under stated
    assumptions, false as printed, partly false as printed).
    """
    if not claim_ids:  # a check that decides no ledger claim (a contract) says nothing about a paper
        return ""
    groups: dict[str, list[str]] = {}
    for cid in claim_ids:
        c = claim(cid)
        text = VERDICT_NAMES.get(c.verdict, c.verdict) if printed else _reading(c.verdict)
        groups.setdefault(text, []).append(cid)
    if len(groups) == 1:
        return f"paper: {next(iter(groups))}"
    return "paper: " + "; ".join(f"{', '.join(ids)} {text}" for text, ids in groups.items())


def outcome_category(claim_id: str, passed: bool | None) -> str:
    """Category of one claim in a run's summary by paper.

    ``confirmed``, ``confirmed under stated assumptions``, ``refuted (corrected statement verified)``,
    ``partly refuted (corrected statement verified)`` (a claim with parts of different verdicts),
    ``check failed`` (the check ran and did not pass: look at it), ``error`` (the check raised) or
    ``not checked here`` (``passed is None``: no check ran for it).
    """
    if passed is None:
        return "not checked here"
    if passed is False:
        return "check failed"
    verdict = claim(claim_id).verdict
    return {"should hold": "confirmed",
            "holds only under stated assumptions": "confirmed under stated assumptions",
            "suspicious / likely false as stated": "refuted (corrected statement verified)",
            "partly false as stated": "partly refuted (corrected statement verified)"}.get(verdict, "confirmed")


# -- The setting of the run that decides each claim --------------------------------------------

def _defaults(check: str) -> dict[str, Any]:
    """The keyword defaults of ``verify.<check>.run``."""
    run = load_check(check).run
    return {name: par.default for name, par in inspect.signature(run).parameters.items()
            if par.default is not inspect.Parameter.empty}


def _setting_keys(check: str) -> list[str]:
    keys: list[str] = []
    for c in LEDGER:
        if c.check == check:
            keys += [k for k, _ in c.setting if k not in keys]
    return keys


def setting(claim_id: str) -> dict[str, Any]:
    """The parameters of the run that decides ``claim_id``: its own :attr:`Claim.setting`, and the check's
    default for every other parameter that a claim of the same check sets.

    ``setting("FNA-11") == {"manifold": "sphere"}`` and ``setting("FNA-10") == {"manifold": "circle"}``
    (the default of ``verify.weyl``); ``{}`` for a claim whose check runs in one setting only.
    """
    c = claim(claim_id)
    if c.check is None:
        return {}
    own = dict(c.setting)
    keys = _setting_keys(c.check)
    defaults = _defaults(c.check) if any(k not in own for k in keys) else {}
    return {k: own[k] if k in own else defaults[k] for k in keys}


def setting_at_defaults(check: str, keys: Iterable[str]) -> dict[str, Any]:
    """The check's default value of each of ``keys`` (the setting of a run given none of them)."""
    keys = list(keys)
    if not keys:
        return {}
    defaults = _defaults(check)
    return {k: defaults.get(k) for k in keys}


def settings(check: str) -> list[dict[str, Any]]:
    """The distinct settings that the claims of ``check`` are decided in, in ledger order (``[{}]`` for most)."""
    out: list[dict[str, Any]] = []
    for cid in CHECKS.get(check, ()):
        s = setting(cid)
        if s not in out:
            out.append(s)
    return out or [{}]


def claims_in(check: str, where: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The ledger ids of ``check`` decided by a run in setting ``where`` (its full setting, as :func:`settings`
    gives it); every claim of the check when ``where`` is None."""
    ids = CHECKS.get(check, ())
    if where is None:
        return ids
    return tuple(cid for cid in ids if setting(cid) == dict(where))


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def decided_by(result, claim_id: str) -> bool:
    """Whether ``result`` (a ``CheckResult``) was run in the setting that decides ``claim_id``.

    Read from the result's recorded parameters, so it holds for results read back from JSON too.
    """
    c = claim(claim_id)
    if c.check != result.check:
        return False
    params = result.parameters
    return all(k in params and _same(params[k], v) for k, v in setting(claim_id).items())


def deciding_result(claim_id: str, results: Iterable):
    """The first of ``results`` run in the setting that decides ``claim_id``, or None."""
    return next((r for r in results if r is not None and decided_by(r, claim_id)), None)


def run_label(check: str, where: Mapping[str, Any] | None = None) -> str:
    """``"weyl"`` for a run at the check's defaults, ``"weyl[manifold=sphere]"`` for another setting."""
    if not where:
        return check
    defaults = _defaults(check)
    changed = [f"{k}={v}" for k, v in where.items() if not (k in defaults and _same(defaults[k], v))]
    return f"{check}[{','.join(changed)}]" if changed else check


# -- A printed run against the ledger ------------------------------------------------------------

_FALSE_AS_PRINTED = ("suspicious / likely false as stated", "partly false as stated")


def _names_claim(record, claim_id: str) -> bool:
    """Whether a record's name or label names ``claim_id`` (its ``why`` may cite a claim for a tolerance)."""
    return re.search(re.escape(claim_id) + r"(?!\d)", f"{record.name} {record.label}") is not None


def printed_disagreements(result) -> list[str]:
    """Where a run with ``claim="printed"`` disagrees with the ledger's verdicts on the printed claims.

    The rules: a check whose claims all hold as printed passes its printed run; a check with a claim
    false or partly false as printed fails it, on at least one assertion bearing on that claim
    (:func:`claim_records`); an assertion whose name or label names a claim that holds as printed
    passes. A claim that holds only under stated assumptions may fail its printed run (which asserts
    it without them) or not. Returns one sentence per disagreement (empty: they agree).
    """
    ids = [cid for cid in result.claims if cid in _BY_ID]
    if not ids:
        return []
    holds = [cid for cid in ids if claim(cid).verdict == "should hold"]
    false = [cid for cid in ids if claim(cid).verdict in _FALSE_AS_PRINTED]
    out = []
    if len(holds) == len(ids) and not result.passed:
        out.append(f"every claim of {result.check} holds as printed ({', '.join(ids)}), but its printed run fails: "
                   + "; ".join(result.failures))
    if false and result.passed:
        out.append(f"{', '.join(false)} {'is' if len(false) == 1 else 'are'} false as printed (in part), but the "
                   f"printed run of {result.check} passes")
    for cid in holds:
        for r in result.records:
            if r.deciding and r.passed is False and _names_claim(r, cid):
                out.append(f"{cid} holds as printed, but the printed run of {result.check} fails {r.name} "
                           f"({r.label})")
    for cid in false:
        records = claim_records(result, cid)
        if not result.passed and not any(r.passed is False for r in records):
            out.append(f"{cid} is false as printed (in part), but none of the printed run's assertions bearing on "
                       "it fails")
    return out


# -- What each claim says, where, and what the toolkit asserts ------------------------------------

@dataclasses.dataclass(frozen=True)
class ClaimDetails:
    """The reader's view of one ledger entry (shown by ``docs/claims.md`` and the HTML report).

    Attributes
    ----------
    where : str
        Where the claim is made in the paper (section, equation, figure).
    claim : str
        What the paper states, restated precisely.
    asserted : str, optional
        What the toolkit asserts instead, where that differs from the printed claim: the corrected
        statement (paper wrong as printed), the conditions under which it holds, or its checkable
        form. None when the claim is asserted as stated.
    split : str, optional
        For a claim with parts of different verdicts: which part holds and which does not.
    """

    where: str
    claim: str
    asserted: str | None = None
    split: str | None = None


D = ClaimDetails

#: where the GA claims are made: the paper's body is not stored where this toolkit was written, so the
#: equations are cited from the abstract and the authors' public code for the paper's figures
_GA_WHERE = ("Castin, Ablin, Carrillo & Peyré, 'A unified perspective on the dynamics of deep transformers' (arXiv "
             "2501.18322): abstract ('for different types of attention, the Transformer PDE preserves the space of "
             "Gaussian measures') and the Gaussian section, whose covariance ODEs the authors' code for its figures "
             "states (github.com/vcastin/2025-transformers-PDEs, utils.py).")

#: claim id -> :class:`ClaimDetails` for every ledger entry (tests keep the two in step).
DETAILS: dict[str, ClaimDetails] = {
    # -- Fractional neural attention --------------------------------------------------------
    "FNA-1": D(
        "'Fractional diffusion', eq. (7)",
        "The fractional Laplacian has the singular-integral form (−Δ)^{α/2}u(x) = c_{d,α} p.v.∫ (u(x) − u(y)) "
        "/ |x − y|^{d+α} dy with c_{d,α} = α 2^{α−1} Γ((d+α)/2) / (π^{d/2} Γ(1 − α/2)); equivalently its Fourier "
        "symbol is |ξ|^α."),
    "FNA-2": D(
        "eqs. (6), (11), (26); the 'Lévy process' items 1–5",
        "The heat kernel of ∂_t ρ + (−Δ)^{α/2} ρ = 0 has Fourier transform e^{−t|ξ|^α}: a symmetric α-stable law "
        "of scale t^{1/α}. Increments over a time s are stable of scale s^{1/α}, p_s * p_t = p_{s+t}, and "
        "p_t(x) = t^{−d/α} p_1(x t^{−1/α}); at α = 2 it is the Gaussian of variance 2t per coordinate."),
    "FNA-3": D(
        "eq. (12)",
        "At α = 1 the heat kernel is the Poisson kernel, printed as c̃_d t^{−d} (1 + |x − y|/t²)^{−(d+1)/2} with "
        "c̃_d = Γ((d+1)/2) / π^{(d+1)/2}.",
        "The Poisson kernel is c̃_d t^{−d} (1 + |x − y|²/t²)^{−(d+1)/2}: it has mass 1, Fourier transform "
        "e^{−t|ξ|} and the semigroup property. The printed kernel (|x − y|/t² for |x − y|²/t²) decays like "
        "|x|^{−(d+1)/2} and has infinite mass."),
    "FNA-4": D(
        "eqs. (8), (10); the 'Lévy process' paragraph; Fig. 1",
        "For α < 2 the heat kernel lies between multiples of t^{−d/α} Φ(C r / t^{1/α}) with Φ(z) = (1 + z)^{−(d+α)}, "
        "so jumps are heavy-tailed with tail exponent α and moments of order ≥ α are infinite.",
        "Precisely, p_1(x) ~ c|x|^{−(d+α)} with c = Γ(1+α) sin(πα/2)/π in one dimension, so P(|X| > x) decays "
        "like x^{−α}; at α = 2 the tails are Gaussian."),
    "FNA-5": D(
        "after eq. (7); the range α ∈ (0, d_M + 1] of eq. (6); item 1 of the dichotomy, eq. (9)",
        "For α ∈ [2, d_M + 1] the operator reduces to the local Laplacian and its heat kernel decays like "
        "exp(−z^{α/(α−1)}).",
        "e^{−|ξ|^α} is a positive density only for α ≤ 2: for α > 2 the kernel takes negative values (no Markov "
        "process) and (−Δ)^{α/2} is non-local unless α is an even integer. On R^d only α = 2 is local and "
        "Markovian; the exp(−z^{β/(β−1)}) decay belongs to walks of dimension β ≥ 2 on fractal-like spaces."),
    "FNA-6": D(
        "Proposition 1 and its proof; A.1 (sphere); A.3 (multi-head)",
        "For orthogonal W_Q, W_K and one head, |W_Q x_i − W_K x_j| = |x_i − W̃ x_j| and "
        "x_i·W_Q^T W_K x_j = x_i·W̃ x_j with W̃ = W_Q^T W_K orthogonal, so scores, attention and outputs are "
        "unchanged when W_Q becomes I and W_K becomes W̃ (I when W_Q = W_K). A head slice of an orthogonal matrix "
        "has orthonormal rows but is not an isometry: it can only shrink distances."),
    "FNA-7": D(
        "text before eq. (20); Methods, eqs. (33)–(34)",
        "Under Assumptions 1 and 2 (Q = K) the eigenvalues of Ã are real with 1 = λ_0 ≥ λ_1 ≥ … > 0.",
        "Ã is similar to the symmetric D^{−1/2} C̃ D^{−1/2}, so its spectrum is real with top eigenvalue 1; it is "
        "positive when the score profile is positive definite (Euclidean distance with either FNA profile, or the "
        "geodesic power law on the sphere). The geodesic Gaussian of A.1's α = 2 variant is not positive definite "
        "on the sphere and gives negative eigenvalues; with Q ≠ K, or for dot-product attention, the spectrum is "
        "complex in general and the gap must be read as 1 − |λ_2|."),
    "FNA-8": D(
        "eqs. (20), (33)–(35)",
        "With D^{−1/2} C̃ D^{−1/2} = V Λ V^T, the right eigenvectors of Ã are ψ_j = D^{−1/2} v_j, the left ones "
        "φ_j = D^{1/2} v_j, ⟨φ_i, ψ_j⟩ = δ_ij, and Ã^τ = Σ_k λ_k^τ ψ_k φ_k^T (eq. 20 read with entry "
        "(i, j) = Σ_k λ_k^τ ψ_k(x_i) φ_k(x_j); it needs Q = K)."),
    "FNA-9": D(
        "eqs. (19), (36), (37)",
        "The diffusion distance D_τ²(x_i, x_j) = Σ_y (p_τ(y|x_i) − p_τ(y|x_j))² / φ_0(y) equals "
        "|Ψ_τ(x_i) − Ψ_τ(x_j)|² with Ψ_τ = (λ_1^τ ψ_1, …, λ_{n−1}^τ ψ_{n−1}).",
        "The identity holds when φ_0 is the stationary probability D/ΣD and the ψ_k are orthonormal in that "
        "weight. With the literal normalisation of eq. (35) the two sides differ by the same factor "
        "√(Σ_ij C̃_ij) for every pair (a uniform rescaling)."),
    "FNA-10": D(
        "'Operator limit of FNA' (Fig. 2a); Methods, 'Markov chain diagonalization'; eq. (22)",
        "On n = 500 equispaced points of S¹ with κ = √ε, ε = 1e-4 and t = ε^{α/2}, the generator eigenvalues "
        "λ_j = −log(η_j)/t grow like j^α for α = 1.2 and like j² for α = 2; the mismatch grows with j and shrinks "
        "with larger n and smaller ε.",
        "With the intrinsic exponent d_M = 1, −log(η)/t has the shape of the continuum spectrum of the same kernel "
        "at the same scale, whose best-fit exponent is α; as κ → 0 the slope rises monotonically, slowly (FNA-13), "
        "toward the slope of the circle's κ → 0 spectrum (1.230 over k = 2..10 at α = 1.2: its low modes differ "
        "from k^α, FNA-12), so |slope − α| itself is not monotone. With d_M = 2 (the main text's d_H) the tail is too light and the spectrum grows like j²; a "
        "log-log slope read against j at the paper's setting is not α."),
    "FNA-11": D(
        "the Weyl-law paragraph next to Fig. 2a",
        "Eigenvalues grow like j² for the Laplacian and like j^α for the fractional operator (no dimension is "
        "stated).",
        "On a compact d_M-dimensional manifold λ_j ~ C j^{2/d_M} (Laplace–Beltrami) and λ_j ~ C′ j^{α/d_M} "
        "(fractional): j^α and j² are the one-dimensional forms; on S² the FNA spectrum grows like j^{α/2}."),
    "FNA-12": D(
        "Theorem 2, eq. (18); Lemma 1, eq. (27); proof, eqs. (28)–(32)",
        "Under Assumptions 1 and 2 the generator (T_t f − f)/t converges to [(−Δ)^{α/2}(fρ) − f (−Δ)^{α/2}ρ]/ρ, "
        "which is (−Δ)^{α/2} f for a uniform density.",
        "With Φ(z) = (1 + z)^{−(d+α)} and t = κ^α the limit is −c [(−Δ)^{α/2}(fρ) − f (−Δ)^{α/2}ρ]/ρ with "
        "c = 1/(Z_{d,α} c_{d,α}) and Z_{d,α} = ∫ (1 + |x|)^{−(d+α)} dx: a negative sign and an explicit constant, "
        "which eq. (18) drops and eq. (27) keeps. On the circle with the non-periodised geodesic kernel the "
        "limit is the geodesically truncated operator, whose low modes differ from |k|^α by O(k^{−α}) relative."),
    "FNA-13": D(
        "proof of Lemma 1, eq. (30)",
        "The remainder is O(ε²), i.e. the generator converges at rate O(t).",
        "Only the tail of Φ matches the stable kernel, so the relative generator bias is O((κ|k|)^{2−α}) = "
        "O(t^{2/α−1}) for 1 < α < 2 (O(κ|k|) for α < 1), very slow near α = 2. An O(t) rate holds only for the "
        "exact stable heat kernel, which the check runs as a control."),
    "FNA-14": D(
        "A.4, eqs. (40)–(48), eq. (43)",
        "(1/n) Σ_i A^{(a)}_ij tends to ρ(x) + O(ε), and for α = 2 and a = 1 the limit operator no longer depends "
        "on ρ.",
        "Eq. (43) does not hold as printed: for A^(a) = rownorm(D^{−a} C D^{−a}) the column sums (1/n) Σ_i A_ij "
        "tend to 1 for every a, not to ρ. What holds: A^(a) is reversible with stationary law ∝ ρ^{1−2a} (ρ for "
        "a = 0, uniform for a = 1/2), and a = 1 removes the density drift of the limit operator (DRIFT-4's "
        "check with a = 1).",
        split="The a = 1 statement (no density drift in the limit) holds; eq. (43) about column sums does not."),
    "FNA-15": D(
        "text after the Fig. 2 caption; Fig. 2b/2c",
        "On 18 points of a 3-component Gaussian mixture (means (3, 0), (−3, 0), (0, √3), covariance I/4), attention "
        "edges above 3.12e-5 join clusters for α = 1.2 and stay inside clusters for α = 2.",
        "κ is not stated. With κ = 1, α = 1.2 joins essentially every pair of clusters and α = 2 still has "
        "inter-cluster edges in every draw (about 30 on average); α = 2 has none only for κ ≲ 0.5 or with the "
        "equilateral layout (0, 3√3), which was probably meant."),
    "FNA-16": D(
        "Methods, 'Text classification' (κ = √d_H/(2^{1/d_H} − 1)); A.1 (κ = π/(π^{1/d_M} − 1))",
        "These bandwidths make the score halve at distance √d_H (Φ(√d_H/κ) = 2^{−(d_H+α)/d_H}) and drop to "
        "π^{−1−α/d_M} at antipodes on the sphere.",
        "The identity holds, and it has a consequence the paper does not draw: κ ≈ d_H^{3/2}/ln 2 puts typical "
        "token distances deep inside the kernel's core, so attention rows are almost uniform (normalised row "
        "entropy ≥ 0.99) and the power-law window κ ≪ r ≪ diameter is empty."),
    "FNA-17": D(
        "'Mechanistic explanation' (Fig. 5a); abstract and discussion",
        "The spectral gap of the attention matrix is larger for fractional attention (α < 2) than for local "
        "attention (α = 2), and larger for both than for dot-product attention.",
        "At the paper's bandwidths the order FNA > LA > DP holds (gap 1 − |λ_2|); with one equal κ = √d for both "
        "α it reverses, and with matched half-maximum widths FNA stays ahead by a small margin: the order comes "
        "from the bandwidth choice, not from the power-law tail."),
    "FNA-18": D(
        "'Mechanistic explanation' (Figs. 5c–5e); Fig. 1 caption",
        "On the attention graph with edge weights 1/Ã_ij, weighted shortest paths take about one hop on average "
        "for α < 2, whatever n, and more hops, growing with n, for α = 2 and dot-product attention.",
        "True at the paper's bandwidths, where the FNA kernel is nearly flat (FNA-16) and the direct edge always "
        "wins; with equal κ = √d FNA paths take several hops."),
    "FNA-19": D(
        "eq. (19); Fig. 5b; Methods, 'Diffusion maps for FNA'",
        "Two-dimensional diffusion-map embeddings (κ = √d_H/(2^{1/d_H} − 1)·√ε, ε = 0.1) lie close together for "
        "α = 1.2 and spread apart for α = 2.",
        "Under the paper's bandwidths the spread of the α = 1.2 embedding is smaller than that of α = 2 and "
        "follows the ratio of the leading eigenvalues: a restatement of the spectral-gap effect with the same "
        "bandwidth caveat (the α = 2 bandwidth and τ are not stated; κ = √(d_H ε) and τ = 1 are assumed)."),
    "FNA-20": D(
        "abstract; Fig. 1 ('Lévy dynamics', 'large jumps'); reading of Theorem 2",
        "The random walk driven by fractional attention makes heavy-tailed jumps.",
        "For tokens with a smooth density and the intrinsic exponent, the one-step jump length has "
        "P(R > r) ∝ r^{−α} for κ ≪ r ≪ diameter, and Gaussian tails for α = 2. At the paper's bandwidths in high "
        "dimension that window does not exist (FNA-16)."),
    # -- Attention as drift-diffusion ---------------------------------------------------------
    "DRIFT-1": D(
        "§3.1, Example 1; Assumption 2",
        "For unit vectors (Q = K = I), −x·y = −2 + |x − y|² (and −x^T Q^T Q y = −2 + |x − y|_Q² on the ellipsoid), "
        "so dot-product softmax attention is a Gaussian kernel on the sphere.",
        "−x·y = −1 + |x − y|²/2. Hence softmax_j(q_i·k_j/τ) is exactly the row-normalised exp(−|q_i − k_j|²/(2τ)) "
        "whenever all keys have the same norm (queries arbitrary). The factor 2 changes the time scale of "
        "Theorem 3: in the paper's S_ε convention the kernel is exp(−|x − y|²/(4ε)), an Euler step of length ε, "
        "not ε/2."),
    "DRIFT-2": D(
        "Definitions 1–10; Table 1; §2.2.2–2.2.3",
        "Compositions of the similarity operators reproduce classical kernels: diffusion maps, SNE, t-SNE, UMAP's "
        "fuzzy union, k-nearest neighbours, Markov clustering and fuzzy c-means (which tends to k-means).",
        "Every composition matches its classical formula to machine precision except the fuzzy c-means centre "
        "update: the paper weights points by the memberships u where standard fuzzy c-means uses u^m; the two "
        "reach different fixed points for m ≠ 1 and agree only in the k-means limit m → 1⁺.",
        split="Every composition holds; the fuzzy c-means centre update as printed does not."),
    "DRIFT-3": D(
        "§2.3, Theorem 1 (Singer 2006)",
        "For N i.i.d. uniform samples of a compact d-manifold, W_ij = exp(−|x_i − x_j|²/(2ε)) and L = D^{−1}W − I: "
        "(1/ε) Σ_j L_ij f(x_j) = ½ Δf(x_i) + O(ε) + O(N^{−1/2} ε^{−(1/2+d/4)}), so the best ε scales like "
        "N^{−1/(3+d/2)}."),
    "DRIFT-4": D(
        "Theorem 2; proof in Appendix B",
        "For sampling density p, (1/ε) Σ_j L_ij f(x_j) → ½ (Δf + 2⟨∇ log p, ∇f⟩): the drift coefficient is "
        "exactly 2 (curvature terms cancel in the kernel ratio). The Appendix B proof of Theorem 3 loses the 2; "
        "the theorem's statement with it is correct.",
        "Theorem 2's limit ½ (Δf + 2(1 − a)⟨∇ log p, ∇f⟩) for rownorm(D^{−a} W D^{−a}); the drift printed in the "
        "Appendix-B proof, ½ (Δf + (1 − a)⟨∇ log p, ∇f⟩), is half of it (fitted drift 0.998 of the theorem's on "
        "the S¹ grid, N = 10000, ε = 1e-3, where the proof's predicts 0.5).",
        "Theorem 2 (drift coefficient 2) holds as printed; the drift of the Appendix-B proof (coefficient 1) does "
        "not"),
    "DRIFT-5": D(
        "§3.2, Theorem 3; §3.4",
        "One attention layer is one Euler step of length ε/2 of ∂_t H = At H with At = Δ_g + 2⟨∇ log p, ∇·⟩: "
        "H_new − H_old = (ε/2) At H_old + O(ε²), so L layers approximate the PDE at time Lε/2.",
        "First-order convergence in ε at fixed time holds under Assumptions 1–3 (a metric score, a smooth "
        "positive density); real dot-product attention needs the time rescaling of DRIFT-1."),
    "DRIFT-6": D(
        "§3.2, after Theorem 3",
        "Scaling the metric, g₂ = g₁/m², scales the whole operator: At_{g₂} = m² At_{g₁}, drift included, so "
        "shrinking distances speeds up propagation."),
    "DRIFT-7": D(
        "Theorem 4 and its proof (Appendix B)",
        "In dimension n ≠ 2, Δ_g + 2⟨∇ log p, ∇·⟩ = f Δ_g̃ with g̃ = f g and f = p^{4/(n−2)} (printed "
        "'p^{4/n−2}'; the proof fixes the brackets). The proof says n ≥ 3, but n = 1 works too (f = p^{−4}); "
        "n = 2 is impossible because the two-dimensional Laplacian is conformally covariant.",
        "The rewriting with f = p^{4/(n−2)}, exact (symbolic) for n = 1, 3, 4. The exponent as printed, read "
        "literally, p^{4/n − 2}, differs from 4/(n − 2) for every n and fails: it leaves remainders 1.71, 2.49 and "
        "4.41 at a test point for n = 1, 3, 4, and on S¹ the spectrum of f Δ_g̃ is off by 17 %.",
        "the conformal rewriting At = f Δ_g̃ holds (with the proof's exponent 4/(n − 2)); the formula for f as "
        "printed, p^{4/n−2}, does not"),
    "DRIFT-8": D(
        "Theorem 4 and 'Dynamic of heat diffusion'",
        "At = p^{−2} div_g(p² ∇·) is a heat-conduction operator with invariant measure p² dvol: it is "
        "self-adjoint in L²(p²), and the attention chain S = D^{−1}W is reversible with stationary density ∝ p²."),
    "DRIFT-9": D(
        "§3.2, 'Stationary function (Clustering tendency)'; the FNA paper's introduction (collapse without "
        "residuals)",
        "The stationary states of At are the constants on a connected manifold, so attention-only dynamics "
        "converge to a constant; the number of near-zero generator eigenvalues reflects the number of clusters; "
        "without residual connections pure self-attention collapses.",
        "K clusters well separated relative to ε give K eigenvalues near 1 followed by a large eigengap (asserted "
        "on the gap ratio: a count at a fixed threshold depends on the separation); H ← SH first becomes constant "
        "on each cluster, and the distance to the constant state decays like |λ_2|^L. The heavy-tailed FNA "
        "kernel connects the clusters instead."),
    "DRIFT-10": D(
        "§3.3",
        "Multi-head attention is a sum over heads: [H_1V_1, …, H_kV_k][W_1, …, W_k]^T = Σ_i S_i H_old W̃_i with "
        "W̃_i = V_i W_i^T."),
    "DRIFT-11": D(
        "§3.4, Example 3; Appendix C (the Lagrangian)",
        "If −Q^T K = P^T diag(a) P with P ∈ SO(n) and f(x, y) = Σ_i a_i x′_i y′_i (x′ = Px), the nearest point "
        "argmin over unit y of f(x, y) is P^T (a ⊙ x′)/|a ⊙ x′|.",
        "The minimiser is −P^T (a ⊙ x′)/|a ⊙ x′| (in general M^T x/|M^T x| for M = Q^T K); the printed formula is "
        "the maximiser: for Q = K = I it returns −x instead of x."),
    "DRIFT-12": D(
        "§3.4, Theorem 5; Appendix C, Theorem 6",
        "As ε → 0 one attention step returns the value at the pseudo-metric nearest point, H_new(x) → H_old(y′), "
        "and the p-weighted average of H over the nearest points when they form a submanifold (error O(ε), given "
        "a non-degenerate Hessian in the normal directions)."),
    "DRIFT-13": D(
        "Appendix C, Lemma 2 and Proposition 1",
        "The first-order term of the kernel average is (ε/m₀)(⟨V_f + 2∇ log p · c^{−1}, ∇g⟩ + Δ_{c^{−1}} g) at "
        "the nearest point, with m₀ = ∫ e^{−v^T C v/4} dv.",
        "Only the drift from the cubic asymmetry of f carries the 1/m₀ normalisation: with f = ρ + ½ v^T C v + "
        "(cubic d) + … and kernel e^{−f/2ε} the coefficient is tr(C^{−1} ∇²g) + 2⟨C^{−1} ∇ log p, ∇g⟩ − "
        "⟨C^{−1}(d : C^{−1}), ∇g⟩. The printed formula also divides the Laplacian and density-drift terms by m₀ "
        "(Lemma 2 also has the sign typo e^{+ρ/2ε})."),
    "DRIFT-14": D(
        "§4.1, Algorithm 1",
        "Metric attention with f_θ = |f̃_θ(x) − f̃_θ(y)|² satisfies Assumption 2, so it is a continuous "
        "drift–diffusion process under milder conditions than dot-product attention.",
        "d_θ is a pseudo-metric, and a metric when f̃ is injective (a residual map x + g(x) with Lip(g) < 1); every "
        "token is then its own nearest point, unlike dot-product attention with a generic Q^T K (DRIFT-11); for "
        "a linear map P the limit has diffusion tensor (P^T P)^{−1}."),
    # -- PDE-guided attention -------------------------------------------------------------------
    "PDE-1": D(
        "§3.2, eq. (2); Algorithm 1, line 7; Appendix E, eqs. (22)–(30)",
        "The refinement A ← A + Δt α ∇_s² A keeps A a valid attention matrix: rows sum to 1 and entries stay "
        "non-negative.",
        "Key-axis diffusion conserves every row sum exactly iff 1^T ∇_s² = 0 (periodic or conservative "
        "cell-centred zero-flux boundary); ghost-point reflection conserves only a trapezoid-weighted sum and "
        "Dirichlet loses mass; query-axis diffusion keeps rows stochastic for every boundary but Dirichlet. "
        "Entries stay non-negative iff r = αΔt/Δs² ≤ 1/2 (1/4 on both axes). The wave keeps sums but not signs; "
        "central advection–diffusion keeps both iff |β|Δt/(2Δs) ≤ r ≤ 1/2; the reaction term raises each row "
        "sum by βΔt(1 − Σ_j A_ij²) per step."),
    "PDE-2": D(
        "Appendix E.0.1, eq. (24); E.0.2, eq. (28)",
        "Diffusion is stable for Δt ≤ Δs²/(2α), the wave for Δt ≤ Δs/c, and the wave condition is the more "
        "restrictive one.",
        "Eq. (24) holds on one axis (r_max = 1/2 periodic, slightly above 1/2 for the cell-centred zero-flux "
        "boundary, 1/4 when both axes diffuse); eq. (28) holds with strict inequality. Which bound is tighter "
        "depends on 2α/(cΔs): at the paper's α = 0.1, c = 0.15, Δs = 1 the wave bound (6.67) is looser than the "
        "diffusion bound (5).",
        "the thresholds of eqs. (24) and (28) hold; 'the wave is more restrictive' is false at the paper's "
        "parameters"),
    "PDE-3": D(
        "Appendix D.0.4, Proposition D.4(1) and its sketch",
        "Each mode is damped by (1 − αk²Δt)^L ≈ exp(−αk²LΔt): high frequencies decay and low ones are kept, "
        "under αk²Δt < 1.",
        "The factor is g_k = 1 − αμ_kΔt with μ_k = (4/Δs²) sin²(πk/T), not k²; exactly, "
        "g_k^L / e^{−αμ_kLΔt} = exp(−L Σ_{m≥2} x^m/m) with x = αμ_kΔt. Damping is monotone in frequency only for "
        "r ≤ 1/4; for 1/4 < r ≤ 1/2 the highest mode is barely damped and alternates in sign."),
    "PDE-4": D(
        "Appendix D.0.5, sketch step 2, eqs. (20)–(21)",
        "From c_k^{(n+1)} = (1 − αλ_kΔt) c_k^{(n)} it follows that |c_k^{(n)}| ≤ exp(−αλ_k T) |c_k^{(0)}| with "
        "T = nΔt.",
        "|1 − x| ≤ e^{−x} holds only for x ≤ x* = 1 + W(1/e) ≈ 1.27846, so the bound holds for every mode only "
        "when r ≤ x*/4 ≈ 0.3196 (periodic); the steps eq. (24) allows (r up to 1/2, x up to 2) break it for the "
        "modes with x in (x*, 2]."),
    "PDE-5": D(
        "Appendix D.0.4, item 3 and sketch (iii), eq. (17)",
        "After L explicit steps the error against the exact evolution is at most CΔt(1 + t), t = LΔt.",
        "It holds against the exact semi-discrete flow exp(tα∇_s²)A(0) (first order in Δt); for diffusion the "
        "error is even bounded in t, for the wave it grows like t. Against the continuum PDE a spatial error "
        "O(Δs²) remains that Δt → 0 does not remove."),
    "PDE-6": D(
        "Appendix D.0.4, item 2",
        "L layers with one step each are one evolution of length LΔt.",
        "True (to O(Δt)) only when the same attention matrix is carried from layer to layer; Algorithm 1 "
        "recomputes a fresh softmax in every layer, which leaves an O(1) discrepancy."),
    "PDE-7": D(
        "Appendix D.0.5, eq. (19) and sketch step 1",
        "|A_final − A_true| ≤ ε₀ + δ(T) with δ(T) = O(e^{−αλ_min T} + Δt), because A_true is stationary for the "
        "diffusion.",
        "A_true (a softmax matrix) is not stationary, and |A_final − A_true| grows with T toward the distance of "
        "A_true from its row means (smoothing bias). What holds: |A_final − E_T A_true| ≤ ε₀ for r ≤ 1/2 (the "
        "evolution E_T does not expand), hence |A_final − A_true| ≤ ε₀ + |E_T A_true − A_true|."),
    "PDE-8": D(
        "§4.0.1; Theorem D.1 item 1; D.2(iii); Appendix E.1",
        "Information spreads like √t (diffusion length √(2αt)).",
        "Away from the boundaries one explicit step convolves a row with [r, 1 − 2r, r], so the row variance grows "
        "by exactly 2αΔt per step, the spread is √(Var_0 + 2αt), and the support grows by one token per side per "
        "step. The text's 'propagation speed Ω(t^{1/2})' is wrong: a distance ∝ t^{1/2} means a speed ∝ t^{−1/2}."),
    "PDE-9": D(
        "abstract; §1.3; Theorem D.1 item 2; §5.2",
        "PDE refinement makes long-range interactions decay polynomially instead of exponentially.",
        "In distance, a token's influence is exactly zero beyond N_t tokens after N_t steps and Gaussian in the "
        "continuum limit, faster than any exponential; only the peak height decays polynomially in pseudo-time, "
        "like (4παt)^{−1/2}. Softmax attention without a positional bias has no decay in distance at all."),
    "PDE-10": D(
        "Theorem D.1 item 3; §5.4.1; Appendix C.5",
        "Gradients stay bounded independently of depth and length, and the NaN at 8 steps 'aligns with the "
        "theoretical predictions'.",
        "For key-axis diffusion with r ≤ 1/2 (periodic or conservative zero-flux), (I + r∇_s²)^{N_t} is "
        "symmetric and doubly stochastic with norm exactly 1 for every N_t and T, so the refinement cannot "
        "amplify gradients. With the learned α ∈ [0.02, 0.15] and Δt ≤ 3, r < 1/2, so linear theory predicts "
        "no instability at 8 steps.",
        "the diffusion step is a contraction; the explanation of the NaN at 8 steps does not follow"),
    "PDE-11": D(
        "§4.0.2; Theorem D.2 items 1–2, eqs. (12)–(13)",
        "Smoothness S(t) = |∇_s² A|² ≤ S(0) e^{−k_s t} + C_s/k_s and consistency C(t) = Var(A) ≤ C(0) e^{−k_c t}, "
        "for diffusion, wave and reaction–diffusion.",
        "True for pure (and advection-) diffusion, where both decay at least like (1 − αλ_minΔt)^{2n}; false for "
        "the wave (energy is conserved and S, C oscillate) and for reaction–diffusion (C can grow at first). "
        "With an arbitrary C_s > 0 the first bound says nothing."),
    "PDE-12": D(
        "Theorem D.2 item 3, eq. (14)",
        "The interaction range grows at least linearly: R(t) ≥ R(0) + k_r t.",
        "R is not defined. The diffusive spread (standard deviation of a row) grows like √t, so no linear lower "
        "bound holds for it; only the support width (R_0 + 2n after n steps) and a wave front (ct) grow "
        "linearly."),
    "PDE-13": D(
        "Appendix D.0.3, eqs. (15)–(16)",
        "Under a Polyak–Łojasiewicz condition with constant γ, bounded gradient variance and η ≤ 1/μ, "
        "|θ_t − θ*|² and E[L(θ_t) − L*] contract like (1 − ηγ)^t, and PDE smoothing leaves the rate unchanged.",
        "It holds for deterministic gradient descent (the iterate bound only with θ* the projection of θ_0 onto "
        "the solution set); stochastic gradients add a noise floor ≈ ησ²/(2γ). The PDE plays no role in the "
        "theorem."),
    "PDE-14": D(
        "Appendix E.1",
        "Stable propagation needs α ∝ 1/N² and Δt ∝ 1/N.",
        "The only stability parameter is r = αΔt/Δs² ≤ 1/2. With positions in [0, 1] (Δs = 1/N) and α = c/N² the "
        "bound on Δt does not depend on N; in token units (Δs = 1) it grows like N². Neither needs Δt ∝ 1/N."),
    "PDE-15": D(
        "§5.2–5.4; Tables 2–5 and 13; Appendix C",
        "PDE-refined attention reaches WikiText-103 perplexities of 1.02–3.7 in causal language modelling.",
        "A centred Laplacian step on a causal (lower-triangular) A puts weight on future tokens along either "
        "axis (A_{i,i+1} = r A_ii after one key-axis step), up to N_t positions ahead after N_t steps; unless the "
        "mask is applied again after every step the model can read the next token, which would explain "
        "perplexities near 1."),
    "PDE-16": D(
        "Appendix D.0.5, 'Complexity'",
        "The refinement costs O(N_t N) flops and is near-linear overall.",
        "Near-linear only for a sparse or factored A(0): a band of width w widens by 2 per step "
        "(about T(w + 2N_t) non-zeros), and a kernel factorisation lets the Laplacian act on one factor; on the "
        "dense softmax matrix of the paper's main experiments every step costs O(T²)."),
    "PDE-17": D(
        "the authors' public implementation (causal mode; not described in the paper)",
        "The causal refinement x ← x + α(x_i − 2x_{i−1} + x_{i−2}) of the public code is a usable diffusion step.",
        "Its amplification factor is 1 + α(1 − e^{−iθ})², which reaches 1 + 4α at the highest frequency, so it is "
        "unstable for every α > 0 (growth like (1 + 4α)^n); a centred step with r ≤ 1/2 followed by re-masking "
        "stays bounded."),
    "PDE-18": D(
        "the authors' public implementation (diffusion of hidden states)",
        "Diffusing A along the query axis and then applying it to V is the same as diffusing the outputs AV along "
        "the sequence, (I + r∇_s²)^{N_t} A V = (I + r∇_s²)^{N_t} (AV); along the key axis the two differ.",
        None),
    # -- Fast Multipole Attention ---------------------------------------------------------------
    "FMA-1": D(
        "§3, 'FMA in 1D' (near- and far-field sets)",
        "For every query i the near field N(i) and the far fields F_ℓ(i), ℓ = 1 … L − 1 with "
        "L = ⌈log₂(n/r)⌉, are pairwise disjoint and together cover all n tokens, also when r does not divide n "
        "or n/r is not a power of 2."),
    "FMA-2": D(
        "definitions of the groups G_{ℓ,m} and G_ℓ(i); Fig. 1",
        "Each far field F_ℓ(i) is tiled exactly by level-ℓ groups of length r2^{ℓ−1}, at most 3 per level, and "
        "the level windows are nested, so eq. (4) uses every token once. (The windows use blocks of length r2^ℓ "
        "while the groups have length r2^{ℓ−1}; 'Coarse level rank' gives π_ℓ length 2^ℓ where r2^{ℓ−1} is "
        "meant.)"),
    "FMA-3": D(
        "after eq. (4); §4.5",
        "Each query sees at most 3r + 3(L − 1) sources in 1-D (3r + O(log n)), O(n log n) in total, and the "
        "memory is O(rn + np log(n/r))."),
    "FMA-4": D(
        "after eq. (4) and eq. (6)",
        "Downsampling the queries on the coarse levels makes the cost O(n) (FMA-linear).",
        "With queries pooled over blocks of length r2^{ℓ−1} (the pooling is not specified; this is the toolkit's "
        "reading) the number of scores is at most 3rn + 6pn/r, linear in n; how pooled outputs return to the "
        "tokens is not specified."),
    "FMA-5": D(
        "'FMA in 2D'",
        "In 2-D the quadtree near and far fields are disjoint and cover every pixel, the far fields are tiled by "
        "squares of side r2^{ℓ−1}, and each pixel sees at most 9r² + 27(L − 1) sources, also when r does not "
        "divide the image width W. (The text's 'base cell of size 3r×3r' and 'squares of side r2^ℓ' are slips: "
        "the base cell is r×r, the near field 3r×3r.)"),
    "FMA-6": D(
        "§2, the Swin paragraph",
        "The 2-D stencil is isotropic (3×3 at the finest level, an almost isotropic 6×6 footprint at the first "
        "coarse tier) and independent of the query's location.",
        "The footprint is almost isotropic, but it depends on where the query is: the near window sits at offset "
        "1 or 2 inside the 6×6 footprint depending on the parity of the query's block on each axis, so there are "
        "4 distinct stencils in 2-D (2 in 1-D) per level.",
        "'almost isotropic' holds; 'independent of the query's location' does not"),
    "FMA-7": D(
        "Fig. 2 caption; §3 (H-matrix); 'Coarse level rank p'",
        "The effective attention matrix is a hierarchical matrix: every far block has rank ≤ p, and the matrix "
        "reproduces eq. (4) exactly."),
    "FMA-8": D(
        "eqs. (4) and (6)",
        "FMA is a drop-in replacement for softmax attention: each output is a convex combination of values "
        "(implicit).",
        "With the near-field weights normalised over N(i) and each level's weights normalised separately (as "
        "printed), the effective row sums are 1 + (number of non-empty levels), so outputs are not convex "
        "combinations and their scale grows with log n. One joint softmax over the near field and all groups "
        "(logits q·k̄_G/√d + log|G|) has row sums 1; the toolkit implements and labels both."),
    "FMA-9": D(
        "derived from eqs. (4) and (6)",
        "FMA is exact in two limits: n ≤ 2r (the near field is everything), and keys constant within each far "
        "group (a far group's mean key then loses nothing).",
        "Exact at n ≤ 2r with either normalisation. On keys constant within each far group it is exact only with "
        "one joint softmax over the near field and all groups (group-mean keys and values, logits q·k̄_G/√d + "
        "log|G|; the toolkit's variant, FMA-8); the per-level normalisation of eqs. (4) and (6) as printed is not "
        "(largest deviation from full attention 1.60 at n = 256, r = 8: its rows sum to 1 + the number of "
        "levels).",
        "exactness at n ≤ 2r holds as printed; exactness on group-constant keys holds for the joint softmax, not "
        "for the per-level normalisation of eqs. (4) and (6)"),
    "FMA-10": D(
        "§1; §4.1 (autoregressive use)",
        "FMA works for causal attention: no far group straddles its query, so far groups can be masked whole and "
        "only the near field needs a causal mask inside the block."),
    "FMA-11": D(
        "§1; §3 (the fast-multipole / H-matrix analogy)",
        "Far-field interactions are low rank, so coarse group summaries lose little.",
        "Off-diagonal blocks of exp(QK^T/√d) between well-separated intervals have small numerical rank only when "
        "queries and keys depend smoothly on position; for independent tokens the ε-rank is about the block size "
        "and a small p gives large errors. Low rank is a property of the data, not of the mechanism."),
    "FMA-12": D(
        "the experimental configurations (1-D r = 64 up to n = 1024, r = 128 above; 2-D r = 4 at 224², r = 8 at "
        "384²); §4.3 memory claims",
        "The memory savings reported at these configurations come from the hierarchical structure.",
        "The near-field share Σ_i |N(i)| / n², computed exactly from the definitions, is about one half at the "
        "2-D ImageNet sizes (45–60 % of all pairs are computed exactly), so the savings reported there cannot "
        "come from the asymptotic O(n log n) structure."),
    # -- Neural Attention (MLP scores) ----------------------------------------------------------
    "NEURAL-1": D(
        "§1.2; §3.2",
        "Dot-product scores QK^T have rank at most d (at most d′ after a down-projection): a bottleneck.",
        "True of the logits (rank exactly d, or d′, for random inputs) and not of the attention matrix: "
        "softmax(QK^T/√d) is full rank in general."),
    "NEURAL-2": D(
        "§1.2, eq. (2) and the text after it",
        "A dot product only lets elements of the same index interact and misses relationships between different "
        "indices.",
        "With learned projections the score x^T W_Q^T W_K y = Σ_ab x_a M_ab y_b couples every pair of indices, and "
        "every bilinear form of rank ≤ d is realisable (W_Q = I, W_K = M). What a dot product cannot express is a "
        "non-bilinear interaction. L2 attention is dot-product attention plus a key bias: "
        "−|q − k|² = 2q·k − |q|² − |k|², and the query term cancels in the softmax."),
    "NEURAL-3": D(
        "§1.2, eqs. (3)–(4); §2",
        "Concatenating query and key before one hidden layer differs from additive attention, which combines "
        "independently projected representations.",
        "W_h[q; k] + b_h = W_h^{(q)} q + W_h^{(k)} k + b_h, so shared-weight Neural Attention "
        "w_a·σ(W_h[q; k] + b_h) + b_a is exactly additive (Bahdanau) attention w_a·σ(W_1 q + W_2 k + b) for any "
        "activation σ (b_a cancels in the softmax)."),
    "NEURAL-4": D(
        "§1.2; §3.2 ('even d′ = 2 … Neural Attention is low-rank')",
        "MLP scores capture non-linear dependencies and are low-rank for a small d′.",
        "For A_ij = Σ_m w_m σ(u_m·q_i + v_m·k_j + b_m): the identity gives rank ≤ 2 and, after the row softmax, "
        "attention that ignores the query; σ(z) = z² gives rank min(d′, h) + 2; exp gives rank ≤ h (h + 1 with "
        "the output bias); ReLU is far above these bounds; tanh and GELU lie in between (numerical rank depends on "
        "the tolerance). So scores with d′ = 2 are not low-rank matrices: 'low-rank' refers to the input "
        "dimension. At n = 256 and d′ = 2, ReLU scores reach rank 248 (h = 4) and 256 = n (h = 32) at tolerance "
        "1e-10, 64 times 2d′; tanh and GELU reach 133 and 81 (h = 32).",
        "'MLP scores capture non-linear dependencies' holds for a non-linear σ (with the identity the softmax "
        "ignores the query); 'low-rank for a small d′' does not hold of the score matrix (it holds of the input "
        "width d′ only)"),
    "NEURAL-5": D(
        "§1.2, Fig. 1",
        "With q = k = (x, y), dot-product scores form the smooth paraboloid x² + y² and Neural Attention (ReLU) a "
        "surface with sharp edges.",
        "The dot-product surface has Hessian 2I everywhere; the ReLU network is piecewise linear with creases on h "
        "lines and at most 1 + h + h(h − 1)/2 linear regions; with a smooth σ its surface is smooth."),
    "NEURAL-6": D(
        "eq. (8); Appendix B; Tables 1–3 and 5; Conclusion",
        "Each attention score (i, j) has its own learnable parameters W_h[i, j].",
        "Per-pair weights need at least 7n² parameters (over 7.3 M at n = 1024), far more than the reported "
        "increase over dot-product attention (0.524 M): the reported counts fit shared weights, and then NEURAL-3 "
        "applies. Per-pair weights would also break permutation equivariance and fix n. The CIFAR gains of +3.0 "
        "and +4.26 are percentage points, not relative gains."),
    "NEURAL-7": D(
        "eq. (7); Algorithm 1; §3.2",
        "Building the concatenated query–key tensor has the same O(n²) time complexity as dot-product attention "
        "and much worse memory.",
        "Both are O(n²) in n. The memory overhead (a 2d′n² tensor) comes from materialising the concatenation: "
        "with NEURAL-3, W_1 q and W_2 k cost O(nhd′) and only the n²h activations remain."),
    "NEURAL-8": D(
        "§1.2; Conclusion",
        "Neural Attention captures non-linear dependencies that a dot product cannot.",
        "On doubly-centred targets (query-only and key-only parts removed, as the softmax and a key bias would) "
        "the best bilinear fit leaves a residual bounded away from zero for non-bilinear targets such as "
        "|q_1 − k_2|, cos(q·k) and q_1k_1q_2k_2, while a shared-weight MLP fits them; −|q − k|² is fitted exactly "
        "by a bilinear form plus a key bias. This holds for additive attention in general, not only for Neural "
        "Attention."),
    # -- Self-attention as interacting particles (Geshkovski, Letrouit, Polyanskiy & Rigollet) -------------
    "SA-1": D(
        "'A mathematical perspective on Transformers' (arXiv 2312.10794 v5), section 6, Theorem 6.1 (citing "
        "Markdahl et al. 2018 and Criscitiello et al. 2024); the gradient-flow structure of sections 3.3–3.4",
        "For n ≥ 2, d ≥ 3 and every β ≥ 0, Lebesgue-almost every initial sequence on S^{d−1} converges to a single "
        "point x* under (SA) ẋ_i = P⊥_{x_i}(Σ_j e^{β⟨x_i,x_j⟩} x_j / Z_i) and under (USA) (1/n in place of 1/Z_i).",
        "Asserted as printed from uniform random starts (n = 32, d = 3 and 8, β = 0, 1, 2, both normalisations): "
        "every start is one cluster at t_max, the interaction energy E_β never decreases, and an antipodal pair — "
        "in the exceptional null set — is an equilibrium (velocity 0). The time to the last merge grows like "
        "e^{β(1 − ⟨u, v⟩)} (SA-3), which bounds the β a run can afford."),
    "SA-2": D(
        "arXiv 2312.10794 v5, section 6.1: Lemma 6.4 ('cone collapse', with its two-step proof) and Theorem 6.3 "
        "(d ≥ n); the remark on Wendel's theorem",
        "If every x_i(0) lies in an open hemisphere {⟨x, w⟩ > 0}, the solution of (SA) or (USA) converges to one "
        "point, ‖x_i(t) − x*‖ ≤ C e^{−λt}; the proof keeps min_i ⟨x_i(t), w⟩ non-decreasing and gives "
        "λ ≥ 1/(4 n e^{2β}) for (SA). For d ≥ n uniform tokens lie in an open hemisphere almost surely "
        "(Wendel: probability 2^{−(n−1)} Σ_{k<d} C(n−1, k)), hence collapse exponentially.",
        "Asserted with the sharp rate: the diameter decays at exactly the linearised rate, 1 for (SA) whatever β and "
        "n, e^β for (USA) (relative error ≤ 1e-5), far above the lemma's 1/(4 n e^{2β}); min_i ⟨x_i(t), w⟩ is "
        "non-decreasing; the fraction of uniform configurations in an open hemisphere matches Wendel's probability "
        "(Gordan's alternative by non-negative least squares), 1 for d ≥ n."),
    "SA-3": D(
        "arXiv 2312.10794 v5: the metastability posed as Problem 1 and the (d, β) phase diagram of Fig. 3; proved "
        "for (SA)-type dynamics by Geshkovski, Koubbi, Polyanskiy & Rigollet (arXiv 2410.06833)",
        "From random starts the tokens quickly form several clusters and stay near that configuration for a long "
        "time before merging; the plateaus last longer as β grows.",
        "Two point clusters of k and m tokens at ⟨u, v⟩ = ρ stay two points and ρ solves a scalar ODE; the merge "
        "time from ρ₀ grows like e^{β(1−ρ₀)}/β for (SA) but like e^{−βρ₀}/β for (USA), which shrinks with β for "
        "clusters at an acute angle (it grows only in units of (USA)'s clustering time e^{−β}, or for obtuse "
        "clusters). The check asserts the (SA) statement: two caps merge on the two-cluster ODE's time, "
        "d log T/dβ matches the reference's (→ 1 − ρ₀), and from random starts on the circle the mean cluster count "
        "at a fixed time grows with β (1 at β = 1, ≥ 2 at β = 16, the clusters tight)."),
    "SA-4": D(
        "'The emergence of clusters in self-attention dynamics' (NeurIPS 2023, arXiv 2305.05465 v6), Theorem 3.1 "
        "and its full form in section 8",
        "With V = I_d and QᵀK positive definite, the rescaled tokens z_i(t) = e^{−t} x_i(t) of ẋ_i = Σ_j P_ij V x_j "
        "converge; their convex hull converges to a polytope K and every z_i converges to a point of "
        "S = {x ∈ K : ‖Ax‖² = max_j ⟨Ax, Av_j⟩} (v_j the vertices of K, AᵀA = QᵀK), with vertices(K) ⊆ S ⊆ ∂K ∪ {0}; "
        "generically the limits are vertices, far fewer than n."),
    "SA-5": D(
        "arXiv 2305.05465 v6, Theorem 2.1 (proved in section 7) and the sentence after it",
        "For d = 1, V > 0 and QK > 0 and pairwise distinct tokens, the self-attention matrix P(t) converges to a "
        "stochastic matrix all of whose rows but at most one are standard basis rows e_a or e_b; for almost every "
        "start it is Boolean of rank 1 or 2, with a doubly exponential rate.",
        "Asserted as printed, with a and b identified: the rows tend to e_argmin or e_argmax of the initial tokens "
        "(the order of the tokens is kept), and −log of the distance to the limit grows exponentially (slope V)."),
    "SA-6": D(
        "arXiv 2312.10794 v5, section 6.2, Theorem 6.8 and its equations for γ_β (SA) and (USA)",
        "Tokens with all pairwise inner products equal stay equiangular, and the inner product solves "
        "ρ' = 2e^{βρ}(1−ρ)(1+(n−1)ρ)/(e^β + (n−1)e^{βρ}) for (SA) and ρ' = (2/n)e^{βρ}(1−ρ)(1+(n−1)ρ) for (USA).",
        "Asserted as printed from any equiangular start (ρ₀ = 0 is the theorem's), and derived again from the particle "
        "equations (the Gram matrix solves a closed ODE; sympy in the tests): near a cluster 1 − ρ ~ e^{−2t} for "
        "(SA) whatever β and n and e^{−2e^β t} for (USA). The toolkit's simulator matches the ODE to 1e-8 relative "
        "over t ∈ [0, 5] (β = 0, 1, 4; n = 3, 8, 32) and the closed Gram ODE from random starts; its projected "
        "integrators have orders 1, 4 and 5 (95 % intervals from verify.rates)."),
    "SA-7": D(
        "arXiv 2312.10794 v5, section 6.2, Theorem 6.9, and section 6.3 (the phase-transition curve)",
        "For d ≥ d*(n, β), with probability at least 1 − 2n²d^{−1/64} over uniform starts, "
        "|⟨x_i(t), x_j(t)⟩ − γ_β(t)| ≤ min(2c(β)^{nt}√(log d/d), Ce^{−λt}) with c(β) = e^{10 max(1, β)}; the curve "
        "{(t, β): γ_β(t) = 1 − δ} separates clustered from not-yet-clustered configurations.",
        "The printed constants are vacuous wherever one can compute (2n²d^{−1/64} ≥ 1 unless d ≥ (2n²)^{64}; "
        "c(β)^{nt} = e^{80t} for n = 8, β ≤ 1). The check asserts the mechanism instead: the error against γ_β over "
        "t ∈ [0, 4] scales like d^{−1/2} (order from verify.rates with its bootstrap interval), and at the largest "
        "d the simulated curve (min pairwise inner product reaching 1 − δ) matches γ_β's."),
    # -- Graph-Laplacian spectral convergence ------------------------------------------------------
    "GL-1": D(
        "Calder & García Trillos, ACHA 60 (2022), arXiv 1910.13476: §2 (the ε-graph and k-NN graph Laplacians and "
        "σ_η) and the authors' experiment code (jwcalder/kNNSpectralRates, sphere_rates.py); García Trillos, Gerlach, "
        "Hein & Slepčev, FoCM 20 (2020), arXiv 1801.10108, §1",
        "For n i.i.d. points of density p on an m-manifold, the ε-graph Laplacian (2/(σ_η p n ε^{m+2}))(D − W) with "
        "W_ij = 1{|x_i − x_j| ≤ ε} and σ_η = ∫_{B_1} z_1² dz = α_m/(m+2), and the symmetrised k-NN Laplacian with ε "
        "replaced by ε_k = (k/(n p α_m))^{1/m}, approximate −Δ (eigenvalues l(l + m − 1) on the unit sphere S^m).",
        "The constants agree with quadrature, and the sampled Laplacians have the exact finite-ε continuum spectra "
        "on S^1 and S^2 (Funk–Hecke, Legendre polynomials) within 4.5 % at n = 2000; that continuum tends to "
        "l(l + m − 1) with a bias O(ε²), not O(ε), for uniform sampling (exactly zero for degree 1 on S^2). The k-NN "
        "graph joins pairs within max(r_i, r_j), so its effective radius exceeds ε_k by O(1/√k) (eigenvalues 7 % high "
        "at k = 158)."),
    "GL-2": D(
        "Cheng & Wu, ACHA 2022, arXiv 2101.09875: §2 (the kernel, L_un, L_rw) and the density-corrected graph "
        "Laplacian; the authors' code for Fig. 2 (xycheng/eigconvergence_gaussian_kernel, code_fig2.m)",
        "With W_ij = ε^{−d/2} h(|x_i − x_j|²/ε), h(r) = e^{−r/4}/(4π)^{d/2}, m_0 = ∫h = 1 and m_2 = ∫h u_1² = 2, the "
        "un-normalised L_un = (D − W)/((m_2/2) ε p N), the random-walk L_rw = (I − D^{−1}W)/(ε m_2/(2m_0)) and, for "
        "non-uniform data, L_rw of W̃ = D^{−1}WD^{−1} approximate −Δ.",
        "The moments agree with quadrature, the sampled Laplacians have the exact finite-ε continuum spectra on S^1 "
        "and S^2 (modified Bessel functions) within 2 % at ε = 0.05, n = 2000, and that continuum tends to l(l + m − 1) "
        "with a bias O(ε) (ε here is a squared length)."),
    "GL-3": D(
        "arXiv 1910.13476: abstract; §2, the ε-graph eigenvalue and eigenvector theorems; the numerical experiments "
        "(uniform S^2, n = 2^12 … 2^17, 100 trials, ε = the smallest k-NN radius at k = n^{2/3}; published errors in "
        "jwcalder/kNNSpectralRates, error.csv)",
        "For (log n/n)^{1/(m+4)} ≪ ε ≪ 1 the eigenvalues and eigenvectors of the ε-graph Laplacian converge to those of "
        "−Δ with error O(ε) (high probability), so O(n^{−1/(m+4)}) up to logarithms at the smallest such ε.",
        "A bound, checked one-sided with verify.rates on S^2 (relative RMS eigenvalue error and RMS eigenvector sine "
        "of the degree-1 and degree-2 groups): observed orders −0.40 … −0.48 (eigenvalues) and −0.43 … −0.49 "
        "(eigenvectors) at n = 256 … 2048 (12 repeats, seeds 0–9), and −0.42 [−0.47, −0.37], −0.44 [−0.48, −0.39] (95 % intervals, 4 repeats) at "
        "the paper's n = 2^12 … 2^17 (full tier), against −1/6; at n = 2^17 the errors (0.013, 0.086 for l = 1, 2; "
        "eigenvectors 0.014, 0.025) reproduce the published table (0.013, 0.085; 0.013, 0.024). A refit of "
        "the authors' published table gives −0.52 (eigenvalues l = 1), −0.40 (l = 2) and −0.46 (eigenvectors): the "
        "errors fall faster than proved, because on the uniform sphere the bias is O(ε²) (GL-1)."),
    "GL-4": D(
        "arXiv 1910.13476: abstract; §2, the k-NN theorems; the numerical experiments (k = n^{4/(m+4)})",
        "The symmetrised k-NN graph Laplacian has eigenvalue and eigenvector errors O((k/n)^{1/m}) in the analogous "
        "range of k, so O(n^{−1/(m+4)}) up to logarithms with k ~ n^{4/(m+4)}.",
        "A bound, checked one-sided as GL-3: observed orders −0.37 … −0.48 (eigenvalues) and −0.37 … −0.41 "
        "(eigenvectors) at n = 256 … 2048 (seeds 0–9), and −0.40 [−0.44, −0.37], −0.50 [−0.53, −0.44] at n = 2^12 … 2^17, against "
        "−1/6; at 2^17 the errors (0.034, 0.031; eigenvectors 0.008, 0.018) reproduce the published (0.032, 0.034; "
        "0.007, 0.017). The refit of the published "
        "table gives −0.28 (eigenvalues l = 1), −0.53 (l = 2) and −0.51 (eigenvectors)."),
    "GL-5": D(
        "García Trillos, Gerlach, Hein & Slepčev, FoCM 20 (2020), arXiv 1801.10108: abstract; the eigenvalue and "
        "eigenvector theorems (error of order δ/ε + ε, δ the ∞-transport distance of the sample)",
        "Eigenvalues and eigenvectors of the ε-graph Laplacian converge at O((log n/n)^{1/(2m)}), with ε ~ "
        "(log n/n)^{1/(2m)}.",
        "A bound, checked one-sided on error/(log n)^{1/(2m)} at ε = 1.5 (log n/n)^{1/(2m)} on S^2: observed −0.45 … "
        "−0.49 (n = 256 … 2048, seeds 0–9) and −0.52 [−0.58, −0.47] (eigenvalues), −0.47 [−0.51, −0.42] (eigenvectors) at n = 2^12 … "
        "2^17, against −1/4. For m ≤ 4 this exponent 1/(2m) is at least GL-3's 1/(m+4): the improvement of GL-3 (an "
        "error linear in ε) gives faster rates in n only for m ≥ 5."),
    "GL-6": D(
        "Cheng & Wu, arXiv 2101.09875: abstract; the eigen-convergence theorems of L_un and L_rw for uniform data; "
        "Fig. 2 (S^1)",
        "With ε ~ (log N/N)^{1/(d/2+2)} the low eigenvalues of L_un and L_rw converge at N^{−1/(d/2+2)} and the "
        "eigenvectors (2-norm) at N^{−1/(d+4)}, up to a log N factor.",
        "Bounds, checked one-sided on error/(log N)^γ on S^1 (d = 1: −0.4 and −0.2), ε = 0.1 (log N/N)^{0.4}: observed "
        "−0.40 … −0.50 (eigenvalues) and −0.39 … −0.51 (eigenvectors), N = 256 … 2048 (16 repeats, seeds 0–9); −0.46 [−0.51, −0.41] "
        "and −0.47 [−0.53, −0.42] at N = 2^9 … 2^13 (full tier, 12 repeats). The eigenvalue bound is attained: the exact "
        "continuum bias, O(ε), alone has orders −0.38 … −0.39 here; the eigenvectors converge faster than proved."),
    "GL-7": D(
        "arXiv 2101.09875: abstract (ε ~ (log N/N)^{1/(d/2+3)}; one version of the abstract writes N^{−1/(d/2+3)}); "
        "the same theorems",
        "With ε ~ (log N/N)^{1/(d/2+3)} both eigenvalues and eigenvectors converge at N^{−1/(d/2+3)}, up to log N.",
        "Bounds, checked one-sided on S^1 (−0.286): observed −0.32 … −0.39 (eigenvalues, attained: the bias alone has "
        "−0.26 … −0.27 in this range, approaching −0.286 from above) and −0.38 … −0.50 (eigenvectors); −0.34 [−0.37, "
        "−0.31] and −0.45 [−0.51, −0.40] at N = 2^9 … 2^13."),
    "GL-8": D(
        "arXiv 2101.09875: abstract; the density-corrected graph Laplacian and its eigen-convergence theorem",
        "For non-uniformly sampled data the density-corrected Laplacian (L_rw of D^{−1}WD^{−1}) converges to −Δ with "
        "the rates of GL-6; the plain Laplacians converge to a density-weighted operator instead.",
        "Checked on S^1 with density (1 + 0.5 cos θ)/(2π): the density-corrected L_rw converges to k² at orders "
        "−0.49 … −0.53 (eigenvalues) and −0.59 … −0.71 (eigenvectors, in the degree-weighted inner product), while the "
        "plain L_rw stays 0.125–0.150 away (relative RMS; corrected: 0.048–0.054) at N = 2048 (0.130 against 0.029 at "
        "N = 8192, where the orders are −0.51 [−0.53, −0.48] and −0.68 [−0.75, −0.62]): the correction is needed. On uniform data too the correction helps: it removes the degrees' sampling noise (eigenvector "
        "error 0.06 against 0.14 for L_rw at N = 2048)."),
    # -- Sinkformers (SK) --------------------------------------------------------------------------
    "SK-1": D(
        "Sander, Ablin, Blondel & Peyré, 'Sinkformers: Transformers with doubly stochastic attention' (AISTATS 2022, "
        "arXiv 2110.11773): abstract ('in the infinite number of samples limit ... when rescaling both attention "
        "matrices and depth, Sinkformers operate a heat diffusion') and its section on the heat-diffusion limit (whose "
        "text was not retrievable here: the statement is read from the abstract and from Agarwal, Harchaoui, Mulcahy "
        "& Pal, arXiv 2406.10823, who prove it for iterated Schrödinger bridges, 'first observed in' Sinkformers)",
        "Tokens moved by residual self-attention layers whose attention matrix is made doubly stochastic by Sinkhorn's "
        "algorithm (scores <x_i, x_j>/ε, i.e. the Gaussian kernel on the sphere; value −I; depth rescaled so that one "
        "layer is a time step ε) follow, as n → ∞ and then ε → 0, the heat equation for their density.",
        "The density diffuses: on S^1 (600 tokens at von Mises quantiles) and S^2 (1500, a vMF Fibonacci set), with "
        "W = exp(−|x − y|²/(2ε)), ε = 0.03 and one layer = time ε, the moments follow ∂ₜp = ½Δp — fitted diffusivity "
        "0.4997–0.5002 (S^1, modes 1–3) and 0.4983–0.5025 (S^2, degrees 1–3), moments within 4e-4 and 1.8e-3 of the "
        "exact heat semigroup (Bessel-ratio and Legendre closed forms); full tier (8000 and 12000 tokens, ε = 0.01): "
        "0.5000 in every mode, moments within 7e-5. Conditions: ½ is this kernel's constant "
        "(exp(−|x − y|²/ε) halves it); the plain layer (step = ε) is the accurate one, a step ε/2 leaves an O(ε) bias "
        "(D = 0.495 in mode 3); what diffuses is the density, carried by the velocity −½∇log p (the generator on "
        "functions is not the heat operator: SK-2). The row softmax on the sphere is a heat diffusion as well, at D = 1 "
        "(0.996, 0.974 in modes 1, 2 on S^1; 0.988, 0.973 on S^2; mode 3 less accurate): the normalisation sets the "
        "speed, not the kind of flow; off a sphere, dot-product scores exp(<x, y>/ε) carry the key norms "
        "e^{|y|²/(2ε)}, which only the Sinkhorn scaling absorbs."),
    "SK-2": D(
        "Marshall & Coifman, 'Manifold learning with bi-stochastic kernels' (IMA J. Appl. Math. 2019, arXiv "
        "1711.06711), §2.1: the infinitesimal generator of a kernel made bi-stochastic against the sampling measure; "
        "Agarwal, Harchaoui, Mulcahy & Pal, arXiv 2505.07647, abstract (the Markov operators of the entropic "
        "self-transport have the Langevin generator as derivative at ε = 0); Landa & Cheng, arXiv 2209.08004 (the "
        "scaling factors concentrate; a density estimate from them). Read against SK-1's 'heat diffusion'",
        "For the symmetric Sinkhorn normalisation P = diag(d) W diag(d) of the Gaussian kernel on points drawn from a "
        "density p, (1/ε)(P − I)f → ½(Δf + ⟨∇log p, ∇f⟩), the Langevin generator with invariant law p (the "
        "Coifman–Lafon a = ½ operator), and n d² c_ε p → 1 (c_ε = ∫W); the row softmax gives ½Δf + ⟨∇log p, ∇f⟩ "
        "(DRIFT-4 at a = 0).",
        "Measured (fitted op = A ½Δf + B ⟨∇log p, ∇f⟩): B = 0.496 (Sinkhorn) against 0.991 (softmax) on the S^1 quantile "
        "grid (ε = 0.005; the sampled operators equal the exact finite-ε continuum ones, FFT with Bessel symbols, to "
        "6e-12), 0.483 / 0.950 on the S^2 Fibonacci set (ε = 0.02), 0.49 / 0.98 and 0.47 / 0.89 on i.i.d. samples; "
        "n d² c_ε p = 1 within 5e-14 on the grid, slope −1 of log n d² on log p on every tier. The 'heat' reading on "
        "functions fails: the Laplace–Beltrami ½Δf (no drift) is 0.37 away in relative RMS on the grid, the softmax "
        "drift 0.30, and a density-dependent time change c·½Δf/p (the only drift-free operator symmetric in p dV, as a "
        "doubly stochastic matrix is in the counting measure) 0.90 at its best c. The doubly stochastic normalisation "
        "halves the density's drift; it neither removes it nor rescales time by the density. The density enters the "
        "scaling d ~ p^{−1/2} and the measure in which the generator is symmetric."),
    "SK-3": D(
        "Singer 2006 (DRIFT Theorem 1: bias O(ε), sampling error O(n^{−1/2} ε^{−1/2−m/4}) of kernel averages) for the "
        "row normalisation; Landa & Cheng, arXiv 2209.08004 (finite-sample concentration of the doubly stochastic "
        "matrix and its scaling) for the Sinkhorn one",
        "Both generators converge to their limits (SK-2) with a bias O(ε) and, at a fixed ε, a sampling error "
        "O(n^{−1/2}).",
        "Orders through verify.rates: in ε, 0.996 (Sinkhorn) and 0.986 (softmax) on the S^1 quantile grid (ε = 0.04 … "
        "0.005, local orders 0.99–1.00; the grid is the continuum to 1e-11, so this is the bias alone) and 0.94 / 0.89 "
        "on the S^2 Fibonacci set (ε = 0.16 … 0.02, local orders rising to 0.95; the set's 0.5 % quadrature error "
        "forbids smaller ε at n = 3000); in n at fixed ε against the exact finite-ε continuum operator, n = 150 … 1200 "
        "× 6 samples: −0.49 … −0.56 (Sinkhorn) and −0.44 … −0.52 (softmax) on S^1, −0.46 … −0.50 and −0.44 … −0.52 on "
        "S^2, seeds 0–7; −0.54, −0.53, −0.50, −0.50 over n = 500 … 16000 (full tier)."),
    "SK-4": D(
        "Sinkformers §2 (Sinkhorn's algorithm: K⁰ = exp(C), K^{l+1} = N_R(K^l) for even l and N_C(K^l) for odd l, "
        "K^∞ = Sinkhorn(C)); Knight, 'The Sinkhorn–Knopp algorithm: convergence and applications', SIAM J. Matrix "
        "Anal. Appl. 30 (2008): linear convergence at σ₂(P)² per sweep, and the symmetric iteration x ← (x/Ax)^{1/2}",
        "The alternating iteration converges linearly at λ₂(P)² per (row, column) sweep on the symmetric "
        "positive-definite attention kernel; since λ₂ = 1 − O(ε), its sweeps grow like 1/ε as the attention sharpens. "
        "The symmetric scaling D C D with one vector contracts the error of log d by (I − P)/2: at most "
        "(1 − λ_min(P))/2 ≤ ½ per update, whatever ε.",
        "On 400 points (the S^1 quantile grid, the S^2 Fibonacci set), ε halving, against eigvalsh of the final P: "
        "the alternating iteration's rate over its last 20 sweeps equals λ₂² on S^1 (1.00–1.01 of its e-folds) and is "
        "8–13 % faster on S^2 (the zonal starting error has almost no component along the slowest eigenvector); its "
        "sweeps to 1e-12 grow like ε^{−1.01} (S^1: 99 … 812 sweeps at ε = 0.2 … 0.025) and ε^{−1.06} (S^2). The "
        "symmetric scaling: 30 updates at every ε on S^2, a mean contraction of 0.86–0.92 of the bound ½ per update (the "
        "last ratios 0.97), always within log₂(r₀/tol) + 1 updates; on the grid the smooth O(ε) starting error needs only 22 … 8 updates, fewer as ε shrinks. (i.i.d. "
        "samples' own spectral gap closes faster than ε where their sparse parts break up: 12490 sweeps for one seed "
        "in ten at ε = 0.04 on S^2.)"),
    # -- Gaussian tokens under the Transformer PDE (Castin, Ablin, Carrillo & Peyré) -----------------------
    "GA-1": D(
        _GA_WHERE + " Softmax self-attention: the covariance right-hand side rhs_trad (V Σ A Σ + transpose, A = KᵀQ/√d)",
        "For softmax self-attention ẋ = Σ_j softmax_j(β⟨Qx, Kx_j⟩) V x_j in ℝ^d, the Transformer PDE maps N(α₀, Σ₀) to "
        "Gaussians N(α(t), Σ(t)) with α′ = V(I + βΣBᵀ)α and Σ′ = β(VΣBᵀΣ + ΣBΣVᵀ), B = QᵀK (the softmax weights "
        "tilt N(α, Σ) into N(α + βΣBᵀx, Σ), so the velocity V(α + βΣBᵀx) is affine).",
        "Asserted through the token system, which the PDE describes as n → ∞: n i.i.d. tokens of N(α₀, Σ₀) moved by "
        "spectral.attention_flow (RK4) to t = 1 have an empirical mean and covariance converging to the ODE's (solve_ivp, "
        "rtol 1e-10) at n^{-1/2}, and their law stays Gaussian (the whitened empirical characteristic function tends to "
        "e^{−|w|²/2} at n^{-1/2}; saturated sigmoid attention, not affine, stays 2× farther). Non-symmetric Q, K, V "
        "(d = 2): orders −0.47 [−0.57, −0.37] (mean), −0.48 [−0.56, −0.40] (covariance), −0.49 [−0.54, −0.44] "
        "(Gaussianity) at n = 16 … 256 (32 draws, seed 0); the time step's share of the error is below 1e-3. The "
        "tilted-Gaussian velocity agrees with Gauss–Hermite quadrature of its definition to 1e-14. The rate needs "
        "the coupling κ < 1 (GA-6); the cases here keep κ ≤ 0.65. Masked (causal) softmax attention, not asserted: "
        "with i.i.d. tokens whose positions are independent of their values every position's conditional law "
        "evolves alike, so the Gaussian solution and its ODE are the unmasked ones; the masked token system "
        "(spectral.attention_flow, causal=True) approaches them with errors about 1.7× larger and orders −0.45 "
        "(mean), −0.40 (covariance), −0.50 (Gaussianity) at n = 16 … 256 (the first tokens see few others: a "
        "log n / n bias). Full tier (n = 64 … 2048, 32 draws, RK4 step 0.125): orders −0.61 [−0.72, −0.51], −0.46 "
        "[−0.55, −0.38], −0.49 [−0.53, −0.45]; with K = −Q and V SPD (the covariance collapses) −0.53, −0.52, −0.48."),
    "GA-2": D(
        _GA_WHERE + " L2 self-attention: rhs_L2",
        "For L2 attention, weights e^{−β|Qx − Ky|²}, Gaussians stay Gaussian with M = 2βVGΣKᵀQ, "
        "G = (I + 2βΣKᵀK)^{−1}: α′ = Mα + VGα, Σ′ = MΣ + ΣMᵀ.",
        "Derived here (the factor e^{−β|Ky|²} is a Gaussian of precision 2βKᵀK) and asserted as GA-1: orders −0.55 "
        "[−0.66, −0.44] (mean), −0.53 [−0.60, −0.45] (covariance), −0.50 (Gaussianity), β = 0.5. The authors' code "
        "scales the cross term by 1/√d but not KᵀK; with β = 1/√d in both (one inverse temperature for the score) "
        "the two agree only for d = 1. Full tier: −0.55, −0.47, −0.51."),
    "GA-3": D(
        _GA_WHERE + " Multi-head self-attention: rhs_multihead (heads split the rows of Q, K, V; W = I)",
        "With H heads ẋ = Σ_h W_hᵀ attention_h(x), Gaussians stay Gaussian and the heads' right-hand sides add: "
        "Σ′ = Σ_h β(C_hΣB_hᵀΣ + ΣB_hΣC_hᵀ), C_h = W_hᵀV_h.",
        "Asserted as GA-1 with two rank-one heads (Q_h, K_h the rows of Q, K): orders −0.45 [−0.62, −0.29] (mean), "
        "−0.49 [−0.58, −0.38] (covariance), −0.45 (Gaussianity); full tier −0.58, −0.45, −0.47."),
    "GA-4": D(
        _GA_WHERE + " Sinkhorn self-attention (ε = 1): rhs_sinkhorn",
        "For Sinkhorn (doubly stochastic) attention the velocity is V E_π[y | x] with π the entropic coupling of μ with "
        "itself for the cost −⟨Qx, Ky⟩; Gaussians stay Gaussian, α′ = Vα and Σ′ = VCᵀ + CVᵀ with C the cross-"
        "covariance of π.",
        "C in closed form: with B̃ = Σ^{1/2}βBΣ^{1/2} = U diag(s) Wᵀ, C = Σ^{1/2} U diag(2s/(1 + √(1 + 4s²))) Wᵀ Σ^{1/2} "
        "(the precision of a Gaussian pair with standard marginals); it agrees with the authors' closed form "
        "(V A^{−T} Σ^{−1} C_S Σ + transpose) to 1e-12 on random Σ, Q, K, V, and needs no invertible A. The token "
        "system (Sinkhorn scaling to 1e-11 at every evaluation) converges at orders −0.52 [−0.64, −0.39] (mean), "
        "−0.53 [−0.61, −0.44] (covariance), −0.50 (Gaussianity); full tier −0.55, −0.46, −0.51, and with L2 scores "
        "at β = 0.5 the same tokens as dot products at β = 1 (the scaling absorbs |Qx|² and |Ky|²: B′ = 2βQᵀK). "
        "|C̃| < 1 bounds |Σ′| ≤ 2|V||Σ|: no finite-time blow-up (GA-5)."),
    "GA-5": D(
        _GA_WHERE + " The figures of the covariance dynamics in d = 2 (2d_plots.py: convergence to zero for K = −Q, V "
        "SPD; to a line for rank-one Q = −K, V = I; blow-up or divergence for QᵀK + KᵀQ ≻ 0, V = I) and the rank "
        "histograms (histograms.py: K = −Q, Q with ⌊d/2⌋ rows, ranks of the limits up to (d + 1)/2)",
        "The covariance can collapse to zero or onto a subspace (clustering), or blow up in finite time with growing "
        "anisotropy, depending on Q, K, V and the attention variant; the limits found from K = −Q have rank at most "
        "(d + 1)/2.",
        "Asserted exactly against the ODE: for V = λI, Σ(t)^{−1} = Σ₀^{−1} − 2λβtB_s (to 1e-10), blow-up at "
        "T* = 1/(2λβμ_max) (to 1e-8 relative) with Σ/trΣ → the rank-one matrix of the top eigenvector, for one and two "
        "heads; L2 (K invertible) and Sinkhorn attention with the same Q, K stay finite to 3T* within their growth "
        "bounds; K = −Q, V = I gives Σ → Σ₀ − Σ₀Qᵀ(QΣ₀Qᵀ)^{−1}QΣ₀ (a line for d = 2). For K = −Q and V SPD every "
        "stationary covariance has QΣ = 0 (the Lyapunov equation V(ΣGΣ) + (ΣGΣ)V = 0 forces ΣGΣ = 0), so the rank is "
        "at most d − rank Q; on 30 random draws in d = 3, 4, 5 the limit has rank exactly (d + 1)/2, tr Σ never "
        "increases, and Sinkhorn with K = −Q invertible collapses to zero."),
    "GA-6": D(
        "Not stated in the paper: its mean-field limit is proved for compactly supported data, and the Gaussian "
        "analysis describes n tokens of Gaussian data by the Gaussian solution of the PDE",
        "n i.i.d. Gaussian tokens moved by softmax attention follow the Gaussian solution as n → ∞, at the usual rate "
        "n^{-1/2}.",
        "Holds only while κ = β‖Σ^{1/2}BΣ^{1/2}‖₂ < 1 along the flow. The finite-n softmax is a self-normalised "
        "importance sampler of the tilted Gaussian; the leading part of a moment error, (1/n)Σ_j h₁(y_j), has "
        "h₁ ~ exp(κ²v²/(2(1 + κ²))), a finite variance iff κ < 1 and a tail index (1 + κ²)/κ² beyond, so the error "
        "decays like n^{−1/(1+κ²)}. Measured on the moment right-hand sides of n Gaussian tokens (d = 1, n = 64 … "
        "1024, 64 draws): order −0.50 [−0.59, −0.41] at κ = 0.3 (−0.33 … −0.54 over seeds 0–9: a slow asymptote), "
        "−0.16 [−0.22, −0.11] at κ = 2 (predicted −0.2; −0.13 … −0.26 over seeds). The full tier (n = 128 … 4096) "
        "shows the crossover: −0.48, −0.41, −0.36, −0.33, −0.23, −0.13 at κ = 0.3, 0.6, 0.9, 1.2, 2, 3 (predicted "
        "−0.5 up to κ = 1, then −0.41, −0.2, −0.1: the n^{-1/2} asymptote is reached slowly as κ nears 1). For "
        "V = λI, κ(t) → ∞ as t → T*: particle flows (d = 1, B = 0.25, T* = 2, n = 64 … 1024) give covariance orders "
        "−0.49, −0.48, −0.40, −0.29 [−0.41, −0.17] at t/T* = 0.3, 0.6, 0.8, 0.9 (κ = 0.36, 0.63, 1.25, 2.5): the rate "
        "degrades before the blow-up, and at T* the particles' covariance is finite (every velocity is a convex "
        "combination of the V x_j) while the limit's is not."),
    # -- Metastable clusters from near-uniform tokens (Bruno, Pasqualotto & Agazzi; Geshkovski, Koubbi, Polyanskiy & Rigollet)
    "MS-1": D(
        "Bruno, Pasqualotto & Agazzi, 'Emergence of meta-stable clustering in mean-field transformer models' (ICLR "
        "2025, arXiv 2410.23228): abstract, section 4 (the linear phase, Theorem 4.3); the authors' public notebook "
        "(github.com/gbruno16/transformers-metastability) for the dynamics and the plotted γ_k",
        "Linearised at the uniform measure, the mean-field equation of tokens on the circle moved by (USA) "
        "θ̇_i = −(1/n)Σ_j e^{β cos(θ_i−θ_j)} sin(θ_i−θ_j) (the paper's normalisation: 1/n, no softmax) grows the "
        "Fourier mode k at a rate given by a rescaled Gegenbauer (on S¹: Chebyshev) coefficient of e^{βt}; the "
        "notebook plots γ_k = k²I_k(β)/(πβ).",
        "Derived here (manifolds.references.metastability): λ_k = k²I_k(β)/β for (USA), λ_k/I_0(β) for (SA); on "
        "S^{d−1} λ_l = l(l+d−2)κ_l/β with κ_l = Γ(d/2)(2/β)^{d/2−1}I_{l+d/2−1}(β) the Funk–Hecke coefficient. Asserted: "
        "closed form = quadrature of the linearised velocity (≤ 1e-9; 4e-14 measured), the particle system's own "
        "rates from the perturbed lattice 2πj/n (every mode 1 … k*+3, β = 2, 5, 9, both normalisations: 5e-8 "
        "relative), and the mean-field limit: from i.i.d. starts the deviation of c_k(t) from e^{λ_k t}c_k(0) over a "
        "quarter e-fold falls like n^{−1/2} (order −0.53, n = 32 … 256, 64 starts; full tier −0.502 [−0.529, −0.475], "
        "n = 256 … 4096, 256 starts). The dynamics the notebook "
        "integrates grows at π γ_k, not γ_k (its argmax is unaffected)."),
    "MS-2": D(
        "arXiv 2410.23228: abstract ('the structure characterizing the meta-stable manifold is explicitly identified "
        "… by the index maximizing a certain rescaling of Gegenbauer polynomials'), Theorem 4.3 and the clustering "
        "phase (k_max equally spaced clusters)",
        "In the limit of many tokens, from i.i.d. uniform tokens the configuration approaches a meta-stable state "
        "of k*(β) clusters, k* = argmax_k k²I_k(β) on the circle (k* ≈ √(2β); it changes at β = 1.04, 3.17, 6.21, "
        "10.23, 15.24, 21.24, 28.24, …).",
        "True in the limit of vanishing noise and away from the transitions; at finite noise the first mode to grow "
        "is random, with the law of the linear theory (Gaussian amplitudes s_k growing at λ_k; the first to reach "
        "0.3 wins), and P(k*) → 1 only as log(1/s)(1 − λ_{k'}/λ_{k*}) → ∞. Asserted from lattice starts (jitter "
        "1e-3, log(a/s) ≥ 4): every winner inside the law's support, k* winning as often as the law allows "
        "(binomial, error rate 1e-3 per β), and k* clusters at the end in most draws where the law gives k* ≥ 0.75. "
        "Phase table (full tier: lattice, n = 256, 48 draws per β; clusters = k* / mode k* first / law's P(k*)): "
        "β = 1.5: 47/47/1.00, 2: 48/47/1.00, 2.5: 48/41/0.88, 3: 46/24/0.45, 3.5: 25/44/0.87, 4: 44/48/0.96, "
        "5: 48/44/0.79, 5.5: 45/31/0.61, 6: 38/22/0.43, 6.5: 17/32/0.71, 7: 31/40/0.79, 8: 44/42/0.76, "
        "9: 40/22/0.59, 10: 30/22/0.41, 12: 30/29/0.65, 16: 24/30/0.56. It fails near the transitions (β = 3.17, "
        "6.21, 10.23, 15.24): just above one the clusters lag at k* − 1 (β = 3.5: 23 of 48 end with 2; 6.5: 31 "
        "with 3), just below the next they lead at k* + 1 (β = 6: 10 with 4; 10: 18 with 5), and at β ≥ 12 both "
        "neighbours share the draws. 1 draw in 768 is won by a mode the law excludes (mode 3 at β = 1.5: modes 1 "
        "and 2 force it at λ_1 + λ_2 > λ_2). The i.i.d. starts of the theorem are far from the limit at any n a "
        "CPU reaches (s = n^{−1/2}; the law needs n > 33000): at n = 1024 (16 draws) the count is k* in 7–16 of "
        "16 draws, at n = 512 in 3–12."),
    "MS-3": D(
        "arXiv 2410.23228, Fig. 4: 'Evolution of the initial condition given by the uniform measure perturbed by "
        "random white noise (σ = 0.01) with β = 5. We notice the emergence of 3-periodic solution as predicted by "
        "Theorem 4.3.'",
        "At β = 5 a perturbed uniform state develops a 3-periodic solution.",
        "Reproduced as the likely outcome, not a certain one: k*(5) = 3, but λ_4/λ_3 = 0.88, so mode 4 grows first "
        "with probability 0.16 at Fig. 4's noise (a 10⁴-point grid, σ = 0.01: s = 6.3e-4; linear theory P(3 first) = "
        "0.84) and 0.29 for the notebook's 2·10⁴ i.i.d. particles (P = 0.71). Particle runs (lattice starts, jitter 1e-3, "
        "n = 256, 48 draws): 3 clusters in 48 of 48, mode 3 first in 44; i.i.d. starts: 3 clusters in 11 of 16 at "
        "n = 1024, 6 of 16 at n = 512. Asserted: most draws at β = 5 end with 3 clusters."),
    "MS-4": D(
        "Geshkovski, Koubbi, Polyanskiy & Rigollet, 'Dynamic metastability in the self-attention model' (arXiv "
        "2410.06833 v1), section 2: the main theorem (dynamic metastability) and the definition of (β, ε)-separated "
        "starts; proved for (SA), (USA) printed with e^{β(⟨x_i,x_j⟩−1)}/n",
        "For (SA) from n tokens in k caps {⟨x, w_q⟩ ≥ 1−ε} with γ(β) = 1 − α − 8ε − log(2n²/ε)/β > 0 (α the largest "
        "cosine between distinct 2ε caps), every token stays in its 2ε cap up to T₂ ≥ (ε/n)e^{(1−α)β}, and the caps "
        "collapse by T₁: metastable times exponential in β.",
        "Holds, and its exponent is sharp: k equally spaced point clusters on the circle leave their equilibrium at "
        "the largest circulant eigenvalue μ ≈ β sin²(2π/k)e^{−β(1−cos(2π/k))} (closed form = Jacobian eigenvalue "
        "to 3e-10; particles to 7e-8), merge on the angle ODE's time (1e-8), and d log(1/μ)/dβ → 1 − cos(2π/k) "
        "(1.493 and 0.993 for k = 3, 4 between β = 100 and 200, against 1.5 and 1 less log 2/100). Caps of the theorem (k = 3, ε = 0.01, n = 12, β = 10, 11) "
        "stay inside past 3× the bound. But the hypothesis excludes the clusters that form from near-uniform data "
        "on the circle: they number k*(β) ≈ √(2β), so β(1 − cos(2π/k*)) → π² (≤ 10.63 for every β ≤ 400) and their "
        "escape rate stays ≥ 1.3e-3 (SA): no exponential growth; for n ≥ 64 tokens γ(β) < 0 at every β and ε."),
}

del D


def claim_records(result, claim_id: str) -> list:
    """The deciding records of ``result`` (a ``CheckResult``) that bear on ``claim_id``.

    A check covering several claims names the claim in a record's name, label or rationale
    (``"FNA-16 entropy"``); records that name none of the check's claims bear on all of them.
    """
    own = re.compile(re.escape(claim_id) + r"(?!\d)")
    others = [re.compile(re.escape(c) + r"(?!\d)") for c in result.claims if c != claim_id]
    out = []
    for r in result.records:
        if not r.deciding:
            continue
        text = f"{r.name} {r.label} {r.why}"
        if own.search(text) or not any(o.search(text) for o in others):
            out.append(r)
    return out


def details(claim_id: str) -> ClaimDetails:
    """Where claim ``claim_id`` is made, what it says and what the toolkit asserts (InputError if unknown)."""
    claim(claim_id)
    return DETAILS[claim_id]
