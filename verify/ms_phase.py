"""Which mode wins from near-uniform tokens: k*(beta), with the probability the linear theory gives (MS-2, MS-3).

MS-2 (Bruno, Pasqualotto & Agazzi, arXiv 2410.23228, abstract and Theorem 4.3): from i.i.d. uniform
tokens, in the limit of many tokens, the configuration approaches a meta-stable manifold whose
periodicity is the index ``k*(beta)`` maximising the rescaled Gegenbauer coefficient, on the circle
``k* = argmax_k k^2 I_k(beta)`` (:func:`~manifolds.references.metastability.dominant_mode`). MS-3
(their Fig. 4): at ``beta = 5`` a perturbed uniform state develops a 3-periodic solution.

At finite ``n`` the modes start from random amplitudes ``|c_k(0)| ~ s_k`` and grow at ``lambda_k``
(MS-1); the first to reach the level ``a`` is ``k*`` only with a probability, computed exactly for
Gaussian amplitudes by :func:`~manifolds.references.metastability.winner_probabilities` (the "linear
theory"). It tends to 1 as ``log(a / s) (1 - lambda_(k') / lambda_(k*)) -> infinity``: slowly, and
not at all at the transitions ``lambda_k = lambda_(k+1)``
(:func:`~manifolds.references.metastability.mode_transition`).

The check moves ``draws`` near-uniform configurations of ``n`` tokens on the circle with
:func:`spectral.attention_flow` (``d = 2``, RK4, the paper's (USA) by default) for each ``beta`` in
``betas`` up to ``horizon`` times ``t_lin = log(a / s_(k*)) / lambda_(k*)``, records the winner (the
mode ``k <= k* + 6`` whose ``|c_k|`` (:func:`spectral.circle_modes`) first reaches ``a``) and the number
of clusters (single linkage at ``tol``, clusters of at least ``min_mass`` of the tokens) at the end,
and asserts, at each ``beta``:

* ``dominant_mode_frequency``: the number of draws won by ``k*`` is not below what the model allows:
  ``P(Binomial(draws, p*) <= observed) >= 1e-3`` (``p*`` the model's probability of ``k*``; error rate
  1e-3 per beta when the model is right);

and pooled over the betas that at most 5 % of the draws are won by a mode of model probability below 1e-3
(``excluded_winner_share``: the theory ignores the quadratic coupling of the modes, which wins a rare draw,
1 of 768 in the full tier), and over the betas where the model gives ``k*`` at least 0.75 (away from the
transitions) that most draws end with ``k*`` clusters (``cluster_count_share``); MS-3 at ``beta = 5`` (when in ``betas``):
most draws end with 3 clusters. The model's probability of ``k*`` at the paper's own noise (Fig. 4's
PDE, the notebook's 2 10^4 particles) is reported for every beta.

Starts: ``"lattice"`` (default): ``theta_j = 2 pi j / n + jitter N(0, 1)``, the particle analogue of a
uniform density perturbed by white noise (Fig. 4). The linear theory needs the noise small against the
level (``log(a / s) >= 4``; the start is refused otherwise): i.i.d. uniform angles (the theorem's start,
``s = n^(-1/2)``) qualify only beyond ``n = 33000``. ``iid_n`` runs the paper's i.i.d. setting beside the
check and reports its winners and cluster counts (informational: 16 draws per beta end with ``k*`` clusters
in 3-12 of them at ``n = 512`` and 7-16 at ``n = 1024``, the counts leaning above ``k*``). ``full=True``: the phase table, 16 betas from
1.5 to 16, ``n = 256``, 48 draws, and the i.i.d. setting at ``n = 1024`` (16 draws) beside it (8 CPU
minutes here, 36 minutes of wall clock on the loaded machine; a GPU runs each beta's batch at once). The
notebook's 2 10^4 i.i.d. particles take 4 10^8 pairs per evaluation of the field: a GPU with ``block_rows``.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

import spectral
from manifolds.references.metastability import (amplitude_scale, dominant_mode, growth_rate, mode_transition,
                                                 winner_probabilities)
from spectral.floor.backend import to_numpy
from spectral.floor.validation import ConvergenceError, InputError, child_rng
from verify.core.check import Check, Context
from verify.core.memory import PathNeed
from verify.core.params import Choice, Flag, Int, Real, Reals
from verify.core.result import Recorder

__all__ = ["CHECK", "Params", "Quantities", "run", "main", "FULL", "FIG4_BETA", "PAPER_SETTINGS", "ALPHA"]

CHECK = Check("ms_phase", devices=("cpu", "gpu"))

#: Fig. 4 of arXiv 2410.23228: beta = 5, a 3-periodic solution
FIG4_BETA, FIG4_MODE = 5.0, 3
#: the error rate of each binomial decision when the linear theory is right
ALPHA = 1e-3
#: the model probability below which a winner is outside the model's support, and the largest share of such draws
SUPPORT, MAX_EXCLUDED = 1e-3, 0.05
#: the linear theory needs the noise well below the level: log(level / s_k*) at least this (lattice starts with 5.5 and
#: more agree with it; i.i.d. starts of n = 512 tokens, 1.9, have winners of model probability 1e-15)
MIN_LOG_RATIO = 4.0
#: betas where the model gives k* at least this probability count towards the cluster-count share
CONFIDENT = 0.75
#: modes searched for the winner: 1 .. k* + _EXTRA_MODES
_EXTRA_MODES = 6
#: RK4 step, times 1 / lambda_max
_STEP = 0.25
#: the paper's own settings, as amplitudes s_k of the initial Fourier coefficients: Fig. 4's PDE (a grid of
#: 10^4 points, white noise sigma = 0.01 on the density 1 / (2 pi): s = sigma 2 pi / sqrt(9999)) and the public
#: notebook's particles (2 10^4 i.i.d. tokens: s = 1 / sqrt(2 10^4))
PAPER_SETTINGS = {"fig4_pde": 0.01 * 2.0 * math.pi / math.sqrt(9999.0), "notebook_particles": 1.0 / math.sqrt(2e4)}
#: ``full=True``: the phase table (lattice starts) with the theorem's i.i.d. setting beside it
FULL = {"n": 256, "draws": 48, "iid_n": 1024, "iid_draws": 16,
        "betas": (1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 5.5, 6.0, 6.5, 7.0, 8.0, 9.0, 10.0, 12.0, 16.0)}


@CHECK.parameters
class Params:
    betas: tuple = Reals((2.0, 5.0, 8.0), "Inverse temperatures (increasing)", low=0.5, high=40.0)
    n: int = Int(128, "Tokens per configuration", low=16, high=65536, unit="tokens")
    draws: int = Int(8, "Random near-uniform configurations per beta", low=1, high=100000)
    start: str = Choice("lattice", ("lattice", "iid"), "Near-uniform start: the lattice 2 pi j / n with Gaussian "
                                                       "jitter, or i.i.d. uniform angles (then n must exceed about "
                                                       "33000 for the linear theory)")
    jitter: float = Real(1e-3, "Standard deviation of the lattice's jitter (rad)", low=1e-9, high=0.5)
    normalisation: str = Choice("uniform", ("uniform", "softmax"), "(USA), the paper's, or (SA)")
    level: float = Real(0.3, "Amplitude |c_k| at which a mode has won", low=0.01, high=0.9)
    horizon: float = Real(2.0, "Length of the runs in units of t_lin = log(level / s_k*) / lambda_k*", low=1.2,
                          high=20.0)
    tol: float = Real(0.05, "Linking distance of a cluster", low=1e-6, high=0.5)
    min_mass: float = Real(0.02, "Smallest share of the tokens counted as a cluster", low=0.0, high=0.5)
    iid_n: int = Int(0, "Tokens of the i.i.d. starts of the paper's setting, reported beside (0: none)", low=0,
                     high=65536, unit="tokens")
    iid_draws: int = Int(16, "i.i.d. configurations per beta of the paper's setting", low=1, high=100000)
    full: bool = Flag(False, "The phase table: n = 256, 48 draws, 16 betas from 1.5 to 16, and the paper's i.i.d. "
                             "setting at n = 1024 (16 draws) beside it (8 CPU minutes; GPU advised)")

    def resolve(self):
        """``full`` sets the phase table; the betas increase; the modes searched fit below n / 2."""
        p = dataclasses.replace(self, **FULL) if self.full else self
        if any(b <= a for a, b in zip(p.betas, p.betas[1:])):
            raise InputError(f"betas must increase, got {p.betas}")
        top = dominant_mode(max(p.betas)) + _EXTRA_MODES
        for name in ("n", "iid_n"):
            v = getattr(p, name)
            if (name == "n" or v) and 2 * top >= v:
                raise InputError(f"{name} = {v} is too small for beta = {max(p.betas):g}: the modes up to {top} need "
                                 f"{name} > {2 * top}")
        for beta in p.betas:
            k = dominant_mode(beta)
            ratio = math.log(p.level / float(_scales(p, np.array([k]))[0]))
            if ratio < MIN_LOG_RATIO:
                raise InputError(
                    f"the start's noise s = {p.level / math.exp(ratio):.3g} (mode {k}, beta = {beta:g}) is not small "
                    f"against level = {p.level:g}: log(level / s) = {ratio:.2f} < {MIN_LOG_RATIO:g}, outside the linear "
                    "theory's range; use --start lattice with a smaller --jitter (i.i.d. starts need n > "
                    f"{math.ceil((math.exp(MIN_LOG_RATIO) / p.level) ** 2):d}; --iid-n reports them beside)")
        return p


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What ms_phase measures, keyed by beta."""

    #: the dominant mode k*(beta), the modes searched and the model's law of the winner over them
    dominant: dict[float, int]
    modes: dict[float, np.ndarray]
    model: dict[float, np.ndarray]
    #: per draw: the winning mode (0 if none reached the level) and the time it did, in units of t_lin
    winners: dict[float, np.ndarray]
    win_time: dict[float, np.ndarray]
    #: per draw: clusters (of at least min_mass of the tokens) at the end of the run
    counts: dict[float, np.ndarray]
    #: the model's probability of k* at the paper's own settings (PAPER_SETTINGS), per beta
    paper_probability: dict[tuple[float, str], float]
    #: the paper's i.i.d. setting (iid_n tokens; empty when iid_n = 0): winners and cluster counts per draw
    iid_winners: dict[float, np.ndarray]
    iid_counts: dict[float, np.ndarray]
    #: the betas where k* changes (k* = k below the k-th, k + 1 above), up to the largest beta
    transitions: np.ndarray


