"""FNA Fig. 2b/2c: heavy-tailed attention (alpha = 1.2) links the three clusters, local attention (alpha = 2) mostly does not; "intra-cluster only" depends on the unstated kappa.

FNA draws 18 tokens from the mixture (1/3) sum N(mu_i, I/4), mu = (3, 0), (-3, 0), (0, sqrt 3),
computes FNA attention with Q = K = X for alpha = 1.2 and alpha = 2 and draws every edge with
A_ij > 3.12e-5 (FNA-15). kappa is not stated. This check reports, over many token draws,
the number of inter-cluster edges above the threshold and asserts on robust statistics: the
inter-cluster attention mass per row and the eigengap ratio at k = 3 clusters. The printed reading
("alpha = 2: intra-cluster edges only") holds for small kappa or the equilateral layout
mu_3 = (0, 3 sqrt 3), not for kappa = 1 with mu_3 = (0, sqrt 3); ``claim="printed"`` asserts it
and fails there. The check returns the first draw's tokens and attention matrices for the figures
(``figures.fna_mechanism``).
"""

from __future__ import annotations

import math

import numpy as np

from spectral.validation import check_int, check_option, check_real, child_rng
from verify.core.check import Check
from verify.core.result import Recorder

CHECK = Check("fig2bc", claims=("FNA-15",))
LAYOUTS = ("paper", "equilateral")


def mixture(layout: str):
    """The Fig. 2b Gaussian mixture (``manifolds.GaussianMixture``), printed or equilateral layout."""
    from manifolds import GaussianMixture

    check_option("layout", layout, LAYOUTS)
    if layout == "paper":
        return GaussianMixture.fna_three_modes()
    return GaussianMixture([[3.0, 0.0], [-3.0, 0.0], [0.0, 3.0 * math.sqrt(3.0)]], 0.25)


