"""Figures of the SA paper (self-attention as interacting particles) from the ``sa_*`` checks, and their plots.

* ``sa-1`` (the phase diagram, GLPR Fig. 3's question in (beta, cluster count)): random tokens on the
  circle, the mean number of clusters against time for each beta (multi-cluster plateaus lengthening
  with beta) and the count at the last time against beta, from :mod:`verify.sa_metastability`.
* ``sa-2`` (GLPR Theorem 6.8): equiangular tokens, ``1 - rho(t)`` simulated against the reference ODE
  (e^(-2t) for SA, e^(-2 e^beta t) for USA) and the errors of the three integrators against the
  number of steps with their fitted orders, from :mod:`verify.sa_equiangular`.
* ``sa-3`` (GLPR section 6.3): the phase-transition curve ``gamma_beta(t) = 1 - delta`` over the
  simulated smallest pairwise inner product of random tokens in high dimension, from
  :mod:`verify.sa_high_dimension`.
* ``sa-4`` (GLPR Problem 1; the two-cluster reduction): merge times of two clusters against beta, SA and
  USA, simulated and by quadrature, from :mod:`verify.sa_metastability`.

``CHECK_FIGURES`` draws each ``sa_*`` check's result. Every number is a typed field of a check's
``quantities`` at its defaults (cached per process); these functions only draw.
"""

from __future__ import annotations

import functools

import numpy as np

from figures._plotting import caption, plain_log_ticks, pyplot, save
from verify.core.claims import load_check
from verify.sa_high_dimension import DELTA, crossing_times

__all__ = ["FIGURES", "CHECK_FIGURES", "fig_sa1", "fig_sa2", "fig_sa3", "fig_sa4"]


@functools.lru_cache(maxsize=None)
def _run(check: str, seed: int = 0):
    return load_check(check).run(seed=seed)


def _colors(k):
    plt = pyplot()
    return plt.cm.viridis(np.linspace(0.0, 0.9, max(k, 1)))


# --------------------------------------------------------------------------- drawing helpers (shared)


def _phase_over_time(ax, q, p):
    betas = sorted(q.phase_mean_count)
    times = np.asarray(q.phase_times, dtype=float)
    for color, beta in zip(_colors(len(betas)), betas):
        ax.semilogx(times[1:], np.asarray(q.phase_mean_count[beta], dtype=float)[1:], "-o", ms=2.5, color=color,
                    label=f"beta = {beta:g}")
    ax.set_yscale("log")
    ax.set_xlabel("time t")
    ax.set_ylabel("mean number of clusters")

    plain_log_ticks(ax)
    ax.legend(fontsize=7, ncol=2)


def _phase_against_beta(ax, q, p):
    betas = np.array(sorted(q.phase_counts), dtype=float)
    counts = [np.asarray(q.phase_counts[b], dtype=float) for b in betas]
    mean = np.array([c.mean() for c in counts])
    lo = np.array([np.quantile(c, 0.1) for c in counts])
    hi = np.array([np.quantile(c, 0.9) for c in counts])
    ax.fill_between(betas, lo, hi, color="C0", alpha=0.2, label="10-90 % of the draws")
    ax.plot(betas, mean, "o-", color="C0", label="mean")
    ax.axhline(1.0, color="0.5", lw=0.7, ls=":")
    ax.set_xlabel("beta")
    ax.set_ylabel(f"clusters at t = {p['phase_t']:g}")
    ax.set_ylim(bottom=0.0)
    ax.legend(fontsize=7)


def _equiangular_rates(ax, q):
    keys = sorted(q.rho)
    times = np.asarray(q.times, dtype=float)
    colors = dict(zip(sorted({(b, norm) for b, _, norm in keys}), _colors(6)))
    shown = set()
    for beta, n, norm in keys:
        if n != max(k[1] for k in keys):
            continue
        c = colors[beta, norm]
        ref = 1.0 - np.asarray(q.rho_reference[beta, n, norm], dtype=float)
        sim = 1.0 - np.asarray(q.rho[beta, n, norm], dtype=float)
        keep = ref > 1e-10  # below, the reference's own absolute error (atol 1e-14 on rho near 1) shows
        ax.semilogy(times[keep], ref[keep], color=c, lw=1.0, ls="-" if norm == "softmax" else "--",
                    label=f"{'SA' if norm == 'softmax' else 'USA'}, beta = {beta:g} (ODE)")
        ax.semilogy(times[keep][::2], np.maximum(sim[keep][::2], 1e-16), "o", ms=3, mfc="none", color=c,
                    label="simulated" if "sim" not in shown else None)
        shown.add("sim")
    ax.semilogy(times, np.exp(-2.0 * times), ":", color="k", lw=0.8, label="e^(-2t)")
    ax.set_ylim(1e-10, 2.0)
    ax.set_xlabel("time t")
    ax.set_ylabel("1 - rho(t)")
    ax.legend(fontsize=6, ncol=2)