def _scales(p, ks, start=None, n=None) -> np.ndarray:
    start, n = (p.start if start is None else start), (p.n if n is None else n)
    if start == "iid":
        return amplitude_scale(ks, n)
    return amplitude_scale(ks, n, start="lattice", jitter=p.jitter)


def _start(p, beta, start, n, draws) -> np.ndarray:
    rng = child_rng(p.seed, "start", start, n, float(beta))
    if start == "iid":
        return rng.uniform(0.0, 2.0 * np.pi, (draws, n))
    return 2.0 * np.pi * np.arange(n) / n + p.jitter * rng.standard_normal((draws, n))


def _memory(draws: int, n: int, outputs: int) -> float:
    # scores (3 arrays of draws n^2), the RK4 stages (8 token arrays), the outputs (tokens at every step) and the
    # distances of the clustering (3 n^2 + n^2 links per draw); 16 MiB fixed
    return (3 * draws * n * n + 8 * draws * n * 2 + outputs * draws * n * 2) * 8 + draws * n * n * 25 + (16 << 20)


def _outputs(p) -> int:
    return int(math.ceil(p.horizon * 40.0 / _STEP)) + 2


@CHECK.memory
def needs(p: Params) -> dict:
    """One beta's batch of ``draws`` configurations, with the tokens at every step (and the i.i.d. batch beside)."""
    needs = {"flows": PathNeed(lambda v: _memory(v, p.n, _outputs(p)), p.draws, option="--draws", low=1,
                               what=f"{p.draws} configurations of n = {p.n} tokens", other="a smaller --n")}
    if p.iid_n:
        needs["iid"] = PathNeed(lambda v: _memory(v, p.iid_n, _outputs(p)), p.iid_draws, option="--iid-draws", low=1,
                                what=f"{p.iid_draws} i.i.d. configurations of n = {p.iid_n} tokens",
                                other="a smaller --iid-n")
    return needs


