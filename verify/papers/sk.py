"""Sinkformers: doubly stochastic attention (Sander, Ablin, Blondel & Peyré 2022) and bistochastic kernel limits
(Marshall & Coifman 2019; Landa, Coifman & Kluger 2021; Agarwal, Harchaoui, Mulcahy & Pal 2024) (SK): the paper's
claims that the toolkit checks, as data. One entry per claim: its id, title, priority, the verdict expected for the
statement as printed, the check that decides it, and its details (where the paper makes it, what it says, what the
toolkit asserts instead); see :mod:`verify.papers`.
"""

from verify.core.ledger import Claim, ClaimDetails

PREFIX = "SK"
NAME = "sinkformers"
TITLE = ("Sinkformers: doubly stochastic attention (Sander, Ablin, Blondel & Peyré 2022) and bistochastic kernel "
         "limits (Marshall & Coifman 2019; Landa, Coifman & Kluger 2021; Agarwal, Harchaoui, Mulcahy & Pal 2024)")

CLAIMS = (
    Claim("SK-1", NAME,
          ("Heat diffusion: rescaled Sinkformer layers move the tokens' density by ∂ₜp = ½Δp (row softmax on the "
           "sphere: ∂ₜp = Δp)"), "P1", "holds only under stated assumptions", check="sk_heat",
          details=ClaimDetails(
              where="Sander, Ablin, Blondel & Peyré, 'Sinkformers: Transformers with doubly stochastic attention' "
                    "(AISTATS 2022, arXiv 2110.11773): abstract ('in the infinite number of samples limit ... when "
                    "rescaling both attention matrices and depth, Sinkformers operate a heat diffusion') and its "
                    "section on the heat-diffusion limit (whose text was not retrievable here: the statement is read "
                    "from the abstract and from Agarwal, Harchaoui, Mulcahy & Pal, arXiv 2406.10823, who prove it for "
                    "iterated Schrödinger bridges, 'first observed in' Sinkformers)",
              claim="Tokens moved by residual self-attention layers whose attention matrix is made doubly stochastic "
                    "by Sinkhorn's algorithm (scores <x_i, x_j>/ε, i.e. the Gaussian kernel on the sphere; value −I; "
                    "depth rescaled so that one layer is a time step ε) follow, as n → ∞ and then ε → 0, the heat "
                    "equation for their density.",
              asserted="The density diffuses: on S^1 (600 tokens at von Mises quantiles) and S^2 (1500, a vMF "
                       "Fibonacci set), with W = exp(−|x − y|²/(2ε)), ε = 0.03 and one layer = time ε, the moments "
                       "follow ∂ₜp = ½Δp — fitted diffusivity 0.4997–0.5002 (S^1, modes 1–3) and 0.4983–0.5025 "
                       "(S^2, degrees 1–3), moments within 4e-4 and 1.8e-3 of the exact heat semigroup "
                       "(Bessel-ratio and Legendre closed forms); full tier (8000 and 12000 tokens, ε = 0.01): "
                       "0.5000 in every mode, moments within 7e-5. Conditions: ½ is this kernel's constant (exp(−|x "
                       "− y|²/ε) halves it); the plain layer (step = ε) is the accurate one, a step ε/2 leaves an "
                       "O(ε) bias (D = 0.495 in mode 3); what diffuses is the density, carried by the velocity "
                       "−½∇log p (the generator on functions is not the heat operator: SK-2). The row softmax on "
                       "the sphere is a heat diffusion as well, at D = 1 (0.996, 0.974 in modes 1, 2 on S^1; 0.988, "
                       "0.973 on S^2; mode 3 less accurate): the normalisation sets the speed, not the kind of "
                       "flow; off a sphere, dot-product scores exp(<x, y>/ε) carry the key norms e^{|y|²/(2ε)}, "
                       "which only the Sinkhorn scaling absorbs.")),
    Claim("SK-2", NAME,
          ("Generator on functions: Sinkhorn (1/ε)(P − I) → ½(Δ + ⟨∇log p, ∇⟩), half the softmax drift, not "
           "Laplace–Beltrami; scaling d ∝ p^{−1/2}"), "P1", "should hold", check="sk_generator",
          details=ClaimDetails(
              where="Marshall & Coifman, 'Manifold learning with bi-stochastic kernels' (IMA J. Appl. Math. 2019, "
                    "arXiv 1711.06711), §2.1: the infinitesimal generator of a kernel made bi-stochastic against the "
                    "sampling measure; Agarwal, Harchaoui, Mulcahy & Pal, arXiv 2505.07647, abstract (the Markov "
                    "operators of the entropic self-transport have the Langevin generator as derivative at ε = 0); "
                    "Landa & Cheng, arXiv 2209.08004 (the scaling factors concentrate; a density estimate from them). "
                    "Read against SK-1's 'heat diffusion'",
              claim="For the symmetric Sinkhorn normalisation P = diag(d) W diag(d) of the Gaussian kernel on points "
                    "drawn from a density p, (1/ε)(P − I)f → ½(Δf + ⟨∇log p, ∇f⟩), the Langevin generator with "
                    "invariant law p (the Coifman–Lafon a = ½ operator), and n d² c_ε p → 1 (c_ε = ∫W); the row "
                    "softmax gives ½Δf + ⟨∇log p, ∇f⟩ (DRIFT-4 at a = 0).",
              asserted="Measured (fitted op = A ½Δf + B ⟨∇log p, ∇f⟩): B = 0.496 (Sinkhorn) against 0.991 (softmax) "
                       "on the S^1 quantile grid (ε = 0.005; the sampled operators equal the exact finite-ε "
                       "continuum ones, FFT with Bessel symbols, to 6e-12), 0.483 / 0.950 on the S^2 Fibonacci set "
                       "(ε = 0.02), 0.49 / 0.98 and 0.47 / 0.89 on i.i.d. samples; n d² c_ε p = 1 within 5e-14 on "
                       "the grid, slope −1 of log n d² on log p on every tier. The 'heat' reading on functions "
                       "fails: the Laplace–Beltrami ½Δf (no drift) is 0.37 away in relative RMS on the grid, the "
                       "softmax drift 0.30, and a density-dependent time change c·½Δf/p (the only drift-free "
                       "operator symmetric in p dV, as a doubly stochastic matrix is in the counting measure) 0.90 "
                       "at its best c. The doubly stochastic normalisation halves the density's drift; it neither "
                       "removes it nor rescales time by the density. The density enters the scaling d ~ p^{−1/2} "
                       "and the measure in which the generator is symmetric.")),
    Claim("SK-3", NAME, "Rates of both generators: bias O(ε) in the bandwidth, sampling error O(n^{−1/2}) at fixed ε",
          "P2", "should hold", check="sk_rates",
          details=ClaimDetails(
              where="Singer 2006 (DRIFT Theorem 1: bias O(ε), sampling error O(n^{−1/2} ε^{−1/2−m/4}) of kernel "
                    "averages) for the row normalisation; Landa & Cheng, arXiv 2209.08004 (finite-sample "
                    "concentration of the doubly stochastic matrix and its scaling) for the Sinkhorn one",
              claim="Both generators converge to their limits (SK-2) with a bias O(ε) and, at a fixed ε, a sampling "
                    "error O(n^{−1/2}).",
              asserted="Orders through verify.rates: in ε, 0.996 (Sinkhorn) and 0.986 (softmax) on the S^1 quantile "
                       "grid (ε = 0.04 … 0.005, local orders 0.99–1.00; the grid is the continuum to 1e-11, so this "
                       "is the bias alone) and 0.94 / 0.89 on the S^2 Fibonacci set (ε = 0.16 … 0.02, local orders "
                       "rising to 0.95; the set's 0.5 % quadrature error forbids smaller ε at n = 3000); in n at "
                       "fixed ε against the exact finite-ε continuum operator, n = 150 … 1200 × 6 samples: −0.49 … "
                       "−0.56 (Sinkhorn) and −0.44 … −0.52 (softmax) on S^1, −0.46 … −0.50 and −0.44 … −0.52 on "
                       "S^2, seeds 0–7; −0.54, −0.53, −0.50, −0.50 over n = 500 … 16000 (full tier).")),
    Claim("SK-4", NAME,
          ("Sinkhorn convergence: alternating sweeps at λ₂(P)² (∝ 1/ε sweeps); symmetric scaling D C D at ≤ ½ per "
           "update (bounded)"), "P2", "should hold", check="sk_convergence",
          details=ClaimDetails(
              where="Sinkformers §2 (Sinkhorn's algorithm: K⁰ = exp(C), K^{l+1} = N_R(K^l) for even l and N_C(K^l) "
                    "for odd l, K^∞ = Sinkhorn(C)); Knight, 'The Sinkhorn–Knopp algorithm: convergence and "
                    "applications', SIAM J. Matrix Anal. Appl. 30 (2008): linear convergence at σ₂(P)² per sweep, and "
                    "the symmetric iteration x ← (x/Ax)^{1/2}",
              claim="The alternating iteration converges linearly at λ₂(P)² per (row, column) sweep on the symmetric "
                    "positive-definite attention kernel; since λ₂ = 1 − O(ε), its sweeps grow like 1/ε as the "
                    "attention sharpens. The symmetric scaling D C D with one vector contracts the error of log d by "
                    "(I − P)/2: at most (1 − λ_min(P))/2 ≤ ½ per update, whatever ε.",
              asserted="On 400 points (the S^1 quantile grid, the S^2 Fibonacci set), ε halving, against eigvalsh "
                       "of the final P: the alternating iteration's rate over its last 20 sweeps equals λ₂² on S^1 "
                       "(1.00–1.01 of its e-folds) and is 8–13 % faster on S^2 (the zonal starting error has almost "
                       "no component along the slowest eigenvector); its sweeps to 1e-12 grow like ε^{−1.01} (S^1: "
                       "99 … 812 sweeps at ε = 0.2 … 0.025) and ε^{−1.06} (S^2). The symmetric scaling: 30 updates "
                       "at every ε on S^2, a mean contraction of 0.86–0.92 of the bound ½ per update (the last "
                       "ratios 0.97), always within log₂(r₀/tol) + 1 updates; on the grid the smooth O(ε) starting "
                       "error needs only 22 … 8 updates, fewer as ε shrinks. (i.i.d. samples' own spectral gap "
                       "closes faster than ε where their sparse parts break up: 12490 sweeps for one seed in ten at "
                       "ε = 0.04 on S^2.)")),
)
