"""Figures of the Sinkformers family (SK) from the ``sk_*`` checks, and their ``--plot`` figures.

* ``sk-1``: the heat diffusion: the moments of the tokens moved by Sinkformer and row-softmax layers against
  time, on S^1 and S^2, with the exact heat semigroup at diffusivity 1/2 and 1 (:mod:`verify.sk_heat`).
* ``sk-2``: the generator on functions: on the S^1 quantile grid, ``(1/eps)(A - I) sin 2 theta`` of both
  normalisations with the limits (Langevin for Sinkhorn, softmax drift, and the Laplace-Beltrami "heat"
  reading that fails), and the scaling law ``n d^2 ~ 1/p`` (:mod:`verify.sk_generator`).
* ``sk-3``: the rates: bias against eps and sampling error against n, for both normalisations and
  manifolds (:mod:`verify.sk_rates`).
* ``sk-4``: Sinkhorn's convergence: the symmetric scaling's residual histories and the alternating
  iteration's sweeps against eps (:mod:`verify.sk_convergence`).

The drawers read the typed fields of ``result.quantities``; every number comes from a check run (cached per
process). These functions only draw.
"""

from __future__ import annotations

import functools

import numpy as np

from figures._plotting import caption, check_title, plain_log_ticks, pyplot, save
from verify.core.claims import load_check
from verify.sk_convergence import TOL
from verify.sk_heat import DIFFUSIVITY, MODES
from verify.sk_rates import GRID_N, N_EPS

__all__ = ["CHECK_FIGURES", "FIGURES", "draw_sk_convergence", "draw_sk_generator", "draw_sk_heat", "draw_sk_rates",
           "fig_sk1", "fig_sk2", "fig_sk3", "fig_sk4"]

_NORM_COLORS = {"sinkhorn": "C0", "softmax": "C3"}
_NORM_LABELS = {"sinkhorn": "Sinkhorn", "softmax": "row softmax"}


@functools.cache
def _run(check: str, seed: int = 0):
    return load_check(check).run(seed=seed)


# -- sk-1: heat diffusion -------------------------------------------------------------------------------------
def _heat_panel(q, ax, manifold: str, *, legend: bool):
    markers = {1: "o", 2: "s", 3: "^"}
    for norm in ("sinkhorn", "softmax"):
        flow = q.flows[manifold, norm]
        lam = flow.eigenvalues(manifold)
        t = np.linspace(0.0, float(flow.times[-1]), 100)
        for i, k in enumerate(MODES):
            keep = flow.moments[:, i] > 0
            ax.semilogy(flow.times[keep], flow.moments[keep, i], markers[k], color=_NORM_COLORS[norm], ms=3.5,
                        mfc="none", label=f"{_NORM_LABELS[norm]}, mode {k}" if legend else None)
            ax.semilogy(t, flow.exact_start[i] * np.exp(-lam[i] * DIFFUSIVITY[norm] * t), "-",
                        color=_NORM_COLORS[norm], lw=0.8)
    ax.set_xlabel("t (layers x eps)")
    ax.set_ylabel("E cos k(theta - mu)" if manifold == "circle" else "E P_l(<mu, x>)")


def draw_sk_heat(result, ax):
    """Moments of Sinkformer and softmax tokens against t with the exact heat flows (D = 1/2 and 1), on S^1."""
    q = result.quantities
    manifold = "circle" if ("circle", "sinkhorn") in q.flows else "sphere"
    _heat_panel(q, ax, manifold, legend=True)
    ax.legend(fontsize=6, ncol=2)
    check_title(result, ax, f"{'S^1' if manifold == 'circle' else 'S^2'}: moments against t")


