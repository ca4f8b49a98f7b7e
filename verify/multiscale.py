"""FNA's mechanism claims (larger spectral gap, ~1-hop shortest paths, compact diffusion maps) hold only under the paper's bandwidths.

FNA ("Mechanistic explanation", Figs. 5a-5e) compares multiscale FNA (alpha = 1.2), local attention
(LA, alpha = 2) and dot-product attention (DP) on attention graphs. On synthetic tokens (Gaussian,
a 3-cluster mixture, a smooth sinusoidal sequence) in R^d this check measures the spectral gap
``1 - |eta_2|``, the hop counts of the weighted shortest paths (weights ``1 / A_ij``), the
normalised row entropy and the diffusion-map spread under three bandwidth protocols (DESIGN 3.4):
(i) the paper's kappa, (ii) equal kappa = sqrt(d), (iii) matched half-maximum width. The paper's
ordering FNA > LA > DP holds under (i), where FNA rows are nearly uniform (entropy >= 0.99,
FNA-16), and reverses under (ii): it comes from the bandwidth, not from the power-law tail.
"""

from __future__ import annotations

import math

import numpy as np

from verify.core import Timer, cli_main, make_result, require, require_int, require_range

CHECK = "multiscale"
CLAIMS = ("FNA-16", "FNA-17", "FNA-18", "FNA-19")
DATASETS = ("gaussian", "clusters", "sequence")
PROTOCOLS = ("paper", "equal", "matched")
METHODS = ("fna", "local", "dp")
CLAIM_VERSIONS = ("ledger", "paper")
HELP = {
    "alpha": "fractional order of multiscale FNA (FNA eq. 10; the paper's alpha = 1.2)",
    "dims": "token dimensions d = d_H = d_M (FNA Methods: d_M = d_H), comma-separated",
    "sizes": "sequence lengths n (FNA Fig. 5e), comma-separated; the first and last are compared",
    "seeds": "independent token sets per (data, d, n)",
    "datasets": "token sets: gaussian N(0, I_d), clusters (3-mode mixture), sequence (sinusoidal "
                "positional features), comma-separated",
    "alphas": "alpha grid of the synthetic Fig. 5a (gap vs alpha), comma-separated",
    "dm_dims": "token dimensions of the diffusion-map comparison (FNA Fig. 5b; ledger FNA-19: 8, 16)",
    "dm_n": "tokens of the diffusion-map comparison (FNA Fig. 5b: n = 500)",
    "dm_eps": "epsilon of the Fig. 5b bandwidth kappa = paper kappa * sqrt(eps) (FNA Methods: 0.1)",
    "claim": "'ledger': assert the precise statements of CLAIMS.md (bandwidth-dependent); 'paper': "
             "assert the printed claim (FNA gap > LA > DP and ~1 hop under every bandwidth)",
    "full": "run the ledger's protocol (n = 32..512, 20 seeds; minutes)",
    "seed": "base seed (child seeds per token set from SeedSequence.spawn)",
    "device": "array device: cpu or gpu",
}

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
    raise ValueError(f"data must be one of {DATASETS}, got {data!r}")


def bandwidths(protocol: str, d: int, alpha: float) -> tuple[float, float]:
    """(kappa_FNA, kappa_LA) of a bandwidth protocol (DESIGN 3.4)."""
    from spectral.kernels import matched_half_width_kappa, paper_kappa

    if protocol == "paper":
        return paper_kappa(d, alpha), paper_kappa(d, 2.0)
    if protocol == "equal":
        return math.sqrt(d), math.sqrt(d)
    if protocol == "matched":
        k1 = paper_kappa(d, alpha)
        return k1, matched_half_width_kappa(k1, d, alpha)
    raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")


def attention(x, method: str, *, alpha: float, kappa: float | None, xp=np):
    """Attention matrix ``A = N_R(C)`` of tokens ``x`` (FNA eq. 13-14; DP: exp(X X^T / sqrt d))."""
    from manifolds import Euclidean
    from spectral.kernels import dot_product_scores, fna_kernel
    from spectral.normalize import row_normalize

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


