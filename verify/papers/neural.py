"""Neural Attention (MLP scores) (NEURAL): the paper's claims that the toolkit checks, as data. One entry per claim: its
id, title, priority, the verdict expected for the statement as printed, the check that decides it, and its details
(where the paper makes it, what it says, what the toolkit asserts instead); see :mod:`verify.papers`.
"""

from verify.core.ledger import Claim, ClaimDetails

PREFIX = "NEURAL"
NAME = "neural-attention-mlp-scores"
TITLE = "Neural Attention (MLP scores)"

CLAIMS = (
    Claim("NEURAL-1", NAME,
          "Dot-product score matrix has rank ≤ d (≤ d′ after down-projection); the softmax matrix does not", "P1",
          "should hold", check="neural_rank",
          details=ClaimDetails(
              where="§1.2; §3.2",
              claim="Dot-product scores QK^T have rank at most d (at most d′ after a down-projection): a bottleneck.",
              asserted="True of the logits (rank exactly d, or d′, for random inputs) and not of the attention "
                       "matrix: softmax(QK^T/√d) is full rank in general.")),
    Claim("NEURAL-2", NAME, '"A dot product only lets same-index elements interact"', "P1",
          "suspicious / likely false as stated", check="neural_equivalence",
          details=ClaimDetails(
              where="§1.2, eq. (2) and the text after it",
              claim="A dot product only lets elements of the same index interact and misses relationships between "
                    "different indices.",
              asserted="With learned projections the score x^T W_Q^T W_K y = Σ_ab x_a M_ab y_b couples every pair "
                       "of indices, and every bilinear form of rank ≤ d is realisable (W_Q = I, W_K = M). What a "
                       "dot product cannot express is a non-bilinear interaction. L2 attention is dot-product "
                       "attention plus a key bias: −|q − k|² = 2q·k − |q|² − |k|², and the query term cancels in "
                       "the softmax.")),
    Claim("NEURAL-3", NAME, "Neural Attention with shared weights is exactly additive (Bahdanau) attention", "P1",
          "suspicious / likely false as stated", check="neural_equivalence",
          test="tests/spectral/test_kernel_identities.py",
          details=ClaimDetails(
              where="§1.2, eqs. (3)–(4); §2",
              claim="Concatenating query and key before one hidden layer differs from additive attention, which "
                    "combines independently projected representations.",
              asserted="W_h[q; k] + b_h = W_h^{(q)} q + W_h^{(k)} k + b_h, so shared-weight Neural Attention "
                       "w_a·σ(W_h[q; k] + b_h) + b_a is exactly additive (Bahdanau) attention w_a·σ(W_1 q + W_2 k + "
                       "b) for any activation σ (b_a cancels in the softmax).")),
    Claim("NEURAL-4", NAME, "Rank and expressivity of MLP scores depend on σ; softmax removes query-only terms", "P1",
          "partly false as stated", check="neural_rank",
          details=ClaimDetails(
              where="§1.2; §3.2 ('even d′ = 2 … Neural Attention is low-rank')",
              claim="MLP scores capture non-linear dependencies and are low-rank for a small d′.",
              asserted="For A_ij = Σ_m w_m σ(u_m·q_i + v_m·k_j + b_m): the identity gives rank ≤ 2 and, after the row "
                       "softmax, attention that ignores the query; σ(z) = z² gives rank min(d′, h) + 2; exp gives "
                       "rank ≤ h (h + 1 with the output bias); ReLU is far above these bounds; tanh and GELU lie in "
                       "between (numerical rank depends on the tolerance). So scores with d′ = 2 are not low-rank "
                       "matrices: 'low-rank' refers to the input dimension. At n = 256 and d′ = 2, ReLU scores reach "
                       "rank 248 (h = 4) and 256 = n (h = 32) at tolerance 1e-10, 64 times 2d′; tanh and GELU reach "
                       "133 and 81 (h = 32).",
              split="'MLP scores capture non-linear dependencies' holds for a non-linear σ (with the identity the "
                    "softmax ignores the query); 'low-rank for a small d′' does not hold of the score matrix (it "
                    "holds of the input width d′ only)")),
    Claim("NEURAL-5", NAME, "Fig. 1 geometry: paraboloid vs piecewise-linear surface", "P3", "should hold",
          check="neural_geometry",
          details=ClaimDetails(
              where="§1.2, Fig. 1",
              claim="With q = k = (x, y), dot-product scores form the smooth paraboloid x² + y² and Neural Attention "
                    "(ReLU) a surface with sharp edges.",
              asserted="The dot-product surface has Hessian 2I everywhere; the ReLU network is piecewise linear "
                       "with creases on h lines and at most 1 + h + h(h − 1)/2 linear regions; with a smooth σ its "
                       "surface is smooth.")),
    Claim("NEURAL-6", NAME, "Per-pair parameters (eq. 8, App. B) vs reported parameter counts; table arithmetic", "P2",
          "suspicious / likely false as stated", check="neural_cost",
          details=ClaimDetails(
              where="eq. (8); Appendix B; Tables 1–3 and 5; Conclusion",
              claim="Each attention score (i, j) has its own learnable parameters W_h[i, j].",
              asserted="Per-pair weights need at least 7n² parameters (over 7.3 M at n = 1024), far more than the "
                       "reported increase over dot-product attention (0.524 M): the reported counts fit shared "
                       "weights, and then NEURAL-3 applies. Per-pair weights would also break permutation "
                       "equivariance and fix n. The CIFAR gains of +3.0 and +4.26 are percentage points, not "
                       "relative gains.")),
    Claim("NEURAL-7", NAME,
          'Tensor construction and cost (eq. 7, Alg. 1; §3.2 "identical O(n²) time complexity, much worse memory")',
          "P2", "should hold", check="neural_cost",
          details=ClaimDetails(
              where="eq. (7); Algorithm 1; §3.2",
              claim="Building the concatenated query–key tensor has the same O(n²) time complexity as dot-product "
                    "attention and much worse memory.",
              asserted="Both are O(n²) in n. The memory overhead (a 2d′n² tensor) comes from materialising the "
                       "concatenation: with NEURAL-3, W_1 q and W_2 k cost O(nhd′) and only the n²h activations "
                       "remain.")),
    Claim("NEURAL-8", NAME, "Expressivity proxy: non-bilinear score targets", "P2",
          "holds only under stated assumptions", check="neural_expressivity",
          details=ClaimDetails(
              where="§1.2; Conclusion",
              claim="Neural Attention captures non-linear dependencies that a dot product cannot.",
              asserted="On doubly-centred targets (query-only and key-only parts removed, as the softmax and a key "
                       "bias would) the best bilinear fit leaves a residual bounded away from zero for −|q − k|, "
                       "|q_1 − k_2|, cos(q·k) and q_1k_1q_2k_2, while −|q − k|² is fitted exactly by a bilinear form "
                       "plus a key bias. A shared-weight ReLU MLP fitted on one grid of Gaussian queries and keys "
                       "and judged on a fresh grid (out of sample: on its training grid it can memorise) beats the "
                       "bilinear fit of −|q − k| and fits |q_1 − k_2|; it does not capture cos(q·k) at h ≤ 64 (no "
                       "better than predicting zero on the fresh grid) and the quartic only partly. So the statement "
                       "holds for dependencies a few ReLU units represent and learn from data, an assumption the "
                       "paper leaves unstated; read for every non-bilinear dependency (claim=printed) it fails on "
                       "cos(q·k). This holds for additive attention in general, not only for Neural Attention.")),
)
