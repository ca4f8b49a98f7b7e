"""PDE-guided attention (PDE): the paper's claims that the toolkit checks, as data. One entry per claim: its id, title,
priority, the verdict expected for the statement as printed, the check that decides it, and its details (where the
paper makes it, what it says, what the toolkit asserts instead); see :mod:`verify.papers`.
"""

from verify.core.ledger import Claim, ClaimDetails

PREFIX = "PDE"
NAME = "pde-guided-attention"
TITLE = "PDE-guided attention"

CLAIMS = (
    Claim("PDE-1", NAME, "Row-sum (stochasticity) and positivity preservation of the refinement step", "P1",
          "holds only under stated assumptions", check="pde_conservation",
          details=ClaimDetails(
              where="§3.2, eq. (2); Algorithm 1, line 7; Appendix E, eqs. (22)–(30)",
              claim="The refinement A ← A + Δt α ∇_s² A keeps A a valid attention matrix: rows sum to 1 and entries "
                    "stay non-negative.",
              asserted="Key-axis diffusion conserves every row sum exactly iff 1^T ∇_s² = 0 (periodic or "
                       "conservative cell-centred zero-flux boundary); ghost-point reflection conserves only a "
                       "trapezoid-weighted sum and Dirichlet loses mass; query-axis diffusion keeps rows stochastic "
                       "for every boundary but Dirichlet. Entries stay non-negative iff r = αΔt/Δs² ≤ 1/2 (1/4 on "
                       "both axes). The wave keeps sums but not signs; central advection–diffusion keeps both iff "
                       "|β|Δt/(2Δs) ≤ r ≤ 1/2; the reaction term raises each row sum by βΔt(1 − Σ_j A_ij²) per step.")),
    Claim("PDE-2", NAME, 'CFL thresholds (eqs. 24 and 28) and "wave is more restrictive"', "P1",
          "partly false as stated", check="pde_stability",
          details=ClaimDetails(
              where="Appendix E.0.1, eq. (24); E.0.2, eq. (28)",
              claim="Diffusion is stable for Δt ≤ Δs²/(2α), the wave for Δt ≤ Δs/c, and the wave condition is the "
                    "more restrictive one.",
              asserted="Eq. (24) holds on one axis (r_max = 1/2 periodic, slightly above 1/2 for the cell-centred "
                       "zero-flux boundary, 1/4 when both axes diffuse); eq. (28) holds with strict inequality. Which "
                       "bound is tighter depends on 2α/(cΔs): at the paper's α = 0.1, c = 0.15, Δs = 1 the wave bound "
                       "(6.67) is looser than the diffusion bound (5).",
              split="the thresholds of eqs. (24) and (28) hold; 'the wave is more restrictive' is false at the "
                    "paper's parameters")),
    Claim("PDE-3", NAME, 'Mode damping (1 − aμΔt)^L vs exp(−aμLΔt); "high frequencies decay, low preserved"', "P1",
          "holds only under stated assumptions", check="pde_modes",
          details=ClaimDetails(
              where="Appendix D.0.4, Proposition D.4(1) and its sketch",
              claim="Each mode is damped by (1 − αk²Δt)^L ≈ exp(−αk²LΔt): high frequencies decay and low ones are "
                    "kept, under αk²Δt < 1.",
              asserted="The factor is g_k = 1 − αμ_kΔt with μ_k = (4/Δs²) sin²(πk/T), not k²; exactly, g_k^L / "
                       "e^{−αμ_kLΔt} = exp(−L Σ_{m≥2} x^m/m) with x = αμ_kΔt. Damping is monotone in frequency only "
                       "for r ≤ 1/4; for 1/4 < r ≤ 1/2 the highest mode is barely damped and alternates in sign.")),
    Claim("PDE-4", NAME, "Eq. (21): |c_k^{(n)}| ≤ exp(−αλ_kT)|c_k^{(0)}|", "P1", "suspicious / likely false as stated",
          check="pde_modes",
          details=ClaimDetails(
              where="Appendix D.0.5, sketch step 2, eqs. (20)–(21)",
              claim="From c_k^{(n+1)} = (1 − αλ_kΔt) c_k^{(n)} it follows that |c_k^{(n)}| ≤ exp(−αλ_k T) |c_k^{(0)}| "
                    "with T = nΔt.",
              asserted="|1 − x| ≤ e^{−x} holds only for x ≤ x* = 1 + W(1/e) ≈ 1.27846, so the bound holds for every "
                       "mode only when r ≤ x*/4 ≈ 0.3196 (periodic); the steps eq. (24) allows (r up to 1/2, x up "
                       "to 2) break it for the modes with x in (x*, 2].")),
    Claim("PDE-5", NAME, "Global error ≤ CΔt(1+t) (Prop. D.4(3), eq. 17)", "P2", "should hold", check="pde_flow",
          details=ClaimDetails(
              where="Appendix D.0.4, item 3 and sketch (iii), eq. (17)",
              claim="After L explicit steps the error against the exact evolution is at most CΔt(1 + t), t = LΔt.",
              asserted="It holds against the exact semi-discrete flow exp(tα∇_s²)A(0) (first order in Δt); for "
                       "diffusion the error is even bounded in t, for the wave it grows like t. Against the "
                       "continuum PDE a spatial error O(Δs²) remains that Δt → 0 does not remove.")),
    Claim("PDE-6", NAME, '"L layers with one step each ≡ one evolution of length LΔt" (Prop. D.4(2))', "P2",
          "holds only under stated assumptions", check="pde_flow",
          details=ClaimDetails(
              where="Appendix D.0.4, item 2",
              claim="L layers with one step each are one evolution of length LΔt.",
              asserted="True (to O(Δt)) only when the same attention matrix is carried from layer to layer; "
                       "Algorithm 1 recomputes a fresh softmax in every layer, which leaves an O(1) discrepancy.")),
    Claim("PDE-7", NAME, 'Prop. D.5: hybrid error bound and "A_true is stationary"', "P1",
          "suspicious / likely false as stated", check="pde_flow",
          details=ClaimDetails(
              where="Appendix D.0.5, eq. (19) and sketch step 1",
              claim="|A_final − A_true| ≤ ε₀ + δ(T) with δ(T) = O(e^{−αλ_min T} + Δt), because A_true is stationary "
                    "for the diffusion.",
              asserted="A_true (a softmax matrix) is not stationary, and |A_final − A_true| grows with T toward the "
                       "distance of A_true from its row means (smoothing bias). What holds: |A_final − E_T A_true| "
                       "≤ ε₀ for r ≤ 1/2 (the evolution E_T does not expand), hence |A_final − A_true| ≤ ε₀ + |E_T "
                       "A_true − A_true|.")),
    Claim("PDE-8", NAME, '√t spread of information (Thm. 1 / D.1 item 1; E.1 "diffusion length √(2αt)")', "P1",
          "should hold", check="pde_spread",
          details=ClaimDetails(
              where="§4.0.1; Theorem D.1 item 1; D.2(iii); Appendix E.1",
              claim="Information spreads like √t (diffusion length √(2αt)).",
              asserted="Away from the boundaries one explicit step convolves a row with [r, 1 − 2r, r], so the row "
                       "variance grows by exactly 2αΔt per step, the spread is √(Var_0 + 2αt), and the support "
                       "grows by one token per side per step. The text's 'propagation speed Ω(t^{1/2})' is wrong: a "
                       "distance ∝ t^{1/2} means a speed ∝ t^{−1/2}.")),
    Claim("PDE-9", NAME, '"Polynomial instead of exponential decay of distant interactions" (Thm. D.1 item 2)', "P1",
          "suspicious / likely false as stated", check="pde_spread",
          details=ClaimDetails(
              where="abstract; §1.3; Theorem D.1 item 2; §5.2",
              claim="PDE refinement makes long-range interactions decay polynomially instead of exponentially.",
              asserted="In distance, a token's influence is exactly zero beyond N_t tokens after N_t steps and "
                       "Gaussian in the continuum limit, faster than any exponential; only the peak height decays "
                       "polynomially in pseudo-time, like (4παt)^{−1/2}. Softmax attention without a positional "
                       "bias has no decay in distance at all.")),
    Claim("PDE-10", NAME,
          'Bounded gradients / contraction; "8 steps → NaN as predicted" (Thm. D.1 item 3; §5.4.1, C.5)', "P2",
          "partly false as stated", check="pde_stability",
          details=ClaimDetails(
              where="Theorem D.1 item 3; §5.4.1; Appendix C.5",
              claim="Gradients stay bounded independently of depth and length, and the NaN at 8 steps 'aligns with "
                    "the theoretical predictions'.",
              asserted="For key-axis diffusion with r ≤ 1/2 (periodic or conservative zero-flux), (I + r∇_s²)^{N_t} "
                       "is symmetric and doubly stochastic with norm exactly 1 for every N_t and T, so the refinement "
                       "cannot amplify gradients. With the learned α ∈ [0.02, 0.15] and Δt ≤ 3, r < 1/2, so linear "
                       "theory predicts no instability at 8 steps.",
              split="the diffusion step is a contraction; the explanation of the NaN at 8 steps does not follow")),
    Claim("PDE-11", NAME, "Smoothness and consistency decay (Thm. D.2 items 1–2)", "P2",
          "holds only under stated assumptions", check="pde_smoothing",
          details=ClaimDetails(
              where="§4.0.2; Theorem D.2 items 1–2, eqs. (12)–(13)",
              claim="Smoothness S(t) = |∇_s² A|² ≤ S(0) e^{−k_s t} + C_s/k_s and consistency C(t) = Var(A) ≤ C(0) "
                    "e^{−k_c t}, for diffusion, wave and reaction–diffusion.",
              asserted="True for pure (and advection-) diffusion, where both decay at least like (1 − "
                       "αλ_minΔt)^{2n}; false for the wave (energy is conserved and S, C oscillate) and for "
                       "reaction–diffusion (C can grow at first). With an arbitrary C_s > 0 the first bound says "
                       "nothing.")),
    Claim("PDE-12", NAME, "Linear range growth R_h(t) ≥ R_h(0) + k_r t (Thm. D.2 item 3)", "P2",
          "suspicious / likely false as stated", check="pde_spread",
          details=ClaimDetails(
              where="Theorem D.2 item 3, eq. (14)",
              claim="The interaction range grows at least linearly: R(t) ≥ R(0) + k_r t.",
              asserted="R is not defined. The diffusive spread (standard deviation of a row) grows like √t, so no "
                       "linear lower bound holds for it; only the support width (R_0 + 2n after n steps) and a wave "
                       "front (ct) grow linearly.")),
    Claim("PDE-13", NAME, "Thm. D.3: PL-type exponential convergence", "P3", "holds only under stated assumptions",
          check="pde_convergence",
          details=ClaimDetails(
              where="Appendix D.0.3, eqs. (15)–(16)",
              claim="Under a Polyak–Łojasiewicz condition with constant γ, bounded gradient variance and η ≤ 1/μ, "
                    "|θ_t − θ*|² and E[L(θ_t) − L*] contract like (1 − ηγ)^t, and PDE smoothing leaves the rate "
                    "unchanged.",
              asserted="It holds for deterministic gradient descent (the iterate bound only with θ* the projection "
                       "of θ_0 onto the solution set); stochastic gradients add a noise floor ≈ ησ²/(2γ). The PDE "
                       "plays no role in the theorem.")),
    Claim("PDE-14", NAME, "Parameter scaling α ∝ 1/N², Δt ∝ 1/N (App. E.1)", "P3",
          "suspicious / likely false as stated", check="pde_stability",
          details=ClaimDetails(
              where="Appendix E.1",
              claim="Stable propagation needs α ∝ 1/N² and Δt ∝ 1/N.",
              asserted="The only stability parameter is r = αΔt/Δs² ≤ 1/2. With positions in [0, 1] (Δs = 1/N) and "
                       "α = c/N² the bound on Δt does not depend on N; in token units (Δs = 1) it grows like N². "
                       "Neither needs Δt ∝ 1/N.")),
    Claim("PDE-15", NAME, "Causal leakage of the Laplacian step; implausible reported perplexities", "P1",
          "suspicious / likely false as stated", check="pde_causal",
          details=ClaimDetails(
              where="§5.2–5.4; Tables 2–5 and 13; Appendix C",
              claim="PDE-refined attention reaches WikiText-103 perplexities of 1.02–3.7 in causal language modelling.",
              asserted="A centred Laplacian step on a causal (lower-triangular) A puts weight on future tokens "
                       "along either axis (A_{i,i+1} = r A_ii after one key-axis step), up to N_t positions ahead "
                       "after N_t steps; unless the mask is applied again after every step the model can read the "
                       "next token, which would explain perplexities near 1.")),
    Claim("PDE-16", NAME, 'Cost of the refinement: "O(N_t N) flops, near-linear overall" (D.0.5 Complexity)', "P2",
          "holds only under stated assumptions", check="pde_cost",
          details=ClaimDetails(
              where="Appendix D.0.5, 'Complexity'",
              claim="The refinement costs O(N_t N) flops and is near-linear overall.",
              asserted="Near-linear only for a sparse or factored A(0): a band of width w widens by 2 per step "
                       "(about T(w + 2N_t) non-zeros), and a kernel factorisation lets the Laplacian act on one "
                       "factor; on the dense softmax matrix of the paper's main experiments every step costs O(T²).")),
    Claim("PDE-17", NAME, "The one-sided causal stencil of the public code is unstable for every α > 0", "P2",
          "suspicious / likely false as stated", check="pde_causal",
          details=ClaimDetails(
              where="the authors' public implementation (causal mode; not described in the paper)",
              claim="The causal refinement x ← x + α(x_i − 2x_{i−1} + x_{i−2}) of the public code is a usable "
                    "diffusion step.",
              asserted="Its amplification factor is 1 + α(1 − e^{−iθ})², which reaches 1 + 4α at the highest "
                       "frequency, so it is unstable for every α > 0 (growth like (1 + 4α)^n); a centred step with "
                       "r ≤ 1/2 followed by re-masking stays bounded.")),
    Claim("PDE-18", NAME, "Query-axis diffusion of A followed by AV equals diffusing the outputs", "P3", "should hold",
          check="pde_cost",
          details=ClaimDetails(
              where="the authors' public implementation (diffusion of hidden states)",
              claim="Diffusing A along the query axis and then applying it to V is the same as diffusing the "
                    "outputs AV along the sequence, (I + r∇_s²)^{N_t} A V = (I + r∇_s²)^{N_t} (AV); along the key "
                    "axis the two differ.")),
)
