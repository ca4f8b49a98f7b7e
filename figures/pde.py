"""Figures of the PDE paper (PDE-guided attention) from the ``pde_*`` checks, and their ``--plot`` figures.

* ``pde-16``: Fig. 16 analogue: one attention row (query 32 of T = 64) after N_t in {1, 2, 4, 8} steps of
  each PDE type (key axis, cell-centred Neumann, dt = ds = 1, alpha = 0.1, c = 0.15, beta_RD = 0.02,
  beta_AD = 0.03), each panel annotated with the largest row-sum deviation and the smallest entry of
  the whole matrix; plus the mode-damping panel ``(1 - alpha mu_k dt)^L`` against
  ``exp(-alpha mu_k L dt)`` (periodic T = 256, L in {1, 4, 16}, r in {0.1, 0.25, 0.45}), from
  :mod:`verify.pde_conservation` and :mod:`verify.pde_modes`.
* ``pde-2``: Fig. 2 analogue (the paper's is schematic): spread (standard deviation) of a delta row
  against pseudo-time with the ``sqrt(2 alpha t)`` law, and the wave front against t, from
  :mod:`verify.pde_spread`.
* ``pde-3``: Fig. 3 analogue: S(t) and C(t) per PDE type (semilog), from :mod:`verify.pde_smoothing`.
* ``pde-4``: Fig. 4 analogue: PL convergence of GD and SGD on least squares, from
  :mod:`verify.pde_convergence`.

Every number comes from a check run (cached per process); these functions only draw.
"""

from __future__ import annotations

import functools

import numpy as np

from figures._plotting import caption, check_title, plain_log_ticks, pyplot, save
from verify.core.claims import load_check

_PDES = ("diffusion", "wave", "reaction-diffusion", "advection-diffusion")
_LABELS = {"diffusion": "diffusion", "wave": "wave", "reaction-diffusion": "reaction-diffusion",
           "advection-diffusion": "advection-diffusion"}
FIG16_RATES = (0.1, 0.25, 0.45)


@functools.lru_cache(maxsize=None)
def _run(check: str, **kwargs):
    return load_check(check).run(**kwargs)


# ------------------------------------------------------------------------------ drawers (one axes)
def _draw_rows(result, ax, pde):
    q = result.quantities
    steps = q.fig16_steps
    fig = q.fig16[pde]
    rows, devs, mins = np.asarray(fig.rows), np.asarray(fig.row_sum_deviation), np.asarray(fig.min_entry)
    plt = pyplot()
    colors = plt.cm.viridis(np.linspace(0.0, 0.85, len(steps)))
    for n, row, col in zip(steps, rows, colors):
        ax.plot(np.arange(row.size), row, color=col, lw=1.3 if n else 0.9, ls="-" if n else ":",
                label=f"N_t = {n}")
    text = "\n".join(f"N_t={n}: max|sum-1| {d:.1e}, min {m:.1e}" for n, d, m in zip(steps, devs, mins))
    ax.set_ylim(top=1.8 * float(np.max(rows)))  # head room for the annotation
    ax.text(0.99, 0.97, text, transform=ax.transAxes, ha="right", va="top", fontsize=6,
            bbox={"facecolor": "white", "alpha": 0.85, "lw": 0})
    ax.set_title(_LABELS[pde], fontsize=9)
    ax.set_xlabel("key j")
    ax.set_ylabel("A[32, j]")


def draw_pde_conservation(result, ax):
    """Row 32 of A(N_t) under diffusion (Fig. 16 setting), with its row-sum and minimum annotations."""
    _draw_rows(result, ax, "diffusion")
    ax.legend(fontsize=6, loc="upper left")
    check_title(result, ax, "row 32 of A after N_t diffusion steps (key axis, Neumann)")


def _draw_damping(result, ax, rates=None):
    q = result.quantities
    mu = np.asarray(q.damping_mu)
    x = np.asarray(q.damping_k) / (2.0 * (mu.size - 1))  # k / T
    rates = rates or tuple(q.damping_discrete)
    layers = sorted(q.damping_discrete[rates[0]])
    plt = pyplot()
    colors = plt.cm.plasma(np.linspace(0.0, 0.8, len(rates)))
    styles = dict(zip(layers, ("-", "--", ":", "-.")))
    for r, col in zip(rates, colors):
        for L in layers:
            ax.plot(x, np.asarray(q.damping_discrete[r][L]), color=col, ls=styles[L], lw=1.2)
            ax.plot(x, np.asarray(q.damping_exponential[r][L]), color=col, ls=styles[L], lw=0.6, alpha=0.45)
    for r, col in zip(rates, colors):
        ax.plot([], [], color=col, lw=1.5, label=f"r = {r:g}")
    for L in layers:
        ax.plot([], [], color="k", ls=styles[L], lw=1.0, label=f"L = {L}")
    ax.axhline(0.0, color="0.5", lw=0.5)
    ax.set_xlabel("frequency k / T")
    ax.set_ylabel("mode factor")
    ax.set_title("(1 - alpha mu_k dt)^L (bold) vs exp(-alpha mu_k L dt) (thin)", fontsize=8)
    ax.legend(fontsize=6, ncol=2, loc="lower left")