def _orders(ax, q):
    for (method, steps), c in zip(q.rate_sizes.items(), ("C0", "C1", "C2")):
        steps = np.asarray(steps, dtype=float)
        err = np.asarray(q.rate_errors[method], dtype=float)
        slope = np.polyfit(np.log(steps), np.log(err), 1)[0]
        ax.loglog(steps, err, "o-", color=c, label=f"{method}: order {-slope:.2f}")
    ax.set_xlabel("steps over [0, 2]")
    ax.set_ylabel("max |<x_i, x_j> - rho(2)|")
    ax.legend(fontsize=7)


def _curve(ax, q, delta):
    betas = np.array(sorted(q.gamma), dtype=float)
    times = np.asarray(q.curve_times, dtype=float)
    sim = np.array([np.asarray(q.simulated_min_inner[b], dtype=float) for b in betas])
    edges_t = np.concatenate([times - (times[1] - times[0]) / 2, [times[-1] + (times[1] - times[0]) / 2]])
    mids = (betas[1:] + betas[:-1]) / 2
    edges_b = np.concatenate([[betas[0] - (mids[0] - betas[0])], mids, [betas[-1] + (betas[-1] - mids[-1])]])
    im = ax.pcolormesh(edges_t, edges_b, sim, vmin=-0.2, vmax=1.0, cmap="viridis", shading="flat")
    ax.figure.colorbar(im, ax=ax, label=f"min <x_i, x_j>, d = {q.curve_d}")

    cross = [crossing_times(times, np.asarray(q.gamma[b], dtype=float), 1.0 - delta) for b in betas]
    ok = np.isfinite(cross)
    ax.plot(np.asarray(cross)[ok], betas[ok], "w-o", ms=3, lw=1.5, label=f"gamma_beta(t) = {1 - delta:g}")
    ax.set_xlabel("time t")
    ax.set_ylabel("beta")
    ax.legend(fontsize=7, loc="upper left")


def _merge_times(ax, q, p):
    for norm, c, name in (("softmax", "C0", "SA"), ("uniform", "C3", "USA")):
        betas = sorted(b for b, nn in q.merge_time if nn == norm)
        ax.semilogy(betas, [q.reference_merge_time[b, norm] for b in betas], "-", color=c, label=f"{name}: quadrature")
        ax.semilogy(betas, [q.merge_time[b, norm] for b in betas], "o", mfc="none", color=c, label=f"{name}: simulated")
    ax.set_xlabel("beta")
    ax.set_ylabel(f"time to <u, v> = 0.999 from {p['rho0']:g}")
    ax.legend(fontsize=7)


# --------------------------------------------------------------------------- paper figures


def fig_sa1(out_dir, *, formats=("png",), seed=0):
    """SA phase diagram: clusters against time and against beta, random tokens on the circle (metastability)."""
    res = _run("sa_metastability", seed)
    q, p = res.quantities, res.parameters
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.0, 4.2))
    _phase_over_time(ax1, q, p)
    ax1.set_title("mean cluster count along the flow (SA)", fontsize=9)
    _phase_against_beta(ax2, q, p)
    ax2.set_title(f"cluster count at t = {p['phase_t']:g} against beta", fontsize=9)
    caption(fig, f"Self-attention dynamics (SA) from {p['draws']} uniform configurations of n = {p['phase_n']} "
                 f"tokens on S^{p['phase_d'] - 1} (seed {p['seed']}); clusters are the components of |x_i - x_j| <= "
                 f"{p['tol']:g}. Clusters form by t ~ 10 and then merge slowly: the plateaus lengthen with beta, so "
                 "the count at a fixed time grows with beta (the phase diagram of GLPR's Fig. 3 asks the same of "
                 f"(d, beta)). Check sa_metastability: {res.verdict}.")
    return save(fig, out_dir, "sa-1", formats)


