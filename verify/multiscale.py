"""FNA's mechanism claims (larger spectral gap, ~1-hop shortest paths, compact diffusion maps) hold only under the paper's bandwidths.

FNA ("Mechanistic explanation", Figs. 5a-5e) compares multiscale FNA (alpha = 1.2), local attention
(LA, alpha = 2) and dot-product attention (DP) on attention graphs. On synthetic tokens (Gaussian,
a 3-cluster mixture, a smooth sinusoidal sequence) in R^d this check measures the spectral gap
``1 - |eta_2|``, the hop counts of the weighted shortest paths (weights ``1 / A_ij``), the
normalised row entropy and the diffusion-map spread under three bandwidth protocols:
(i) the paper's kappa, (ii) equal kappa = sqrt(d), (iii) matched half-maximum width. The paper's
ordering FNA > LA > DP holds under (i), where FNA rows are nearly uniform (entropy >= 0.99,
FNA-16), and reverses under (ii): it comes from the bandwidth, not from the power-law tail.
``claim="printed"`` asserts the printed, bandwidth-free ordering and ~1-hop paths under every
protocol, and fails under (ii). The check also returns the data of the synthetic Figs. 5a-5e
(``figures.fna_mechanism``).

Memory first, and ``--method`` (the diffusion-map comparison only): the default path ("dense") stores the
dm_n x dm_n distances and kernels and takes their top eigenpairs with the dense eigensolver, about
``64 dm_n^2`` bytes (1.5 GiB at --dm-n 5000). ``--method matrix-free`` recomputes the kernels tile by tile
in block products, takes the 3 leading eigenpairs with the block eigensolver of
``spectral.markov_spectrum`` and sums the embedding's spread over row blocks: memory linear in dm_n (about
30 MiB at 5000), the same spread ratios to ~4e-9 relative. ``--method auto`` (the default) takes the
dense path when its estimate fits the memory available now and the matrix-free path otherwise; a path
that does not fit is refused before anything is allocated, with its estimate and the options that would
fit. The graph statistics (gap, hops, entropy) always use the dense attention graph (shortest paths read
every entry); their sizes stay at most 1024.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.validation import InputError, check_int, check_ints, check_option, check_real, check_reals, child_rng
from verify.core.check import Check
from verify.core.memory import PathNeed, choose_path
from verify.core.progress import progress
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread

CHECK = Check("multiscale", claims=("FNA-16", "FNA-17", "FNA-18", "FNA-19"))
DATASETS = ("gaussian", "clusters", "sequence")
PROTOCOLS = ("paper", "equal", "matched")
METHODS = ("fna", "local", "dp")
#: eigensolver paths of the diffusion-map comparison (``method``)
DM_METHODS = ("auto", "dense", "matrix-free")
DM_N_MAX = 50_000
#: dense diffusion maps: distances, two kernels, the dense eigensolver's copies, the embedding's pairwise
#: differences; tracemalloc peaks 13.6 / 53.7 / 214 MiB at dm_n = 500 / 1000 / 2000 (d = 8) fit 53.5 bytes per
#: pair; 64 per pair and 16 MiB (the first run's imports) leave a margin
DM_DENSE_FIXED_BYTES = 16 << 20
DM_DENSE_BYTES_PER_PAIR = 64
#: matrix-free diffusion maps: the block solver's workspace (spectral.block_workspace_bytes) plus tokens,
#: degrees, eigenvectors and the blocked spread; tracemalloc peaks 7.7 / 18.3 MiB at dm_n = 2000 / 5000 exceed
#: the workspace by 3.5 / 7.7 MiB: 2 KiB per token and 8 MiB of tiles and blocks bound both
DM_FREE_BYTES_PER_POINT = 2048
DM_FREE_FIXED_BYTES = 8 << 20

# ------------------------------------------------------------------------------ token sets


def tokens(data: str, n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Synthetic tokens (host, float64, shape (n, d)); each set has E|x|^2 about d.

    * ``gaussian``: ``x ~ N(0, I_d)``.
    * ``clusters``: equal-weight mixture of ``N(c_k, I_d / 2)``, ``k = 1, 2, 3``, centres
      ``c_k = sqrt(d / 2) R e_k`` for a random rotation R (centre separation ``sqrt(d)``, the
      typical within-cluster distance).
    * ``sequence``: sinusoidal positional features ``sin, cos(w_k (t + t0))`` with Transformer
      frequencies ``w_k = 10000^(-2k/d)``, ``k < d/2``, times ``sqrt(2)``, from a random start
      ``t0``: a smooth curve along which neighbouring tokens are close.
    """
    if data == "gaussian":
        return rng.standard_normal((n, d))
    if data == "clusters":
        q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        centres = math.sqrt(d / 2.0) * q[:, :3].T
        labels = rng.integers(0, 3, size=n)
        return centres[labels] + rng.standard_normal((n, d)) / math.sqrt(2.0)
    if data == "sequence":
        t = np.arange(n) + rng.uniform(0, 1e4)
        w = 10000.0 ** (-2.0 * np.arange(d // 2) / d)
        ang = t[:, None] * w[None, :]
        x = np.empty((n, 2 * (d // 2)))
        x[:, 0::2] = np.sin(ang)
        x[:, 1::2] = np.cos(ang)
        if d % 2:
            x = np.hstack([x, np.zeros((n, 1))])
        return math.sqrt(2.0) * x
    raise InputError(f"data must be one of {', '.join(DATASETS)}, got {data!r}")


def bandwidths(protocol: str, d: int, alpha: float) -> tuple[float, float]:
    """(kappa_FNA, kappa_LA) of a bandwidth protocol.

    ``paper``: the paper's kappa for each order (``sqrt(d)/(2^(1/d)-1)`` for alpha < 2, ``sqrt(d)`` at
    alpha = 2); ``equal``: ``sqrt(d)`` for both; ``matched``: the paper's FNA kappa and the Gaussian
    with the same half-maximum width.
    """
    from spectral import matched_half_width_kappa, paper_kappa

    if protocol == "paper":
        return paper_kappa(d, alpha), paper_kappa(d, 2.0)
    if protocol == "equal":
        return math.sqrt(d), math.sqrt(d)
    if protocol == "matched":
        k1 = paper_kappa(d, alpha)
        return k1, matched_half_width_kappa(k1, d, alpha)
    raise InputError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")


def attention(x, method: str, *, alpha: float, kappa: float | None):
    """Attention matrix ``A = N_R(C)`` of tokens ``x`` (FNA eq. 13-14; DP: exp(X X^T / sqrt d))."""
    from manifolds import Euclidean
    from spectral import dot_product_scores, fna_kernel, row_normalize

    d = x.shape[1]
    if method == "dp":
        return row_normalize(dot_product_scores(x, temperature=math.sqrt(d)))
    a = alpha if method == "fna" else 2.0
    return row_normalize(fna_kernel(Euclidean(d).distance(x), alpha=a, scale=kappa, dim=d))


def row_entropy(A) -> float:
    """Mean normalised row entropy ``H(A_i.) / log n`` (1 = uniform attention)."""
    from spectral.backend import to_numpy

    a = to_numpy(A)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.sum(np.where(a > 0, a * np.log(a), 0.0), axis=1)
    return float(np.mean(h) / math.log(a.shape[0]))


def _graph_stats(A) -> dict:
    from graphs import shortest_paths, spectral_gap
    from spectral.backend import to_numpy

    sp = shortest_paths(A)
    return {"gap": spectral_gap(A).gap, "hops_mean": sp.mean_hops(), "hops_max": sp.max_hops(),
            "entropy": row_entropy(A), "nmax": float(A.shape[0] * np.max(to_numpy(A))),
            "_hops": to_numpy(sp.hops), "_pred": to_numpy(sp.predecessors)}


def diffusion_spread(A_scores, *, tau: float = 1.0, rng=None) -> tuple[float, float, np.ndarray]:
    """Mean pairwise distance of the 2-D diffusion map ``(eta_j^tau psi_j)_{j=1,2}`` and max |eta_j|.

    ``psi_j`` are right eigenvectors of ``A = N_R(C)`` normalised to ``sum_i pi_i psi_j(i)^2 = 1``
    (FNA eq. 19, pi the stationary distribution), from :func:`spectral.markov_spectrum`: the dense
    eigensolver for a stored score matrix ``A_scores``, the matrix-free block eigensolver (start block
    from ``rng``) for an operator such as :class:`spectral.KernelOperator`, whose spread is then summed
    over row blocks of the embedding (no ``n x n`` array).
    Returns the spread, ``max(|eta_1|, |eta_2|)^tau`` (the nontrivial eigenvalues) and the
    ``(n, 2)`` coordinates.
    """
    from spectral import markov_spectrum
    from spectral.backend import to_numpy

    operator = hasattr(A_scores, "row_sums")  # the operator interface (arrays have no row_sums)
    spec = markov_spectrum(A_scores, 3, vectors=True, method="matrix-free" if operator else "dense", rng=rng)
    eta = np.real(to_numpy(spec.eigenvalues))[1:3]
    psi = np.real(to_numpy(spec.right_vectors))[:, 1:3]
    deg = to_numpy(spec.degrees)
    pi = deg / deg.sum()
    psi = psi / np.sqrt(np.sum(pi[:, None] * psi**2, axis=0))
    coords = psi * (eta**tau)[None, :]
    n = coords.shape[0]
    if operator:
        return _blocked_spread(coords), float(np.max(np.abs(eta)) ** tau), coords
    diff = coords[:, None, :] - coords[None, :, :]
    dist = np.sqrt(np.sum(diff**2, axis=2))
    return float(dist.sum() / (n * (n - 1))), float(np.max(np.abs(eta)) ** tau), coords


def _blocked_spread(coords: np.ndarray, block_bytes: int = 4 << 20) -> float:
    """Mean pairwise distance of the rows of ``coords`` summed over row blocks (``block_bytes`` each)."""
    n = coords.shape[0]
    rows = max(1, block_bytes // (8 * n * (coords.shape[1] + 1)))
    total = 0.0
    for start in range(0, n, rows):
        diff = coords[start : start + rows, None, :] - coords[None, :, :]
        total += float(np.sqrt(np.sum(diff**2, axis=2)).sum())
    return total / (n * (n - 1))


# -------------------------------------------------------------------------------------- run

#: the full protocol (``full=True``): n = 32..512, 20 token sets per (data, d, n)
FULL = dict(sizes=(32, 64, 128, 256, 512), draws=20)


@CHECK.define
def run(*, alpha=1.2, dims=(8, 32), sizes=(32, 128), draws=3, datasets=("gaussian", "clusters", "sequence"),
        alphas=(1.0, 1.2, 1.4, 1.6, 1.8, 2.0), dm_dims=(8, 16), dm_n=500, dm_eps=0.1, claim="corrected", full=False,
        method="auto", seed=0, device="cpu"):
    """Gap, hops, entropy and diffusion-map spread of FNA / LA / DP under three bandwidth protocols.

    Parameters
    ----------
    alpha : float
        Fractional order of multiscale FNA, in [0.5, 2) (FNA eq. 10; the paper's alpha = 1.2).
    dims : tuple of int
        Token dimensions d = d_H = d_M (FNA Methods: d_M = d_H), each in [2, 256].
    sizes : tuple of int
        Sequence lengths n (FNA Fig. 5e): at least two increasing integers in [8, 1024]; the first
        and last are compared.
    draws : int
        Independent token sets per (data, d, n), in [2, 200].
    datasets : tuple of str
        Token sets, a non-empty subset of gaussian (N(0, I_d)), clusters (3-mode mixture), sequence
        (sinusoidal positional features).
    alphas : tuple of float
        Alpha grid of the synthetic Fig. 5a (gap vs alpha): at least two values in [0.5, 2].
    dm_dims : tuple of int
        Token dimensions of the diffusion-map comparison (FNA Fig. 5b), each in [2, 256].
    dm_n : int
        Tokens of the diffusion-map comparison, in [32, 50000] (FNA Fig. 5b: n = 500); above a few
        thousand only the matrix-free path fits in memory.
    dm_eps : float
        Epsilon of the Fig. 5b bandwidth kappa = paper kappa * sqrt(eps), in (0, 1] (FNA Methods: 0.1).
    claim : {"corrected", "printed"}
        "corrected": the bandwidth-dependent statements (the ordering FNA > LA > DP and ~1 hop under
        the paper's kappa, reversed under equal kappa). "printed": the paper's ordering and ~1-hop
        paths under every bandwidth protocol.
    full : bool
        Run the full protocol (n = 32..512, 20 token sets; minutes) instead of ``sizes`` and ``draws``.
    method : {"auto", "dense", "matrix-free"}
        Eigensolver of the diffusion-map comparison only (the graph statistics need the dense
        attention graph: its shortest paths read every entry). "dense": the dm_n x dm_n kernels and
        the dense eigensolver, about 64 dm_n^2 bytes. "matrix-free": the kernels recomputed tile by
        tile in block products, the 3 leading eigenpairs by the block eigensolver, the spread summed
        over blocks: memory linear in dm_n. "auto": dense when its estimate fits the memory available
        now, else matrix-free.
    seed : int
        Base seed; each token set draws from its own child stream (data, d, n, draw).
    device : {"cpu"}
        Array device; this check runs on the host only.

    Returns
    -------
    CheckResult
        Passes when every FNA-16..19 assertion of the chosen claim holds.
    """
    alpha = check_real("alpha", alpha, low=0.5, high=2.0, high_open=True)
    dims = check_ints("dims", dims, low=2, high=256)
    dm_dims = check_ints("dm_dims", dm_dims, low=2, high=256)
    if full:
        sizes, draws = FULL["sizes"], FULL["draws"]
    sizes = check_ints("sizes", sizes, low=8, high=1024, min_count=2)
    if list(sizes) != sorted(set(sizes)):
        raise InputError(f"sizes must be at least two increasing integers in [8, 1024], got {sizes!r}")
    draws = check_int("draws", draws, low=2, high=200)
    if isinstance(datasets, str) or not datasets or not all(s in DATASETS for s in datasets):
        raise InputError(f"datasets must be a non-empty subset of {', '.join(DATASETS)}, got {datasets!r}")
    datasets = tuple(datasets)
    alphas = check_reals("alphas", alphas, min_count=2, low=0.5, high=2.0)
    dm_n = check_int("dm_n", dm_n, low=32, high=DM_N_MAX)
    dm_eps = check_real("dm_eps", dm_eps, low=0.0, high=1.0, low_open=True)
    check_option("claim", claim, ("corrected", "printed"))
    check_option("method", method, DM_METHODS)
    used = _choose_method(method, dm_n)  # memory first: before any token or kernel exists
    rec = Recorder()
    if method == "auto":
        rec.resolve("method", used)
    if full:
        rec.resolve("sizes", sizes)
        rec.resolve("draws", draws)
    with single_blas_thread():  # many small dense solves: threaded BLAS oversubscribes a shared machine
        _measure(rec, alpha=alpha, dims=dims, sizes=sizes, draws=draws, datasets=datasets, alphas=alphas,
                 dm_dims=dm_dims, dm_n=dm_n, dm_eps=dm_eps, claim=claim, seed=seed, method=used)
    if claim == "corrected":
        statement = (f"Under the paper's kappa FNA (alpha={alpha}) rows are near-uniform (entropy >= 0.99) and "
                     "gap FNA > LA > DP, FNA hops <= 1.01 < 1.2 < LA, DP hops (Gaussian, clustered tokens), hops "
                     "grow with n for sequences; under equal kappa = sqrt(d) both orderings reverse; matched "
                     "half-width keeps FNA > LA; the diffusion-map spread ratio FNA/LA is < 1 and tracks the "
                     "eigenvalue ratio")
    else:
        statement = (f"(printed claim) FNA (alpha={alpha}) has a larger gap than LA and DP and ~1-hop paths "
                     "whatever the bandwidth")
    return rec.finish(statement)


def _measure(rec, *, alpha, dims, sizes, draws, datasets, alphas, dm_dims, dm_n, dm_eps, claim, seed, method):
    from graphs import ShortestPaths, path, spectral_gap
    from manifolds import Euclidean
    from spectral import fna_kernel, fna_profile, paper_kappa

    printed = claim == "printed"
    stats = {}  # (data, d, n, protocol, method) -> list of per-token-set dicts
    example = {}
    with rec.timed("graphs"):
        # progress on stderr per (tokens, d): multiscale --full runs minutes (silenced by --quiet)
        for data, d in progress([(data, d) for data in datasets for d in dims], desc="multiscale",
                                label=lambda item: f"{item[0]} d={item[1]}"):
            for n in sizes:
                for s in range(draws):
                    x = tokens(data, n, d, child_rng(seed, "tokens", data, d, n, s))
                    dp = _graph_stats(attention(x, "dp", alpha=alpha, kappa=None))
                    for protocol in PROTOCOLS:
                        kf, kl = bandwidths(protocol, d, alpha)
                        res = {"fna": _graph_stats(attention(x, "fna", alpha=alpha, kappa=kf)),
                               "local": _graph_stats(attention(x, "local", alpha=alpha, kappa=kl)), "dp": dp}
                        for m in METHODS:
                            # the n x n hop and predecessor matrices are kept for the example graph only:
                            # every other graph's would pile up (16 bytes per entry per graph, 113 MB at
                            # sizes (32, 256) with the default grid), the statistics are scalars
                            scalars = {k: v for k, v in res[m].items() if not k.startswith("_")}
                            stats.setdefault((data, d, n, protocol, m), []).append(scalars)
                        if s == 0 and data == datasets[-1] and d == dims[0] and n == sizes[-1]:
                            example[protocol] = res

    def arr(data, d, n, protocol, m, field):
        return np.array([r[field] for r in stats[(data, d, n, protocol, m)]], dtype=float)

    def pooled(data, d, protocol, m, field):
        return np.concatenate([arr(data, d, n, protocol, m, field) for n in sizes])

    rec.array("sizes", np.array(sizes))
    rec.array("alphas", np.array(alphas, dtype=float))
    n0, n1 = sizes[0], sizes[-1]
    # Regime: the bounds entropy >= 0.99 and hops <= 1.01 are measured for d >= 8; at d = 4 (seed 0) entropy
    # 0.987 and worst hops 1.048: in low dimension the distances do not concentrate, so the rows are not
    # near-uniform. A failure there says so.
    hint = (f"d = {min(dims)} < 8: these bounds hold for concentrated distances, measured for d >= 8"
            if not printed and min(dims) < 8 else "")

    # ---- FNA-16: the bandwidth identity and near-uniform rows ---------------------------------
    ident = max(abs(float(fna_profile(np.array([math.sqrt(d) / paper_kappa(d, alpha)]), alpha=alpha, dim=d)[0])
                    - 2.0 ** (-(d + alpha) / d)) for d in dims)
    rec.at_most("fna16_identity_error", ident, 4 * math.sqrt(np.finfo(float).eps),
                why="exact algebra: one power of a number near 1/2, 4 sqrt(eps)",
                label="FNA-16: Phi(sqrt(d)/kappa_paper) != 2^(-(d+alpha)/d)", hint=hint)
    for data in datasets:
        for d in dims:
            for m in METHODS:
                key = f"entropy_{m}_{data}_d{d}_n{n1}"
                value = float(arr(data, d, n1, "paper", m, "entropy").mean())
                if m == "fna" and data == "gaussian":
                    rec.at_least(key, value, 0.99,
                                 why="FNA-16 reference 0.995 at d = 8, n = 256; measured 0.9930-0.9937 (d = 8) and "
                                     "0.9972-0.9974 (d = 32) at n = 128, 3 token sets, seeds 0-4; it grows with n",
                                 label="FNA-16 (paper kappa): FNA rows should be near-uniform", hint=hint)
                else:
                    rec.info(key, value)
                rec.info(f"nmax_{m}_{data}_d{d}_n{n1}", float(arr(data, d, n1, "paper", m, "nmax").mean()))

    # ---- FNA-17 (gap) and FNA-18 (hops) per protocol -------------------------------------------
    majority = "a robust majority: >= 95 % of token sets (measured 100 % over seeds 0-4)"
    for data in datasets:
        for d in dims:
            for protocol in PROTOCOLS:
                tag = f"{protocol}_{data}_d{d}"
                g = {m: pooled(data, d, protocol, m, "gap") for m in METHODS}
                h = {m: pooled(data, d, protocol, m, "hops_mean") for m in METHODS}
                inc = {m: float(arr(data, d, n1, protocol, m, "hops_mean").mean()
                                - arr(data, d, n0, protocol, m, "hops_mean").mean()) for m in METHODS}
                for m in METHODS:
                    rec.info(f"gap_{m}_{tag}", float(g[m].mean()))
                    if protocol == "paper" and data in ("gaussian", "clusters") and m in ("local", "dp"):
                        # not asserted for the sinusoidal sequence: at d = 32 its spread is small against
                        # kappa = sqrt(d) and LA needs 1.02 hops
                        rec.at_least(f"hops_{m}_{tag}", float(h[m].mean()), 1.2,
                                     why="FNA-18 reference (Gaussian tokens): LA 1.27-1.75, DP 2.1-2.5 hops; measured "
                                         "LA 1.32-1.76, DP 2.20-2.77 over seeds 0-4",
                                     label="FNA-18: LA and DP should need more than 1.2 hops", hint=hint)
                    else:
                        rec.info(f"hops_{m}_{tag}", float(h[m].mean()))
                    rec.info(f"hops_max_{m}_{tag}", float(pooled(data, d, protocol, m, "hops_max").max()))
                    rec.array(f"hops_vs_n_{protocol}_{m}_{data}_d{d}", np.array(
                        [[arr(data, d, n, protocol, m, "hops_mean").mean(), arr(data, d, n, protocol, m, "hops_mean").std()]
                         for n in sizes]))
                frac_fl = float(np.mean(g["fna"] > g["local"]))
                frac_ld = float(np.mean(g["local"] > g["dp"]))
                for m in METHODS:
                    if protocol == "paper" and data == "sequence" and m == "dp":
                        rec.at_least(f"hops_increase_{m}_{tag}", inc[m], 0.1,
                                     why="FNA-18 reference >= 0.1 from n = 32 to 512 for DP; measured 0.28-0.35 from "
                                         "n = 32 to 128 (the sequence's distances do not depend on its random start)",
                                     label="FNA-18 (growth with n): DP hops should grow with n on a sequence", hint=hint)
                    elif protocol == "paper" and data == "sequence" and m == "local":
                        rec.at_least(f"hops_increase_{m}_{tag}", inc[m], 0.0,
                                     why="LA hops non-decreasing in n (measured +0.04..+0.21 from n = 32 to 128)",
                                     label="FNA-18 (growth with n): LA hops should not fall with n on a sequence",
                                     hint=hint)
                    else:
                        rec.info(f"hops_increase_{m}_{tag}", inc[m])
                if printed or protocol in ("paper", "matched"):
                    printed_tag = "(printed claim) " if printed and protocol == "equal" else ""
                    rec.at_least(f"frac_gap_fna_gt_local_{tag}", frac_fl, 0.95, why=majority,
                                 label=f"{printed_tag}FNA-17: gap FNA > LA", hint=hint)
                    if printed or protocol == "paper":
                        rec.at_least(f"frac_gap_local_gt_dp_{tag}", frac_ld, 0.95, why=majority,
                                     label=f"{printed_tag}FNA-17: gap LA > DP", hint=hint)
                        worst = max(float(arr(data, d, n, protocol, "fna", "hops_mean").mean()) for n in sizes)
                        rec.at_most(f"hops_fna_worst_n_{tag}", worst, 1.01,
                                    why="FNA-18 '~1 hop': mean in [1, 1.01] at every n; measured 1.000-1.0087 over seeds "
                                        "0-4 (the largest for clustered tokens at d = 8, where 20 seeds gave <= 1.0087: "
                                        "a thin margin)",
                                    label=f"{printed_tag}FNA-18: FNA should need ~1 hop", hint=hint)
                else:
                    reversal = ("under equal kappa both orderings reverse in every token set (seeds 0-4: FNA gap "
                                "<= 0.11 vs LA >= 0.53, FNA hops 3.1-27 vs LA 1.0-1.8); <= 5 % / >= 95 % allowed")
                    rec.at_most(f"frac_gap_fna_gt_local_{tag}", frac_fl, 0.05, why=reversal,
                                label="FNA-17 (equal kappa, reversal): gap FNA < LA", hint=hint)
                    rec.at_least(f"frac_hops_fna_gt_local_{tag}", float(np.mean(h["fna"] > h["local"])), 0.95,
                                 why=reversal, label="FNA-18 (equal kappa, reversal): FNA needs more hops than LA",
                                 hint=hint)

    # ---- synthetic Fig. 5a: gap vs alpha (every token set type, largest n) ----------------------
    with rec.timed("gap_vs_alpha"):
        for data in datasets:
            for d in dims:
                # Gaussian tokens keep the stream they had when this panel drew only them (same numbers)
                streams = [child_rng(seed, "gap_vs_alpha", d, s) if data == "gaussian" else
                           child_rng(seed, "gap_vs_alpha", data, d, s) for s in range(draws)]
                xs = [tokens(data, n1, d, rng) for rng in streams]
                dp_gap = [spectral_gap(attention(x, "dp", alpha=alpha, kappa=None)).gap for x in xs]
                rec.array(f"gap_vs_alpha_dp_{data}_d{d}", np.array([np.mean(dp_gap), np.std(dp_gap)]))
                for protocol in PROTOCOLS:
                    rows = []
                    for a in alphas:
                        if a < 2.0:
                            kappa, meth = (math.sqrt(d) if protocol == "equal" else paper_kappa(d, a)), "fna"
                        else:
                            kappa, meth = bandwidths(protocol, d, alpha)[1], "local"
                        gs = [spectral_gap(attention(x, meth, alpha=a, kappa=kappa)).gap for x in xs]
                        rows.append([np.mean(gs), np.std(gs)])
                    rec.array(f"gap_vs_alpha_{protocol}_{data}_d{d}", np.array(rows))

    # ---- FNA-19: diffusion-map spread under the Fig. 5b bandwidths ------------------------------
    with rec.timed("diffusion_maps"):
        for d in dm_dims:
            x = tokens("sequence", dm_n, d, child_rng(seed, "diffusion_map", d))
            kf = paper_kappa(d, alpha) * math.sqrt(dm_eps)
            kl = math.sqrt(dm_eps * d)  # the alpha = 2 bandwidth is not stated in the paper: sqrt(d eps) assumed
            if method == "dense":
                dist = Euclidean(d).distance(x)
                sf, ef, cf = diffusion_spread(fna_kernel(dist, alpha=alpha, scale=kf, dim=d))
                sl, el, cl = diffusion_spread(fna_kernel(dist, alpha=2.0, scale=kl, dim=d))
            else:
                sf, ef, cf = diffusion_spread(_kernel_operator(x, alpha, kf),
                                              rng=child_rng(seed, "diffusion_map_solver", d, "fna"))
                sl, el, cl = diffusion_spread(_kernel_operator(x, 2.0, kl),
                                              rng=child_rng(seed, "diffusion_map_solver", d, "local"))
            rec.array(f"dm_coords_fna_d{d}", cf)
            rec.array(f"dm_coords_local_d{d}", cl)
            ratio, eta_ratio = sf / sl, ef / el
            rec.info(f"dm_eta_ratio_d{d}", eta_ratio)
            rec.at_most(f"dm_spread_ratio_d{d}", ratio, 1.0,
                        why="FNA-19 'in close proximity': the FNA embedding is more compact than LA's (ratio < 1); "
                            "an example threshold 0.2 is not reached (measured 0.31 at d = 8, 0.20 at d = 16, n = 500)",
                        label="FNA-19: FNA diffusion map should be more compact than LA's", hint=hint)
            rec.at_most(f"dm_ratio_vs_eta_log_d{d}", abs(math.log(ratio / eta_ratio)), math.log(1.5),
                        why="the spread ratio tracks max(|eta_1|, |eta_2|)^tau: measured within a factor 1.07; 1.5 "
                            "allowed",
                        label="FNA-19 tracking: spread ratio vs eigenvalue ratio", hint=hint)

    for protocol, res in example.items():
        # Fig. 5c: the pair with the most DP hops (first in row-major order), its path per method
        src, dst = np.unravel_index(int(np.argmax(res["dp"]["_hops"])), res["dp"]["_hops"].shape)
        rec.array(f"example_pair_{protocol}", np.array([src, dst]))
        for m in METHODS:
            rec.array(f"example_hops_{protocol}_{m}", res[m]["_hops"])
            sp = ShortestPaths(None, res[m]["_hops"], res[m]["_pred"], "inverse")
            rec.array(f"example_path_{protocol}_{m}", np.array(path(sp, int(src), int(dst))))
    rec.array("example_tokens", np.array([datasets[-1], str(dims[0]), str(n1)]))


def _kernel_operator(x, alpha: float, kappa: float):
    """The FNA kernel of order ``alpha`` (2: local attention) on tokens ``x`` as a matrix-free operator."""
    import functools

    from manifolds import Euclidean
    from spectral import KernelOperator, fna_kernel

    d = x.shape[1]
    return KernelOperator(x, kernel=functools.partial(fna_kernel, alpha=alpha, scale=kappa, dim=d),
                          distance=Euclidean(d).distance)


def _dm_bytes(method: str, n: int) -> int:
    """Estimated peak bytes of the diffusion-map comparison on ``n`` tokens on ``method``."""
    if method == "dense":
        return DM_DENSE_FIXED_BYTES + DM_DENSE_BYTES_PER_PAIR * n * n
    from spectral import block_workspace_bytes

    return block_workspace_bytes(n, 3) + DM_FREE_BYTES_PER_POINT * n + DM_FREE_FIXED_BYTES


def _choose_method(method: str, n: int) -> str:
    """The diffusion-map path of ``method`` on ``n`` tokens, checked against the memory available now.

    "auto" takes the dense path when its estimate fits, else the matrix-free one. A path that does not
    fit is refused (``DenseMemoryError``) with its estimate and the options of this command that would fit.
    """
    return choose_path(
        method,
        dense=PathNeed(lambda v: _dm_bytes("dense", v), n, "--dm-n", 32,
                       "the dense diffusion maps (dm_n x dm_n distances, kernels, eigensolver, embedding distances)"
                       f" at --dm-n {n}"),
        matrix_free=PathNeed(lambda v: _dm_bytes("matrix-free", v), n, "--dm-n", 32,
                             f"the matrix-free diffusion maps (block eigensolver basis, kernel tiles) at --dm-n {n}"))


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