def diffusion_spread(A_scores, *, tau: float = 1.0) -> tuple[float, float, np.ndarray]:
    """Mean pairwise distance of the 2-D diffusion map ``(eta_j^tau psi_j)_{j=1,2}`` and max |eta_j|.

    ``psi_j`` are right eigenvectors of ``A = N_R(C)`` normalised to ``sum_i pi_i psi_j(i)^2 = 1``
    (FNA eq. 19, pi the stationary distribution), from :func:`spectral.markov_spectrum`.
    Returns the spread, ``max(|eta_1|, |eta_2|)^tau`` (the nontrivial eigenvalues) and the
    ``(n, 2)`` coordinates.
    """
    from spectral.backend import to_numpy
    from spectral.eigen import markov_spectrum

    spec = markov_spectrum(A_scores, 3, vectors=True, method="dense")
    eta = np.real(to_numpy(spec.eigenvalues))[1:3]
    psi = np.real(to_numpy(spec.right_vectors))[:, 1:3]
    deg = to_numpy(spec.degrees)
    pi = deg / deg.sum()
    psi = psi / np.sqrt(np.sum(pi[:, None] * psi**2, axis=0))
    coords = psi * (eta**tau)[None, :]
    diff = coords[:, None, :] - coords[None, :, :]
    dist = np.sqrt(np.sum(diff**2, axis=2))
    n = dist.shape[0]
    return float(dist.sum() / (n * (n - 1))), float(np.max(np.abs(eta)) ** tau), coords


# -------------------------------------------------------------------------------------- run

FULL = dict(sizes=(32, 64, 128, 256, 512), seeds=20)


def run(*, alpha=1.2, dims=(8, 32), sizes=(32, 128), seeds=3, datasets=("gaussian", "clusters", "sequence"),
        alphas=(1.0, 1.2, 1.4, 1.6, 1.8, 2.0), dm_dims=(8, 16), dm_n=500, dm_eps=0.1, claim="ledger", full=False,
        seed=0, device="cpu"):
    """Gap, hops, entropy and diffusion-map spread of FNA / LA / DP under three bandwidth protocols.

    ``full=True`` runs the ledger's protocol (n = 32..512, 20 seeds; minutes) instead of the
    quick default (n = 32, 128; 3 seeds).
    """
    require_int("seed", seed, low=0)
    if full:
        sizes, seeds = FULL["sizes"], FULL["seeds"]
    require_range("alpha", alpha, low=0.5, high=2.0, high_open=True)
    for name, values in (("dims", dims), ("dm_dims", dm_dims)):
        require(len(values) >= 1 and all(isinstance(d, (int, np.integer)) and 2 <= d <= 256 for d in values),
                f"{name} must be integers in [2, 256], got {values!r}")
    require(len(sizes) >= 2 and all(isinstance(m, (int, np.integer)) and 8 <= m <= 1024 for m in sizes)
            and list(sizes) == sorted(set(sizes)),
            f"sizes must be at least two increasing integers in [8, 1024], got {sizes!r}")
    require_int("seeds", seeds, low=2, high=200)
    require(len(datasets) >= 1 and all(s in DATASETS for s in datasets),
            f"datasets must be a non-empty subset of {DATASETS}, got {datasets!r}")
    require(len(alphas) >= 2 and all(isinstance(a, (int, float)) and 0.5 <= a <= 2.0 for a in alphas),
            f"alphas must hold at least two values in [0.5, 2], got {alphas!r}")
    require_int("dm_n", dm_n, low=32, high=2000)
    require_range("dm_eps", dm_eps, low=0.0, high=1.0, low_open=True)
    require(claim in CLAIM_VERSIONS, f"claim must be one of {CLAIM_VERSIONS}, got {claim!r}")
    from spectral.backend import require_device

    require_device(device)
    params = dict(alpha=alpha, dims=tuple(dims), sizes=tuple(sizes), seeds=seeds, datasets=tuple(datasets),
                  alphas=tuple(alphas), dm_dims=tuple(dm_dims), dm_n=dm_n, dm_eps=dm_eps, claim=claim, full=full,
                  seed=seed, device=device)
    with _single_thread_blas():
        return _run(params)