def draw_pde_modes(result, ax):
    """Mode factors of periodic diffusion against the exponential, per r and L."""
    _draw_damping(result, ax)
    check_title(result, ax, "(1 - alpha mu_k dt)^L (bold) vs exp(-alpha mu_k L dt) (thin)")


def draw_pde_flow(result, ax):
    """Global error against pseudo-time at fixed dt: diffusion bounded and decaying, wave growing."""
    q = result.quantities
    # the diffusion is observed at alpha t = 0.1 .. 100 (its own times), the wave at the check's error times
    ax.loglog(np.asarray(q.diffusion_error_times), q.error_vs_t["diffusion"], "o-", label="diffusion")
    ax.loglog(np.asarray(q.error_times), q.error_vs_t["wave"], "s-", label="wave")
    ax.set_xlabel("pseudo-time t")
    ax.set_ylabel("|A_scheme(t) - A_exact(t)|_F")
    plain_log_ticks(ax)
    check_title(result, ax, f"explicit schemes vs exact semi-discrete flow (dt = {result.parameters['long_dt']:g})")
    ax.legend(fontsize=7)


def _draw_spread(result, ax):
    q = result.quantities
    n = np.asarray(q.spread_steps, dtype=float)
    for r, std in q.spread.items():
        ax.loglog(n, std, "o", ms=3, label=f"r = {r:g} (measured)")
        ax.loglog(n, np.sqrt(2 * r * n), "k-", lw=0.6)
    ax.plot([], [], "k-", lw=0.6, label="sqrt(2 alpha t)")
    ax.set_xlabel("pseudo-time t = n dt (dt = 1)")
    ax.set_ylabel("spread (std of the row, tokens)")
    ax.set_title("diffusive spread grows like t^(1/2)", fontsize=9)
    ax.legend(fontsize=7)


def draw_pde_spread(result, ax):
    """Spread of a delta row against pseudo-time, with the exact sqrt(2 alpha t)."""
    _draw_spread(result, ax)
    plain_log_ticks(ax)
    check_title(result, ax, "diffusive spread grows like t^(1/2)")


def _draw_smoothing(result, ax, which):
    q = result.quantities
    n = np.asarray(q.steps, dtype=float)
    for curves, label, style in ((q.linear.get(("diffusion", "periodic")), "diffusion", "-"),
                                 (q.linear.get(("advection-diffusion", "periodic")), "advection-diffusion", "--"),
                                 (q.linear.get(("wave", "periodic")), "wave", "-"),
                                 (q.reaction.get(0.02), "reaction-diffusion beta 0.02", "-"),
                                 (q.reaction.get(1.0), "reaction-diffusion beta 1 (alpha 0.01)", ":")):
        if curves is None:
            continue
        if which == "S":
            y = np.asarray(curves.smoothness, dtype=float) / curves.smoothness0
        else:
            y = np.asarray(curves.consistency, dtype=float) / curves.consistency0
        ax.loglog(n, np.where(y > 0, y, np.nan), style, lw=1.2, label=label)
    ax.set_ylim(1e-12, 1e4)
    ax.set_xlabel("steps n (dt = 1)")
    ax.set_ylabel(f"{which}(t) / {which}(0)")
    ax.axhline(1.0, color="0.5", lw=0.5)
    ax.set_title("S = |lap A|_F^2" if which == "S" else "C = Var(A)", fontsize=9)


def draw_pde_smoothing(result, ax):
    """C(t) / C(0) per PDE type."""
    _draw_smoothing(result, ax, "C")
    ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3)  # the curves fill the axes
    check_title(result, ax, "consistency C = Var(A) per PDE type")


