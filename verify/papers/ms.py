"""Metastable clusters from near-uniform tokens (Bruno, Pasqualotto & Agazzi 2025; Geshkovski, Koubbi, Polyanskiy &
Rigollet 2024) (MS): the paper's claims that the toolkit checks, as data. One entry per claim: its id, title,
priority, the verdict expected for the statement as printed, the check that decides it, and its details (where the
paper makes it, what it says, what the toolkit asserts instead); see :mod:`verify.papers`.
"""

from verify.core.ledger import Claim, ClaimDetails

PREFIX = "MS"
NAME = "metastable-clusters"
TITLE = ("Metastable clusters from near-uniform tokens (Bruno, Pasqualotto & Agazzi 2025; Geshkovski, Koubbi, "
         "Polyanskiy & Rigollet 2024)")

CLAIMS = (
    Claim("MS-1", NAME,
          ("Linear phase: mode k of the uniform state grows at k²I_k(β)/β (rescaled Gegenbauer coefficient; Theorem "
           "4.3)"), "P1", "should hold", check="ms_growth",
          details=ClaimDetails(
              where="Bruno, Pasqualotto & Agazzi, 'Emergence of meta-stable clustering in mean-field transformer "
                    "models' (ICLR 2025, arXiv 2410.23228): abstract, section 4 (the linear phase, Theorem 4.3); the "
                    "authors' public notebook (github.com/gbruno16/transformers-metastability) for the dynamics and "
                    "the plotted γ_k",
              claim="Linearised at the uniform measure, the mean-field equation of tokens on the circle moved by "
                    "(USA) θ̇_i = −(1/n)Σ_j e^{β cos(θ_i−θ_j)} sin(θ_i−θ_j) (the paper's normalisation: 1/n, no "
                    "softmax) grows the Fourier mode k at a rate given by a rescaled Gegenbauer (on S¹: Chebyshev) "
                    "coefficient of e^{βt}; the notebook plots γ_k = k²I_k(β)/(πβ).",
              asserted="Derived here (manifolds.references.metastability): λ_k = k²I_k(β)/β for (USA), λ_k/I_0(β) "
                       "for (SA); on S^{d−1} λ_l = l(l+d−2)κ_l/β with κ_l = Γ(d/2)(2/β)^{d/2−1}I_{l+d/2−1}(β) the "
                       "Funk–Hecke coefficient. Asserted: closed form = quadrature of the linearised velocity (≤ "
                       "1e-9; 4e-14 measured), the particle system's own rates from the perturbed lattice 2πj/n "
                       "(every mode 1 … k*+3, β = 2, 5, 9, both normalisations: 5e-8 relative), and the mean-field "
                       "limit: from i.i.d. starts the deviation of c_k(t) from e^{λ_k t}c_k(0) over a quarter "
                       "e-fold falls like n^{−1/2} (order −0.53, n = 32 … 256, 64 starts; full tier −0.502 [−0.529, "
                       "−0.475], n = 256 … 4096, 256 starts). The dynamics the notebook integrates grows at π γ_k, "
                       "not γ_k (its argmax is unaffected).")),
    Claim("MS-2", NAME,
          ("The number of metastable clusters is the index k*(β) maximising the rescaled Gegenbauer coefficient "
           "(abstract, Theorem 4.3)"), "P1", "holds only under stated assumptions", check="ms_phase",
          details=ClaimDetails(
              where="arXiv 2410.23228: abstract ('the structure characterizing the meta-stable manifold is explicitly "
                    "identified … by the index maximizing a certain rescaling of Gegenbauer polynomials'), Theorem "
                    "4.3 and the clustering phase (k_max equally spaced clusters)",
              claim="In the limit of many tokens, from i.i.d. uniform tokens the configuration approaches a "
                    "meta-stable state of k*(β) clusters, k* = argmax_k k²I_k(β) on the circle (k* ≈ √(2β); it "
                    "changes at β = 1.04, 3.17, 6.21, 10.23, 15.24, 21.24, 28.24, …).",
              asserted="True in the limit of vanishing noise and away from the transitions; at finite noise the "
                       "first mode to grow is random, with the law of the linear theory (Gaussian amplitudes s_k "
                       "growing at λ_k; the first to reach 0.3 wins), and P(k*) → 1 only as log(1/s)(1 − "
                       "λ_{k'}/λ_{k*}) → ∞. Asserted from lattice starts (jitter 1e-3, log(a/s) ≥ 4): every winner "
                       "inside the law's support, k* winning as often as the law allows (binomial, error rate 1e-3 "
                       "per β), and k* clusters at the end in most draws where the law gives k* ≥ 0.75. Phase table "
                       "(full tier: lattice, n = 256, 48 draws per β; clusters = k* / mode k* first / law's P(k*)): "
                       "β = 1.5: 47/47/1.00, 2: 48/47/1.00, 2.5: 48/41/0.88, 3: 46/24/0.45, 3.5: 25/44/0.87, 4: "
                       "44/48/0.96, 5: 48/44/0.79, 5.5: 45/31/0.61, 6: 38/22/0.43, 6.5: 17/32/0.71, 7: 31/40/0.79, "
                       "8: 44/42/0.76, 9: 40/22/0.59, 10: 30/22/0.41, 12: 30/29/0.65, 16: 24/30/0.56. It fails near "
                       "the transitions (β = 3.17, 6.21, 10.23, 15.24): just above one the clusters lag at k* − 1 "
                       "(β = 3.5: 23 of 48 end with 2; 6.5: 31 with 3), just below the next they lead at k* + 1 (β "
                       "= 6: 10 with 4; 10: 18 with 5), and at β ≥ 12 both neighbours share the draws. 1 draw in "
                       "768 is won by a mode the law excludes (mode 3 at β = 1.5: modes 1 and 2 force it at λ_1 + "
                       "λ_2 > λ_2). The i.i.d. starts of the theorem are far from the limit at any n a CPU reaches "
                       "(s = n^{−1/2}; the law needs n > 33000): at n = 1024 (16 draws) the count is k* in 7–16 of "
                       "16 draws, at n = 512 in 3–12.")),
    Claim("MS-3", NAME, "Fig. 4: from a perturbed uniform state at β = 5 a 3-periodic solution emerges", "P2",
          "holds only under stated assumptions", check="ms_phase",
          details=ClaimDetails(
              where="arXiv 2410.23228, Fig. 4: 'Evolution of the initial condition given by the uniform measure "
                    "perturbed by random white noise (σ = 0.01) with β = 5. We notice the emergence of 3-periodic "
                    "solution as predicted by Theorem 4.3.'",
              claim="At β = 5 a perturbed uniform state develops a 3-periodic solution.",
              asserted="Reproduced as the likely outcome, not a certain one: k*(5) = 3, but λ_4/λ_3 = 0.88, so mode "
                       "4 grows first with probability 0.16 at Fig. 4's noise (a 10⁴-point grid, σ = 0.01: s = "
                       "6.3e-4; linear theory P(3 first) = 0.84) and 0.29 for the notebook's 2·10⁴ i.i.d. particles "
                       "(P = 0.71). Particle runs (lattice starts, jitter 1e-3, n = 256, 48 draws): 3 clusters in "
                       "48 of 48, mode 3 first in 44; i.i.d. starts: 3 clusters in 11 of 16 at n = 1024, 6 of 16 at "
                       "n = 512. Asserted: most draws at β = 5 end with 3 clusters.")),
    Claim("MS-4", NAME,
          ("Dynamic metastability: k separated clusters persist for a time ≥ (ε/n)e^{(1−α)β} (Geshkovski, Koubbi, "
           "Polyanskiy & Rigollet, §2 main theorem)"), "P1", "holds only under stated assumptions", check="ms_escape",
          details=ClaimDetails(
              where="Geshkovski, Koubbi, Polyanskiy & Rigollet, 'Dynamic metastability in the self-attention model' "
                    "(arXiv 2410.06833 v1), section 2: the main theorem (dynamic metastability) and the definition of "
                    "(β, ε)-separated starts; proved for (SA), (USA) printed with e^{β(⟨x_i,x_j⟩−1)}/n",
              claim="For (SA) from n tokens in k caps {⟨x, w_q⟩ ≥ 1−ε} with γ(β) = 1 − α − 8ε − log(2n²/ε)/β > 0 (α "
                    "the largest cosine between distinct 2ε caps), every token stays in its 2ε cap up to T₂ ≥ "
                    "(ε/n)e^{(1−α)β}, and the caps collapse by T₁: metastable times exponential in β.",
              asserted="Holds, and its exponent is sharp: k equally spaced point clusters on the circle leave their "
                       "equilibrium at the largest circulant eigenvalue μ ≈ β sin²(2π/k)e^{−β(1−cos(2π/k))} (closed "
                       "form = Jacobian eigenvalue to 3e-10; particles to 7e-8), merge on the angle ODE's time "
                       "(1e-8), and d log(1/μ)/dβ → 1 − cos(2π/k) (1.493 and 0.993 for k = 3, 4 between β = 100 and "
                       "200, against 1.5 and 1 less log 2/100). Caps of the theorem (k = 3, ε = 0.01, n = 12, β = "
                       "10, 11) stay inside past 3× the bound. But the hypothesis excludes the clusters that form "
                       "from near-uniform data on the circle: they number k*(β) ≈ √(2β), so β(1 − cos(2π/k*)) → π² "
                       "(≤ 10.63 for every β ≤ 400) and their escape rate stays ≥ 1.3e-3 (SA): no exponential "
                       "growth; for n ≥ 64 tokens γ(β) < 0 at every β and ε.")),
)
