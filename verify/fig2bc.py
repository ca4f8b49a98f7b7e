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

import dataclasses
import math
import warnings

import numpy as np

import graphs
import manifolds
import spectral
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.params import Choice, Int, Real
from verify.core.reduce import share
from verify.core.result import Recorder

CHECK = Check("fig2bc",
              printed='also "alpha = 2 draws intra-cluster edges only" in every draw (FNA Fig. 2c), which fails at '
                      "kappa = 1 in the paper's layout",
              host_only="n <= 2000 tokens per draw (18 in the paper); the n x n attention and its dense spectrum "
                        "per draw are small host computations")
LAYOUTS = ("paper", "equilateral")

#: Regime: the comparison is a statement about kappa small against the cluster spacing. Measured over seeds 0-9
#: (200 draws each) every assertion holds for kappa = 1 (kappa / min mean distance 0.29, paper layout) at
#: alpha = 1.0, 1.2, 1.8; at kappa = 1.5-2 the mass fraction drops to 0.93 (alpha = 1.8 / 1.2) and at kappa >= 3
#: to 0-0.02: a Gaussian as wide as the spacing is not local at the cluster scale.
#: Below kappa = 0.7 it fails the other way (seeds 0-2, 200 draws, alpha = 1.0 / 1.2 / 1.8): the heavy tail at the
#: cluster spacing, ~ (spacing / kappa)^-(2 + alpha) over the row sum, falls below the threshold 3.12e-5 (edge fraction
#: 0.93 at kappa = 0.5 for alpha = 1.8, 0.96 at 0.3 for alpha = 1.2, 0.04 at 0.1), and at kappa <= 0.2 both kernels are
#: narrower than the clusters (std 0.5): the k = 3 eigengap comparison holds in 0.83-0.91 of draws only.
_GRID = {"alpha": (1.0, 1.2, 1.8), "seed": tuple(range(10))}
#: The kappa range every statement was measured to hold in (for every alpha in [1, 1.8]).
KAPPA_RANGE = (0.7, 1.0)
_MAJORITY = ("a robust majority: >= 95 % of draws (inter-cluster mass 3.9-4.2e-2 vs 2.4-4.4e-3 per row at "
             "kappa = 1); kappa >= 3 gives 0-0.02")

#: The measured tolerances (the printed claim's 'every draw' is the statement itself).
CALIBRATION = Calibration(
    Tolerance("inter_edges_fraction_alpha1.2", 0.99, measured=1.0, over={"seed": tuple(range(10))},
              valid={"kappa": KAPPA_RANGE},
              why="a power-law tail keeps every pair above 3.12e-5 at kappa = 1; 0.99 leaves room for a rare far "
                  "outlier"),
    Tolerance("frac_draws_mass_alpha_gt_2", 0.95, measured=0.985, over=_GRID, valid={"kappa": KAPPA_RANGE},
              why=_MAJORITY),
    Tolerance("frac_draws_eigengap_2_gt_alpha", 0.95, measured=0.995, over=_GRID, valid={"kappa": KAPPA_RANGE},
              why=_MAJORITY),
)


#: Fewest tokens per draw at which the k = 3 eigengap comparison holds in >= 95 % of draws (kappa = 1, alpha = 1.2,
#: seeds 0-2, 400 draws, x86-64 AVX-512): share 0.89-0.91 at n = 6 (two tokens per cluster), 0.945-0.955 at 8,
#: 0.97-0.98 at 9, >= 0.988 from 10: with two or three tokens a cluster's spectral gap is often not resolved, so the
#: statement itself holds in fewer draws there (a true FAIL, explained).
EIGENGAP_MIN_TOKENS = 9


def few_tokens_hint(n: int) -> str:
    """Why the eigengap comparison may fail at n tokens (empty from EIGENGAP_MIN_TOKENS on)."""
    if n >= EIGENGAP_MIN_TOKENS:
        return ""
    return (f"n = {n} tokens ({n / 3:.3g} per cluster) < {EIGENGAP_MIN_TOKENS}: with so few tokens per cluster the k = 3 "
            "eigengap comparison holds in fewer draws (measured 0.89-0.91 at n = 6, 0.945-0.955 at 8, >= 0.97 from 9)")


def mixture(layout: str):
    """The Fig. 2b Gaussian mixture (``manifolds.GaussianMixture``), printed or equilateral layout."""
    if layout == "paper":
        return manifolds.GaussianMixture.fna_three_modes()
    if layout == "equilateral":
        return manifolds.GaussianMixture([[3.0, 0.0], [-3.0, 0.0], [0.0, 3.0 * math.sqrt(3.0)]], 0.25)
    raise InputError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")


