"""Figures of the DRIFT paper (attention as drift-diffusion): Fig. 2 as a computed picture, and the
figures of the checks ``drift_diffusion``, ``heat_rate`` and ``euler_steps`` (``--plot``).

DRIFT Fig. 2 is a schematic; here it is drawn from :func:`verify.euler_steps.run` with a step initial
condition: on S^1 with ``p ~ 1 + 0.5 cos theta`` (N = 5000 quantile-grid points), ``H_0`` is propagated
by heat-kernel attention ``H <- S_eps H`` (eps = 1e-3) and overlaid with the PDE
``dH/dt = H'' + 2 (log p)' H'`` at ``t = L eps / 2``. One check run per time ``t`` (its ``t_final``);
the figure draws each run's smallest-eps arrays and does no numerics of its own.
"""

from __future__ import annotations

import numpy as np

from figures._plotting import caption, plain_log_ticks, pyplot, save
from verify.euler_steps import run

__all__ = ["CHECK_FIGURES", "FIGURES", "draw_drift_diffusion", "draw_euler_steps", "draw_heat_rate", "fig_drift2"]

#: Fig. 2 settings (the paper states none): grid size, eps grid (its first value is drawn), PDE times
_FIG2_N = 5000
_FIG2_EPS = (1e-3, 2e-3, 4e-3, 8e-3)
_FIG2_TIMES = (0.0125, 0.05, 0.2)  # L = 25, 100, 400 layers at eps = 1e-3


def draw_drift_diffusion(result, ax):
    """Quantile-grid tier: (1/eps) L f against the drift-diffusion limit, by angle."""
    q, p = result.quantities, result.parameters
    if q.grid is not None:
        grid, a = q.grid, p.get("a", 0.0)
        asserted = p.get("claim") if p.get("wrong_limit", "none") == "none" else p["wrong_limit"]
        order = np.argsort(grid.theta)
        th = grid.theta[order]
        ax.plot(th, grid.operator[order], lw=2.2, color="tab:blue", label=r"$\varepsilon^{-1} L f$ on the quantile grid")
        reference = grid.reference[order]
        ax.plot(th, reference, "k--", lw=0.9,
                label=rf"exact limit $\frac{{1}}{{2}}(f'' + 2(1-a)(\log p)' f')$, a = {a:g}")
        limit = grid.limit(asserted, a)[order]  # the limit this run asserts (differs for printed or a wrong_limit)
        if not np.allclose(limit, reference):
            ax.plot(th, limit, ":", color="tab:red", lw=1.6,
                    label=f"asserted limit (claim '{p.get('claim')}', wrong_limit '{p.get('wrong_limit')}')")
        rms = q.tiers["circle_grid"].relative_rms[asserted]
        where = (f"$S^1$ quantile grid, n = {p['grid_n']}, $\\varepsilon$ = {p['circle_grid_eps']:g}, "
                 f"relative RMS error {rms:.2g}")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    else:
        where = "no circle_grid tier in this run"
        ax.text(0.5, 0.5, where, ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(r"angle $\theta$")
    ax.set_ylabel("operator applied to f")
    ax.set_title(f"{result.check}: {result.verdict}; {where}", fontsize=8)


def draw_heat_rate(result, ax):
    """Sampling error (largest N) and bias against eps on S^1 and S^2 (log-log)."""
    for d, color in ((1, "tab:blue"), (2, "tab:orange")):
        m = result.quantities.manifolds[d]
        ax.loglog(m.eps, m.variance_rms[-1], "-o", color=color,
                  label=f"$S^{d}$ sampling error, N = {int(m.N[-1])} (slope {m.variance_eps_slope.slope:.2f})")
        ax.loglog(m.eps, m.bias, "--s", color=color, label=f"$S^{d}$ bias (slope {m.bias_slope.slope:.2f})")
    plain_log_ticks(ax)
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(r"error of $\varepsilon^{-1} L f$ at fixed points")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    ax.set_title(f"{result.check}: {result.verdict}; bias and sampling error of the heat-kernel Laplacian, "
                 f"{result.parameters['repeats']} repeats", fontsize=8)


def draw_euler_steps(result, ax):
    """Max error of L attention layers against the PDE at fixed t, against eps (log-log)."""
    q, p = result.quantities, result.parameters
    ax.loglog(q.eps, q.errors, "-o", label=f"max error, fitted slope {q.error_slope:.2f}")
    ax.loglog(q.eps, q.errors[0] * q.eps / q.eps[0], "k--", lw=0.8, label="slope 1")
    plain_log_ticks(ax)
    ax.set_xlabel(r"$\varepsilon$ (L = t / ($\varepsilon$/2) layers)")
    ax.set_ylabel(r"$\max|H_L - H_{PDE}(t)|$")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"{result.check}: {result.verdict}; {p['initial']} $H_0$, t = {p['t_final']:g}, n = {p['n']}, "
                 f"p ~ 1 + {p['amplitude']:g} cos $\\theta$", fontsize=8)