def _draw_convergence(result, ax):
    q = result.quantities
    gd = np.asarray(q.gd_excess_loss)
    bound = np.asarray(q.pl_bound)
    sgd = np.asarray(q.sgd_mean_excess_loss)
    sb = np.asarray(q.pl_bound_sgd)
    ax.semilogy(np.arange(1, gd.size + 1), gd, label="GD, eta = 1/mu")
    ax.semilogy(np.arange(1, bound.size + 1), bound, "--", color="C0", lw=0.8, label="eq. (16) bound for GD")
    ax.semilogy(np.arange(1, sgd.size + 1), sgd, label="SGD, eta = 1/(2 mu), mean of chains")
    ax.semilogy(np.arange(1, sb.size + 1), sb, "--", color="C1", lw=0.8, label="eq. (16) bound for the SGD step")
    ax.axhline(q.sgd_floor_predicted, color="C1", ls=":", lw=1.0, label="exact SGD noise floor")
    ax.set_xlabel("iteration t")
    ax.set_ylabel("L(theta_t) - L*")
    ax.set_ylim(bottom=max(1e-12, float(np.min(gd[gd > 0])) / 10))
    ax.legend(fontsize=7)


def draw_pde_convergence(result, ax):
    """Excess loss of GD and SGD against the PL bound and the exact SGD noise floor."""
    _draw_convergence(result, ax)
    check_title(result, ax, "PL convergence of GD and SGD on least squares")


def draw_pde_causal(result, ax):
    """Mean future attention mass per row after N_t key-axis steps on causal softmax attention."""
    mass = result.quantities.future_mass_mean
    n = sorted(mass)
    ax.plot(n, [mass[k] for k in n], "o-", label="centred step (key axis, Neumann)")
    ax.axhline(0.0, color="k", lw=0.8, label="re-masked after every step")
    ax.set_xlabel("steps N_t")
    ax.set_ylabel("mean_i sum_(j>i) A_ij(N_t)")
    check_title(result, ax, "future weight leaked into causal attention")
    ax.legend(fontsize=7)


def draw_pde_cost(result, ax):
    """Flops of N_t refinement steps against T for dense, banded and factored attention."""
    q = result.quantities
    sizes = sorted(q.banded_flops)
    t = np.asarray(sizes, dtype=float)
    for flops, label in ((q.dense_flops, "dense (5 N_t T^2)"), (q.banded_flops, "banded + global"),
                         (q.factored_flops, "factored phi(Q) phi(K)^T")):
        y = np.array([flops.get(T, np.nan) for T in sizes], dtype=float)
        ok = np.isfinite(y)
        ax.loglog(t[ok], y[ok], "o-", label=label)
    plain_log_ticks(ax)
    ax.set_xlabel("sequence length T")
    ax.set_ylabel("flops of the refinement")
    check_title(result, ax, f"flops of N_t = {result.parameters.get('steps', '?')} refinement steps")
    ax.legend(fontsize=7)


CHECK_FIGURES = {
    "pde_conservation": draw_pde_conservation,
    "pde_modes": draw_pde_modes,
    "pde_flow": draw_pde_flow,
    "pde_spread": draw_pde_spread,
    "pde_smoothing": draw_pde_smoothing,
    "pde_convergence": draw_pde_convergence,
    "pde_causal": draw_pde_causal,
    "pde_cost": draw_pde_cost,
}


# ------------------------------------------------------------------------------ paper figures
def fig_pde16(out_dir, *, formats=("png",), seed=0):
    """PDE Fig. 16 analogue: rows after each PDE type at N_t in {1, 2, 4, 8}, and the mode-damping panel."""
    cons = _run("pde_conservation", seed=seed)
    modes = _run("pde_modes", rates=FIG16_RATES, seed=seed)
    plt = pyplot()
    fig = plt.figure(figsize=(11.0, 6.4))
    grid = fig.add_gridspec(2, 3)
    axes = [fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, 0]),
            fig.add_subplot(grid[1, 1])]
    for ax, pde in zip(axes, _PDES):
        _draw_rows(cons, ax, pde)
    axes[0].legend(fontsize=6, loc="upper left")
    _draw_damping(modes, fig.add_subplot(grid[:, 2]), rates=FIG16_RATES)
    fig.suptitle("PDE Fig. 16 (computed): attention after each PDE type, and the mode damping of diffusion",
                 fontsize=10)
    caption(fig, f"A(0) = softmax(QK^T/4) of random Q, K (T = 64, d = 16, seed {cons.parameters['seed']}); query row 32 after N_t explicit steps along "
                  "the key axis with cell-centred Neumann ends; dt = ds = 1 (the paper leaves axis, ends, dt and ds "
                  "unstated); alpha = 0.1, c = 0.15 (wave, V(0) = 0), beta = 0.02 (reaction A(1 - A)), beta = 0.03 "
                  "(central advection). Annotations: largest |row sum - 1| and smallest entry of the whole matrix "
                  "(the wave goes negative, the reaction term adds mass). Right: periodic T = 256, mode factor "
                  "(1 - 4 r sin^2(pi k/T))^L (bold) vs exp(-4 r sin^2(pi k/T) L) (thin); at r = 0.45 the highest "
                  f"frequencies are not damped monotonically (Nyquist factor 1 - 4r = -0.8). Checks: "
                  f"{cons.check} {cons.verdict}, {modes.check} {modes.verdict}.")
    return save(fig, out_dir, "pde-16", formats)


