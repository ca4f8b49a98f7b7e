"""Figures of the metastable-clusters papers (MS) from the ``ms_*`` checks, and their ``--plot`` figures.

* ``ms-1``: the growth rates of the uniform state's Fourier modes, ``k^2 I_k(beta) / beta`` (lines) and the
  particles' lattice rates (markers), and the mean-field deviation against ``n`` with slope ``-1/2``, from
  :mod:`verify.ms_growth`.
* ``ms-2``: the phase table: for each beta the linear theory's law of the first mode to grow (grey), the
  draws' first modes and final cluster counts (markers), ``k*(beta)`` and its transitions, from
  :mod:`verify.ms_phase` (Fig. 4's ``beta = 5`` among them).
* ``ms-3``: the escape rate of ``k`` equally spaced clusters against beta for fixed ``k`` (falling like
  ``e^(-beta (1 - cos(2 pi / k)))``) and for the ``k*(beta)`` clusters of near-uniform data (bounded below),
  with the simulated merge times, from :mod:`verify.ms_escape`.

The drawers read the typed fields of ``result.quantities``; every number comes from a check run (cached per
process). These functions only draw.
"""

from __future__ import annotations

import functools

import numpy as np

from figures._plotting import caption, check_title, plain_log_ticks, pyplot, save
from verify.core.claims import load_check
from verify.ms_escape import FIXED_KS

__all__ = ["CHECK_FIGURES", "FIGURES", "draw_ms_escape", "draw_ms_growth", "draw_ms_phase", "fig_ms1", "fig_ms2",
           "fig_ms3"]


@functools.cache
def _run(check: str, seed: int = 0):
    return load_check(check).run(seed=seed)


def _rates(ax, q):
    betas = sorted({b for b, _, _ in q.lattice_rate})
    for beta, c in zip(betas, ("C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8")):
        for norm, style, mark in (("uniform", "-", "o"), ("softmax", "--", "s")):
            ks = sorted(k for b, n, k in q.lattice_rate if b == beta and n == norm)
            ref = np.array([q.reference_rate[beta, norm, k] for k in ks])
            sim = np.array([q.lattice_rate[beta, norm, k] for k in ks])
            top = ref.max()
            label = f"beta = {beta:g}, k* = {q.dominant[beta]}" if norm == "uniform" else None
            ax.plot(ks, ref / top, style, color=c, lw=1.0, label=label)
            ax.plot(ks, sim / top, mark, color=c, mfc="none", ms=4)
    ax.set_xlabel("Fourier mode k")
    ax.set_ylabel("growth rate / largest rate")
    ax.set_ylim(0.0, 1.35)
    ax.legend(fontsize=7, loc="upper right", ncol=3, title="USA o, SA s: particles; lines: closed form",
              title_fontsize=6)


def _deviation(ax, q):
    n = np.asarray(q.sizes, dtype=float)
    per = np.asarray(q.deviation_per_start, dtype=float)
    for i, size in enumerate(n):
        ax.plot(np.full(per.shape[1], size), per[i], ".", color="0.75", ms=2)
    dev = np.asarray(q.deviation, dtype=float)
    order = np.polyfit(np.log(n), np.log(dev), 1)[0]
    ax.loglog(n, dev, "o-", color="C0", label=f"geometric mean: order {order:.2f}")
    ax.loglog(n, dev[0] * np.sqrt(n[0] / n), "k:", lw=0.8, label="n^(-1/2)")
    ax.set_xlabel("tokens n (i.i.d. uniform)")
    ax.set_ylabel("relative deviation of c_k(t1) from e^(lambda_k t1) c_k(0)")
    plain_log_ticks(ax)
    ax.legend(fontsize=7)