def fig_sa2(out_dir, *, formats=("png",), seed=0):
    """SA Theorem 6.8: equiangular tokens on the ODE (1 - rho(t)), and the integrators' orders."""
    res = _run("sa_equiangular", seed)
    q = res.quantities
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.0, 4.2))
    _equiangular_rates(ax1, q)
    n = max(k[1] for k in q.rho)
    ax1.set_title(f"n = {n} equiangular tokens from rho = {res.parameters['rho0']:g}", fontsize=9)
    _orders(ax2, q)
    ax2.set_title("projected Runge-Kutta methods (SA, n = 8, beta = 4)", fontsize=9)
    caption(fig, "Left: 1 - rho(t) of equiangular tokens, simulated by spectral.attention_flow (circles) and the ODE "
                 "rho' = 2 e^(beta rho)(1-rho)(1+(n-1)rho)/(e^beta+(n-1)e^(beta rho)) (SA, solid) or "
                 "(2/n) e^(beta rho)(1-rho)(1+(n-1)rho) (USA, dashed), solved by solve_ivp at rtol 1e-12; near a "
                 "cluster 1 - rho ~ e^(-2t) (SA) and e^(-2 e^beta t) (USA). Right: error at t = 2 against the number "
                 "of fixed steps, orders 1, 4, 5 (intervals in the check's table). Check sa_equiangular: "
                 f"{res.verdict}.")
    return save(fig, out_dir, "sa-2", formats)


def fig_sa3(out_dir, *, formats=("png",), seed=0):
    """SA section 6.3: the phase-transition curve gamma_beta(t) = 1 - delta over simulated high-dimensional tokens."""
    res = _run("sa_high_dimension", seed)
    q, p = res.quantities, res.parameters
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.0, 4.2))
    _curve(ax1, q, DELTA)
    ax1.set_title("phase-transition curve (SA)", fontsize=9)
    draw_sa_high_dimension(res, ax2)
    caption(fig, f"Left: the smallest pairwise inner product of n = {p['n']} uniform tokens in d = {q.curve_d} (one "
                 f"draw, seed {p['seed']}) over (t, beta), and the curve gamma_beta(t) = 1 - {DELTA:g} of GLPR section "
                 "6.3 (gamma_beta: the equiangular ODE from 0). Right: the error max |<x_i, x_j> - gamma_beta| over "
                 f"t in [0, {p['t_max']:g}] against d, {p['repeats']} draws per d; it falls like d^(-1/2) (the printed "
                 "constants of Theorem 6.9 are vacuous here). Check sa_high_dimension: " + res.verdict + ".")
    return save(fig, out_dir, "sa-3", formats)


def fig_sa4(out_dir, *, formats=("png",), seed=0):
    """SA Problem 1: two clusters merge after a plateau growing like e^(beta (1 - rho0)) (SA), shrinking for USA."""
    res = _run("sa_metastability", seed)
    q, p = res.quantities, res.parameters
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    _merge_times(ax, q, p)
    ax.set_title("plateau of two clusters", fontsize=9)
    caption(fig, f"Two caps of {p['n'] // 2} tokens (radius {p['cap']:g} rad) around u, v with <u, v> = {p['rho0']:g} "
                 "on S^2: time until the centres' inner product reaches 0.999, simulated (circles) and by quadrature "
                 "of the two-cluster ODE (lines). (SA) grows like e^(beta (1 - rho0)) / beta; (USA) shrinks like "
                 f"e^(-beta rho0) / beta. Check sa_metastability: {res.verdict}.")
    return save(fig, out_dir, "sa-4", formats)


FIGURES = {"sa-1": fig_sa1, "sa-2": fig_sa2, "sa-3": fig_sa3, "sa-4": fig_sa4}


# --------------------------------------------------------------------------- check figures (--plot)


