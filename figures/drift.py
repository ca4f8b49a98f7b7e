"""Figures of the DRIFT paper (attention as drift-diffusion): Fig. 2 as a computed picture, and the
figures of the checks ``drift_diffusion``, ``heat_rate`` and ``euler_steps`` (``--plot``).

DRIFT Fig. 2 is a schematic; here it is drawn from :func:`verify.euler_steps.run` with a step initial
condition: on S^1 with ``p ~ 1 + 0.5 cos theta`` (N = 5000 quantile-grid points), ``H_0`` is propagated
by heat-kernel attention ``H <- S_eps H`` (eps = 1e-3) and overlaid with the PDE
``dH/dt = H'' + 2 (log p)' H'`` at ``t = L eps / 2``. One check run per time ``t`` (its ``t_final``);
the figure draws each run's smallest-eps arrays and does no numerics of its own.
"""

from __future__ import annotations

import textwrap

import numpy as np

from figures._plotting import pyplot, save

#: Fig. 2 settings (the paper states none): grid size, eps grid (its first value is drawn), PDE times
_FIG2_N = 5000
_FIG2_EPS = (1e-3, 2e-3, 4e-3, 8e-3)
_FIG2_TIMES = (0.0125, 0.05, 0.2)  # L = 25, 100, 400 layers at eps = 1e-3


def draw_drift_diffusion(result, ax):
    """Quantile-grid tier: (1/eps) L f against the drift-diffusion limit, by angle."""
    a = result.arrays
    if "grid_theta" in a:
        th = np.asarray(a["grid_theta"])
        order = np.argsort(th)
        ax.plot(th[order], np.asarray(a["grid_operator"])[order], lw=1.6, label="(1/eps) L f (quantile grid)")
        ax.plot(th[order], np.asarray(a["grid_reference"])[order], "k--", lw=0.9, label="drift-diffusion limit")
        ax.legend(fontsize=7, loc="best")
    else:
        ax.text(0.5, 0.5, "no circle_grid tier in this run", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("theta")
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def draw_heat_rate(result, ax):
    """Sampling error (largest N) and bias against eps on S^1 and S^2 (log-log)."""
    for d, color in ((1, "C0"), (2, "C1")):
        eps = np.asarray(result.arrays[f"S{d}_eps"])
        ax.loglog(eps, np.asarray(result.arrays[f"S{d}_variance_rms"])[-1], "o-", color=color,
                  label=f"S^{d} sampling error (slope {result.measured[f'S{d}_variance_eps_slope']:.2f})")
        ax.loglog(eps, np.asarray(result.arrays[f"S{d}_bias"]), "s--", color=color,
                  label=f"S^{d} bias (slope {result.measured[f'S{d}_bias_slope']:.2f})")
    from matplotlib.ticker import NullFormatter

    ax.xaxis.set_minor_formatter(NullFormatter())  # two eps ranges: minor labels would overlap
    ax.set_xlabel("eps")
    ax.set_ylabel("error of (1/eps) L f at fixed points")
    ax.legend(fontsize=7, loc="best")
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def draw_euler_steps(result, ax):
    """Max error of L attention layers against the PDE at fixed t, against eps (log-log)."""
    eps = np.asarray(result.arrays["eps"])
    err = np.asarray(result.arrays["errors"])
    ax.loglog(eps, err, "o-", label=f"max error, slope {result.measured['error_slope']:.2f}")
    ax.loglog(eps, err[0] * eps / eps[0], "k--", lw=0.8, label="slope 1")
    ax.set_xlabel("eps")
    ax.set_ylabel("|H_L - H_PDE(t)|_max")
    ax.legend(fontsize=7, loc="best")
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def fig_drift2(out_dir, *, formats=("png",)):
    """DRIFT Fig. 2 (computed): density, step initial condition, attention iterates and PDE solution."""
    from verify.euler_steps import run

    runs = [run(n=_FIG2_N, eps_grid=_FIG2_EPS, t_final=t, initial="step") for t in _FIG2_TIMES]
    first = runs[0].arrays
    th = np.asarray(first["theta"])
    eps = _FIG2_EPS[0]
    plt = pyplot()
    fig, (ax0, ax1) = plt.subplots(2, 1, figsize=(6.4, 5.6), sharex=True, gridspec_kw={"height_ratios": [1, 2.2]})
    ax0.plot(th, first["density"], color="0.3")
    ax0.set_ylabel("density p(theta)")
    ax0.set_title("p ~ 1 + 0.5 cos(theta) on S^1")
    colors = plt.cm.viridis(np.linspace(0, 0.85, len(runs) + 1))
    ax1.plot(th, first["initial"], color=colors[0], lw=1.6, label="H_0 (step)")
    for res, c in zip(runs, colors[1:]):
        layers = int(res.arrays["steps"][0])
        t = res.measured["time_smallest_eps"]
        ax1.plot(th, res.arrays["attention"], color=c, lw=1.6, label=f"L = {layers} layers (t = {t:.3g})")
        ax1.plot(th, res.arrays["pde"], color="k", lw=0.8, ls="--")
    ax1.plot([], [], "k--", lw=0.8, label="PDE dH/dt = H'' + 2 (log p)' H'")
    ax1.set_xlabel("theta")
    ax1.set_ylabel("H")
    ax1.set_ylim(-0.05, 1.45)  # room above the step for the legend, which then covers no curve
    ax1.legend(fontsize=7, loc="upper center", ncol=2)
    fig.suptitle("DRIFT Fig. 2 (computed): attention layers = Euler steps of length eps/2", fontsize=9)
    rms = ", ".join(f"{r.measured['rms_error_smallest_eps']:.1e}" for r in runs)
    slopes = ", ".join(f"{r.measured['error_slope']:.2f}" for r in runs)
    verdicts = ", ".join(r.verdict for r in runs)
    caption = (f"N = {_FIG2_N} quantile-grid points, eps = {eps:g}, W = exp(-|x-y|^2/(2 eps)) (sparse, cutoff 7 sqrt(eps)), "
               f"S = D^-1 W; H_0 = 1 on |theta| < pi/2 (unstated in the paper). PDE by Fourier collocation at "
               f"t = L eps / 2; RMS(attention - PDE) = {rms}. Check euler_steps with this step H_0 (eps = "
               f"{', '.join(f'{e:g}' for e in _FIG2_EPS)}): max-error slopes in eps {slopes} ({verdicts}); first order "
               f"in eps needs a smooth H_0 (the default check passes).")
    fig.text(0.01, 0.0, textwrap.fill(caption, 118), fontsize=7, va="top")
    return save(fig, out_dir, "drift-2", formats)


FIGURES = {"drift-2": fig_drift2}
CHECK_FIGURES = {"drift_diffusion": draw_drift_diffusion, "heat_rate": draw_heat_rate,
                 "euler_steps": draw_euler_steps}