def sample_tokens(mix, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` i.i.d. tokens from the mixture with their component labels (host arrays); the labels
    are needed to call an edge inter-cluster."""
    return mix.sample_with_labels(n, rng=rng)


def attention_scores(x, *, alpha: float, kappa: float):
    """FNA scores ``Phi_alpha(|x_i - x_j| / kappa)`` with ``d_M = 2`` (FNA eq. 13, Q = K = X)."""
    from manifolds import Euclidean
    from spectral import fna_kernel

    return fna_kernel(Euclidean(2).distance(x), alpha=alpha, scale=kappa, dim=2)


@CHECK.define
def run(*, alpha=1.2, kappa=1.0, n=18, draws=200, threshold=3.12e-5, layout="paper", claim="corrected", seed=0,
        device="cpu"):
    """Inter-cluster edges, inter-cluster mass and eigengap ratios for alpha and 2 over token draws.

    Parameters
    ----------
    alpha : float
        Fractional order of the heavy-tailed panel, in [0.5, 2) (FNA Fig. 2b: alpha = 1.2); the
        Fig. 2c panel always uses alpha = 2.
    kappa : float
        Kernel scale kappa of FNA eq. 13, in (0, 100] (not stated for Fig. 2b/c; 1 assumed).
    n : int
        Tokens per draw, in [6, 2000] (FNA Fig. 2b: 18).
    draws : int
        Independent token draws, in [10, 100000].
    threshold : float
        Attention above which an edge is drawn, in (0, 1) (FNA Fig. 2 caption: 3.12e-5).
    layout : {"paper", "equilateral"}
        "paper": mu_3 = (0, sqrt 3) as printed; "equilateral": mu_3 = (0, 3 sqrt 3).
    claim : {"corrected", "printed"}
        "corrected": assert the robust statements (inter-cluster mass, eigengap ratio, alpha < 2
        edges). "printed": also assert the printed "alpha = 2 draws intra-cluster edges only" in
        every draw.
    seed : int
        Seed of the token draws.
    device : {"cpu"}
        Array device; this check runs on the host only.

    Returns
    -------
    CheckResult
        Passes when the heavy tail links the clusters more than alpha = 2 does in >= 95 % of draws
        (and, for the printed claim, alpha = 2 never draws an inter-cluster edge).
    """
    alpha = check_real("alpha", alpha, low=0.5, high=2.0, high_open=True)
    kappa = check_real("kappa", kappa, low=0.0, high=100.0, low_open=True)
    n = check_int("n", n, low=6, high=2000)
    draws = check_int("draws", draws, low=10, high=100000)
    threshold = check_real("threshold", threshold, low=0.0, high=1.0, low_open=True, high_open=True)
    check_option("layout", layout, LAYOUTS)
    check_option("claim", claim, ("corrected", "printed"))
    import warnings

    from graphs import eigengap_ratios
    from spectral import DisconnectedGraphWarning, markov_spectrum, row_normalize
    from spectral.backend import to_numpy

    rec = Recorder()
    mix = mixture(layout)
    rng = child_rng(seed)  # the root stream: one tier, draws taken in order
    orders = (alpha, 2.0)
    edges = {a: np.empty(draws) for a in orders}
    mass = {a: np.empty(draws) for a in orders}
    ratio3 = {a: np.empty(draws) for a in orders}
    inter_pairs = np.empty(draws)
    with rec.timed("draws"):
        for s in range(draws):
            x, lab = sample_tokens(mix, n, rng)
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
                    rec.array("A_alpha" if a == alpha else "A_2", A)
                    if a == alpha:
                        rec.array("points", x)
                        rec.array("labels", lab)

    # Regime: the comparison is a statement about kappa small against the cluster spacing. Measured over
    # seeds 0-9 (200 draws each) every assertion holds for kappa = 1 (kappa / min mean distance 0.29, paper
    # layout) at alpha = 1.0, 1.2, 1.8; at kappa = 1.5-2 the mass fraction drops to 0.93 (alpha = 1.8 / 1.2)
    # and at kappa >= 3 to 0-0.02: a Gaussian as wide as the spacing is not local at the cluster scale.
    means = np.asarray(mix.means, dtype=float)
    spacing = float(min(np.linalg.norm(means[i] - means[j]) for i in range(len(means)) for j in range(i)))
    hint = (f"kappa / min cluster-mean distance = {kappa / spacing:.2f} > 0.3: the alpha=2 kernel is not local at "
            f"the cluster scale") if kappa / spacing > 0.3 else ""
    for a in orders:
        tag = f"alpha{a:g}"
        rec.info(f"inter_edges_mean_{tag}", float(edges[a].mean()))
        fraction = float(np.mean(edges[a] / np.maximum(inter_pairs, 1)))
        if a == alpha:
            rec.at_least(f"inter_edges_fraction_{tag}", fraction, 0.99,
                         why="a power-law tail keeps every pair above 3.12e-5 at kappa = 1 (measured 1.0 over seeds "
                             "0-9, 200 draws each); 0.99 leaves room for a rare far outlier",
                         label=f"FNA-15: alpha={alpha:g} should keep essentially every inter-cluster pair above the "
                               f"threshold", hint=hint)
        else:
            rec.info(f"inter_edges_fraction_{tag}", fraction)
        without = float(np.mean(edges[a] == 0))
        if a == 2.0 and claim == "printed":
            rec.at_least(f"draws_without_inter_edges_{tag}", without, 1.0,
                         why="the printed Fig. 2c: alpha = 2 draws intra-cluster edges only, i.e. in every draw",
                         label=f"(printed claim) alpha=2 should draw no inter-cluster edge above {threshold:g} "
                               f"(kappa={kappa:g})", hint=hint)
        else:
            rec.info(f"draws_without_inter_edges_{tag}", without)
        rec.info(f"inter_mass_mean_{tag}", float(mass[a].mean()))
        rec.info(f"eigengap_ratio_k3_median_{tag}", float(np.median(ratio3[a])))
    frac_why = ("a robust majority: >= 95 % of draws (measured 99.5-100 % over seeds 0-9 at kappa = 1; inter-cluster "
                "mass 3.9-4.2e-2 vs 2.4-4.4e-3 per row)")
    rec.at_least("frac_draws_mass_alpha_gt_2", float(np.mean(mass[alpha] > mass[2.0])), 0.95, why=frac_why,
                 label=f"FNA-15: inter-cluster attention mass should be larger for alpha={alpha:g} than alpha=2",
                 hint=hint)
    rec.at_least("frac_draws_eigengap_2_gt_alpha", float(np.mean(ratio3[2.0] > ratio3[alpha])), 0.95, why=frac_why,
                 label=f"FNA-15: the k=3 eigengap ratio should be larger for alpha=2 than alpha={alpha:g}",
                 hint=hint)
    rec.info("kappa_over_cluster_spacing", kappa / spacing)
    rec.array("inter_edges_alpha", edges[alpha])
    rec.array("inter_edges_2", edges[2.0])
    statement = (f"kappa={kappa:g}, {layout} layout: inter-cluster attention mass is larger for alpha={alpha:g} than "
                 f"alpha=2 and the k=3 eigengap ratio smaller, in >= 95 % of {draws} draws; alpha={alpha:g} keeps "
                 f">= 99 % of inter-cluster pairs above {threshold:g}")
    if claim == "printed":
        statement += "; alpha=2 draws no inter-cluster edge (printed Fig. 2c)"
    return rec.finish(statement)


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
