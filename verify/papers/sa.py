"""Self-attention as interacting particles (clusters, Geshkovski et al.) (SA): the paper's claims that the toolkit
checks, as data. One entry per claim: its id, title, priority, the verdict expected for the statement as printed, the
check that decides it, and its details (where the paper makes it, what it says, what the toolkit asserts instead);
see :mod:`verify.papers`.
"""

from verify.core.ledger import Claim, ClaimDetails

PREFIX = "SA"
NAME = "self-attention-particles"
TITLE = "Self-attention as interacting particles (clusters, Geshkovski et al.)"

CLAIMS = (
    Claim("SA-1", NAME, "Theorem 6.1: for d ≥ 3 and β ≥ 0, (SA) and (USA) reach one cluster from almost every start",
          "P1", "should hold", check="sa_clustering",
          details=ClaimDetails(
              where="'A mathematical perspective on Transformers' (arXiv 2312.10794 v5), section 6, Theorem 6.1 "
                    "(citing Markdahl et al. 2018 and Criscitiello et al. 2024); the gradient-flow structure of "
                    "sections 3.3–3.4",
              claim="For n ≥ 2, d ≥ 3 and every β ≥ 0, Lebesgue-almost every initial sequence on S^{d−1} converges to "
                    "a single point x* under (SA) ẋ_i = P⊥_{x_i}(Σ_j e^{β⟨x_i,x_j⟩} x_j / Z_i) and under (USA) (1/n "
                    "in place of 1/Z_i).",
              asserted="Asserted as printed from uniform random starts (n = 32, d = 3 and 8, β = 0, 1, 2, both "
                       "normalisations): every start is one cluster at t_max, the interaction energy E_β never "
                       "decreases, and an antipodal pair — in the exceptional null set — is an equilibrium "
                       "(velocity 0). The time to the last merge grows like e^{β(1 − ⟨u, v⟩)} (SA-3), which bounds "
                       "the β a run can afford.")),
    Claim("SA-2", NAME,
          ("Lemma 6.4 and Theorem 6.3: tokens in an open hemisphere cluster exponentially fast; n ≤ d uniform tokens "
           "are in one"), "P1", "should hold", check="sa_hemisphere",
          details=ClaimDetails(
              where="arXiv 2312.10794 v5, section 6.1: Lemma 6.4 ('cone collapse', with its two-step proof) and "
                    "Theorem 6.3 (d ≥ n); the remark on Wendel's theorem",
              claim="If every x_i(0) lies in an open hemisphere {⟨x, w⟩ > 0}, the solution of (SA) or (USA) converges "
                    "to one point, ‖x_i(t) − x*‖ ≤ C e^{−λt}; the proof keeps min_i ⟨x_i(t), w⟩ non-decreasing and "
                    "gives λ ≥ 1/(4 n e^{2β}) for (SA). For d ≥ n uniform tokens lie in an open hemisphere almost "
                    "surely (Wendel: probability 2^{−(n−1)} Σ_{k<d} C(n−1, k)), hence collapse exponentially.",
              asserted="Asserted with the sharp rate: the diameter decays at exactly the linearised rate, 1 for "
                       "(SA) whatever β and n, e^β for (USA) (relative error ≤ 1e-5), far above the lemma's 1/(4 n "
                       "e^{2β}); min_i ⟨x_i(t), w⟩ is non-decreasing; the fraction of uniform configurations in an "
                       "open hemisphere matches Wendel's probability (Gordan's alternative by non-negative least "
                       "squares), 1 for d ≥ n.")),
    Claim("SA-3", NAME, "Metastability: multi-cluster plateaus whose length grows with β (Problem 1, Fig. 3)", "P1",
          "holds only under stated assumptions", check="sa_metastability",
          details=ClaimDetails(
              where="arXiv 2312.10794 v5: the metastability posed as Problem 1 and the (d, β) phase diagram of Fig. "
                    "3; proved for (SA)-type dynamics by Geshkovski, Koubbi, Polyanskiy & Rigollet (arXiv 2410.06833)",
              claim="From random starts the tokens quickly form several clusters and stay near that configuration for "
                    "a long time before merging; the plateaus last longer as β grows.",
              asserted="Two point clusters of k and m tokens at ⟨u, v⟩ = ρ stay two points and ρ solves a scalar "
                       "ODE; the merge time from ρ₀ grows like e^{β(1−ρ₀)}/β for (SA) but like e^{−βρ₀}/β for "
                       "(USA), which shrinks with β for clusters at an acute angle (it grows only in units of "
                       "(USA)'s clustering time e^{−β}, or for obtuse clusters). The check asserts the (SA) "
                       "statement: two caps merge on the two-cluster ODE's time, d log T/dβ matches the reference's "
                       "(→ 1 − ρ₀), and from random starts on the circle the mean cluster count at a fixed time "
                       "grows with β (1 at β = 1, ≥ 2 at β = 16, the clusters tight).")),
    Claim("SA-4", NAME,
          ("V = I_d, QᵀK ≻ 0: rescaled tokens converge to the boundary of a convex polytope, generically its vertices "
           "(clustering paper, Theorem 3.1 and section 8)"), "P2", "should hold", check="sa_polytope",
          details=ClaimDetails(
              where="'The emergence of clusters in self-attention dynamics' (NeurIPS 2023, arXiv 2305.05465 v6), "
                    "Theorem 3.1 and its full form in section 8",
              claim="With V = I_d and QᵀK positive definite, the rescaled tokens z_i(t) = e^{−t} x_i(t) of ẋ_i = "
                    "Σ_j P_ij V x_j converge; their convex hull converges to a polytope K and every z_i converges "
                    "to a point of S = {x ∈ K : ‖Ax‖² = max_j ⟨Ax, Av_j⟩} (v_j the vertices of K, AᵀA = QᵀK), with "
                    "vertices(K) ⊆ S ⊆ ∂K ∪ {0}; generically the limits are vertices, far fewer than n.")),
    Claim("SA-5", NAME,
          "d = 1: the self-attention matrix converges to a low-rank Boolean matrix (clustering paper, Theorem 2.1)",
          "P2", "should hold", check="sa_boolean",
          details=ClaimDetails(
              where="arXiv 2305.05465 v6, Theorem 2.1 (proved in section 7) and the sentence after it",
              claim="For d = 1, V > 0 and QK > 0 and pairwise distinct tokens, the self-attention matrix P(t) "
                    "converges to a stochastic matrix all of whose rows but at most one are standard basis rows e_a "
                    "or e_b; for almost every start it is Boolean of rank 1 or 2, with a doubly exponential rate.",
              asserted="Asserted as printed, with a and b identified: the rows tend to e_argmin or e_argmax of the "
                       "initial tokens (the order of the tokens is kept), and −log of the distance to the limit "
                       "grows exponentially (slope V).")),
    Claim("SA-6", NAME, "Theorem 6.8: equiangular tokens follow one ODE for ρ; 1 − ρ ~ e^{−2t} (SA), e^{−2e^β t} (USA)",
          "P1", "should hold", check="sa_equiangular",
          details=ClaimDetails(
              where="arXiv 2312.10794 v5, section 6.2, Theorem 6.8 and its equations for γ_β (SA) and (USA)",
              claim="Tokens with all pairwise inner products equal stay equiangular, and the inner product solves ρ' "
                    "= 2e^{βρ}(1−ρ)(1+(n−1)ρ)/(e^β + (n−1)e^{βρ}) for (SA) and ρ' = (2/n)e^{βρ}(1−ρ)(1+(n−1)ρ) for "
                    "(USA).",
              asserted="Asserted as printed from any equiangular start (ρ₀ = 0 is the theorem's), and derived again "
                       "from the particle equations (the Gram matrix solves a closed ODE; sympy in the tests): near "
                       "a cluster 1 − ρ ~ e^{−2t} for (SA) whatever β and n and e^{−2e^β t} for (USA). The "
                       "toolkit's simulator matches the ODE to 1e-8 relative over t ∈ [0, 5] (β = 0, 1, 4; n = 3, "
                       "8, 32) and the closed Gram ODE from random starts; its projected integrators have orders 1, "
                       "4 and 5 (95 % intervals from verify.rates).")),
    Claim("SA-7", NAME,
          "Theorem 6.9 and §6.3: for d ≫ n random tokens follow the equiangular curve γ_β; the phase-transition curve",
          "P2", "holds only under stated assumptions", check="sa_high_dimension",
          details=ClaimDetails(
              where="arXiv 2312.10794 v5, section 6.2, Theorem 6.9, and section 6.3 (the phase-transition curve)",
              claim="For d ≥ d*(n, β), with probability at least 1 − 2n²d^{−1/64} over uniform starts, |⟨x_i(t), "
                    "x_j(t)⟩ − γ_β(t)| ≤ min(2c(β)^{nt}√(log d/d), Ce^{−λt}) with c(β) = e^{10 max(1, β)}; the curve "
                    "{(t, β): γ_β(t) = 1 − δ} separates clustered from not-yet-clustered configurations.",
              asserted="The printed constants are vacuous wherever one can compute (2n²d^{−1/64} ≥ 1 unless d ≥ "
                       "(2n²)^{64}; c(β)^{nt} = e^{80t} for n = 8, β ≤ 1). The check asserts the mechanism instead: "
                       "the error against γ_β over t ∈ [0, 4] scales like d^{−1/2} (order from verify.rates with "
                       "its bootstrap interval), and at the largest d the simulated curve (min pairwise inner "
                       "product reaching 1 − δ) matches γ_β's.")),
)
