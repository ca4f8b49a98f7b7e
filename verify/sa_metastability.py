"""Metastability: multi-cluster plateaus whose length grows with beta, exponentially for (SA) (SA-3).

SA-3 (GLPR, arXiv 2312.10794 v5: the metastability posed as Problem 1 and the (d, beta) phase diagram
of Fig. 3; proved for (SA)-type dynamics by Geshkovski, Koubbi, Polyanskiy & Rigollet, arXiv 2410.06833). From a random start the tokens form several clusters quickly and stay near that
configuration for a long time before the clusters merge; the plateaus last longer as ``beta`` grows.

The exact reference: ``k`` tokens at ``u`` and ``m`` at ``v`` (``<u, v> = rho``) stay two points, and
``rho`` solves a scalar ODE (:func:`~manifolds.references.attention_flow.two_cluster_rhs`):
``rho' = (1 - rho^2) e^(beta rho) (m / (k e^beta + m e^(beta rho)) + k / (m e^beta + k e^(beta rho)))``
for (SA), ``rho' = (1 - rho^2) e^(beta rho)`` for (USA). The time to merge from ``rho0`` to ``rho1``
is its quadrature: for (SA) it grows like ``e^(beta (1 - rho0)) / beta``; for (USA) like
``e^(-beta rho0) / beta``, which *shrinks* with ``beta`` for clusters at an acute angle (in units of
(USA)'s own clustering time ``e^(-beta)`` it grows like ``e^(beta (1 - rho0))`` again). So "plateaus
grow with beta" holds for (SA) in time, for (USA) only on its own clock (or for obtuse clusters).

The check (i) starts two caps of ``n/2`` tokens (angular radius ``cap``) around ``u, v`` with
``<u, v> = rho0`` in ``S^2`` and measures, for each ``beta`` in ``betas``, the time at which the
inner product of the two cluster centres reaches ``rho1 = 0.999``, against the reference (started
from the measured centres once the caps have collapsed, and from ``rho0``), and the growth rate
``d log T / d beta`` against the reference's (which tends to ``1 - rho0``); (ii) draws ``draws``
uniform configurations of ``phase_n`` tokens on ``S^(phase_d - 1)`` and counts clusters at
log-spaced times for each ``beta`` in ``phase_betas`` (the phase diagram of cluster count against
``beta`` at a time): at ``phase_t`` the mean count increases with ``beta``, is 1 at the smallest and
at least 2 (a multi-cluster plateau) at the largest. ``full=True`` runs the paper's setting of the
phase diagram, ``n = 32`` tokens on the circle, 2048 draws, and ``beta`` up to 25.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

import spectral
from manifolds.references.attention_flow import two_cluster_flow, two_cluster_merge_time, uniform_sphere
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.memory import PathNeed
from verify.core.params import Flag, Int, Real, Reals
from verify.core.result import Recorder

__all__ = ["CHECK", "CALIBRATION", "Params", "Quantities", "run", "main", "FULL", "RHO1"]

CHECK = Check("sa_metastability", devices=("cpu", "gpu"))

NORMALISATIONS = ("softmax", "uniform")
#: the merge: the inner product of the two cluster centres reaches this
RHO1 = 0.999
#: a cap counts as collapsed (a point) when every token is within this of its mean
_COLLAPSED = 1e-6
#: time for a cap of radius <= 0.3 to collapse below _COLLAPSED at rate 1 (SA; e^-beta times this for USA)
_COLLAPSE_TIME = 14.0
#: ``full=True``: the paper's phase-diagram setting (n = 32 on the circle, 2048 draws) and a finer beta grid
FULL = {"phase_n": 32, "phase_d": 2, "draws": 2048, "phase_betas": (1.0, 2.0, 4.0, 6.0, 9.0, 12.0, 16.0, 20.0, 25.0),
        "phase_t": 1000.0}

#: the grid every tolerance was measured over
_OVER = {"betas": ((2.0, 4.0, 6.0, 8.0),), "seed": (0, 1, 2)}
CALIBRATION = Calibration(
    Tolerance("rho_trajectory_error", 1e-7, measured=7.2e-9, over=_OVER,
              why="from the collapse of the caps (every token within 1e-6 of its cap's mean) the centres' inner "
                  "product against the two-point ODE from the measured rho: the remaining spread enters at O(1e-12), "
                  "the integration at rtol 1e-10 more; beta 5 % off gives 1e-2"),
    Tolerance("total_merge_time_relative_error", 0.1, measured=0.027, over=_OVER,
              why="the whole plateau from the caps against the quadrature from rho0: the caps' collapse (a few time "
                  "units at rate 1, caps of 0.01 rad) shifts the start; the wrong normaliser is off by 10x at beta = "
                  "4"),
    Tolerance("growth_rate_error", 0.05, measured=0.004, over=_OVER,
              why="d log T / d beta between the two largest betas, simulated against the reference"),
)


@CHECK.parameters
class Params:
    n: int = Int(8, "Tokens of the two-cap starts (n/2 per cap)", low=2, high=1024, unit="tokens")
    betas: tuple = Reals((2.0, 4.0, 6.0, 8.0), "Inverse temperatures of the two-cap starts (at least 2 values)",
                         low=0.0, high=14.0, min_len=2)
    rho0: float = Real(0.0, "Inner product <u, v> of the two cap centres", low=-0.9, high=0.9)
    cap: float = Real(0.01, "Angular radius of the caps (rad)", low=0.0, high=0.3, low_open=True)
    phase_n: int = Int(32, "Tokens of the random starts of the phase diagram", low=2, high=4096, unit="tokens")
    phase_d: int = Int(2, "Dimension d of the random starts (S^(d-1); the paper's diagram: the circle, d = 2)",
                       low=2, high=512)
    phase_betas: tuple = Reals((1.0, 4.0, 9.0, 16.0), "Inverse temperatures of the phase diagram (increasing)",
                               low=0.0, high=40.0, min_len=2)
    draws: int = Int(16, "Random configurations of the phase diagram", low=1, high=100000)
    phase_t: float = Real(64.0, "Time at which the cluster counts of the phase diagram are compared", low=1.0,
                          high=1e5)
    tol: float = Real(1e-2, "Linking distance of a cluster", low=1e-8, high=0.5, low_open=True)
    full: bool = Flag(False, "The paper's phase-diagram setting: n = 32 on the circle, 2048 draws, beta to 25, "
                             "t = 1000 (more than an hour on one CPU core; GPU advised)")

    def resolve(self):
        """``full`` sets the phase diagram's tier; the betas increase."""
        p = dataclasses.replace(self, **FULL) if self.full else self
        if any(b <= a for a, b in zip(p.phase_betas, p.phase_betas[1:])):
            raise InputError(f"phase_betas must increase, got {p.phase_betas}")
        if any(b <= a for a, b in zip(p.betas, p.betas[1:])):
            raise InputError(f"betas must increase, got {p.betas}")
        return p


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What sa_metastability measures (two-cap merges keyed by (beta, normalisation); the phase diagram by beta)."""

    #: time at which the centres' inner product reaches RHO1, and the quadrature of the two-point ODE from rho0
    merge_time: dict[tuple[float, str], float]
    reference_merge_time: dict[tuple[float, str], float]
    #: from the caps' collapse on: max |rho_sim(t) - rho_ref(t)| (ODE started at the measured rho); the collapse
    #: time
    rho_trajectory_error: dict[tuple[float, str], float]
    collapse_time: dict[tuple[float, str], float]
    #: output times and mean cluster count per beta of the phase diagram, (times,) arrays
    phase_times: np.ndarray
    phase_mean_count: dict[float, np.ndarray]
    #: the cluster count of every draw at phase_t, per beta
    phase_counts: dict[float, np.ndarray]
    #: largest distance of a token to its cluster's mean at phase_t (clustered, not spread out)
    phase_cluster_radius: dict[float, float]


def _cap_start(rng, n, d, rho0, cap):
    """n/2 tokens in a cap of angular radius ``cap`` around u, the rest around v, <u, v> = rho0."""
    u = np.zeros(d)
    u[0] = 1.0
    v = np.zeros(d)
    v[0], v[1] = rho0, math.sqrt(1.0 - rho0 * rho0)
    k = n // 2
    out = []
    for centre, count in ((u, k), (v, n - k)):
        tangent = rng.standard_normal((count, d))
        tangent -= np.outer(tangent @ centre, centre)
        tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
        angle = cap * rng.random((count, 1))
        out.append(np.cos(angle) * centre + np.sin(angle) * tangent)
    return np.vstack(out), k


def _centres_rho(tokens, k):
    a = tokens[..., :k, :].mean(axis=-2)
    b = tokens[..., k:, :].mean(axis=-2)
    a /= np.linalg.norm(a, axis=-1, keepdims=True)
    b /= np.linalg.norm(b, axis=-1, keepdims=True)
    return np.sum(a * b, axis=-1)


def _crossing(times, values, level) -> float:
    """First time ``values`` reaches ``level`` (linear interpolation; nan if never)."""
    above = np.flatnonzero(values >= level)
    if above.size == 0:
        return float("nan")
    j = int(above[0])
    if j == 0:
        return float(times[0])
    t0, t1, v0, v1 = times[j - 1], times[j], values[j - 1], values[j]
    return float(t0 + (level - v0) * (t1 - t0) / (v1 - v0))


def _two_caps(p, xp, item):
    """One (beta, normalisation) of the two-cap starts: (merge time, reference, rho error, collapse time)."""
    beta, norm = item
    X0, k = _cap_start(child_rng(p.seed, "caps"), p.n, 3, p.rho0, p.cap)
    m = p.n - k
    ref = two_cluster_merge_time(p.rho0, RHO1, beta=beta, k=k, m=m, normalisation=norm)
    clock = 1.0 if norm == "softmax" else math.exp(-beta)  # the caps collapse at rate 1 (SA), e^beta (USA)
    times = np.linspace(0.0, 1.25 * ref + _COLLAPSE_TIME * clock, 241)
    flow = spectral.attention_flow(xp.asarray(X0), beta=beta, times=times, normalisation=norm, rtol=1e-10, atol=1e-12)
    toks = np.asarray(to_numpy(flow.tokens), dtype=float)
    rho = _centres_rho(toks, k)
    spread = np.maximum(_spread(toks[:, :k]), _spread(toks[:, k:]))
    j = np.flatnonzero(spread <= _COLLAPSED)
    if not j.size:
        return _crossing(times, rho, RHO1), ref, float("nan"), float("nan")
    c = int(j[0])  # from the collapse on, the centres follow the two-point ODE from the measured rho
    later = two_cluster_flow(times[c:] - times[c], rho0=float(rho[c]), beta=beta, k=k, m=m, normalisation=norm)
    return _crossing(times, rho, RHO1), ref, float(np.max(np.abs(rho[c:] - later))), float(times[c])


def _spread(group):
    """Largest distance of a token of ``group`` (times, k, d) to the group's mean, per time."""
    return np.max(np.linalg.norm(group - group.mean(axis=1, keepdims=True), axis=-1), axis=-1)


