"""FNA Fig. 2b/2c: heavy-tailed attention (alpha = 1.2) links the three clusters, local attention (alpha = 2) mostly does not; "intra-cluster only" depends on the unstated kappa.

FNA draws 18 tokens from the mixture (1/3) sum N(mu_i, I/4), mu = (3, 0), (-3, 0), (0, sqrt 3),
computes FNA attention with Q = K = X for alpha = 1.2 and alpha = 2 and draws every edge with
A_ij > 3.12e-5 (ledger FNA-15). kappa is not stated. This check reports, over many token draws,
the number of inter-cluster edges above the threshold and asserts on robust statistics: the
inter-cluster attention mass per row and the eigengap ratio at k = 3 clusters. The printed reading
("alpha = 2: intra-cluster edges only") holds for small kappa or the equilateral layout
mu_3 = (0, 3 sqrt 3), not for kappa = 1 with mu_3 = (0, sqrt 3).
"""

from __future__ import annotations

import math

import numpy as np

from verify.core import Timer, cli_main, make_result, require, require_int, require_range

CHECK = "fig2bc"
CLAIMS = ("FNA-15",)
LAYOUTS = ("paper", "equilateral")
CLAIM_VERSIONS = ("ledger", "paper")
HELP = {
    "alpha": "fractional order of the heavy-tailed panel (FNA Fig. 2b: alpha = 1.2); Fig. 2c uses alpha = 2",
    "kappa": "kernel scale kappa of FNA eq. 13 (not stated for Fig. 2b/c; 1 assumed)",
    "n": "tokens per draw (FNA Fig. 2b: 18)",
    "seeds": "independent token draws",
    "threshold": "attention above which an edge is drawn (FNA Fig. 2 caption: 3.12e-5)",
    "layout": "'paper': mu_3 = (0, sqrt 3) as printed; 'equilateral': mu_3 = (0, 3 sqrt 3)",
    "claim": "'ledger': assert the robust statements (inter-cluster mass, eigengap ratio, alpha<2 edges); "
             "'paper': also assert the printed 'alpha = 2 draws intra-cluster edges only' in every draw",
    "seed": "base seed of the token draws",
    "device": "array device: cpu or gpu",
}


def mixture(layout: str):
    """The Fig. 2b Gaussian mixture (``manifolds.GaussianMixture``), printed or equilateral layout."""
    from manifolds import GaussianMixture

    if layout == "paper":
        return GaussianMixture.fna_three_modes()
    if layout == "equilateral":
        return GaussianMixture([[3.0, 0.0], [-3.0, 0.0], [0.0, 3.0 * math.sqrt(3.0)]], 0.25)
    raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")