def _count(X, tol, min_mass) -> np.ndarray:
    cl = spectral.cluster_tokens(X, tol=tol)
    labels = np.asarray(cl.labels)
    n = labels.shape[-1]
    return np.array([int(np.sum(np.bincount(row) >= max(1.0, min_mass * n))) for row in labels])


@functools.lru_cache(maxsize=256)
def _paper_probability(beta: float, setting: str, level: float) -> float:
    """The linear theory's probability of k* at one of the paper's own noise levels (PAPER_SETTINGS)."""
    kstar = dominant_mode(beta)
    ks = np.arange(1, kstar + _EXTRA_MODES + 1)
    return float(winner_probabilities(beta, np.full(ks.size, PAPER_SETTINGS[setting]), level=level)[kstar - 1])


def _draws(p, ctx, beta, start, n, draws):
    """Winners (mode, time in t_lin) and cluster counts of ``draws`` starts of ``n`` tokens at ``beta``."""
    kstar = dominant_mode(beta)
    ks = np.arange(1, kstar + _EXTRA_MODES + 1)
    lam = np.asarray(growth_rate(ks, beta, normalisation=p.normalisation))
    s = _scales(p, ks, start, n)
    t_lin = max(math.log(p.level / s[kstar - 1]), 1.0) / lam[kstar - 1]
    dt = _STEP / lam.max()
    steps = int(math.ceil(p.horizon * t_lin / dt))
    times = np.arange(steps + 1) * (p.horizon * t_lin / steps)
    theta = _start(p, beta, start, n, draws)
    won = np.zeros(draws, dtype=int)
    with ctx.timed("flows"):
        X0 = np.stack([np.cos(theta), np.sin(theta)], axis=-1)
        try:
            flow = spectral.attention_flow(ctx.xp.asarray(X0), beta=beta, times=times,
                                           normalisation=p.normalisation, method="rk4", dt=dt)
        except ConvergenceError as exc:  # a wrong dynamics can leave RK4's stability region: no winner, no cluster
            ctx.note(f"beta = {beta:g}: {exc}")
            return ks, s, won, np.full(draws, np.nan), np.zeros(draws, dtype=int)
        amp = np.asarray(to_numpy(spectral.circle_modes(flow.tokens, [int(k) for k in ks]).amplitude))
    with ctx.timed("clusters"):
        counts = _count(flow.tokens[-1, ...], p.tol, p.min_mass)
    when = np.full(draws, np.nan)
    for d in range(draws):
        hit = np.flatnonzero(amp[:, d, :].max(axis=-1) >= p.level)
        if hit.size:
            won[d] = int(ks[np.argmax(amp[hit[0], d, :])])
            when[d] = times[hit[0]] / t_lin
    return ks, s, won, when, counts


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """For each beta: the model's law of the winner, and the winners and cluster counts of the draws."""
    dominant, modes, model, winners, wtime, counts, paper, iid_w, iid_c = {}, {}, {}, {}, {}, {}, {}, {}, {}
    for beta in p.betas:
        b = float(beta)
        ks, s, won, when, cnt = _draws(p, ctx, b, p.start, p.n, p.draws)
        kstar = dominant_mode(b)
        with ctx.timed("model"):
            model[b] = winner_probabilities(b, s, level=p.level, normalisation=p.normalisation)
            for name in PAPER_SETTINGS:
                paper[b, name] = _paper_probability(b, name, p.level)
        dominant[b], modes[b], winners[b], wtime[b], counts[b] = kstar, ks, won, when, cnt
        if p.iid_n:
            _, _, iid_w[b], _, iid_c[b] = _draws(p, ctx, b, "iid", p.iid_n, p.iid_draws)
    transitions, k = [], 1
    while (b := mode_transition(k)) <= max(p.betas):
        transitions.append(b)
        k += 1
    return Quantities(dominant=dominant, modes=modes, model=model, winners=winners, win_time=wtime, counts=counts,
                      paper_probability=paper, iid_winners=iid_w, iid_counts=iid_c, transitions=np.asarray(transitions))