def _phase(ax, q, *, iid=False):
    betas = np.array(sorted(q.winners), dtype=float)
    gap = float(np.min(np.diff(betas))) if betas.size > 1 else 1.0
    shift = 0.3 * gap
    size = min(220.0, 1200.0 / betas.size)  # marker area of a share 1: smaller when the betas crowd
    for b in betas:
        ax.scatter(np.full(q.modes[b].size, b), q.modes[b], s=size * np.asarray(q.model[b]), marker="s", color="0.6",
                   alpha=0.7, lw=0)
        won = np.asarray(q.winners[b])
        counts = np.asarray((q.iid_counts if iid else q.counts)[b])
        for k in np.unique(won[won > 0]):
            ax.scatter(b - shift, k, s=size * np.mean(won == k), marker="o", facecolors="none", edgecolors="C0")
        for k in np.unique(counts[counts > 0]):
            ax.scatter(b + shift, k, s=size * np.mean(counts == k), marker="x", color="C3")
    # k*(beta): constant between the transitions
    lo, hi = betas[0] - 2 * shift, betas[-1] + 2 * shift
    edges = [lo, *[t for t in q.transitions if lo < t < hi], hi]
    k0 = q.dominant[float(betas[0])] - sum(1 for t in q.transitions if lo < t <= betas[0])
    xs, ys = [], []
    for i, (a, b) in enumerate(zip(edges, edges[1:])):
        xs += [a, b]
        ys += [k0 + i, k0 + i]
    ax.plot(xs, ys, "k-", lw=0.8)
    for t in q.transitions:
        if lo < t < hi:
            ax.axvline(t, color="k", ls=":", lw=0.6)
    ax.scatter([], [], s=60, marker="s", color="0.6", label="linear theory: P(first mode) (area)")
    ax.scatter([], [], s=60, marker="o", facecolors="none", edgecolors="C0", label="draws' first mode (share: area)")
    ax.scatter([], [], s=60, marker="x", color="C3", label="clusters at the end (share: area)")
    ax.plot([], [], "k-", lw=0.8, label="k*(beta) = argmax k^2 I_k(beta); dotted: transitions")
    top = max(int(np.max(q.counts[b])) if np.size(q.counts[b]) else 0 for b in q.counts)
    ax.set_ylim(0.4, max(top, max(q.dominant.values()) + 2) + 1.6)
    ax.set_xlim(lo - shift, hi + shift)
    ax.set_xlabel("beta")
    ax.set_ylabel("Fourier mode / number of clusters")
    ax.legend(fontsize=6, loc="upper left")


def _escape(ax, q):
    betas = np.asarray(q.plateau_betas, dtype=float)
    keep = betas <= 60.0
    for k, c in zip(FIXED_KS, ("C1", "C2", "C4", "C5")):
        ax.semilogy(betas[keep], np.asarray(q.fixed_k_rate[k])[keep], "-", color=c, lw=1.0,
                    label=f"k = {k}: slope 1 - cos(2 pi/k) = {1 - np.cos(2 * np.pi / k):.2f}")
    ax.semilogy(betas[keep], np.asarray(q.plateau_rate)[keep], "k-", lw=1.6, label="k = k*(beta): near-uniform data")
    ax.axhline(1e-3, color="k", ls=":", lw=0.8)
    ax.set_ylim(1e-12, 10.0)
    ax.set_xlabel("beta")
    ax.set_ylabel("escape rate mu of k equally spaced clusters (SA)")
    ax.legend(fontsize=6, loc="lower left")


def _merges(ax, q):
    keys = sorted(q.merge_time)
    ks = sorted({k for k, _, _ in keys})
    for k, c in zip(ks, ("C0", "C1", "C2", "C3", "C4", "C5")):
        for norm, style in (("softmax", "-"), ("uniform", "--")):
            betas = sorted(b for kk, b, n in keys if kk == k and n == norm)
            ax.semilogy(betas, [q.reference_merge_time[k, b, norm] for b in betas], style, color=c, lw=1.0,
                        label=f"k = {k}, {'SA' if norm == 'softmax' else 'USA'}")
            ax.semilogy(betas, [q.merge_time[k, b, norm] for b in betas], "o", color=c, mfc="none", ms=4)
    ax.set_xlabel("beta")
    ax.set_ylabel("time until two clusters merge")
    ax.legend(fontsize=6, title="lines: angle ODE; markers: simulated", title_fontsize=6)


# --------------------------------------------------------------------------- paper figures