#: Draws of the phase diagram integrated together (one task of ``ctx.map``): the adaptive steps follow the
#: largest error of the batch, so the batches are fixed by the parameters, never by the cluster
PHASE_CHUNK = 256


def _phase_times(p):
    return np.concatenate([[0.0], np.geomspace(0.25, p.phase_t, 25)])


def _phase(p, xp, item):
    """One (beta, batch of draws) of the phase diagram: the cluster counts per output time and draw, and the
    largest distance of a token to its cluster's mean at phase_t."""
    beta, first = item
    X0 = uniform_sphere(child_rng(p.seed, "phase"), (p.draws, p.phase_n), p.phase_d)  # every draw, then the batch
    X0 = xp.asarray(X0[first: first + PHASE_CHUNK])
    times = _phase_times(p)
    flow = spectral.attention_flow(X0, beta=beta, times=times, rtol=1e-6, atol=1e-9)
    c = np.stack([np.asarray(spectral.cluster_tokens(flow.tokens[k, ...],
                                                     tol=p.tol).counts) for k in range(times.size)])
    final = np.asarray(to_numpy(flow.tokens[-1, ...]), dtype=float)
    labels = spectral.cluster_tokens(flow.tokens[-1, ...], tol=p.tol).labels
    worst = 0.0
    for b in range(final.shape[0]):
        for lab in np.unique(labels[b]):
            pts = final[b][labels[b] == lab]
            worst = max(worst, float(np.max(np.linalg.norm(pts - pts.mean(axis=0), axis=1))))
    return c, worst