def _binomial_cdf(x: int, n: int, p: float) -> float:
    from scipy.stats import binom

    return float(binom.cdf(x, n, p))


def _law_text(ks, law) -> str:
    return ", ".join(f"{int(k)}: {v:.2f}" for k, v in zip(ks, law) if v >= 0.005)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Winners inside the model's support, k* winning as often as the model says, and Fig. 4's mode 3 at beta 5."""
    agree, outside = [], []
    excluded = drawn = 0
    for b in sorted(q.winners):
        ks, law, won = q.modes[b], q.model[b], q.winners[b]
        kstar = q.dominant[b]
        prob = {int(k): float(v) for k, v in zip(ks, law)}
        worst = min((prob.get(int(w), 0.0) for w in won), default=1.0)
        excluded += int(sum(1 for w in won if not prob.get(int(w), 0.0) >= SUPPORT))
        drawn += won.size
        if not worst >= SUPPORT:
            outside.append(f"beta {b:g}: winners {sorted(set(int(w) for w in won))}, law {_law_text(ks, law)}")
        rec.info(f"least_model_probability_of_a_winner_b{b:g}", worst)
        hits = int(np.sum(won == kstar))
        tail = _binomial_cdf(hits, won.size, prob[kstar])
        rec.at_least(f"dominant_mode_frequency_b{b:g}", tail, ALPHA,
                     why=f"P(Binomial({won.size}, {prob[kstar]:.3f}) <= observed) >= {ALPHA:g}: k* = {kstar} wins "
                         f"with the linear theory's probability (error rate {ALPHA:g} per beta when it is right)",
                     label=f"MS-2: at beta = {b:g}, k* = {kstar} won {hits} of {won.size} draws, fewer than the linear "
                           f"theory's {prob[kstar]:.2f} allows")
        rec.info(f"k_star_b{b:g}", kstar)
        rec.info(f"k_star_wins_b{b:g}", f"{hits}/{won.size} (model {prob[kstar]:.2f})")
        rec.info(f"counts_b{b:g}", ", ".join(str(int(c)) for c in q.counts[b]))
        agree.append((b, kstar, hits, won.size, prob[kstar]))
        for name in ("fig4_pde", "notebook_particles"):
            rec.info(f"k_star_probability_{name}_b{b:g}", q.paper_probability[b, name])
    rec.at_most("excluded_winner_share", excluded / drawn if drawn else float("nan"), MAX_EXCLUDED,
                why=f"the draws whose winner has a linear-theory probability below {SUPPORT:g} (0: no mode reached the "
                    f"level), pooled over the betas, at most {MAX_EXCLUDED:g}: the theory ignores the quadratic "
                    "coupling (modes 1 and 2 force mode 3 at rate lambda_1 + lambda_2 > lambda_2 at beta = 1.5), which "
                    "wins a rare draw: measured 1 of 768 (full tier), 0 of 208 (n = 256, 16 draws per beta); with 24 "
                    "draws this fails with probability 5e-4 when the measured share is the true one",
                label="MS-2: draws were won by modes the linear theory excludes (" + "; ".join(outside) + ")")
    confident = [b for b in q.winners if dict(zip(q.modes[b].tolist(), q.model[b]))[q.dominant[b]] >= CONFIDENT]
    matched = sum(int(np.sum(q.counts[b] == q.dominant[b])) for b in confident)
    total = sum(q.counts[b].size for b in confident)
    rec.at_least("cluster_count_share", matched / total if total else float("nan"), 0.5,
                 why=f"at the betas where the linear theory gives k* a probability >= {CONFIDENT:g} (away from the "
                     "transitions), most draws end with k* clusters (measured: 0.83 of 96 draws at n = 256, 0.96 of 24 "
                     "at n = 128, lattice starts)",
                 label=f"MS-2: only {matched} of {total} draws end with k*(beta) clusters where the linear theory is "
                       "confident")
    for b in sorted(q.iid_counts):
        c, w = q.iid_counts[b], q.iid_winners[b]
        rec.info(f"iid_k_star_share_b{b:g}", f"clusters {int(np.sum(c == q.dominant[b]))}/{c.size}, winners "
                                             f"{int(np.sum(w == q.dominant[b]))}/{w.size}")
    fig4 = ""
    if FIG4_BETA in q.winners:
        won, cnt = q.winners[FIG4_BETA], q.counts[FIG4_BETA]
        threes, wins3 = int(np.sum(cnt == FIG4_MODE)), int(np.sum(won == FIG4_MODE))
        rec.at_least("fig4_three_clusters_share", threes / cnt.size, 0.5 + 1e-12,
                     why="Fig. 4 (beta = 5): the 3-periodic solution is what most perturbations of the uniform state "
                         "develop: most draws end with 3 clusters (measured 31 of 32 with lattice starts; with 8 draws "
                         "and a true share 0.9 this fails with probability 0.005)",
                     label=f"MS-3: at beta = 5 only {threes} of {cnt.size} draws end with 3 clusters")
        pde = q.paper_probability[FIG4_BETA, "fig4_pde"]
        fig4 = (f"; at beta = 5, {threes}/{cnt.size} draws end with 3 clusters and mode 3 grew first in {wins3} "
                f"(linear theory at Fig. 4's noise: P(3 first) = {pde:.2f})")
    cells = "; ".join(f"beta {b:g}: k* = {k} won {h}/{n} (model {m:.2f})" for b, k, h, n, m in agree)
    return (f"from near-uniform starts the first mode to grow is k*(beta) = argmax k^2 I_k(beta) with the linear "
            f"theory's probability, which tends to 1 only as the noise vanishes ({cells}){fig4}")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