def fig_drift2(out_dir, *, formats=("png",)):
    """DRIFT Fig. 2 (computed): density p, a step H_0, attention layers H <- S_eps H and the drift-diffusion PDE."""
    runs = [run(n=_FIG2_N, eps_grid=_FIG2_EPS, t_final=t, initial="step") for t in _FIG2_TIMES]
    first = runs[0].quantities
    th = first.theta
    eps = _FIG2_EPS[0]
    plt = pyplot()
    fig, (ax0, ax1) = plt.subplots(2, 1, figsize=(6.6, 6.0), sharex=True, gridspec_kw={"height_ratios": [1, 2.4]})
    ax0.plot(th, first.density, color="0.3")
    ax0.set_ylabel(r"density $p(\theta)$")
    ax0.set_title(r"(a) $p \propto 1 + 0.5\cos\theta$ on $S^1$")
    colors = plt.cm.viridis(np.linspace(0, 0.85, len(runs) + 1))
    ax1.plot(th, first.initial, color=colors[0], lw=1.6, label="$H_0$ (step)")
    for res, c in zip(runs, colors[1:]):
        q = res.quantities
        ax1.plot(th, q.attention, color=c, lw=1.8, label=f"L = {int(q.steps[0])} layers (t = {q.time_smallest_eps:.3g})")
        ax1.plot(th, q.pde, color="k", lw=0.8, ls="--")
    ax1.plot([], [], "k--", lw=0.8, label=r"PDE $\partial_t H = H'' + 2(\log p)'H'$")
    ax1.set_xlabel(r"angle $\theta$")
    ax1.set_ylabel("H")
    ax1.set_title(r"(b) attention layers $H \leftarrow S_\varepsilon H$ and the PDE at t = L$\varepsilon$/2")
    ax1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)  # below: no free corner
    rms = ", ".join(f"{r.quantities.rms_error_smallest_eps:.1e}" for r in runs)
    slopes = ", ".join(f"{r.quantities.error_slope:.2f}" for r in runs)
    verdicts = ", ".join(r.verdict for r in runs)
    layers = ", ".join(str(int(r.quantities.steps[0])) for r in runs)
    caption(fig, f"DRIFT Fig. 2 (a schematic in the paper), computed: one attention layer is one Euler step of length "
                 f"ε/2 of the drift-diffusion PDE (Theorem 3). N = {_FIG2_N} quantile-grid points of p on S¹, "
                 f"ε = {eps:g}, W = exp(−|x − y|²/(2ε)) (sparse, cut off at 7√ε), S_ε = D⁻¹W; H_0 = 1 on |θ| < π/2 "
                 f"(the grid, ε and H_0 are not stated in the paper). PDE by Fourier collocation at t = Lε/2; "
                 f"RMS(attention − PDE) = {rms} for L = {layers}. "
                 f"Check euler_steps with this step H_0 (ε = {', '.join(f'{e:g}' for e in _FIG2_EPS)}): max-error "
                 f"slopes in ε {slopes} ({verdicts}): first order in ε needs a smooth H_0 (the default check, smooth "
                 f"H_0, passes); the step's jump decays more slowly.")
    return save(fig, out_dir, "drift-2", formats)


FIGURES = {"drift-2": fig_drift2}
CHECK_FIGURES = {"drift_diffusion": draw_drift_diffusion, "heat_rate": draw_heat_rate,
                 "euler_steps": draw_euler_steps}