def _memory(draws: int, n: int, d: int) -> float:
    tokens = draws * n * d * 8
    return (26 + 14) * tokens + 3 * draws * n * n * 8 + 25 * draws * n * n + (16 << 20)


@CHECK.memory
def needs(p: Params) -> dict:
    """The phase diagram's batch of ``draws`` configurations."""
    return {"phase": PathNeed(lambda v: _memory(v, p.phase_n, p.phase_d), p.draws, option="--draws", low=1,
                              what=f"{p.draws} configurations of n = {p.phase_n} tokens in d = {p.phase_d}",
                              other="a smaller --phase-n")}


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Two-cap merge times against the quadrature; the phase diagram of cluster counts against beta."""
    caps = {name: {} for name in ("merge", "ref", "rho_error", "collapse")}
    pairs = [(float(beta), norm) for beta in p.betas for norm in NORMALISATIONS]
    with ctx.timed("two_caps"):
        found = ctx.map(functools.partial(_two_caps, p, ctx.xp), pairs, label=lambda it: f"caps beta={it[0]:g} {it[1]}",
                        desc="sa_metastability caps")
    for key, values in zip(pairs, found):
        for name, value in zip(("merge", "ref", "rho_error", "collapse"), values):
            caps[name][key] = value
    batches = [(float(beta), first) for beta in p.phase_betas for first in range(0, p.draws, PHASE_CHUNK)]
    with ctx.timed("phase_diagram"):
        # the cost of a batch grows with beta (stiffer flows, more steps): weight 1 + beta for the time left
        found = ctx.map(functools.partial(_phase, p, ctx.xp), batches, weight=lambda it: 1.0 + it[0],
                        label=lambda it: f"phase beta={it[0]:g} draws {it[1] + 1}..{min(p.draws, it[1] + PHASE_CHUNK)}",
                        desc="sa_metastability phase")
    times = _phase_times(p)
    mean, counts, radius = {}, {}, {}
    for beta in p.phase_betas:
        parts = [(c, w) for (b, _), (c, w) in zip(batches, found) if b == float(beta)]
        c = np.concatenate([c for c, _ in parts], axis=1)
        mean[float(beta)] = c.mean(axis=1)
        counts[float(beta)] = c[-1]
        radius[float(beta)] = max(w for _, w in parts)
    return Quantities(merge_time=caps["merge"], reference_merge_time=caps["ref"],
                      rho_trajectory_error=caps["rho_error"], collapse_time=caps["collapse"],
                      phase_times=times, phase_mean_count=mean, phase_counts=counts, phase_cluster_radius=radius)


def _rel(a, b) -> float:
    return abs(a / b - 1.0)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Merge times against the quadrature, their exponential growth (SA), and the phase diagram's plateaus."""
    sa = sorted(b for b, norm in q.merge_time if norm == "softmax")
    rec.at_most("rho_trajectory_error", float(np.max(list(q.rho_trajectory_error.values()))),
                CALIBRATION.get("rho_trajectory_error", p),
                label="SA-3: two collapsed clusters do not follow the two-cluster ODE")
    rel_total = [_rel(q.merge_time[k], q.reference_merge_time[k]) for k in q.merge_time]
    rec.at_most("total_merge_time_relative_error", float(np.max(rel_total)),
                CALIBRATION.get("total_merge_time_relative_error", p),
                label="SA-3: the plateau of two caps is not the two-cluster ODE's merge time")
    times = [q.merge_time[b, "softmax"] for b in sa]
    rec.holds("sa_plateau_grows_with_beta", bool(np.all(np.asarray(times[1:]) > 1.05 * np.asarray(times[:-1]))),
              why="(SA): the merge time e^(beta (1 - rho0)) / beta grows with beta; each step of the betas by more "
                  "than 5 % (the crossing is interpolated on 241 output times: its error is far below that)",
              label="SA-3: the (SA) plateau does not grow with beta (merge times "
                    + ", ".join(f"{t:.4g}" for t in times) + ")")
    b1, b2 = sa[-2], sa[-1]
    growth = math.log(q.merge_time[b2, "softmax"] / q.merge_time[b1, "softmax"]) / (b2 - b1)
    growth_ref = math.log(q.reference_merge_time[b2, "softmax"] / q.reference_merge_time[b1, "softmax"]) / (b2 - b1)
    rec.at_most("growth_rate_error", abs(growth - growth_ref), CALIBRATION.get("growth_rate_error", p),
                label=f"SA-3: d log T / d beta = {growth:.4f} differs from the reference's {growth_ref:.4f}")
    rec.info("growth_rate", growth)
    rec.info("growth_rate_reference", growth_ref)
    rec.info("growth_rate_limit_1_minus_rho0", 1.0 - p.rho0)
    usa = [q.merge_time[b, "uniform"] for b in sa]
    rec.info("usa_merge_times", ", ".join(f"{t:.4g}" for t in usa))
    rec.info("usa_merge_times_in_units_of_e^-beta", ", ".join(f"{t * math.exp(b):.4g}" for t, b in zip(usa, sa)))
    rec.info("sa_merge_times", ", ".join(f"{t:.4g}" for t in times))
    # the phase diagram
    betas = sorted(q.phase_counts)
    final = [float(np.mean(q.phase_counts[b])) for b in betas]
    rec.holds("phase_count_increases_with_beta", bool(np.all(np.diff(final) > 0)),
              why=f"the same {len(q.phase_counts[betas[0]])} random starts at every beta; longer plateaus leave more "
                  "clusters at a fixed time",
              label=f"SA-3: the mean cluster count at t = {p.phase_t:g} does not increase with beta "
                    f"({', '.join(f'{c:.3g}' for c in final)})")
    rec.equal("phase_multi_cluster_draws_at_smallest_beta", int(np.sum(q.phase_counts[betas[0]] != 1)), 0,
              why=f"at beta = {betas[0]:g} the merges are fast: every start is one cluster by t = {p.phase_t:g}",
              label="SA-3: the smallest beta still has several clusters")
    rec.at_least("phase_mean_count_at_largest_beta", final[-1], 2.0,
                 why=f"at beta = {betas[-1]:g} the starts sit on multi-cluster plateaus at t = {p.phase_t:g}",
                 label="SA-3: no multi-cluster plateau at the largest beta")
    rec.at_most("phase_cluster_radius", float(np.max(list(q.phase_cluster_radius.values()))), p.tol,
                why="each counted cluster is tight (every token within tol of its cluster's mean): the counts are "
                    "clusters, not spread-out tokens",
                label="SA-3: the counted clusters are not tight")
    for b, c in zip(betas, final):
        rec.info(f"phase_mean_count_b{b:g}", c)
    return (f"two clusters merge on the two-cluster ODE's time, which for (SA) grows like e^(beta (1 - rho0)) "
            f"(d log T / d beta = {growth:.3f}, reference {growth_ref:.3f}; for (USA) it shrinks in time, growing only "
            f"in units of e^-beta); from random starts the mean cluster count at t = {p.phase_t:g} grows with beta "
            f"({final[0]:.3g} to {final[-1]:.3g})")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