def fig_sk1(out_dir, *, formats=("png",), seed=0):
    """SK Fig. 1: Sinkformer layers diffuse the tokens' density at D = 1/2, row-softmax layers at D = 1."""
    res = _run("sk_heat", seed)
    q = res.quantities
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.4))
    _heat_panel(q, axes[0], "circle", legend=True)
    axes[0].set_title("S^1, von Mises (kappa 1) start, modes k = 1, 2, 3", fontsize=9)
    axes[0].legend(fontsize=6, ncol=2, loc="lower left")
    _heat_panel(q, axes[1], "sphere", legend=False)
    axes[1].set_title("S^2, von Mises-Fisher (kappa 2) start, degrees l = 1, 2, 3", fontsize=9)
    p = res.parameters
    def fitted(norm, manifold, digits):
        vals = q.flows[manifold, norm].diffusivity(manifold)
        return ", ".join("n/a" if not np.isfinite(v) else f"{v:.{digits}f}" for v in vals)
    caption(fig, f"Tokens through residual layers y = x - (step/eps) P_perp(A x), x <- y/|y| (scores <x_i, x_j>/eps, "
                 f"eps = {p['eps']:g}, step = {p['step']:g} = one layer per unit eps of time; value matrix -I): "
                 f"{p['circle_n']} tokens on S^1 at the von Mises quantiles, {p['sphere_n']} on S^2 (a vMF Fibonacci "
                 f"set). Markers: the tokens' moments (open: Sinkhorn-normalised A, blue; row softmax, red); lines: the "
                 f"exact heat semigroup from the starting density at D = 1/2 (blue) and D = 1 (red). Fitted D by mode, "
                 f"Sinkhorn: S^1 {fitted('sinkhorn', 'circle', 4)}; S^2 {fitted('sinkhorn', 'sphere', 4)}. Row softmax: "
                 f"S^1 {fitted('softmax', 'circle', 3)}; S^2 {fitted('softmax', 'sphere', 3)} (mode 3 is the least "
                 f"accurate: on S^1 its moment decays too fast and turns negative near t = 0.6, so no D is fitted and "
                 f"the last points are missing). The paper's 'heat diffusion' holds for the density, with D = 1/2 "
                 f"in this convention "
                 f"(kernel exp(-|x - y|^2 / (2 eps))). Check sk_heat: {res.verdict}.")
    return save(fig, out_dir, "sk-1", formats)


# -- sk-2: the generator on functions ---------------------------------------------------------------------------
def _generator_panel(q, ax):
    c = q.tiers["circle_grid"].curve
    order = np.argsort(c.coordinate)
    th = c.coordinate[order]
    ax.plot(th, c.sinkhorn[order], "o", color=_NORM_COLORS["sinkhorn"], ms=1.5, label="Sinkhorn (1/eps)(P - I) f")
    ax.plot(th, c.softmax[order], "o", color=_NORM_COLORS["softmax"], ms=1.5, label="row softmax (1/eps)(D^-1 W - I) f")
    half, drift = c.half_laplacian[order], c.drift[order]
    ax.plot(th, half + 0.5 * drift, "-", color="k", lw=0.9, label="(1/2)(Delta f + <grad log p, grad f>)")
    ax.plot(th, half + drift, "--", color="0.35", lw=0.9, label="(1/2) Delta f + <grad log p, grad f>")
    ax.plot(th, half, ":", color="C2", lw=1.2, label="(1/2) Delta f (heat reading: fails)")
    ax.set_xlabel("theta")
    ax.set_ylabel("operator on f = sin 2 theta")


