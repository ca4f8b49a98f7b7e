"""Gaussian tokens under the Transformer PDE (Castin, Ablin, Carrillo & Peyré 2025) (GA): the paper's claims that the
toolkit checks, as data. One entry per claim: its id, title, priority, the verdict expected for the statement as
printed, the check that decides it, and its details (where the paper makes it, what it says, what the toolkit asserts
instead); see :mod:`verify.papers`.
"""

from verify.core.ledger import Claim, ClaimDetails

PREFIX = "GA"
NAME = "transformer-pde-gaussian"
TITLE = "Gaussian tokens under the Transformer PDE (Castin, Ablin, Carrillo & Peyré 2025)"

#: where the GA claims are made: the paper's body is not stored where this toolkit was written, so the
#: equations are cited from the abstract and the authors' public code for the paper's figures
_GA_WHERE = ("Castin, Ablin, Carrillo & Peyré, 'A unified perspective on the dynamics of deep transformers' (arXiv "
             "2501.18322): abstract ('for different types of attention, the Transformer PDE preserves the space of "
             "Gaussian measures') and the Gaussian section, whose covariance ODEs the authors' code for its figures "
             "states (github.com/vcastin/2025-transformers-PDEs, utils.py).")

CLAIMS = (
    Claim("GA-1", NAME,
          ("Softmax attention maps Gaussians to Gaussians: α′ = V(I + βΣBᵀ)α, Σ′ = β(VΣBᵀΣ + ΣBΣVᵀ); n tokens follow "
           "at n^{-1/2}"), "P1", "should hold", check="ga_moments",
          details=ClaimDetails(
              where=_GA_WHERE + " Softmax self-attention: the covariance right-hand side rhs_trad (V Σ A Σ + "
                                "transpose, A = KᵀQ/√d)",
              claim="For softmax self-attention ẋ = Σ_j softmax_j(β⟨Qx, Kx_j⟩) V x_j in ℝ^d, the Transformer PDE maps "
                    "N(α₀, Σ₀) to Gaussians N(α(t), Σ(t)) with α′ = V(I + βΣBᵀ)α and Σ′ = β(VΣBᵀΣ + ΣBΣVᵀ), B = QᵀK "
                    "(the softmax weights tilt N(α, Σ) into N(α + βΣBᵀx, Σ), so the velocity V(α + βΣBᵀx) is affine).",
              asserted="Asserted through the token system, which the PDE describes as n → ∞: n i.i.d. tokens of "
                       "N(α₀, Σ₀) moved by spectral.attention_flow (RK4) to t = 1 have an empirical mean and "
                       "covariance converging to the ODE's (solve_ivp) at order −1/2 in n, and their law stays "
                       "Gaussian (the whitened empirical characteristic function tends to e^{−|w|²/2} at the same "
                       "order, while saturated sigmoid attention, not affine, stays farther from Gaussian); "
                       "non-symmetric Q, K, V in d = 2. The time step's share of the error is bounded, and the "
                       "tilted-Gaussian velocity agrees with Gauss–Hermite quadrature of its definition. The rate "
                       "needs the coupling κ < 1 (GA-6), which the cases keep. Masked (causal) softmax attention, "
                       "not asserted: with i.i.d. tokens whose positions are independent of their values every "
                       "position's conditional law evolves alike, so the Gaussian solution and its ODE are the "
                       "unmasked ones; the masked token system (spectral.attention_flow, causal=True) approaches "
                       "them with larger errors (the first tokens see few others: a log n / n bias). The fitted "
                       "orders, their intervals and the tolerances are in the check's result (python -m "
                       "verify.ga_moments, --full for the heavy tier, also with K = −Q and V SPD) and its "
                       "calibration table.")),
    Claim("GA-2", NAME, "L2 attention maps Gaussians to Gaussians (closed moment ODEs); n tokens follow at n^{-1/2}",
          "P2", "should hold", check="ga_moments",
          details=ClaimDetails(
              where=_GA_WHERE + " L2 self-attention: rhs_L2",
              claim="For L2 attention, weights e^{−β|Qx − Ky|²}, Gaussians stay Gaussian with M = 2βVGΣKᵀQ, G = (I + "
                    "2βΣKᵀK)^{−1}: α′ = Mα + VGα, Σ′ = MΣ + ΣMᵀ.",
              asserted="Derived here (the factor e^{−β|Ky|²} is a Gaussian of precision 2βKᵀK) and asserted as "
                       "GA-1. The authors' code scales the cross term by 1/√d but not KᵀK; with β = 1/√d in both "
                       "(one inverse temperature for the score) the two agree only for d = 1.")),
    Claim("GA-3", NAME,
          "Multi-head attention maps Gaussians to Gaussians (the heads' moment ODEs add); n tokens follow at n^{-1/2}",
          "P2", "should hold", check="ga_moments",
          details=ClaimDetails(
              where=_GA_WHERE + " Multi-head self-attention: rhs_multihead (heads split the rows of Q, K, V; W = I)",
              claim="With H heads ẋ = Σ_h W_hᵀ attention_h(x), Gaussians stay Gaussian and the heads' right-hand "
                    "sides add: Σ′ = Σ_h β(C_hΣB_hᵀΣ + ΣB_hΣC_hᵀ), C_h = W_hᵀV_h.",
              asserted="Asserted as GA-1 with two rank-one heads (Q_h, K_h the rows of Q, K).")),
    Claim("GA-4", NAME,
          ("Sinkhorn attention maps Gaussians to Gaussians: α′ = Vα, Σ′ = VCᵀ + CVᵀ (closed-form entropic coupling); n "
           "tokens follow at n^{-1/2}"), "P1", "should hold", check="ga_moments",
          details=ClaimDetails(
              where=_GA_WHERE + " Sinkhorn self-attention (ε = 1): rhs_sinkhorn",
              claim="For Sinkhorn (doubly stochastic) attention the velocity is V E_π[y | x] with π the entropic "
                    "coupling of μ with itself for the cost −⟨Qx, Ky⟩; Gaussians stay Gaussian, α′ = Vα and Σ′ = VCᵀ "
                    "+ CVᵀ with C the cross-covariance of π.",
              asserted="C in closed form: with B̃ = Σ^{1/2}βBΣ^{1/2} = U diag(s) Wᵀ, C = Σ^{1/2} U diag(2s/(1 + √(1 "
                       "+ 4s²))) Wᵀ Σ^{1/2} (the precision of a Gaussian pair with standard marginals); it agrees "
                       "with the authors' closed form (V A^{−T} Σ^{−1} C_S Σ + transpose) on random Σ, Q, K, V, and "
                       "needs no invertible A. The token system (Sinkhorn scaling to convergence at every "
                       "evaluation) is asserted as GA-1; in the heavy tier also with L2 scores, which give the same "
                       "tokens as dot products at twice the inverse temperature (the scaling absorbs |Qx|² and "
                       "|Ky|²: B′ = 2βQᵀK). |C̃| < 1 bounds |Σ′| ≤ 2|V||Σ|: no finite-time blow-up (GA-5).")),
    Claim("GA-5", NAME,
          ("Covariance dynamics: closed form for V = λI, finite-time blow-up (softmax, multi-head) vs none (L2, "
           "Sinkhorn), collapse onto ker Q for K = −Q (rank ≤ (d+1)/2)"), "P1", "should hold", check="ga_covariance",
          details=ClaimDetails(
              where=_GA_WHERE + " The figures of the covariance dynamics in d = 2 (2d_plots.py: convergence to zero "
                                "for K = −Q, V SPD; to a line for rank-one Q = −K, V = I; blow-up or divergence for "
                                "QᵀK + KᵀQ ≻ 0, V = I) and the rank histograms (histograms.py: K = −Q, Q with ⌊d/2⌋ "
                                "rows, ranks of the limits up to (d + 1)/2)",
              claim="The covariance can collapse to zero or onto a subspace (clustering), or blow up in finite time "
                    "with growing anisotropy, depending on Q, K, V and the attention variant; the limits found from K "
                    "= −Q have rank at most (d + 1)/2.",
              asserted="Asserted exactly against the ODE: for V = λI, Σ(t)^{−1} = Σ₀^{−1} − 2λβtB_s, blow-up at T* "
                       "= 1/(2λβμ_max) with Σ/trΣ → the rank-one matrix of the top eigenvector, for one and two "
                       "heads; L2 (K invertible) and Sinkhorn attention with the same Q, K stay finite past T* "
                       "within their growth bounds; K = −Q, V = I gives Σ → Σ₀ − Σ₀Qᵀ(QΣ₀Qᵀ)^{−1}QΣ₀ (a line for d "
                       "= 2). For K = −Q and V SPD every stationary covariance has QΣ = 0 (the Lyapunov equation "
                       "V(ΣGΣ) + (ΣGΣ)V = 0 forces ΣGΣ = 0), so the rank is at most d − rank Q; on random draws in "
                       "d = 3, 4, 5 the limit has rank exactly (d + 1)/2, tr Σ never increases, and Sinkhorn with K "
                       "= −Q invertible collapses to zero. The tolerances are in the check's calibration table "
                       "(python -m verify.ga_covariance).")),
    Claim("GA-6", NAME,
          ("The Gaussian solution is the n → ∞ limit of the token system at n^{-1/2} only while κ = β‖Σ^{1/2}BΣ^{1/2}‖ "
           "< 1 (softmax)"), "P1", "holds only under stated assumptions", check="ga_conditions",
          details=ClaimDetails(
              where="Not stated in the paper: its mean-field limit is proved for compactly supported data, and the "
                    "Gaussian analysis describes n tokens of Gaussian data by the Gaussian solution of the PDE",
              claim="n i.i.d. Gaussian tokens moved by softmax attention follow the Gaussian solution as n → ∞, at "
                    "the usual rate n^{-1/2}.",
              asserted="Holds only while κ = β‖Σ^{1/2}BΣ^{1/2}‖₂ < 1 along the flow. The finite-n softmax is a "
                       "self-normalised importance sampler of the tilted Gaussian; the leading part of a moment "
                       "error, (1/n)Σ_j h₁(y_j), has h₁ ~ exp(κ²v²/(2(1 + κ²))), a finite variance iff κ < 1 and a "
                       "tail index (1 + κ²)/κ² beyond, so the error decays like n^{−1/(1+κ²)}: order −1/2 up to κ = "
                       "1, then −1/(1 + κ²). Asserted on the moment right-hand sides of n Gaussian tokens (d = 1): "
                       "order −1/2 at a κ below 1 and the predicted −1/(1 + κ²) at a κ above it (the n^{-1/2} "
                       "asymptote is reached slowly as κ nears 1); the heavy tier shows the crossover over a range "
                       "of κ. For V = λI, κ(t) → ∞ as t → T*, so the rate degrades before the blow-up, and at T* "
                       "the particles' covariance is finite (every velocity is a convex combination of the V x_j) "
                       "while the limit's is not (not asserted). The fitted orders and their intervals are in the "
                       "check's result (python -m verify.ga_conditions).")),
)