def fig_pde2(out_dir, *, formats=("png",)):
    """PDE Fig. 2 analogue: spread of a delta row vs pseudo-time (sqrt law) and the wave front (linear)."""
    res = _run("pde_spread")
    plt = pyplot()
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10.0, 4.2))
    _draw_spread(res, ax0)
    t = np.asarray(res.quantities.wave_front_times)
    ax1.plot(t, res.quantities.wave_front_positions, "o", label="wave front (argmax of the right pulse)")
    ax1.plot(t, 0.15 * t, "k-", lw=0.8, label="c t, c = 0.15")
    ax1.set_xlabel("pseudo-time t")
    ax1.set_ylabel("front position (tokens right of the pulse centre)")
    ax1.set_title("the wave front moves linearly", fontsize=9)
    ax1.legend(fontsize=7)
    fig.suptitle("PDE Fig. 2 (computed): information spread under the refinement", fontsize=10)
    caption(fig, f"Left: a delta row (T = {res.parameters['size']}, centre, key axis, Neumann ends, dt = ds = 1) under "
                  "explicit diffusion; its variance is exactly 2 alpha t (points on the lines), so the spread grows "
                  "like t^(1/2) and its speed falls like t^(-1/2) (the paper's v_eff = Omega(t^(1/2)) has the wrong "
                  "sign). Right: a Gaussian pulse (width 8 tokens) under the wave scheme (c = 0.15, V(0) = 0): "
                  f"linear front. Check {res.check}: {res.verdict}.")
    return save(fig, out_dir, "pde-2", formats)


def fig_pde3(out_dir, *, formats=("png",), seed=0):
    """PDE Fig. 3 analogue: S(t) and C(t) per PDE type."""
    res = _run("pde_smoothing", seed=seed)
    plt = pyplot()
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10.0, 4.2))
    _draw_smoothing(res, ax0, "S")
    _draw_smoothing(res, ax1, "C")
    ax1.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))  # outside: the curves fill both panels
    fig.suptitle("PDE Fig. 3 (computed): smoothness S(t) and consistency C(t) per PDE type", fontsize=10)
    caption(fig, f"Random softmax A(0) (T = {res.parameters['size']}, d = 16, seed {res.parameters['seed']}), key axis, periodic ends, dt = 1, "
                  "alpha = 0.1, c = 0.15, beta_AD = 0.03. Diffusion and advection-diffusion decay at least like "
                  "rho^(2n) (rho the largest non-constant mode factor); the wave conserves its discrete energy and "
                  "does not decay; reaction-diffusion first increases C (logistic growth towards 1), for beta = 1 "
                  "(alpha = 0.01) by two orders of magnitude, then collapses as all entries approach 1. "
                  f"Check {res.check}: {res.verdict}.")
    return save(fig, out_dir, "pde-3", formats)


def fig_pde4(out_dir, *, formats=("png",), seed=0):
    """PDE Fig. 4 analogue: PL convergence of GD and SGD on least squares."""
    res = _run("pde_convergence", seed=seed)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    _draw_convergence(res, ax)
    ax.set_title("PDE Fig. 4 (computed): PL convergence (Thm. D.3)", fontsize=10)
    caption(fig, f"Least squares 1/2 |X theta - y|^2 with X of shape (200, 50), rank 30, noisy y (seed "
                 f"{res.parameters['seed']}); PL constant "
                  f"gamma = {res.quantities.pl_gamma:.3g}, smoothness mu = {res.quantities.smoothness_mu:.4g}. GD meets "
                  "eq. (16); SGD (minibatches of 10 drawn with replacement, constant step) stalls at its exact "
                  "stationary noise floor, so eq. (16) without a floor fails after the transient. "
                  f"Check {res.check}: {res.verdict}.")
    return save(fig, out_dir, "pde-4", formats)


FIGURES = {"pde-16": fig_pde16, "pde-2": fig_pde2, "pde-3": fig_pde3, "pde-4": fig_pde4}