def sample_tokens(mix, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` i.i.d. tokens from the mixture with their component labels (host arrays); the labels
    are needed to call an edge inter-cluster."""
    return mix.sample_with_labels(n, rng=rng)


def attention_scores(x, *, alpha: float, kappa: float):
    """FNA scores ``Phi_alpha(|x_i - x_j| / kappa)`` with ``d_M = 2`` (FNA eq. 13, Q = K = X)."""
    return spectral.fna_kernel(manifolds.Euclidean(2).distance(x), alpha=alpha, scale=kappa, dim=2)


@CHECK.parameters
class Params:
    alpha: float = Real(1.2, "Fractional order of the heavy-tailed panel (FNA Fig. 2b: alpha = 1.2); the Fig. 2c "
                        "panel always uses alpha = 2", low=0.5, high=2.0, high_open=True)
    kappa: float = Real(1.0, "Kernel scale kappa of FNA eq. 13 (not stated for Fig. 2b/c; 1 assumed)", low=0.0,
                        high=100.0, low_open=True)
    n: int = Int(18, "Tokens per draw (FNA Fig. 2b: 18)", low=6, high=2000, unit="tokens")
    draws: int = Int(200, "Independent token draws", low=10, high=100000)
    threshold: float = Real(3.12e-5, "Attention above which an edge is drawn (FNA Fig. 2 caption: 3.12e-5)", low=0.0,
                            high=1.0, low_open=True, high_open=True)
    layout: str = Choice("paper", LAYOUTS,
                         '"paper": mu_3 = (0, sqrt 3) as printed; "equilateral": mu_3 = (0, 3 sqrt 3)')


@dataclasses.dataclass(frozen=True)
class Quantities:
    """Per token draw, for the heavy-tailed order alpha and for alpha = 2; and the first draw for the figures."""

    #: inter-cluster (query, key) pairs with attention above the threshold, per draw
    inter_edges_alpha: np.ndarray
    inter_edges_2: np.ndarray
    #: inter-cluster (query, key) pairs of each draw (ordered, i != j)
    inter_pairs: np.ndarray
    #: inter-cluster attention mass per row (mean over rows), per draw
    inter_mass_alpha: np.ndarray
    inter_mass_2: np.ndarray
    #: eigengap ratio at k = 3 clusters of the attention's Markov spectrum, per draw
    eigengap_ratio_alpha: np.ndarray
    eigengap_ratio_2: np.ndarray
    #: the smallest distance between two mixture means
    cluster_spacing: float
    #: the first draw: tokens (n, 2), their components, and the attention matrices A = N_R(C) for alpha and 2
    points: np.ndarray
    labels: np.ndarray
    attention_alpha: np.ndarray
    attention_2: np.ndarray

    def inter_edges_fraction(self, order: str) -> float:
        """Mean over draws of the fraction of inter-cluster pairs above the threshold (``order``: "alpha" or "2")."""
        return float(np.mean(getattr(self, f"inter_edges_{order}") / np.maximum(self.inter_pairs, 1)))

    def draws_without_inter_edges(self, order: str) -> float:
        """Fraction of draws with no inter-cluster pair above the threshold (``order``: "alpha" or "2")."""
        edges = getattr(self, f"inter_edges_{order}")
        return share(edges == 0, edges)  # NaN when a draw's attention was not finite


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Inter-cluster edges, inter-cluster mass and eigengap ratios for alpha and 2 over token draws."""
    draws = p.draws
    mix = mixture(p.layout)
    rng = child_rng(p.seed)  # the root stream: one tier, draws taken in order
    orders = (p.alpha, 2.0)
    edges = {a: np.empty(draws) for a in orders}
    mass = {a: np.empty(draws) for a in orders}
    ratio3 = {a: np.empty(draws) for a in orders}
    inter_pairs = np.empty(draws)
    first = {}
    with ctx.timed("draws"):
        for s in range(draws):
            x, lab = sample_tokens(mix, p.n, rng)
            inter = lab[:, None] != lab[None, :]
            inter_pairs[s] = inter.sum()
            for a in orders:
                C = attention_scores(x, alpha=a, kappa=p.kappa)
                A = to_numpy(spectral.row_normalize(C))
                # a non-finite A gives no count (NaN > threshold is false) and no mass (where() drops an
                # intra-cluster NaN): the draw's count and mass are NaN
                finite = bool(np.all(np.isfinite(A)))
                edges[a][s] = np.sum((A > p.threshold) & inter) if finite else np.nan
                mass[a][s] = np.mean(np.sum(np.where(inter, A, 0.0), axis=1)) if finite else np.nan
                with warnings.catch_warnings():
                    # a Gaussian kernel can underflow between far clusters: disconnected is data here
                    warnings.simplefilter("ignore", spectral.DisconnectedGraphWarning)
                    eta = to_numpy(spectral.markov_spectrum(C, method="dense").eigenvalues)
                ratio3[a][s] = graphs.eigengap_ratios(eta, k_max=3)[1]
                if s == 0:
                    first[a] = A
                    first["points"], first["labels"] = x, lab
    means = np.asarray(mix.means, dtype=float)
    spacing = float(min(np.linalg.norm(means[i] - means[j]) for i in range(len(means)) for j in range(i)))
    return Quantities(inter_edges_alpha=edges[p.alpha], inter_edges_2=edges[2.0], inter_pairs=inter_pairs,
                      inter_mass_alpha=mass[p.alpha], inter_mass_2=mass[2.0], eigengap_ratio_alpha=ratio3[p.alpha],
                      eigengap_ratio_2=ratio3[2.0], cluster_spacing=spacing, points=first["points"],
                      labels=first["labels"], attention_alpha=first[p.alpha], attention_2=first[2.0])


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """The heavy tail links the clusters more than alpha = 2 in >= 95 % of draws (printed: alpha = 2 never does)."""
    alpha, kappa, spacing = p.alpha, p.kappa, q.cluster_spacing
    hint = (f"kappa / min cluster-mean distance = {kappa / spacing:.2f} > 0.3: the alpha=2 kernel is not local at "
            f"the cluster scale") if kappa / spacing > 0.3 else ""
    if kappa < KAPPA_RANGE[0]:
        hint = (f"kappa = {kappa:g} < {KAPPA_RANGE[0]:g}, below the range where the statement holds: the alpha tail at "
                f"the cluster spacing, (spacing / kappa)^-(2 + alpha) = {(spacing / kappa) ** -(2 + alpha):.2g} of a "
                f"self-score, nears the threshold {p.threshold:g}"
                + (", and both kernels are narrower than the clusters (std 0.5)" if kappa <= 0.2 else ""))
    for a, order in ((alpha, "alpha"), (2.0, "2")):
        tag = f"alpha{a:g}"
        rec.info(f"inter_edges_mean_{tag}", float(getattr(q, f"inter_edges_{order}").mean()))
        fraction = q.inter_edges_fraction(order)
        if order == "alpha":
            name = f"inter_edges_fraction_{tag}"
            try:
                bound = CALIBRATION.get(name, p)
            except KeyError:  # an alpha off the calibrated grid: the alpha = 1.2 row under its own name
                row = CALIBRATION.get("inter_edges_fraction_alpha1.2", p)
                bound = dataclasses.replace(row, name=name, measured=None, over=(),
                                            why=f"{row.why} [the row of alpha = 1.2: alpha = {a:g} was not calibrated]")
            rec.at_least(name, fraction, bound,
                         label=f"FNA-15: alpha={alpha:g} should keep essentially every inter-cluster pair above the "
                               f"threshold", hint=hint)
        else:
            rec.info(f"inter_edges_fraction_{tag}", fraction)
        without = q.draws_without_inter_edges(order)
        if order == "2" and p.claim == "printed":
            rec.at_least(f"draws_without_inter_edges_{tag}", without, 1.0,
                         why="the printed Fig. 2c: alpha = 2 draws intra-cluster edges only, i.e. in every draw",
                         label=f"(printed claim) alpha=2 should draw no inter-cluster edge above {p.threshold:g} "
                               f"(kappa={kappa:g})", hint=hint)
        else:
            rec.info(f"draws_without_inter_edges_{tag}", without)
        rec.info(f"inter_mass_mean_{tag}", float(getattr(q, f"inter_mass_{order}").mean()))
        rec.info(f"eigengap_ratio_k3_median_{tag}", float(np.median(getattr(q, f"eigengap_ratio_{order}"))))
    rec.at_least("frac_draws_mass_alpha_gt_2", share(q.inter_mass_alpha > q.inter_mass_2, q.inter_mass_alpha,
                                                     q.inter_mass_2),
                 CALIBRATION.get("frac_draws_mass_alpha_gt_2", p),
                 label=f"FNA-15: inter-cluster attention mass should be larger for alpha={alpha:g} than alpha=2",
                 hint=hint)
    rec.at_least("frac_draws_eigengap_2_gt_alpha", share(q.eigengap_ratio_2 > q.eigengap_ratio_alpha,
                                                         q.eigengap_ratio_2, q.eigengap_ratio_alpha),
                 CALIBRATION.get("frac_draws_eigengap_2_gt_alpha", p),
                 label=f"FNA-15: the k=3 eigengap ratio should be larger for alpha=2 than alpha={alpha:g}",
                 hint="; ".join(h for h in (hint, few_tokens_hint(p.n)) if h))
    rec.info("kappa_over_cluster_spacing", kappa / spacing)
    statement = (f"kappa={kappa:g}, {p.layout} layout: inter-cluster attention mass is larger for alpha={alpha:g} than "
                 f"alpha=2 and the k=3 eigengap ratio smaller, in >= 95 % of {p.draws} draws; alpha={alpha:g} keeps "
                 f">= 99 % of inter-cluster pairs above {p.threshold:g}")
    if p.claim == "printed":
        statement += "; alpha=2 draws no inter-cluster edge (printed Fig. 2c)"
    return statement


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