def _scaling_panel(q, ax):
    for tier, style in (("circle_grid", "-"), ("sphere_grid", "-"), ("circle_iid", "."), ("sphere_iid", ".")):
        if tier not in q.tiers:
            continue
        t = q.tiers[tier]
        color = "C0" if tier.startswith("circle") else "C1"
        order = np.argsort(t.density)
        ax.loglog(t.density[order], t.kernel_mass * t.scaling_squared[order], style,
                  color=color if tier.endswith("grid") else ("C9" if tier.startswith("circle") else "C8"), ms=1.5,
                  lw=1.4, alpha=0.9 if tier.endswith("grid") else 0.5,
                  label=f"{tier.replace('_', ' ')} (slope {t.scaling_law_slope:.3f})")
    p = np.geomspace(min(float(np.min(t.density)) for t in q.tiers.values()),
                     max(float(np.max(t.density)) for t in q.tiers.values()), 20)
    ax.loglog(p, 1.0 / p, "k:", lw=0.9, label="1 / p")
    ax.set_xlabel("density p(x_i)")
    ax.set_ylabel("n d_i^2 c_eps  (c_eps = integral of the kernel)")
    plain_log_ticks(ax)


def draw_sk_generator(result, ax):
    """The Sinkhorn and softmax generators on the S^1 grid with the three candidate limits."""
    q = result.quantities
    if "circle_grid" in q.tiers:
        _generator_panel(q, ax)
        ax.legend(fontsize=6)
        check_title(result, ax, "S^1 grid: generators and limits")
    else:
        _scaling_panel(q, ax)
        ax.legend(fontsize=6)
        check_title(result, ax, "Sinkhorn scaling against the density")


def fig_sk2(out_dir, *, formats=("png",), seed=0):
    """SK Fig. 2: Sinkhorn's generator keeps half the softmax drift (not Laplace-Beltrami); its scaling is p^(-1/2)."""
    res = _run("sk_generator", seed)
    q = res.quantities
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.4), gridspec_kw={"width_ratios": [1.3, 1.0]})
    _generator_panel(q, axes[0])
    lo, hi = axes[0].get_ylim()
    axes[0].set_ylim(lo - 0.6 * (hi - lo), hi)
    axes[0].legend(fontsize=6, loc="lower center", ncol=2)
    axes[0].set_title("S^1, von Mises (kappa 1) quantile grid", fontsize=9)
    _scaling_panel(q, axes[1])
    axes[1].legend(fontsize=6)
    axes[1].set_title("the scaling d of P = diag(d) W diag(d)", fontsize=9)
    p = res.parameters
    fits = "; ".join(f"{tier}: B = {t.normalised['sinkhorn'].drift_coef:.3f} (Sinkhorn), "
                     f"{t.normalised['softmax'].drift_coef:.3f} (softmax)" for tier, t in q.tiers.items())
    caption(fig, f"Left: W_ij = exp(-|x_i - x_j|^2 / (2 eps)), eps = {p['circle_grid_eps']:g}, on {p['circle_grid_n']} "
                 f"points at the quantiles of a von Mises density; f = sin 2 theta. The doubly stochastic P (symmetric "
                 f"Sinkhorn scaling) follows the Langevin generator (1/2)(Delta + <grad log p, grad>), the row softmax "
                 f"the drift twice as large; the density-free (1/2) Delta f is not the limit of either. Fitted op = A "
                 f"(1/2) Delta f + B <grad log p, grad f> ({fits}): Sinkhorn halves the drift, it does not remove it. "
                 f"Right: n d_i^2 c_eps against p(x_i) on every tier (c_eps the kernel's integral): 1/p, i.e. d ~ "
                 f"(n c_eps p)^(-1/2); the i.i.d. tiers scatter by their sampling error. Check sk_generator: {res.verdict}.")
    return save(fig, out_dir, "sk-2", formats)


# -- sk-3: rates -----------------------------------------------------------------------------------------------
def _eps_panel(q, ax):
    for (manifold, norm), err in q.eps_errors.items():
        ax.loglog(q.eps[manifold], err, "o-" if manifold == "circle" else "s--", color=_NORM_COLORS[norm], ms=4,
                  lw=1.0, label=f"{'S^1' if manifold == 'circle' else 'S^2'}, {_NORM_LABELS[norm]}")
    eps = np.asarray(sorted({float(e) for v in q.eps.values() for e in v}))
    low = min(float(np.min(v)) for v in q.eps_errors.values())
    ax.loglog(eps, 0.6 * low * eps / eps[0], "k:", lw=0.8, label="slope 1 (O(eps))")
    ax.set_xlabel("eps")
    ax.set_ylabel("relative RMS against the eps -> 0 limit")
    plain_log_ticks(ax)