def draw_sa_equiangular(result, ax):
    """1 - rho(t) of the equiangular runs against the ODE (largest n)."""
    _equiangular_rates(ax, result.quantities)
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def draw_sa_clustering(result, ax):
    """Fraction of the draws in one cluster against time, per (d, beta, normalisation)."""
    q = result.quantities
    times = np.asarray(q.times, dtype=float)
    keys = sorted(q.counts)
    for color, key in zip(_colors(len(keys)), keys):
        d, beta, norm = key
        frac = np.mean(np.asarray(q.counts[key]) == 1, axis=1)
        ax.semilogx(times, frac, "-" if norm == "softmax" else "--", color=color,
                    label=f"d = {d}, beta = {beta:g}, {'SA' if norm == 'softmax' else 'USA'}")
    ax.set_xlabel("time t (USA: in units of e^-beta)")
    ax.set_ylabel("fraction of draws in one cluster")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=6, ncol=2, loc="upper left")
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def draw_sa_hemisphere(result, ax):
    """Measured tail rate over the linearised rate (1 SA, e^beta USA) per case."""
    q = result.quantities
    keys = sorted(q.rate)
    for i, key in enumerate(keys):
        r = np.asarray(q.rate[key], dtype=float) / q.rate_linear[key]
        ax.plot(np.full(r.size, i), r - 1.0, "o", ms=3, color="C0" if key[3] == "softmax" else "C3")
    ax.axhline(0.0, color="0.5", lw=0.7)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([f"{k[0][0].upper()} d{k[1]} b{k[2]:g} {'SA' if k[3] == 'softmax' else 'USA'}" for k in keys],
                       rotation=90, fontsize=6)
    ax.set_ylabel("rate / linearised rate - 1")
    ax.set_xlabel("start (H: hemisphere, U: uniform n = d), d, beta, normaliser", fontsize=7)
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def draw_sa_metastability(result, ax):
    """Mean cluster count along the flow for each beta (the phase diagram's plateaus)."""
    _phase_over_time(ax, result.quantities, result.parameters)
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def draw_sa_polytope(result, ax):
    """Rescaled tokens at t = 0 and their limits (the leaders) with the limit polytope, d = 2."""
    q = result.quantities
    d = min(q.limits)
    start = np.asarray(q.starts[d], dtype=float)
    lim = np.asarray(q.limits[d], dtype=float)
    if d == 2 and start.size:
        ax.plot(start[:, 0], start[:, 1], "o", ms=3, color="0.6", label="tokens at t = 0")
        if lim.shape[0] >= 3:
            from scipy.spatial import ConvexHull

            hull = lim[ConvexHull(lim).vertices]
            ax.fill(hull[:, 0], hull[:, 1], color="C0", alpha=0.15, label="limit polytope K")
        ax.plot(lim[:, 0], lim[:, 1], "*", ms=10, color="C3", label="limits of e^(-t) x_i")
        ax.set_aspect("equal")
        ax.legend(fontsize=7)
    ax.set_xlabel("z_1")
    ax.set_ylabel("z_2")
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def draw_sa_boolean(result, ax):
    """Distance of P(t) to the Boolean limit (rows e_argmin or e_argmax) against time."""
    q = result.quantities
    dist = np.maximum(np.asarray(q.boolean_distance, dtype=float), 1e-300)
    ax.semilogy(np.asarray(q.times, dtype=float), dist, "o-", ms=3)
    ax.set_ylim(top=2.0)
    ax.set_xlabel("time t")
    ax.set_ylabel("max_i distance of P_i to e_argmin, e_argmax")
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def draw_sa_high_dimension(result, ax):
    """Error against gamma_beta versus d (median and spread of the draws), with slope -1/2."""
    q = result.quantities
    dims = np.asarray(q.dims, dtype=float)
    for beta, c in zip(sorted(q.errors), ("C0", "C1", "C2", "C3")):
        e = np.asarray(q.errors[beta], dtype=float)
        ax.loglog(dims, np.median(e, axis=1), "o-", color=c, label=f"beta = {beta:g}")
        ax.fill_between(dims, e.min(axis=1), e.max(axis=1), color=c, alpha=0.15)
    ref = np.median(np.asarray(q.errors[sorted(q.errors)[0]], dtype=float), axis=1)[0]
    ax.loglog(dims, ref * np.sqrt(dims[0] / dims), "k:", lw=0.8, label="d^(-1/2)")
    ax.set_xlabel("dimension d")
    ax.set_ylabel("max_t,i<j |<x_i, x_j> - gamma_beta(t)|")
    ax.legend(fontsize=7)
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


CHECK_FIGURES = {"sa_equiangular": draw_sa_equiangular, "sa_clustering": draw_sa_clustering,
                 "sa_hemisphere": draw_sa_hemisphere, "sa_metastability": draw_sa_metastability,
                 "sa_polytope": draw_sa_polytope, "sa_boolean": draw_sa_boolean,
                 "sa_high_dimension": draw_sa_high_dimension}