def draw(mix, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` i.i.d. tokens from the mixture with their component labels (host arrays); the labels
    are needed to call an edge inter-cluster."""
    return mix.sample_with_labels(n, rng=rng)


def attention_scores(x, *, alpha: float, kappa: float):
    """FNA scores ``Phi_alpha(|x_i - x_j| / kappa)`` with ``d_M = 2`` (FNA eq. 13, Q = K = X)."""
    from manifolds import Euclidean
    from spectral.kernels import fna_kernel

    return fna_kernel(Euclidean(2).distance(x), alpha=alpha, scale=kappa, dim=2)


def run(*, alpha=1.2, kappa=1.0, n=18, seeds=200, threshold=3.12e-5, layout="paper", claim="ledger", seed=0,
        device="cpu"):
    """Inter-cluster edges, inter-cluster mass and eigengap ratios for alpha and 2 over token draws."""
    require_int("seed", seed, low=0)
    require_range("alpha", alpha, low=0.5, high=2.0, high_open=True)
    require_range("kappa", kappa, low=0.0, high=100.0, low_open=True)
    require_int("n", n, low=6, high=2000)
    require_int("seeds", seeds, low=10, high=100000)
    require_range("threshold", threshold, low=0.0, high=1.0, low_open=True, high_open=True)
    require(layout in LAYOUTS, f"layout must be one of {LAYOUTS}, got {layout!r}")
    require(claim in CLAIM_VERSIONS, f"claim must be one of {CLAIM_VERSIONS}, got {claim!r}")
    from graphs import eigengap_ratios
    from spectral.backend import require_device, to_numpy
    from spectral.eigen import DisconnectedGraphWarning, markov_spectrum
    from spectral.normalize import row_normalize

    require_device(device)
    import warnings

    timer = Timer()
    mix = mixture(layout)
    rng = np.random.default_rng(seed)
    orders = (float(alpha), 2.0)
    edges = {a: np.empty(seeds) for a in orders}
    mass = {a: np.empty(seeds) for a in orders}
    ratio3 = {a: np.empty(seeds) for a in orders}
    inter_pairs = np.empty(seeds)
    example = {}
    with timer("draws"):
        for s in range(seeds):
            x, lab = draw(mix, n, rng)
            inter = lab[:, None] != lab[None, :]
            inter_pairs[s] = inter.sum()
            for a in orders:
                C = attention_scores(x, alpha=a, kappa=kappa)
                A = to_numpy(row_normalize(C))
                edges[a][s] = np.sum((A > threshold) & inter)
                mass[a][s] = np.mean(np.sum(np.where(inter, A, 0.0), axis=1))
                with warnings.catch_warnings():
                    # a Gaussian kernel can underflow between far clusters: disconnected is data here
                    warnings.simplefilter("ignore", DisconnectedGraphWarning)
                    eta = to_numpy(markov_spectrum(C, method="dense").eigenvalues)
                ratio3[a][s] = eigengap_ratios(eta, k_max=3)[1]
                if s == 0:
                    example[a] = A
                    example["points"], example["labels"] = x, lab
    failures = []
    measured, expected, tolerance = {}, {}, {}
    a1 = float(alpha)
    for a in orders:
        tag = f"alpha{a:g}"
        measured[f"inter_edges_mean_{tag}"] = float(edges[a].mean())
        measured[f"inter_edges_fraction_{tag}"] = float(np.mean(edges[a] / np.maximum(inter_pairs, 1)))
        measured[f"draws_without_inter_edges_{tag}"] = float(np.mean(edges[a] == 0))
        measured[f"inter_mass_mean_{tag}"] = float(mass[a].mean())
        measured[f"eigengap_ratio_k3_median_{tag}"] = float(np.median(ratio3[a]))
    # (1) the heavy tail links the clusters: inter-cluster attention mass per row larger for alpha than
    #     for alpha = 2 in >= 95 % of draws (ledger reference at kappa = 1: 4.2e-2 vs 3.4e-3)
    frac_mass = float(np.mean(mass[a1] > mass[2.0]))
    measured["frac_draws_mass_alpha_gt_2"] = frac_mass
    expected["frac_draws_mass_alpha_gt_2"], tolerance["frac_draws_mass_alpha_gt_2"] = ">= 0.95", 0.95
    if frac_mass < 0.95:
        failures.append(f"inter-cluster mass larger for alpha={a1:g} than alpha=2 in only {frac_mass:.0%} of draws")
    # (2) local attention is more clustered: eigengap ratio at k = 3 larger for alpha = 2 in >= 95 %
    frac_gap = float(np.mean(ratio3[2.0] > ratio3[a1]))
    measured["frac_draws_eigengap_2_gt_alpha"] = frac_gap
    expected["frac_draws_eigengap_2_gt_alpha"], tolerance["frac_draws_eigengap_2_gt_alpha"] = ">= 0.95", 0.95
    if frac_gap < 0.95:
        failures.append(f"eigengap ratio at k=3 larger for alpha=2 than alpha={a1:g} in only {frac_gap:.0%} of draws")
    # (3) alpha < 2: essentially every inter-cluster pair is above the drawing threshold
    key = f"inter_edges_fraction_alpha{a1:g}"
    expected[key], tolerance[key] = ">= 0.99", 0.99
    if measured[key] < 0.99:
        failures.append(f"alpha={a1:g}: only {measured[key]:.1%} of inter-cluster pairs above the threshold")
    # the printed Fig. 2c reading: alpha = 2 draws no inter-cluster edge (asserted only for claim='paper')
    key = "draws_without_inter_edges_alpha2"
    if claim == "paper":
        expected[key], tolerance[key] = 1.0, 0.0
        if measured[key] < 1.0:
            failures.append(f"(printed claim) alpha=2 drew inter-cluster edges in {1 - measured[key]:.0%} of draws "
                            f"(mean {measured['inter_edges_mean_alpha2']:.1f} edges above {threshold:g}, kappa={kappa:g})")
    # Regime note. The comparison is a statement about kappa small against the cluster spacing: measured
    # over seeds 0-9 (200 draws each) every assertion holds for kappa = 1 (kappa / min mean distance
    # 0.29, paper layout) at alpha = 1.0, 1.2, 1.8, while at kappa = 1.5-2 the mass fraction drops to
    # 0.93 (alpha = 1.8 / 1.2) and at kappa >= 3 to 0-0.02: a Gaussian as wide as the spacing is not
    # local at the cluster scale, so the check FAILS there by design and says why.
    means = np.asarray(mix.means, dtype=float)
    spacing = float(min(np.linalg.norm(means[i] - means[j]) for i in range(len(means)) for j in range(i)))
    measured["kappa_over_cluster_spacing"] = kappa / spacing
    if failures and kappa / spacing > 0.3:
        failures = [f + f" [kappa / min cluster-mean distance = {kappa / spacing:.2f} > 0.3: the alpha=2 kernel "
                        f"is not local at the cluster scale]" for f in failures]
    statement = (f"kappa={kappa:g}, {layout} layout: inter-cluster attention mass is larger for alpha={a1:g} than "
                 f"alpha=2 and the k=3 eigengap ratio smaller, in >= 95 % of {seeds} draws; alpha={a1:g} keeps "
                 f">= 99 % of inter-cluster pairs above {threshold:g}")
    if claim == "paper":
        statement += "; alpha=2 draws no inter-cluster edge (printed Fig. 2c)"
    arrays = {"points": example["points"], "labels": example["labels"], "A_alpha": example[a1], "A_2": example[2.0],
              "inter_edges_alpha": edges[a1], "inter_edges_2": edges[2.0]}
    return make_result(check=CHECK, claims=CLAIMS, statement=statement, measured=measured, expected=expected,
                       tolerance=tolerance,
                       parameters=dict(alpha=alpha, kappa=kappa, n=n, seeds=seeds, threshold=threshold,
                                       layout=layout, claim=claim, seed=seed, device=device),
                       failures=failures, timings=timer.timings, arrays=arrays)


def plot(result, path):
    """The first draw's edges above the threshold for alpha and 2 (as FNA Fig. 2b/2c)."""
    from figures._plotting import pyplot

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.6))
    draw_edges(axes[0], result, "A_alpha", "tab:blue", f"alpha = {result.parameters['alpha']:g}")
    draw_edges(axes[1], result, "A_2", "tab:red", "alpha = 2")
    fig.savefig(path)
    plt.close(fig)


def draw_edges(ax, result, key, color, title):
    """Tokens and attention edges above the threshold, line width proportional to A_ij."""
    x = np.asarray(result.arrays["points"], dtype=float)
    A = np.asarray(result.arrays[key], dtype=float)
    thr = result.parameters["threshold"]
    i, j = np.nonzero((A > thr) & ~np.eye(A.shape[0], dtype=bool))
    wmax = A[i, j].max() if i.size else 1.0
    for a, b in zip(i, j):
        ax.plot(x[[a, b], 0], x[[a, b], 1], color=color, lw=3.0 * A[a, b] / wmax, alpha=0.7, zorder=1)
    ax.scatter(x[:, 0], x[:, 1], s=60, color="0.6", edgecolor="k", zorder=2)
    ax.set_aspect("equal")
    ax.set_title(f"{title}: {i.size} edges > {thr:g}")


def main(argv=None) -> int:
    return cli_main(run, argv, prog=f"python -m verify.{CHECK}", help=HELP, plot=plot,
                    choices={"layout": LAYOUTS, "claim": CLAIM_VERSIONS})


if __name__ == "__main__":
    raise SystemExit(main())