def _n_panel(q, ax):
    n = np.asarray(q.sizes, dtype=float)
    for (manifold, norm), err in q.n_errors.items():
        mean = np.exp(np.mean(np.log(err), axis=1))
        ax.loglog(n, mean, "o-" if manifold == "circle" else "s--", color=_NORM_COLORS[norm], ms=4, lw=1.0,
                  label=f"{'S^1' if manifold == 'circle' else 'S^2'}, {_NORM_LABELS[norm]}")
        ax.loglog(np.repeat(n, err.shape[1]), err.ravel(), ".", color=_NORM_COLORS[norm], ms=1.5, alpha=0.4)
    top = max(float(np.max(v)) for v in q.n_errors.values())
    ax.loglog(n, top * 1.3 * (n / n[0]) ** -0.5, "k:", lw=0.8, label="n^(-1/2)")
    ax.set_xlabel("n")
    ax.set_ylabel("relative RMS against the finite-eps continuum")
    plain_log_ticks(ax)


def draw_sk_rates(result, ax):
    """Sampling error of both generators against n at fixed eps, with the n^(-1/2) slope."""
    _n_panel(result.quantities, ax)
    ax.legend(fontsize=6)
    check_title(result, ax, "sampling error against n")


def fig_sk3(out_dir, *, formats=("png",), seed=0):
    """SK Fig. 3: both generators' bias is O(eps) and their sampling error O(n^(-1/2))."""
    res = _run("sk_rates", seed)
    q = res.quantities
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.4))
    _eps_panel(q, axes[0])
    axes[0].legend(fontsize=6)
    axes[0].set_title("bias (quantile grid on S^1, Fibonacci set on S^2)", fontsize=9)
    _n_panel(q, axes[1])
    axes[1].legend(fontsize=6, loc="lower left")
    axes[1].set_title("sampling error at fixed eps (i.i.d. samples)", fontsize=9)
    p = res.parameters
    orders = "; ".join(f"{r.name.replace('_', ' ')} {r.measured:.3f}" for r in res.records if r.name.endswith("_order"))
    caption(fig, f"Left: relative RMS of (1/eps)(A - I) f against each normalisation's limit on {GRID_N['circle']} "
                 f"(S^1) and {GRID_N['sphere']} (S^2) points. Right: relative RMS against the exact finite-eps "
                 f"continuum operator (FFT / Funk-Hecke) on i.i.d. samples, eps = {N_EPS['circle']:g} (S^1), "
                 f"{N_EPS['sphere']:g} (S^2), {p['repeats']} samples per n (small dots; lines: geometric means), seed "
                 f"{p['seed']}. Fitted orders (verify.rates): {orders}. Check sk_rates: {res.verdict}.")
    return save(fig, out_dir, "sk-3", formats)


# -- sk-4: Sinkhorn's convergence --------------------------------------------------------------------------------
def _history_panel(q, ax):
    longest, top = 1, 0.0
    for manifold, style in (("sphere", "-"), ("circle", "--")):
        if manifold not in q.runs:
            continue
        r = q.runs[manifold]
        name = "S^2 samples" if manifold == "sphere" else "S^1 grid"
        for i, (eps, hist) in enumerate(zip(r.eps, r.symmetric_residuals)):
            ax.semilogy(np.arange(len(hist)), hist, style, color=f"C{i}", lw=1.0 if manifold == "sphere" else 0.8,
                        label=f"{name}, eps = {eps:g}")
            longest, top = max(longest, len(hist)), max(top, float(hist[0]))
    k = np.arange(longest)
    ax.semilogy(k, top * 0.5**k, "k:", lw=0.9, label="2^(-k)")
    ax.set_xlabel("symmetric update k")
    ax.set_ylabel("max_i |(P 1)_i - 1|")