def fig_ms1(out_dir, *, formats=("png",), seed=0):
    """MS linear phase: growth rates k^2 I_k(beta)/beta of the uniform state, and the particles' n^(-1/2) deviation."""
    res = _run("ms_growth", seed)
    q, p = res.quantities, res.parameters
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.0, 4.2))
    _rates(ax1, q)
    ax1.set_title("growth rates of the uniform state's modes", fontsize=9)
    _deviation(ax2, q)
    ax2.set_title(f"deviation from linear growth, beta = {p['rate_beta']:g}", fontsize=9)
    caption(fig, "Left: lambda_k = k^2 I_k(beta)/beta ((USA); (SA) divides it by I_0(beta), the same curve once divided "
                 "by its largest value, dashed), and the rates measured on n = "
                 f"{p['lattice_n']} tokens on the lattice 2 pi j / n with one mode perturbed (markers, "
                 "spectral.attention_flow on the circle). The maximiser k*(beta) sets "
                 "the periodicity of the metastable state (Bruno, Pasqualotto & Agazzi). Right: from i.i.d. uniform "
                 f"tokens ({p['repeats']} starts per n; grey: each start), the relative deviation of the Fourier "
                 f"coefficients from e^(lambda_k t) c_k(0) after {p['fold']:g} e-fold falls like n^(-1/2). Check "
                 f"ms_growth: {res.verdict}.")
    return save(fig, out_dir, "ms-1", formats)


def fig_ms2(out_dir, *, formats=("png",), seed=0):
    """MS phase table: the first mode to grow and the clusters formed from near-uniform tokens, against beta."""
    res = _run("ms_phase", seed)
    q, p = res.quantities, res.parameters
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.6, 4.6))
    _phase(ax, q)
    ax.set_title("which mode wins from near-uniform tokens "
                 f"({'USA' if p['normalisation'] == 'uniform' else 'SA'} on the circle)", fontsize=9)
    caption(fig, f"{p['draws']} configurations of n = {p['n']} tokens per beta, {p['start']} start (jitter "
                 f"{p['jitter']:g} rad), seed {p['seed']}. Grey squares: the linear theory's probability that mode k "
                 f"is the first to reach |c_k| = {p['level']:g} (Gaussian initial amplitudes growing at lambda_k); "
                 "circles: the draws' first modes; crosses: clusters (single linkage at "
                 f"{p['tol']:g}, at least {100 * p['min_mass']:g} % of the tokens) after {p['horizon']:g} t_lin. The "
                 "prediction k*(beta) holds where its growth rate stands clear of the next one and becomes a coin "
                 f"toss near the transitions. Check ms_phase: {res.verdict}.")
    return save(fig, out_dir, "ms-2", formats)


def fig_ms3(out_dir, *, formats=("png",), seed=0):
    """MS metastable times: escape rates of k equally spaced clusters, and of the k*(beta) clusters of near-uniform data."""
    res = _run("ms_escape", seed)
    q = res.quantities
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.0, 4.2))
    _escape(ax1, q)
    ax1.set_title("escape rate of equally spaced clusters (closed form)", fontsize=9)
    _merges(ax2, q)
    ax2.set_title("merge times from equal spacing perturbed by 1e-6", fontsize=9)
    caption(fig, "Left: the largest eigenvalue of the circulant linearisation at k equally spaced clusters (SA). For a "
                 "fixed k it falls like e^(-beta (1 - cos(2 pi / k))), the exponent 1 - alpha of Geshkovski, Koubbi, "
                 "Polyanskiy & Rigollet's metastability theorem; for the k*(beta) ~ sqrt(2 beta) clusters that form "
                 "from near-uniform data it stays above 1e-3 (dotted) at every beta: their plateau does not lengthen "
                 "exponentially, and the theorem's hypothesis excludes them. Right: simulated merge times "
                 f"(markers) against the angle ODE (lines). Check ms_escape: {res.verdict}.")
    return save(fig, out_dir, "ms-3", formats)


FIGURES = {"ms-1": fig_ms1, "ms-2": fig_ms2, "ms-3": fig_ms3}


# --------------------------------------------------------------------------- check figures (--plot)


def draw_ms_growth(result, ax):
    """Growth rates of the modes: closed form (lines) and the particles' lattice rates (markers)."""
    _rates(ax, result.quantities)
    check_title(result, ax, "growth rates")


def draw_ms_phase(result, ax):
    """The phase table: the linear theory's law, the draws' first modes and cluster counts, k*(beta)."""
    _phase(ax, result.quantities)
    check_title(result, ax, "first mode and clusters")


def draw_ms_escape(result, ax):
    """Escape rates of fixed k and of k*(beta) clusters against beta."""
    _escape(ax, result.quantities)
    check_title(result, ax, "escape rates")


CHECK_FIGURES = {"ms_growth": draw_ms_growth, "ms_phase": draw_ms_phase, "ms_escape": draw_ms_escape}
