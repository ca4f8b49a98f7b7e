"""Fractional Neural Attention (FNA): the paper's claims that the toolkit checks, as data. One entry per claim: its id,
title, priority, the verdict expected for the statement as printed, the check that decides it, and its details (where
the paper makes it, what it says, what the toolkit asserts instead); see :mod:`verify.papers`.
"""

from verify.core.ledger import Claim, ClaimDetails

PREFIX = "FNA"
NAME = "fractional-neural-attention"
TITLE = "Fractional Neural Attention"

CLAIMS = (
    Claim("FNA-1", NAME, "Normalising constant of the fractional Laplacian", "P2", "should hold", check="levy",
          details=ClaimDetails(
              where="'Fractional diffusion', eq. (7)",
              claim="The fractional Laplacian has the singular-integral form (−Δ)^{α/2}u(x) = c_{d,α} p.v.∫ (u(x) − "
                    "u(y)) / |x − y|^{d+α} dy with c_{d,α} = α 2^{α−1} Γ((d+α)/2) / (π^{d/2} Γ(1 − α/2)); "
                    "equivalently its Fourier symbol is |ξ|^α.")),
    Claim("FNA-2", NAME, "Heat kernels, Lévy increments and self-similarity", "P2", "should hold", check="levy",
          details=ClaimDetails(
              where="eqs. (6), (11), (26); the 'Lévy process' items 1–5",
              claim="The heat kernel of ∂_t ρ + (−Δ)^{α/2} ρ = 0 has Fourier transform e^{−t|ξ|^α}: a symmetric "
                    "α-stable law of scale t^{1/α}. Increments over a time s are stable of scale s^{1/α}, p_s * p_t "
                    "= p_{s+t}, and p_t(x) = t^{−d/α} p_1(x t^{−1/α}); at α = 2 it is the Gaussian of variance 2t "
                    "per coordinate.")),
    Claim("FNA-3", NAME, "Poisson kernel at α = 1 (eq. 12)", "P2", "suspicious / likely false as stated", check="levy",
          details=ClaimDetails(
              where="eq. (12)",
              claim="At α = 1 the heat kernel is the Poisson kernel, printed as c̃_d t^{−d} (1 + |x − "
                    "y|/t²)^{−(d+1)/2} with c̃_d = Γ((d+1)/2) / π^{(d+1)/2}.",
              asserted="The Poisson kernel is c̃_d t^{−d} (1 + |x − y|²/t²)^{−(d+1)/2}: it has mass 1, Fourier "
                       "transform e^{−t|ξ|} and the semigroup property. The printed kernel (|x − y|/t² for |x − "
                       "y|²/t²) decays like |x|^{−(d+1)/2} and has infinite mass.")),
    Claim("FNA-4", NAME, "Power-law heat-kernel bounds, tail constant, heavy-tailed jumps (Fig. 1)", "P1",
          "should hold", check="levy",
          details=ClaimDetails(
              where="eqs. (8), (10); the 'Lévy process' paragraph; Fig. 1",
              claim="For α < 2 the heat kernel lies between multiples of t^{−d/α} Φ(C r / t^{1/α}) with Φ(z) = (1 + "
                    "z)^{−(d+α)}, so jumps are heavy-tailed with tail exponent α and moments of order ≥ α are "
                    "infinite.",
              asserted="Precisely, p_1(x) ~ c|x|^{−(d+α)} with c = Γ(1+α) sin(πα/2)/π in one dimension, so P(|X| > "
                       "x) decays like x^{−α}; at α = 2 the tails are Gaussian.")),
    Claim("FNA-5", NAME, '"For α∈[2, d_M+1] the operator is local / reduces to the Laplacian"', "P2",
          "suspicious / likely false as stated", check="levy",
          details=ClaimDetails(
              where="after eq. (7); the range α ∈ (0, d_M + 1] of eq. (6); item 1 of the dichotomy, eq. (9)",
              claim="For α ∈ [2, d_M + 1] the operator reduces to the local Laplacian and its heat kernel decays like "
                    "exp(−z^{α/(α−1)}).",
              asserted="e^{−|ξ|^α} is a positive density only for α ≤ 2: for α > 2 the kernel takes negative values "
                       "(no Markov process) and (−Δ)^{α/2} is non-local unless α is an even integer. On R^d only α "
                       "= 2 is local and Markovian; the exp(−z^{β/(β−1)}) decay belongs to walks of dimension β ≥ 2 "
                       "on fractal-like spaces.")),
    Claim("FNA-6", NAME, "Proposition 1: orthogonal-projection equivalence (+ multi-head slices, A.3)", "P1",
          "should hold", test="tests/spectral/test_kernel_identities.py",
          details=ClaimDetails(
              where="Proposition 1 and its proof; A.1 (sphere); A.3 (multi-head)",
              claim="For orthogonal W_Q, W_K and one head, |W_Q x_i − W_K x_j| = |x_i − W̃ x_j| and x_i·W_Q^T W_K "
                    "x_j = x_i·W̃ x_j with W̃ = W_Q^T W_K orthogonal, so scores, attention and outputs are "
                    "unchanged when W_Q becomes I and W_K becomes W̃ (I when W_Q = W_K). A head slice of an "
                    "orthogonal matrix has orthonormal rows but is not an isometry: it can only shrink distances.")),
    Claim("FNA-7", NAME, "Real, positive spectrum of Ã (ordering in eq. 19/20 and eq. 34)", "P1",
          "holds only under stated assumptions", test="tests/spectral/test_kernel_identities.py",
          details=ClaimDetails(
              where="text before eq. (20); Methods, eqs. (33)–(34)",
              claim="Under Assumptions 1 and 2 (Q = K) the eigenvalues of Ã are real with 1 = λ_0 ≥ λ_1 ≥ … > 0.",
              asserted="Ã is similar to the symmetric D^{−1/2} C̃ D^{−1/2}, so its spectrum is real with top "
                       "eigenvalue 1; it is positive when the score profile is positive definite (Euclidean "
                       "distance with either FNA profile, or the geodesic power law on the sphere). The geodesic "
                       "Gaussian of A.1's α = 2 variant is not positive definite on the sphere and gives negative "
                       "eigenvalues; with Q ≠ K, or for dot-product attention, the spectrum is complex in general "
                       "and the gap must be read as 1 − |λ_2|.")),
    Claim("FNA-8", NAME,
          "Markov-chain diagonalisation: left/right eigenvectors, bi-orthonormality, spectral decomposition", "P1",
          "should hold", test="tests/spectral/test_diffmaps.py",
          details=ClaimDetails(
              where="eqs. (20), (33)–(35)",
              claim="With D^{−1/2} C̃ D^{−1/2} = V Λ V^T, the right eigenvectors of Ã are ψ_j = D^{−1/2} v_j, the "
                    "left ones φ_j = D^{1/2} v_j, ⟨φ_i, ψ_j⟩ = δ_ij, and Ã^τ = Σ_k λ_k^τ ψ_k φ_k^T (eq. 20 read "
                    "with entry (i, j) = Σ_k λ_k^τ ψ_k(x_i) φ_k(x_j); it needs Q = K).")),
    Claim("FNA-9", NAME, "Diffusion distance = Euclidean distance in full diffusion-map coordinates (eqs. 36–37)", "P1",
          "holds only under stated assumptions", test="tests/spectral/test_diffmaps.py",
          details=ClaimDetails(
              where="eqs. (19), (36), (37)",
              claim="The diffusion distance D_τ²(x_i, x_j) = Σ_y (p_τ(y|x_i) − p_τ(y|x_j))² / φ_0(y) equals |Ψ_τ(x_i) "
                    "− Ψ_τ(x_j)|² with Ψ_τ = (λ_1^τ ψ_1, …, λ_{n−1}^τ ψ_{n−1}).",
              asserted="The identity holds when φ_0 is the stationary probability D/ΣD and the ψ_k are orthonormal "
                       "in that weight. With the literal normalisation of eq. (35) the two sides differ by the same "
                       "factor √(Σ_ij C̃_ij) for every pair (a uniform rescaling).")),
    Claim("FNA-10", NAME, "Fig. 2a: Weyl-type scaling λ_j ∝ j^α of FNA on S¹", "P1",
          "holds only under stated assumptions", check="weyl",
          details=ClaimDetails(
              where="'Operator limit of FNA' (Fig. 2a); Methods, 'Markov chain diagonalization'; eq. (22)",
              claim="On n = 500 equispaced points of S¹ with κ = √ε, ε = 1e-4 and t = ε^{α/2}, the generator "
                    "eigenvalues λ_j = −log(η_j)/t grow like j^α for α = 1.2 and like j² for α = 2; the mismatch "
                    "grows with j and shrinks with larger n and smaller ε.",
              asserted="With the intrinsic exponent d_M = 1, −log(η)/t has the shape of the continuum spectrum of "
                       "the same kernel at the same scale, whose best-fit exponent is α; as κ → 0 the slope rises "
                       "monotonically, slowly (FNA-13), toward the slope of the circle's κ → 0 spectrum (1.230 over "
                       "k = 2..10 at α = 1.2: its low modes differ from k^α, FNA-12), so |slope − α| itself is not "
                       "monotone. With d_M = 2 (the main text's d_H) the tail is too light and the spectrum grows "
                       "like j²; a log-log slope read against j at the paper's setting is not α.")),
    Claim("FNA-11", NAME, "Weyl law depends on the manifold dimension", "P2", "holds only under stated assumptions",
          check="weyl", setting={"manifold": "sphere"},
          details=ClaimDetails(
              where="the Weyl-law paragraph next to Fig. 2a",
              claim="Eigenvalues grow like j² for the Laplacian and like j^α for the fractional operator (no "
                    "dimension is stated).",
              asserted="On a compact d_M-dimensional manifold λ_j ~ C j^{2/d_M} (Laplace–Beltrami) and λ_j ~ C′ "
                       "j^{α/d_M} (fractional): j^α and j² are the one-dimensional forms; on S² the FNA spectrum "
                       "grows like j^{α/2}.")),
    Claim("FNA-12", NAME, "Theorem 2 / Lemma 1: limit operator, constant and sign", "P1",
          "holds only under stated assumptions", check="fractional_limit",
          details=ClaimDetails(
              where="Theorem 2, eq. (18); Lemma 1, eq. (27); proof, eqs. (28)–(32)",
              claim="Under Assumptions 1 and 2 the generator (T_t f − f)/t converges to [(−Δ)^{α/2}(fρ) − f "
                    "(−Δ)^{α/2}ρ]/ρ, which is (−Δ)^{α/2} f for a uniform density.",
              asserted="With Φ(z) = (1 + z)^{−(d+α)} and t = κ^α the limit is −c [(−Δ)^{α/2}(fρ) − f (−Δ)^{α/2}ρ]/ρ "
                       "with c = 1/(Z_{d,α} c_{d,α}) and Z_{d,α} = ∫ (1 + |x|)^{−(d+α)} dx: a negative sign and an "
                       "explicit constant, which eq. (18) drops and eq. (27) keeps. On the circle with the "
                       "non-periodised geodesic kernel the limit is the geodesically truncated operator, whose low "
                       "modes differ from |k|^α by O(k^{−α}) relative.")),
    Claim("FNA-13", NAME, "Convergence rate of the FNA generator: O(κ^{2−α}), not O(ε)", "P1",
          "suspicious / likely false as stated", check="fna_rate",
          details=ClaimDetails(
              where="proof of Lemma 1, eq. (30)",
              claim="The remainder is O(ε²), i.e. the generator converges at rate O(t).",
              asserted="Only the tail of Φ matches the stable kernel, so the relative generator bias is "
                       "O((κ|k|)^{2−α}) = O(t^{2/α−1}) for 1 < α < 2 (O(κ|k|) for α < 1), very slow near α = 2. An "
                       "O(t) rate holds only for the exact stable heat kernel, which the check runs as a control.")),
    Claim("FNA-14", NAME, "Density-normalisation claims (eq. 43; A.4 a-normalisation)", "P3", "partly false as stated",
          check="density_normalisation",
          details=ClaimDetails(
              where="A.4, eqs. (40)–(48), eq. (43)",
              claim="(1/n) Σ_i A^{(a)}_ij tends to ρ(x) + O(ε), and for α = 2 and a = 1 the limit operator no longer "
                    "depends on ρ.",
              asserted="Eq. (43) does not hold as printed: for A^(a) = rownorm(D^{−a} C D^{−a}) the column sums (1/n) "
                       "Σ_i A_ij tend to 1 for every a, not to ρ. What holds: A^(a) is reversible with stationary law "
                       "∝ ρ^{1−2a} (ρ for a = 0, uniform for a = 1/2), and a = 1 removes the density drift of the "
                       "limit operator (DRIFT-4's check with a = 1).",
              split="The a = 1 statement (no density drift in the limit) holds; eq. (43) about column sums does not.")),
    Claim("FNA-15", NAME, "Fig. 2b/2c: inter-cluster edges for α<2, intra-cluster only for α=2", "P2",
          "holds only under stated assumptions", check="fig2bc",
          details=ClaimDetails(
              where="text after the Fig. 2 caption; Fig. 2b/2c",
              claim="On 18 points of a 3-component Gaussian mixture (means (3, 0), (−3, 0), (0, √3), covariance I/4), "
                    "attention edges above 3.12e-5 join clusters for α = 1.2 and stay inside clusters for α = 2.",
              asserted="κ is not stated. With κ = 1, α = 1.2 joins essentially every pair of clusters and α = 2 "
                       "still has inter-cluster edges in every draw (about 30 on average); α = 2 has none only for "
                       "κ ≲ 0.5 or with the equilateral layout (0, 3√3), which was probably meant.")),
    Claim("FNA-16", NAME, "Bandwidth conventions make FNA rows nearly uniform (diagnostic for FNA-17/18)", "P1",
          "should hold", check="multiscale",
          details=ClaimDetails(
              where="Methods, 'Text classification' (κ = √d_H/(2^{1/d_H} − 1)); A.1 (κ = π/(π^{1/d_M} − 1))",
              claim="These bandwidths make the score halve at distance √d_H (Φ(√d_H/κ) = 2^{−(d_H+α)/d_H}) and drop "
                    "to π^{−1−α/d_M} at antipodes on the sphere.",
              asserted="The identity holds, and it has a consequence the paper does not draw: κ ≈ d_H^{3/2}/ln 2 "
                       "puts typical token distances deep inside the kernel's core, so attention rows are almost "
                       "uniform (normalised row entropy ≥ 0.99) and the power-law window κ ≪ r ≪ diameter is empty.")),
    Claim("FNA-17", NAME, "Larger spectral gap for α<2 than for α=2 and DP (Fig. 5a mechanism)", "P1",
          "holds only under stated assumptions", check="multiscale",
          details=ClaimDetails(
              where="'Mechanistic explanation' (Fig. 5a); abstract and discussion",
              claim="The spectral gap of the attention matrix is larger for fractional attention (α < 2) than for "
                    "local attention (α = 2), and larger for both than for dot-product attention.",
              asserted="At the paper's bandwidths the order FNA > LA > DP holds (gap 1 − |λ_2|); with one equal κ = "
                       "√d for both α it reverses, and with matched half-maximum widths FNA stays ahead by a small "
                       "margin: the order comes from the bandwidth choice, not from the power-law tail.")),
    Claim("FNA-18", NAME, "Shortest-path hop counts ≈ 1 for α<2, growing with n for α=2 and DP (Fig. 5c–e)", "P1",
          "holds only under stated assumptions", check="multiscale",
          details=ClaimDetails(
              where="'Mechanistic explanation' (Figs. 5c–5e); Fig. 1 caption",
              claim="On the attention graph with edge weights 1/Ã_ij, weighted shortest paths take about one hop on "
                    "average for α < 2, whatever n, and more hops, growing with n, for α = 2 and dot-product "
                    "attention.",
              asserted="True at the paper's bandwidths, where the FNA kernel is nearly flat (FNA-16) and the direct "
                       "edge always wins; with equal κ = √d FNA paths take several hops.")),
    Claim("FNA-19", NAME, 'Diffusion-map embeddings "in close proximity" for α=1.2, "apart" for α=2 (Fig. 5b)', "P2",
          "holds only under stated assumptions", check="multiscale",
          details=ClaimDetails(
              where="eq. (19); Fig. 5b; Methods, 'Diffusion maps for FNA'",
              claim="Two-dimensional diffusion-map embeddings (κ = √d_H/(2^{1/d_H} − 1)·√ε, ε = 0.1) lie close "
                    "together for α = 1.2 and spread apart for α = 2.",
              asserted="Under the paper's bandwidths the spread of the α = 1.2 embedding is smaller than that of α "
                       "= 2 and follows the ratio of the leading eigenvalues: a restatement of the spectral-gap "
                       "effect with the same bandwidth caveat (the α = 2 bandwidth and τ are not stated; κ = √(d_H "
                       "ε) and τ = 1 are assumed).")),
    Claim("FNA-20", NAME, "Heavy-tailed jump lengths of the FNA random walk (tail exponent α)", "P2", "should hold",
          check="levy_jumps",
          details=ClaimDetails(
              where="abstract; Fig. 1 ('Lévy dynamics', 'large jumps'); reading of Theorem 2",
              claim="The random walk driven by fractional attention makes heavy-tailed jumps.",
              asserted="For tokens with a smooth density and the intrinsic exponent, the one-step jump length has "
                       "P(R > r) ∝ r^{−α} for κ ≪ r ≪ diameter, and Gaussian tails for α = 2. At the paper's "
                       "bandwidths in high dimension that window does not exist (FNA-16).")),
)