def _single_thread_blas():
    """One BLAS thread: the matrices here are small (n <= 1024), and on a shared machine threaded
    BLAS made each 128 x 128 eigensolve 10x slower (0.05 s instead of 0.006 s)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


class _Ledger:
    """Collects measured / expected / tolerance entries and failure messages."""

    def __init__(self):
        self.measured, self.expected, self.tolerance, self.failures = {}, {}, {}, []

    def at_least(self, key, value, bound, what):
        self.measured[key], self.expected[key], self.tolerance[key] = value, f">= {bound}", bound
        if not value >= bound:
            self.failures.append(f"{what}: {key} = {value:.4g} < {bound}")

    def at_most(self, key, value, bound, what):
        self.measured[key], self.expected[key], self.tolerance[key] = value, f"<= {bound}", bound
        if not value <= bound:
            self.failures.append(f"{what}: {key} = {value:.4g} > {bound}")


def _run(p):
    from graphs import spectral_gap
    from manifolds import Euclidean
    from spectral.kernels import fna_kernel, fna_profile, paper_kappa

    alpha, dims, sizes, seeds, datasets = p["alpha"], p["dims"], p["sizes"], p["seeds"], p["datasets"]
    timer = Timer()
    children = iter(np.random.SeedSequence(p["seed"]).spawn(len(datasets) * len(dims) * len(sizes) * seeds
                                                           + len(dims) * seeds + len(p["dm_dims"])))
    stats = {}  # (data, d, n, protocol, method) -> list of per-token-set dicts
    example = {}
    with timer("graphs"):
        for data in datasets:
            for d in dims:
                for n in sizes:
                    for s in range(seeds):
                        x = tokens(data, n, d, np.random.default_rng(next(children)))
                        dp = _graph_stats(attention(x, "dp", alpha=alpha, kappa=None))
                        for protocol in PROTOCOLS:
                            kf, kl = bandwidths(protocol, d, alpha)
                            res = {"fna": _graph_stats(attention(x, "fna", alpha=alpha, kappa=kf)),
                                   "local": _graph_stats(attention(x, "local", alpha=alpha, kappa=kl)), "dp": dp}
                            for m in METHODS:
                                stats.setdefault((data, d, n, protocol, m), []).append(res[m])
                            if s == 0 and data == datasets[-1] and d == dims[0] and n == sizes[-1]:
                                example[protocol] = res

    def arr(data, d, n, protocol, m, field):
        return np.array([r[field] for r in stats[(data, d, n, protocol, m)]], dtype=float)

    def pooled(data, d, protocol, m, field):
        return np.concatenate([arr(data, d, n, protocol, m, field) for n in sizes])

    L = _Ledger()
    arrays = {"sizes": np.array(sizes), "alphas": np.array(p["alphas"], dtype=float)}
    n0, n1 = sizes[0], sizes[-1]
    claim = p["claim"]

    # ---- FNA-16: the bandwidth identity and near-uniform rows ---------------------------------
    ident = max(abs(float(fna_profile(np.array([math.sqrt(d) / paper_kappa(d, alpha)]), alpha=alpha, dim=d)[0])
                    - 2.0 ** (-(d + alpha) / d)) for d in dims)
    # exact algebra: one power of a number near 1/2, 4 sqrt(eps) (DESIGN 3.5 a)
    L.at_most("fna16_identity_error", ident, 4 * math.sqrt(np.finfo(float).eps), "FNA-16 identity")
    for data in datasets:
        for d in dims:
            for m in METHODS:
                L.measured[f"entropy_{m}_{data}_d{d}_n{n1}"] = float(arr(data, d, n1, "paper", m, "entropy").mean())
                L.measured[f"nmax_{m}_{data}_d{d}_n{n1}"] = float(arr(data, d, n1, "paper", m, "nmax").mean())
            if data == "gaussian":
                # ledger FNA-16: FNA entropy >= 0.99 for Gaussian tokens (reference 0.995 at d=8, n=256;
                # measured here 0.9934 at d=8 and 0.9973 at d=32, n=128, 3 seeds; it grows with n)
                key = f"entropy_fna_{data}_d{d}_n{n1}"
                L.at_least(key, L.measured[key], 0.99, "FNA-16 (paper kappa)")

    # ---- FNA-17 (gap) and FNA-18 (hops) per protocol -------------------------------------------
    for data in datasets:
        for d in dims:
            for protocol in PROTOCOLS:
                tag = f"{protocol}_{data}_d{d}"
                g = {m: pooled(data, d, protocol, m, "gap") for m in METHODS}
                h = {m: pooled(data, d, protocol, m, "hops_mean") for m in METHODS}
                for m in METHODS:
                    L.measured[f"gap_{m}_{tag}"] = float(g[m].mean())
                    L.measured[f"hops_{m}_{tag}"] = float(h[m].mean())
                    L.measured[f"hops_max_{m}_{tag}"] = float(pooled(data, d, protocol, m, "hops_max").max())
                    arrays[f"hops_vs_n_{protocol}_{m}_{data}_d{d}"] = np.array(
                        [[arr(data, d, n, protocol, m, "hops_mean").mean(), arr(data, d, n, protocol, m, "hops_mean").std()]
                         for n in sizes])
                frac_fl = float(np.mean(g["fna"] > g["local"]))
                frac_ld = float(np.mean(g["local"] > g["dp"]))
                inc = {m: float(arr(data, d, n1, protocol, m, "hops_mean").mean()
                                - arr(data, d, n0, protocol, m, "hops_mean").mean()) for m in METHODS}
                for m in METHODS:
                    L.measured[f"hops_increase_{m}_{tag}"] = inc[m]
                if claim == "paper" or protocol in ("paper", "matched"):
                    # FNA-17 (i), (iii) / printed claim: FNA > LA (> DP) in >= 95 % of token sets
                    L.at_least(f"frac_gap_fna_gt_local_{tag}", frac_fl, 0.95, "FNA-17")
                    if claim == "paper" or protocol == "paper":
                        L.at_least(f"frac_gap_local_gt_dp_{tag}", frac_ld, 0.95, "FNA-17")
                        # FNA-18: FNA ~1 hop at every n (ledger: mean in [1, 1.01])
                        worst = max(float(arr(data, d, n, protocol, "fna", "hops_mean").mean()) for n in sizes)
                        L.at_most(f"hops_fna_worst_n_{tag}", worst, 1.01, "FNA-18")
                else:
                    # FNA-17 (ii): under equal kappa the gap ordering reverses (FNA < LA), and so does
                    # the hop ordering (FNA needs more hops than LA); measured: FNA gap <= 0.11 vs
                    # LA >= 0.55, FNA hops 3.2-27 vs LA 1.0-1.7 in every token set
                    L.at_most(f"frac_gap_fna_gt_local_{tag}", frac_fl, 0.05, "FNA-17 (equal kappa, reversal)")
                    L.at_least(f"frac_hops_fna_gt_local_{tag}", float(np.mean(h["fna"] > h["local"])), 0.95,
                               "FNA-18 (equal kappa, reversal)")
                if protocol == "paper" and data in ("gaussian", "clusters"):
                    # FNA-18: LA and DP need more than 1.2 hops on average (ledger reference: Gaussian
                    # tokens, LA 1.27-1.75, DP 2.1-2.5). Not asserted for the sinusoidal sequence: at
                    # d = 32 its spread is small against kappa = sqrt(d) and LA needs 1.02 hops.
                    for m in ("local", "dp"):
                        L.at_least(f"hops_{m}_{tag}", float(h[m].mean()), 1.2, "FNA-18")
                if protocol == "paper" and data == "sequence":
                    # FNA-18: hops grow with n for smooth sequences (ledger: >= 0.1 from n=32 to 512 for
                    # DP; measured 0.28-0.35 from n=32 to 128); LA non-decreasing (measured +0.04..0.21)
                    L.at_least(f"hops_increase_dp_{tag}", inc["dp"], 0.1, "FNA-18 (growth with n)")
                    L.at_least(f"hops_increase_local_{tag}", inc["local"], 0.0, "FNA-18 (growth with n)")

    # ---- synthetic Fig. 5a: gap vs alpha (Gaussian tokens, largest n) --------------------------
    with timer("gap_vs_alpha"):
        for d in dims:
            xs = [tokens("gaussian", n1, d, np.random.default_rng(next(children))) for _ in range(seeds)]
            dp_gap = [spectral_gap(attention(x, "dp", alpha=alpha, kappa=None)).gap for x in xs]
            arrays[f"gap_vs_alpha_dp_d{d}"] = np.array([np.mean(dp_gap), np.std(dp_gap)])
            for protocol in PROTOCOLS:
                rows = []
                for a in p["alphas"]:
                    if a < 2.0:
                        kappa, meth = (math.sqrt(d) if protocol == "equal" else paper_kappa(d, a)), "fna"
                    else:
                        kappa, meth = bandwidths(protocol, d, alpha)[1], "local"
                    gs = [spectral_gap(attention(x, meth, alpha=a, kappa=kappa)).gap for x in xs]
                    rows.append([np.mean(gs), np.std(gs)])
                arrays[f"gap_vs_alpha_{protocol}_d{d}"] = np.array(rows)

    # ---- FNA-19: diffusion-map spread under the Fig. 5b bandwidths ------------------------------
    with timer("diffusion_maps"):
        for d in p["dm_dims"]:
            x = tokens("sequence", p["dm_n"], d, np.random.default_rng(next(children)))
            dist = Euclidean(d).distance(x)
            kf = paper_kappa(d, alpha) * math.sqrt(p["dm_eps"])
            kl = math.sqrt(p["dm_eps"] * d)  # alpha = 2 unstated in the paper: sqrt(d eps) assumed (CLAIMS FNA-19)
            sf, ef, cf = diffusion_spread(fna_kernel(dist, alpha=alpha, scale=kf, dim=d))
            sl, el, cl = diffusion_spread(fna_kernel(dist, alpha=2.0, scale=kl, dim=d))
            arrays[f"dm_coords_fna_d{d}"], arrays[f"dm_coords_local_d{d}"] = cf, cl
            ratio, eta_ratio = sf / sl, ef / el
            L.measured[f"dm_eta_ratio_d{d}"] = eta_ratio
            # FNA-19: the FNA embedding is more compact than LA's (ratio < 1; the ledger's example
            # threshold 0.2 is not reached: measured 0.31 at d=8, 0.20 at d=16, n=500) ...
            L.at_most(f"dm_spread_ratio_d{d}", ratio, 1.0, "FNA-19")
            # ... and the ratio tracks max(|eta_1|, |eta_2|)^tau (measured within a factor 1.07; 1.5 allowed)
            L.at_most(f"dm_ratio_vs_eta_log_d{d}", abs(math.log(ratio / eta_ratio)), math.log(1.5), "FNA-19 tracking")

    from graphs import ShortestPaths, path

    for protocol, res in example.items():
        # Fig. 5c: the pair with the most DP hops (first in row-major order), its path per method
        src, dst = np.unravel_index(int(np.argmax(res["dp"]["_hops"])), res["dp"]["_hops"].shape)
        arrays[f"example_pair_{protocol}"] = np.array([src, dst])
        for m in METHODS:
            arrays[f"example_hops_{protocol}_{m}"] = res[m]["_hops"]
            sp = ShortestPaths(None, res[m]["_hops"], res[m]["_pred"], "inverse")
            arrays[f"example_path_{protocol}_{m}"] = np.array(path(sp, int(src), int(dst)))
    arrays["example_tokens"] = np.array([datasets[-1], str(dims[0]), str(n1)])

    if claim == "ledger":
        statement = (f"Under the paper's kappa FNA (alpha={alpha}) rows are near-uniform (entropy >= 0.99) and "
                     "gap FNA > LA > DP, FNA hops <= 1.01 < 1.2 < LA, DP hops (Gaussian, clustered tokens), hops "
                     "grow with n for sequences; under equal kappa = sqrt(d) both orderings reverse; matched "
                     "half-width keeps FNA > LA; the diffusion-map spread ratio FNA/LA is < 1 and tracks the "
                     "eigenvalue ratio")
    else:
        statement = (f"(printed claim) FNA (alpha={alpha}) has a larger gap than LA and DP and ~1-hop paths "
                     "whatever the bandwidth")
    failures = L.failures
    # Regime: the ledger bounds (entropy >= 0.99, hops <= 1.01) are measured for d >= 8; at d = 4 (seed 0)
    # entropy 0.987 and worst hops 1.048: in low dimension the distances do not concentrate, so the rows
    # are not near-uniform. A failure there says so.
    if claim == "ledger" and failures and min(dims) < 8:
        failures = [f + f" [d = {min(dims)} < 8: the ledger bounds hold for concentrated distances, "
                        f"measured for d >= 8]" for f in failures]
    return make_result(check=CHECK, claims=CLAIMS, statement=statement, measured=L.measured, expected=L.expected,
                       tolerance=L.tolerance, parameters=p, failures=failures, timings=timer.timings,
                       arrays=arrays)


def plot(result, path):
    """Gap vs alpha (synthetic Fig. 5a) for each protocol, first d."""
    from figures._plotting import pyplot

    plt = pyplot()
    d = result.parameters["dims"][0]
    alphas = np.asarray(result.arrays["alphas"], dtype=float)
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    for protocol in PROTOCOLS:
        g = np.asarray(result.arrays[f"gap_vs_alpha_{protocol}_d{d}"], dtype=float)
        ax.errorbar(alphas, g[:, 0], yerr=g[:, 1], marker="o", capsize=2, label=f"{protocol} kappa")
    ax.set_xlabel("alpha")
    ax.set_ylabel("spectral gap 1 - |eta_2|")
    ax.set_title(f"gap vs alpha, Gaussian tokens, d={d}")
    ax.legend()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    # ``--full true``: verify.core builds every keyword of run() as an option, so a separate
    # store_true ``--full`` flag would collide with it.
    return cli_main(run, argv, prog=f"python -m verify.{CHECK}", help=HELP, plot=plot,
                    choices={"claim": CLAIM_VERSIONS})


if __name__ == "__main__":
    raise SystemExit(main())
