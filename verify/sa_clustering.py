"""For d >= 3 and every beta >= 0, (SA) and (USA) reach a single cluster from almost every start (SA-1).

SA-1 (GLPR, arXiv 2312.10794 v5, section 6, Theorem 6.1, citing Markdahl, Thunberg & Goncalves 2018
and Criscitiello, Rebjock, McRae & Boumal 2024): for ``n >= 2``, ``d >= 3`` and ``beta >= 0``,
Lebesgue-almost every initial sequence on ``S^(d-1)`` converges to one point ``x*`` under (SA) and
under (USA). (USA) is the gradient ascent of ``E_beta = (1/2 beta n^2) sum_ij e^(beta <x_i, x_j>)``
(section 3.3) and (SA) one for a metric weighted by ``Z_i / n`` (section 3.4): ``E_beta`` never
decreases, every critical point but the clusters is a strict saddle for ``d >= 3``, so almost every
trajectory ends in a single cluster. "Almost every" is needed: an antipodal pair ``(x, -x)`` is an
equilibrium of both at every ``beta`` (the check measures its velocity, which is exactly zero).

The check draws ``draws`` configurations of ``n`` uniform tokens on ``S^(d-1)`` for each ``d`` in
``dims`` (seeded), runs :func:`spectral.attention_flow` (adaptive Dormand-Prince) for each ``beta``
and both normalisations up to ``t_max`` (in units of ``e^(-beta)`` for (USA), its natural clock:
near a cluster it contracts at rate ``e^beta``, (SA) at rate 1), and asserts at ``t_max``: every
configuration is one cluster (:func:`spectral.cluster_tokens` at linking distance ``tol``, and its
diameter at most ``tol``), ``E_beta`` did not decrease between output times beyond rounding, and the
tokens stayed on the sphere. ``beta`` is bounded here by the time a run can afford: the merge of the
last two clusters takes a time growing like ``e^(beta (1 - <u, v>))`` (metastability, SA-3), so at
``d = 3`` a ``beta`` of 4 already leaves some draws in two clusters at ``t = 2048`` (measured).
``full=True`` runs ``n = 1024`` tokens in ``d = 3, 16, 64`` (the paper's experiments use ``n = 32``).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

import spectral
from manifolds.references.attention_flow import uniform_sphere
from spectral.floor.backend import to_numpy
from spectral.floor.validation import child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.memory import PathNeed
from verify.core.params import Flag, Int, Ints, Real, Reals
from verify.core.result import Recorder

__all__ = ["CHECK", "CALIBRATION", "Params", "Quantities", "run", "main", "FULL"]

CHECK = Check("sa_clustering", devices=("cpu", "gpu"))

NORMALISATIONS = ("softmax", "uniform")
#: ``full=True``: n = 1024 tokens in d = 3, 16, 64 (beyond the paper's n = 32), 4 draws each
FULL = {"n": 1024, "dims": (3, 16, 64), "draws": 4}

CALIBRATION = Calibration(
    Tolerance("energy_relative_decrease", 1e-12, measured=7.0e-16,
              over={"dims": ((3, 8),), "betas": ((0.0, 1.0, 2.0),), "seed": (0, 1, 2)},
              why="E_beta never decreases along (SA) or (USA); the largest drop between output times relative to "
                  "max |E_beta| is rounding of n^2 terms of size <= e^beta (n^2 eps ~ 2e-13)"),
)


@CHECK.parameters
class Params:
    n: int = Int(32, "Tokens per configuration", low=2, high=4096, unit="tokens")
    dims: tuple = Ints((3, 8), "Ambient dimensions d (tokens on S^(d-1); the theorem needs d >= 3)", low=2,
                       high=512)
    betas: tuple = Reals((0.0, 1.0, 2.0), "Inverse temperatures beta (the theorem: beta >= 0)", low=0.0, high=8.0)
    draws: int = Int(8, "Uniform random configurations per (d, beta)", low=1, high=4096)
    t_max: float = Real(256.0, "Final time (for USA in units of e^-beta, its natural clock)", low=1.0, high=1e5)
    tol: float = Real(1e-3, "Linking distance of a cluster (and the largest diameter of a single cluster)",
                      low=1e-8, high=0.5, low_open=True)
    rtol: float = Real(1e-7, "Relative tolerance of the adaptive integrator", low=1e-12, high=1e-3)
    full: bool = Flag(False, "Run the heavy tier: n = 1024 tokens in d = 3, 16, 64, 4 draws (22 minutes on 2 CPU "
                             "cores; GPU advised)")

    def resolve(self):
        """``full`` replaces n, dims and draws by the heavy tier's."""
        if self.full:
            return dataclasses.replace(self, **FULL)
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What sa_clustering measures; dictionaries are keyed by (d, beta, normalisation)."""

    #: output times (for USA multiply by e^-beta)
    times: np.ndarray
    #: number of clusters per output time and draw
    counts: dict[tuple[int, float, str], np.ndarray]
    #: diameter max |x_i - x_j| at t_max per draw
    final_diameter: dict[tuple[int, float, str], np.ndarray]
    #: largest decrease of E_beta between consecutive output times over the draws, relative to max |E_beta|
    energy_decrease: dict[tuple[int, float, str], float]
    norm_error: float
    #: |velocity| of an antipodal pair (an equilibrium of both dynamics), max over beta and normalisations
    antipodal_speed: float


def _memory(n: int, draws: int, d: int, outputs: int) -> float:
    # attention_flow's estimate (the outputs, 11 token arrays of the stages, 3 score arrays) plus the distances
    # and links of one output time's cluster count (25 bytes per pair) and the Gram matrices of the energy
    tokens = draws * n * d * 8
    return (outputs + 14) * tokens + 3 * draws * n * n * 8 + 25 * draws * n * n + 16 * outputs * draws * n * n + (
        16 << 20)


@CHECK.memory
def needs(p: Params) -> dict:
    """The flow of ``draws`` configurations at once and the distances of its cluster counts."""
    d = max(p.dims)
    outputs = _times(p.t_max).size
    return {"flow": PathNeed(lambda v: _memory(v, p.draws, d, outputs), p.n, option="--n", low=2,
                             what=f"{p.draws} configurations of n = {p.n} tokens in d = {d}",
                             other="a smaller --draws")}


def _times(t_max: float) -> np.ndarray:
    k = int(np.ceil(np.log2(t_max)))
    return np.unique(np.concatenate([2.0 ** np.arange(-2, k), [t_max]]))


def _flow(p: Params, xp, item) -> tuple:
    """One (d, beta, normalisation): the flow of the ``draws`` starts in d (the same starts for every beta);
    ``(counts per output time and draw, final diameters, largest energy drop, largest norm error)``."""
    d, beta, norm = item
    times = _times(p.t_max)
    X0 = xp.asarray(uniform_sphere(child_rng(p.seed, "start", d), (p.draws, p.n), d))
    clock = 1.0 if norm == "softmax" else float(np.exp(-beta))
    flow = spectral.attention_flow(X0, beta=beta, times=times * clock, normalisation=norm, rtol=p.rtol,
                                   atol=1e-3 * p.rtol)
    tokens = flow.tokens
    counts = np.stack([np.asarray(spectral.cluster_tokens(tokens[k, ...],
                                                          tol=p.tol).counts) for k in range(times.size)])
    final = np.asarray(to_numpy(tokens[-1, ...]), dtype=float)
    G = np.einsum("bid,bjd->bij", final, final)
    diam = np.sqrt(np.maximum(2.0 - 2.0 * G.min(axis=(1, 2)), 0.0))
    E = np.asarray(to_numpy(spectral.attention_energy(tokens, beta=beta)), dtype=float)
    drop = float(np.max(np.maximum(-(E[1:] - E[:-1]), 0.0)) / np.max(np.abs(E)))
    norms = np.asarray(to_numpy(xp.sqrt(xp.sum(tokens * tokens, axis=-1))), dtype=float)
    return counts, diam, drop, float(np.max(np.abs(norms - 1.0)))


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Random starts per (d, beta, normalisation): cluster counts over time, final diameters, energy, norms.

    Each (d, beta, normalisation) is one independent draw of ``ctx.map`` (progress, ``--scheduler``,
    ``--resume``); its cost grows like n^2 d (the scores of every pair in d dimensions)."""
    xp = ctx.xp
    times = _times(p.t_max)
    counts, diam, drop = {}, {}, {}
    norm_error = 0.0
    items = [(int(d), float(beta), norm) for d in p.dims for beta in p.betas for norm in NORMALISATIONS]
    with ctx.timed("flows"):
        flows = ctx.map(functools.partial(_flow, p, xp), items, label=lambda it: f"d={it[0]} beta={it[1]:g} {it[2]}",
                        weight=lambda it: it[0] + 4.0)  # the n^2 pairs' scores cost about d + a few operations
    for key, (c, dm, dr, ne) in zip(items, flows):
        counts[key], diam[key], drop[key] = c, dm, dr
        norm_error = float(np.max([norm_error, ne]))  # keeps a NaN
    with ctx.timed("antipodal"):
        u = uniform_sphere(child_rng(p.seed, "antipodal"), 1, max(p.dims))[0]
        pair = xp.asarray(np.stack([u, -u]))
        speed = max(float(np.max(np.abs(to_numpy(spectral.attention_velocity(pair, beta=beta, normalisation=norm)))))
                    for beta in p.betas for norm in NORMALISATIONS)
    return Quantities(times=times, counts=counts, final_diameter=diam, energy_decrease=drop, norm_error=norm_error,
                      antipodal_speed=speed)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Every draw one cluster at t_max, E_beta non-decreasing, tokens on the sphere, the antipodal equilibrium."""
    not_single = sum(int(np.sum(c[-1] != 1)) for c in q.counts.values())
    total = sum(int(c.shape[1]) for c in q.counts.values())
    rec.equal("draws_not_in_one_cluster", not_single, 0,
              why=f"Theorem 6.1: almost every start converges to one point; {total} uniform draws (a null set is never "
                  "drawn); clusters are the components of |x_i - x_j| <= tol",
              label="SA-1: some configurations are not a single cluster at t_max",
              hint="a beta so large that the last merge takes longer than t_max (SA-3) needs a larger --t-max")
    worst = float(np.max([np.max(v) for v in q.final_diameter.values()]))  # keeps a NaN
    rec.at_most("largest_final_diameter", worst, p.tol,
                why="one cluster of diameter at most the linking distance (the tokens contract at rate 1, SA, or "
                    "e^beta, USA, once clustered)",
                label="SA-1: a final configuration is wider than tol")
    rec.at_most("energy_relative_decrease", float(np.max(list(q.energy_decrease.values()))),
                CALIBRATION.get("energy_relative_decrease", p),
                label="SA-1: E_beta decreased along the flow (not a gradient ascent)")
    rec.at_most("norm_error", q.norm_error, 1e-12,
                why="the projection method divides every token by its norm after each step: rounding only",
                label="SA-1: tokens left the unit sphere")
    rec.at_most("antipodal_speed", q.antipodal_speed, 8 * np.finfo(float).eps * float(np.exp(max(max(p.betas), 0.0))),
                why="P_perp(x)(a x - b x) = 0 for (x, -x), up to rounding of the e^beta-sized weights: the exceptional "
                    "null set of 'almost every' is not empty",
                label="SA-1: the antipodal pair is not an equilibrium")
    for (d, beta, norm), c in q.counts.items():
        k = np.argmax(np.all(c == 1, axis=1)) if np.all(c[-1] == 1) else -1
        rec.info(f"time_all_single_d{d}_b{beta:g}_{norm}", float(q.times[k]) if k >= 0 else float("inf"))
    dims = ", ".join(str(d) for d in p.dims)
    betas = ", ".join(f"{b:g}" for b in p.betas)
    return (f"from {p.draws} uniform starts of n = {p.n} tokens in d = {dims}, (SA) and (USA) reach one cluster by "
            f"t = {p.t_max:g} for beta = {betas}, with E_beta non-decreasing (Theorem 6.1)")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
