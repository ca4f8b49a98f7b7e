"""Attention as drift-diffusion and metric attention (DRIFT): the paper's claims that the toolkit checks, as data. One
entry per claim: its id, title, priority, the verdict expected for the statement as printed, the check that decides
it, and its details (where the paper makes it, what it says, what the toolkit asserts instead); see
:mod:`verify.papers`.
"""

from verify.core.ledger import Claim, ClaimDetails

PREFIX = "DRIFT"
NAME = "attention-drift-diffusion-metric"
TITLE = "Attention as drift-diffusion and metric attention"

CLAIMS = (
    Claim("DRIFT-1", NAME, "Dot-product softmax = Gaussian kernel on the sphere (Example 1)", "P1",
          "suspicious / likely false as stated", check="sphere_softmax",
          details=ClaimDetails(
              where="§3.1, Example 1; Assumption 2",
              claim="For unit vectors (Q = K = I), −x·y = −2 + |x − y|² (and −x^T Q^T Q y = −2 + |x − y|_Q² on the "
                    "ellipsoid), so dot-product softmax attention is a Gaussian kernel on the sphere.",
              asserted="−x·y = −1 + |x − y|²/2. Hence softmax_j(q_i·k_j/τ) is exactly the row-normalised exp(−|q_i "
                       "− k_j|²/(2τ)) whenever all keys have the same norm (queries arbitrary). The factor 2 "
                       "changes the time scale of Theorem 3: in the paper's S_ε convention the kernel is exp(−|x − "
                       "y|²/(4ε)), an Euler step of length ε, not ε/2.")),
    Claim("DRIFT-2", NAME, "Similarity taxonomy (Defs. 1–10, Table 1, §2.2) reproduces the classical kernels", "P3",
          "partly false as stated", check="similarity_taxonomy",
          details=ClaimDetails(
              where="Definitions 1–10; Table 1; §2.2.2–2.2.3",
              claim="Compositions of the similarity operators reproduce classical kernels: diffusion maps, SNE, "
                    "t-SNE, UMAP's fuzzy union, k-nearest neighbours, Markov clustering and fuzzy c-means (which "
                    "tends to k-means).",
              asserted="Every composition matches its classical formula to machine precision except the fuzzy c-means "
                       "centre update: the paper weights points by the memberships u where standard fuzzy c-means "
                       "uses u^m; the two reach different fixed points for m ≠ 1 and agree only in the k-means limit "
                       "m → 1⁺.",
              split="Every composition holds; the fuzzy c-means centre update as printed does not.")),
    Claim("DRIFT-3", NAME, "Theorem 1 (Singer 2006): graph Laplacian convergence rate", "P1", "should hold",
          check="heat_rate",
          details=ClaimDetails(
              where="§2.3, Theorem 1 (Singer 2006)",
              claim="For N i.i.d. uniform samples of a compact d-manifold, W_ij = exp(−|x_i − x_j|²/(2ε)) and L = "
                    "D^{−1}W − I: (1/ε) Σ_j L_ij f(x_j) = ½ Δf(x_i) + O(ε) + O(N^{−1/2} ε^{−(1/2+d/4)}), so the "
                    "best ε scales like N^{−1/(3+d/2)}.")),
    Claim("DRIFT-4", NAME, "Theorem 2 (Coifman–Lafon, a=0): drift coefficient exactly 2", "P1",
          "partly false as stated", check="drift_diffusion",
          details=ClaimDetails(
              where="Theorem 2; proof in Appendix B",
              claim="For sampling density p, (1/ε) Σ_j L_ij f(x_j) → ½ (Δf + 2⟨∇ log p, ∇f⟩): the drift coefficient "
                    "is exactly 2 (curvature terms cancel in the kernel ratio). The Appendix B proof of Theorem 3 "
                    "loses the 2; the theorem's statement with it is correct.",
              asserted="Theorem 2's limit ½ (Δf + 2(1 − a)⟨∇ log p, ∇f⟩) for rownorm(D^{−a} W D^{−a}); the drift "
                       "printed in the Appendix-B proof, ½ (Δf + (1 − a)⟨∇ log p, ∇f⟩), is half of it (fitted drift "
                       "0.998 of the theorem's on the S¹ grid, N = 10000, ε = 1e-3, where the proof's predicts 0.5).",
              split="Theorem 2 (drift coefficient 2) holds as printed; the drift of the Appendix-B proof "
                    "(coefficient 1) does not")),
    Claim("DRIFT-5", NAME,
          "Theorem 3: attention is a first-order (Euler) approximator of the drift–diffusion PDE; Fig. 2", "P1",
          "holds only under stated assumptions", check="euler_steps",
          details=ClaimDetails(
              where="§3.2, Theorem 3; §3.4",
              claim="One attention layer is one Euler step of length ε/2 of ∂_t H = At H with At = Δ_g + 2⟨∇ log p, "
                    "∇·⟩: H_new − H_old = (ε/2) At H_old + O(ε²), so L layers approximate the PDE at time Lε/2.",
              asserted="First-order convergence in ε at fixed time holds under Assumptions 1–3 (a metric score, a "
                       "smooth positive density); real dot-product attention needs the time rescaling of DRIFT-1.")),
    Claim("DRIFT-6", NAME, "Metric scaling: g₂ = g₁/m² ⇒ At_{g₂} = m² At_{g₁}", "P2", "should hold",
          check="metric_scaling",
          details=ClaimDetails(
              where="§3.2, after Theorem 3",
              claim="Scaling the metric, g₂ = g₁/m², scales the whole operator: At_{g₂} = m² At_{g₁}, drift "
                    "included, so shrinking distances speeds up propagation.")),
    Claim("DRIFT-7", NAME, "Theorem 4: conformal rewriting At_{g,p} = f Δ_{g̃}", "P2", "partly false as stated",
          check="conformal",
          details=ClaimDetails(
              where="Theorem 4 and its proof (Appendix B)",
              claim="In dimension n ≠ 2, Δ_g + 2⟨∇ log p, ∇·⟩ = f Δ_g̃ with g̃ = f g and f = p^{4/(n−2)} (printed "
                    "'p^{4/n−2}'; the proof fixes the brackets). The proof says n ≥ 3, but n = 1 works too (f = "
                    "p^{−4}); n = 2 is impossible because the two-dimensional Laplacian is conformally covariant.",
              asserted="The rewriting with f = p^{4/(n−2)}, exact (symbolic) for n = 1, 3, 4. The exponent as "
                       "printed, read literally, p^{4/n − 2}, differs from 4/(n − 2) for every n and fails: it leaves "
                       "remainders 1.71, 2.49 and 4.41 at a test point for n = 1, 3, 4, and on S¹ the spectrum of f "
                       "Δ_g̃ is off by 17 %.",
              split="the conformal rewriting At = f Δ_g̃ holds (with the proof's exponent 4/(n − 2)); the formula "
                    "for f as printed, p^{4/n−2}, does not")),
    Claim("DRIFT-8", NAME, "Heat-conduction form and invariant measure p²", "P3", "should hold", check="conformal",
          details=ClaimDetails(
              where="Theorem 4 and 'Dynamic of heat diffusion'",
              claim="At = p^{−2} div_g(p² ∇·) is a heat-conduction operator with invariant measure p² dvol: it is "
                    "self-adjoint in L²(p²), and the attention chain S = D^{−1}W is reversible with stationary "
                    "density ∝ p².")),
    Claim("DRIFT-9", NAME,
          ("Stationary states = constants; number of near-1 eigenvalues = number of clusters; collapse without "
           "residuals"), "P1", "should hold", check="clusters",
          details=ClaimDetails(
              where="§3.2, 'Stationary function (Clustering tendency)'; the FNA paper's introduction (collapse "
                    "without residuals)",
              claim="The stationary states of At are the constants on a connected manifold, so attention-only "
                    "dynamics converge to a constant; the number of near-zero generator eigenvalues reflects the "
                    "number of clusters; without residual connections pure self-attention collapses.",
              asserted="K clusters well separated relative to ε give K eigenvalues near 1 followed by a large "
                       "eigengap (asserted on the gap ratio: a count at a fixed threshold depends on the "
                       "separation); H ← SH first becomes constant on each cluster, and the distance to the "
                       "constant state decays like |λ_2|^L. The heavy-tailed FNA kernel connects the clusters "
                       "instead.")),
    Claim("DRIFT-10", NAME, "Multi-head algebraic identity (§3.3)", "P3", "should hold",
          test="tests/spectral/test_kernel_identities.py",
          details=ClaimDetails(
              where="§3.3",
              claim="Multi-head attention is a sum over heads: [H_1V_1, …, H_kV_k][W_1, …, W_k]^T = Σ_i S_i H_old "
                    "W̃_i with W̃_i = V_i W_i^T.")),
    Claim("DRIFT-11", NAME, "Example 3: nearest point under a bilinear pseudo-metric on the sphere", "P1",
          "suspicious / likely false as stated", check="nearest_point",
          details=ClaimDetails(
              where="§3.4, Example 3; Appendix C (the Lagrangian)",
              claim="If −Q^T K = P^T diag(a) P with P ∈ SO(n) and f(x, y) = Σ_i a_i x′_i y′_i (x′ = Px), the nearest "
                    "point argmin over unit y of f(x, y) is P^T (a ⊙ x′)/|a ⊙ x′|.",
              asserted="The minimiser is −P^T (a ⊙ x′)/|a ⊙ x′| (in general M^T x/|M^T x| for M = Q^T K); the "
                       "printed formula is the maximiser: for Q = K = I it returns −x instead of x.")),
    Claim("DRIFT-12", NAME, "Theorems 5/6: zeroth order = value at the pseudo-metric nearest point(s)", "P2",
          "should hold", check="nearest_point",
          details=ClaimDetails(
              where="§3.4, Theorem 5; Appendix C, Theorem 6",
              claim="As ε → 0 one attention step returns the value at the pseudo-metric nearest point, H_new(x) → "
                    "H_old(y′), and the p-weighted average of H over the nearest points when they form a "
                    "submanifold (error O(ε), given a non-degenerate Hessian in the normal directions).")),
    Claim("DRIFT-13", NAME, "Appendix C Proposition 1: first-order coefficient (spurious 1/m₀)", "P2",
          "suspicious / likely false as stated", check="appendix_c",
          details=ClaimDetails(
              where="Appendix C, Lemma 2 and Proposition 1",
              claim="The first-order term of the kernel average is (ε/m₀)(⟨V_f + 2∇ log p · c^{−1}, ∇g⟩ + Δ_{c^{−1}} "
                    "g) at the nearest point, with m₀ = ∫ e^{−v^T C v/4} dv.",
              asserted="Only the drift from the cubic asymmetry of f carries the 1/m₀ normalisation: with f = ρ + ½ "
                       "v^T C v + (cubic d) + … and kernel e^{−f/2ε} the coefficient is tr(C^{−1} ∇²g) + 2⟨C^{−1} ∇ "
                       "log p, ∇g⟩ − ⟨C^{−1}(d : C^{−1}), ∇g⟩. The printed formula also divides the Laplacian and "
                       "density-drift terms by m₀ (Lemma 2 also has the sign typo e^{+ρ/2ε}).")),
    Claim("DRIFT-14", NAME, "Metric-attention satisfies Assumption 2", "P3", "should hold", check="metric_attention",
          details=ClaimDetails(
              where="§4.1, Algorithm 1",
              claim="Metric attention with f_θ = |f̃_θ(x) − f̃_θ(y)|² satisfies Assumption 2, so it is a continuous "
                    "drift–diffusion process under milder conditions than dot-product attention.",
              asserted="d_θ is a pseudo-metric, and a metric when f̃ is injective (a residual map x + g(x) with "
                       "Lip(g) < 1); every token is then its own nearest point, unlike dot-product attention with a "
                       "generic Q^T K (DRIFT-11); for a linear map P the limit has diffusion tensor (P^T P)^{−1}.")),
)
