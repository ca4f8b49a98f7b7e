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

from spectral.validation import InputError

__all__ = ["Claim", "LEDGER", "CHECKS", "PAPERS", "READINGS", "claim", "available_checks", "load_check",
           "paper_reading", "outcome_category"]

PAPERS = {
    "FNA": "fractional-neural-attention",
    "DRIFT": "attention-drift-diffusion-metric",
    "PDE": "pde-guided-attention",
    "FMA": "fast-multipole-attention",
    "NEURAL": "neural-attention-mlp-scores",
}


@dataclasses.dataclass(frozen=True)
class Claim:
    """One ledger entry: ``verdict`` is the expected verdict recorded in CLAIMS.md."""

    id: str
    paper: str
    title: str
    priority: str
    verdict: str
    check: str | None = None
    test: str | None = None


LEDGER: tuple[Claim, ...] = (
    Claim('FNA-1', 'fractional-neural-attention', 'Normalising constant of the fractional Laplacian', 'P2', 'should hold', check='levy', test=None),
    Claim('FNA-2', 'fractional-neural-attention', 'Heat kernels, Lévy increments and self-similarity', 'P2', 'should hold', check='levy', test=None),
    Claim('FNA-3', 'fractional-neural-attention', 'Poisson kernel at α = 1 (eq. 12)', 'P2', 'suspicious / likely false as stated', check='levy', test=None),
    Claim('FNA-4', 'fractional-neural-attention', 'Power-law heat-kernel bounds, tail constant, heavy-tailed jumps (Fig. 1)', 'P1', 'should hold', check='levy', test=None),
    Claim('FNA-5', 'fractional-neural-attention', '"For α∈[2, d_M+1] the operator is local / reduces to the Laplacian"', 'P2', 'suspicious / likely false as stated', check='levy', test=None),
    Claim('FNA-6', 'fractional-neural-attention', 'Proposition 1: orthogonal-projection equivalence (+ multi-head slices, A.3)', 'P1', 'should hold', check=None, test='tests/test_identities_kernels.py'),
    Claim('FNA-7', 'fractional-neural-attention', 'Real, positive spectrum of Ã (ordering in eq. 19/20 and eq. 34)', 'P1', 'holds only under stated assumptions', check=None, test='tests/test_identities_kernels.py'),
    Claim('FNA-8', 'fractional-neural-attention', 'Markov-chain diagonalisation: left/right eigenvectors, bi-orthonormality, spectral decomposition', 'P1', 'should hold', check=None, test='tests/test_diffmaps.py'),
    Claim('FNA-9', 'fractional-neural-attention', 'Diffusion distance = Euclidean distance in full diffusion-map coordinates (eqs. 36–37)', 'P1', 'holds only under stated assumptions', check=None, test='tests/test_diffmaps.py'),
    Claim('FNA-10', 'fractional-neural-attention', 'Fig. 2a: Weyl-type scaling λ_j ∝ j^α of FNA on S¹', 'P1', 'holds only under stated assumptions', check='weyl', test=None),
    Claim('FNA-11', 'fractional-neural-attention', 'Weyl law depends on the manifold dimension', 'P2', 'holds only under stated assumptions', check='weyl', test=None),
    Claim('FNA-12', 'fractional-neural-attention', 'Theorem 2 / Lemma 1: limit operator, constant and sign', 'P1', 'holds only under stated assumptions', check='fractional_limit', test=None),
    Claim('FNA-13', 'fractional-neural-attention', 'Convergence rate of the FNA generator: O(κ^{2−α}), not O(ε)', 'P1', 'suspicious / likely false as stated', check='fna_rate', test=None),
    Claim('FNA-14', 'fractional-neural-attention', 'Density-normalisation claims (eq. 43; A.4 a-normalisation)', 'P3', 'should hold', check='density_normalisation', test=None),
    Claim('FNA-15', 'fractional-neural-attention', 'Fig. 2b/2c: inter-cluster edges for α<2, intra-cluster only for α=2', 'P2', 'holds only under stated assumptions', check='fig2bc', test=None),
    Claim('FNA-16', 'fractional-neural-attention', 'Bandwidth conventions make FNA rows nearly uniform (diagnostic for FNA-17/18)', 'P1', 'should hold', check='multiscale', test=None),
    Claim('FNA-17', 'fractional-neural-attention', 'Larger spectral gap for α<2 than for α=2 and DP (Fig. 5a mechanism)', 'P1', 'holds only under stated assumptions', check='multiscale', test=None),
    Claim('FNA-18', 'fractional-neural-attention', 'Shortest-path hop counts ≈ 1 for α<2, growing with n for α=2 and DP (Fig. 5c–e)', 'P1', 'holds only under stated assumptions', check='multiscale', test=None),
    Claim('FNA-19', 'fractional-neural-attention', 'Diffusion-map embeddings "in close proximity" for α=1.2, "apart" for α=2 (Fig. 5b)', 'P2', 'holds only under stated assumptions', check='multiscale', test=None),
    Claim('FNA-20', 'fractional-neural-attention', 'Heavy-tailed jump lengths of the FNA random walk (tail exponent α)', 'P2', 'should hold', check='levy_jumps', test=None),
    Claim('DRIFT-1', 'attention-drift-diffusion-metric', 'Dot-product softmax = Gaussian kernel on the sphere (Example 1)', 'P1', 'suspicious / likely false as stated', check='sphere_softmax', test=None),
    Claim('DRIFT-2', 'attention-drift-diffusion-metric', 'Similarity taxonomy (Defs. 1–10, Table 1, §2.2) reproduces the classical kernels', 'P3', 'should hold', check='similarity_taxonomy', test=None),
    Claim('DRIFT-3', 'attention-drift-diffusion-metric', 'Theorem 1 (Singer 2006): graph Laplacian convergence rate', 'P1', 'should hold', check='heat_rate', test=None),
    Claim('DRIFT-4', 'attention-drift-diffusion-metric', 'Theorem 2 (Coifman–Lafon, a=0): drift coefficient exactly 2', 'P1', 'should hold', check='drift_diffusion', test=None),
    Claim('DRIFT-5', 'attention-drift-diffusion-metric', 'Theorem 3: attention is a first-order (Euler) approximator of the drift–diffusion PDE; Fig. 2', 'P1', 'holds only under stated assumptions', check='euler_steps', test=None),
    Claim('DRIFT-6', 'attention-drift-diffusion-metric', 'Metric scaling: g₂ = g₁/m² ⇒ At_{g₂} = m² At_{g₁}', 'P2', 'should hold', check='metric_scaling', test=None),
    Claim('DRIFT-7', 'attention-drift-diffusion-metric', 'Theorem 4: conformal rewriting At_{g,p} = f Δ_{g̃}', 'P2', 'should hold', check='conformal', test=None),
    Claim('DRIFT-8', 'attention-drift-diffusion-metric', 'Heat-conduction form and invariant measure p²', 'P3', 'should hold', check='conformal', test=None),
    Claim('DRIFT-9', 'attention-drift-diffusion-metric', 'Stationary states = constants; number of near-1 eigenvalues = number of clusters; collapse without residuals', 'P1', 'should hold', check='clusters', test=None),
    Claim('DRIFT-10', 'attention-drift-diffusion-metric', 'Multi-head algebraic identity (§3.3)', 'P3', 'should hold', check=None, test='tests/test_identities_kernels.py'),
    Claim('DRIFT-11', 'attention-drift-diffusion-metric', 'Example 3: nearest point under a bilinear pseudo-metric on the sphere', 'P1', 'suspicious / likely false as stated', check='nearest_point', test=None),
    Claim('DRIFT-12', 'attention-drift-diffusion-metric', 'Theorems 5/6: zeroth order = value at the pseudo-metric nearest point(s)', 'P2', 'should hold', check='nearest_point', test=None),
    Claim('DRIFT-13', 'attention-drift-diffusion-metric', 'Appendix C Proposition 1: first-order coefficient (spurious 1/m₀)', 'P2', 'suspicious / likely false as stated', check='appendix_c', test=None),
    Claim('DRIFT-14', 'attention-drift-diffusion-metric', 'Metric-attention satisfies Assumption 2', 'P3', 'should hold', check='metric_attention', test=None),
    Claim('PDE-1', 'pde-guided-attention', 'Row-sum (stochasticity) and positivity preservation of the refinement step', 'P1', 'holds only under stated assumptions', check='pde_conservation', test=None),
    Claim('PDE-2', 'pde-guided-attention', 'CFL thresholds (eqs. 24 and 28) and "wave is more restrictive"', 'P1', 'see ledger', check='pde_stability', test=None),
    Claim('PDE-3', 'pde-guided-attention', 'Mode damping (1 − aμΔt)^L vs exp(−aμLΔt); "high frequencies decay, low preserved"', 'P1', 'holds only under stated assumptions', check='pde_modes', test=None),
    Claim('PDE-4', 'pde-guided-attention', 'Eq. (21): |c_k^{(n)}| ≤ exp(−αλ_kT)|c_k^{(0)}|', 'P1', 'suspicious / likely false as stated', check='pde_modes', test=None),
    Claim('PDE-5', 'pde-guided-attention', 'Global error ≤ CΔt(1+t) (Prop. D.4(3), eq. 17)', 'P2', 'should hold', check='pde_flow', test=None),
    Claim('PDE-6', 'pde-guided-attention', '"L layers with one step each ≡ one evolution of length LΔt" (Prop. D.4(2))', 'P2', 'holds only under stated assumptions', check='pde_flow', test=None),
    Claim('PDE-7', 'pde-guided-attention', 'Prop. D.5: hybrid error bound and "A_true is stationary"', 'P1', 'suspicious / likely false as stated', check='pde_flow', test=None),
    Claim('PDE-8', 'pde-guided-attention', '√t spread of information (Thm. 1 / D.1 item 1; E.1 "diffusion length √(2αt)")', 'P1', 'should hold', check=None, test=None),
    Claim('PDE-9', 'pde-guided-attention', '"Polynomial instead of exponential decay of distant interactions" (Thm. D.1 item 2)', 'P1', 'suspicious / likely false as stated', check=None, test=None),
    Claim('PDE-10', 'pde-guided-attention', 'Bounded gradients / contraction; "8 steps → NaN as predicted" (Thm. D.1 item 3; §5.4.1, C.5)', 'P2', 'see ledger', check='pde_stability', test=None),
    Claim('PDE-11', 'pde-guided-attention', 'Smoothness and consistency decay (Thm. D.2 items 1–2)', 'P2', 'holds only under stated assumptions', check=None, test=None),
    Claim('PDE-12', 'pde-guided-attention', 'Linear range growth R_h(t) ≥ R_h(0) + k_r t (Thm. D.2 item 3)', 'P2', 'suspicious / likely false as stated', check=None, test=None),
    Claim('PDE-13', 'pde-guided-attention', 'Thm. D.3: PL-type exponential convergence', 'P3', 'holds only under stated assumptions', check=None, test=None),
    Claim('PDE-14', 'pde-guided-attention', 'Parameter scaling α ∝ 1/N², Δt ∝ 1/N (App. E.1)', 'P3', 'suspicious / likely false as stated', check='pde_stability', test=None),
    Claim('PDE-15', 'pde-guided-attention', 'Causal leakage of the Laplacian step; implausible reported perplexities', 'P1', 'suspicious / likely false as stated', check=None, test=None),
    Claim('PDE-16', 'pde-guided-attention', 'Cost of the refinement: "O(N_t N) flops, near-linear overall" (D.0.5 Complexity)', 'P2', 'holds only under stated assumptions', check=None, test=None),
    Claim('FMA-1', 'fast-multipole-attention', 'Near/far-field sets form a disjoint cover (1-D)', 'P1', 'should hold', check='fma_structure', test=None),
    Claim('FMA-2', 'fast-multipole-attention', 'Far-field sets are tiled exactly by level-ℓ groups; ≤ 3 groups per level; windows nested', 'P1', 'should hold', check='fma_structure', test=None),
    Claim('FMA-3', 'fast-multipole-attention', 'Source counts: ≤ 3r + 3(L−1) per query (1-D), O(n log n) total; memory O(rn + np log(n/r))', 'P1', 'should hold', check='fma_structure', test=None),
    Claim('FMA-4', 'fast-multipole-attention', 'Query downsampling gives O(n) (FMA-linear)', 'P2', 'should hold', check='fma_counts', test=None),
    Claim('FMA-5', 'fast-multipole-attention', '2-D quadtree: disjoint cover, tiling, ≤ 9r² + 27(L−1) sources; non-divisible W', 'P1', 'should hold', check='fma_quadtree', test=None),
    Claim('FMA-6', 'fast-multipole-attention', '2-D stencil "isotropic … independent of the query\'s location"', 'P3', 'see ledger', check='fma_quadtree', test=None),
    Claim('FMA-7', 'fast-multipole-attention', 'Hierarchical-matrix structure of the effective attention matrix (far blocks have rank ≤ p)', 'P1', 'should hold', check='fma_hmatrix', test=None),
    Claim('FMA-8', 'fast-multipole-attention', 'Normalisation: per-level softmax ⇒ effective row sums ≠ 1', 'P1', 'suspicious / likely false as stated', check='fma_contract', test=None),
    Claim('FMA-9', 'fast-multipole-attention', 'Exactness limits', 'P2', 'should hold', check='fma_hmatrix', test=None),
    Claim('FMA-10', 'fast-multipole-attention', 'Causal compatibility: no far group straddles its query', 'P2', 'should hold', check='fma_structure', test=None),
    Claim('FMA-11', 'fast-multipole-attention', 'Premise that far-field interactions are low rank (FMM/H-matrix analogy)', 'P2', 'holds only under stated assumptions', check='fma_lowrank', test=None),
    Claim('FMA-12', 'fast-multipole-attention', 'Near-field share at the reported configurations', 'P2', 'should hold', check='fma_counts', test=None),
    Claim('NEURAL-1', 'neural-attention-mlp-scores', 'Dot-product score matrix has rank ≤ d (≤ d′ after down-projection); the softmax matrix does not', 'P1', 'should hold', check='neural_rank', test=None),
    Claim('NEURAL-2', 'neural-attention-mlp-scores', '"A dot product only lets same-index elements interact"', 'P1', 'suspicious / likely false as stated', check='neural_equivalence', test=None),
    Claim('NEURAL-3', 'neural-attention-mlp-scores', 'Neural Attention with shared weights is exactly additive (Bahdanau) attention', 'P1', 'suspicious / likely false as stated', check='neural_equivalence', test='tests/test_identities_kernels.py'),
    Claim('NEURAL-4', 'neural-attention-mlp-scores', 'Rank and expressivity of MLP scores depend on σ; softmax removes query-only terms', 'P1', 'should hold', check='neural_rank', test=None),
    Claim('NEURAL-5', 'neural-attention-mlp-scores', 'Fig. 1 geometry: paraboloid vs piecewise-linear surface', 'P3', 'should hold', check=None, test=None),
    Claim('NEURAL-6', 'neural-attention-mlp-scores', 'Per-pair parameters (eq. 8, App. B) vs reported parameter counts; table arithmetic', 'P2', 'suspicious / likely false as stated', check=None, test=None),
    Claim('NEURAL-7', 'neural-attention-mlp-scores', 'Tensor construction and cost (eq. 7, Alg. 1; §3.2 "identical O(n²) time complexity, much worse memory")', 'P2', 'should hold', check=None, test=None),
    Claim('NEURAL-8', 'neural-attention-mlp-scores', 'Expressivity proxy: non-bilinear score targets', 'P2', 'should hold', check=None, test=None),
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
    """The ledger entry ``claim_id``; ValueError for an unknown id."""
    try:
        return _BY_ID[claim_id]
    except KeyError:
        raise InputError(f"unknown claim id {claim_id!r}; ledger ids are e.g. FNA-10, DRIFT-4") from None


def available_checks() -> list[str]:
    """Names of the checks in :data:`CHECKS` whose module exists here, in ledger order."""
    return [name for name in CHECKS if importlib.util.find_spec(f"verify.{name}") is not None]


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
}


def _reading(verdict: str) -> str:
    return READINGS.get(verdict, verdict)


def paper_reading(claim_ids, *, printed: bool = False) -> str:
    """What the check's claims say about the paper, e.g. ``paper: false as stated -> corrected statement holds``.

    With several claims of different verdicts, each verdict lists its ids. ``printed=True`` (a run
    that asserts the printed statement) states the ledger's verdict on the printed statement only.
    """
    groups: dict[str, list[str]] = {}
    for cid in claim_ids:
        c = claim(cid)
        text = c.verdict if printed else _reading(c.verdict)
        if printed and c.verdict == "suspicious / likely false as stated":
            text = "false as stated"
        groups.setdefault(text, []).append(cid)
    if len(groups) == 1:
        return f"paper: {next(iter(groups))}"
    return "paper: " + "; ".join(f"{', '.join(ids)} {text}" for text, ids in groups.items())


def outcome_category(claim_id: str, passed: bool | None) -> str:
    """Category of one claim in a run's summary by paper.

    ``confirmed``, ``confirmed under stated assumptions``, ``refuted (corrected statement verified)``,
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
            "suspicious / likely false as stated": "refuted (corrected statement verified)"}.get(verdict, "confirmed")