def _sweeps_panel(q, ax):
    for manifold, style in (("circle", "o-"), ("sphere", "s--")):
        if manifold not in q.runs:
            continue
        r = q.runs[manifold]
        name = "S^1" if manifold == "circle" else "S^2"
        ax.loglog(r.eps, r.alternating_sweeps, style, color="C3", ms=4, lw=1.0, label=f"{name}, alternating (sweeps)")
        ax.loglog(r.eps, r.symmetric_updates, style, color="C0", ms=4, lw=1.0, label=f"{name}, symmetric (updates)")
        ax.loglog(r.eps, np.log(1e6) / -np.log(r.lambda_2**2), ":", color="0.5", lw=0.8)
    eps = q.runs["circle" if "circle" in q.runs else "sphere"].eps
    top = max(float(np.max(r.alternating_sweeps)) for r in q.runs.values())
    ax.loglog(eps, top * (eps / eps[-1]) ** -1.0, "k:", lw=0.8, label="1/eps")
    ax.set_xlabel("eps")
    ax.set_ylabel("iterations to max |row sum - 1| <= 1e-12")
    plain_log_ticks(ax)


def draw_sk_convergence(result, ax):
    """Iterations to 1e-12 against eps: alternating Sinkhorn (~1/eps) and the symmetric scaling (bounded)."""
    _sweeps_panel(result.quantities, ax)
    ax.legend(fontsize=6)
    check_title(result, ax, "iterations against eps")


def fig_sk4(out_dir, *, formats=("png",), seed=0):
    """SK Fig. 4: alternating Sinkhorn needs ~1/eps sweeps; the symmetric scaling D C D contracts by 1/2 per update."""
    res = _run("sk_convergence", seed)
    q = res.quantities
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.4))
    _history_panel(q, axes[0])
    axes[0].legend(fontsize=6, ncol=2)
    axes[0].set_title("symmetric scaling d <- sqrt(d / C d)", fontsize=9)
    _sweeps_panel(q, axes[1])
    axes[1].legend(fontsize=6, loc="upper right")
    axes[1].set_title("iterations to 1e-12 against eps", fontsize=9)
    p = res.parameters
    r = q.runs["sphere"]
    caption(fig, f"Gaussian attention W = exp(-|x_i - x_j|^2 / (2 eps)) on the {p['n']}-point von Mises quantile grid "
                 f"of S^1 and {p['n']} i.i.d. vMF samples of S^2 (seed {p['seed']}). Left: the symmetric scaling's "
                 f"row-sum residual per update (S^2 samples: asymptotic ratio "
                 f"{', '.join(f'{v:.3f}' for v in r.symmetric_rate)} against the bound (1 - lambda_min(P))/2 = "
                 f"{', '.join(f'{v:.3f}' for v in (1 - r.lambda_min) / 2)}; on the grid the starting error is smooth and "
                 f"O(eps), and falls faster the smaller eps). Right: alternating Sinkhorn-Knopp sweeps "
                 f"(rate lambda_2(P)^2; grey dotted: log(1e6) / -log lambda_2^2, the sweeps per 6 decades) and "
                 f"symmetric updates to tol {TOL:g}; on S^2 the sample's spectral gap closes faster than eps at this n "
                 f"and the sweeps with it. Check sk_convergence: {res.verdict}.")
    return save(fig, out_dir, "sk-4", formats)


FIGURES = {"sk-1": fig_sk1, "sk-2": fig_sk2, "sk-3": fig_sk3, "sk-4": fig_sk4}
CHECK_FIGURES = {"sk_heat": draw_sk_heat, "sk_generator": draw_sk_generator, "sk_rates": draw_sk_rates,
                 "sk_convergence": draw_sk_convergence}
