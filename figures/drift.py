"""Figures of the DRIFT paper (attention as drift-diffusion): Fig. 2 as a computed picture.

DRIFT Fig. 2 is a schematic; here it is drawn from :func:`verify.euler_steps.run`: on S^1 with
``p ~ 1 + 0.5 cos theta`` (N = 5000 quantile-grid points), a step ``H_0`` is propagated by heat-kernel
attention ``H <- S_eps H`` (eps = 1e-3) and overlaid with the PDE ``dH/dt = H'' + 2 (log p)' H'`` at
``t = L eps / 2``. No numerics here: the figure plots the check's arrays.
"""

from __future__ import annotations

import numpy as np

from figures._plotting import pyplot, save


def fig_drift2(out_dir, *, formats=("png",)):
    """DRIFT Fig. 2 (computed): density, step initial condition, attention iterates and PDE solution."""
    from verify.euler_steps import run

    res = run(figure_n=5000, figure_eps=1e-3, figure_steps=(0, 25, 100, 400))
    a = res.arrays
    th = np.asarray(a["figure_theta"])
    plt = pyplot()
    fig, (ax0, ax1) = plt.subplots(2, 1, figsize=(6.4, 5.6), sharex=True, gridspec_kw={"height_ratios": [1, 2.2]})
    ax0.plot(th, a["figure_density"], color="0.3")
    ax0.set_ylabel("density p(theta)")
    ax0.set_title("p ~ 1 + 0.5 cos(theta) on S^1")
    colors = plt.cm.viridis(np.linspace(0, 0.85, len(a["figure_steps"])))
    eps = res.parameters["figure_eps"]
    for j, (L, c) in enumerate(zip(a["figure_steps"], colors)):
        t = L * eps / 2
        label = "H_0 (step)" if L == 0 else f"L = {L} layers (t = {t:.3g})"
        ax1.plot(th, a["figure_iterates"][j], color=c, lw=1.6, label=label)
        if L > 0:
            ax1.plot(th, a["figure_pde"][j], color="k", lw=0.8, ls="--")
    ax1.plot([], [], "k--", lw=0.8, label="PDE dH/dt = H'' + 2 (log p)' H'")
    ax1.set_xlabel("theta")
    ax1.set_ylabel("H")
    ax1.legend(fontsize=7, loc="center")
    rms = a["figure_rms_errors"]
    fig.suptitle("DRIFT Fig. 2 (computed): attention layers = Euler steps of length eps/2", fontsize=9)
    fig.text(0.01, -0.04,
             f"N = {res.parameters['figure_n']} quantile-grid points, eps = {eps:g}, W = exp(-|x-y|^2/(2 eps)) "
             f"(sparse, cutoff 7 sqrt(eps)), S = D^-1 W; H_0 = 1 on |theta| < pi/2 (unstated in the paper).\n"
             f"PDE by Fourier collocation at t = L eps / 2; RMS(attention - PDE) = "
             + ", ".join(f"{r:.1e}" for r in rms) + f". Check {res.check}: {res.verdict}.",
             fontsize=7, va="top")
    return save(fig, out_dir, "drift-2", formats)


FIGURES = {"drift-2": fig_drift2}
