"""Figures of the graph-Laplacian convergence papers (GL) from the ``gl_*`` checks, and their ``--plot`` figures.

* ``gl-1``: Calder & Garcia Trillos' S^2 experiment (their k-NN and eps-graph plots) regenerated: the mean
  ``|lambda - l(l+1)|`` of the degree-1 and degree-2 eigenvalue groups and the eigenvector errors (RMS sine
  to the exact eigenspace) against ``n``, for the k-NN graph (``k = n^(2/3)``), the eps-graph at the
  smallest k-NN radius and the GGHS eps-graph, with the proved slopes ``-1/6`` and ``-1/4`` drawn through the
  first point, from :mod:`verify.gl_eps_knn`.
* ``gl-2``: Cheng & Wu's Fig. 2 analogue on S^1: relative eigenvalue and eigenvector errors against ``N``
  for both bandwidth schedules and for the density-corrected and plain ``L_rw`` on non-uniform data, with
  the proved slopes, from :mod:`verify.gl_gaussian`.
* ``gl-3``: the constants: bias of the exact continuum spectra against ``eps`` (orders 2 and 1), and the
  sampled Laplacians' deviation from them, from :mod:`verify.gl_constants`.

The drawers read the typed fields of ``result.quantities``; every number comes from a check run (cached per
process). These functions only draw.
"""

from __future__ import annotations

import functools

import numpy as np

from figures._plotting import caption, check_title, plain_log_ticks, pyplot, save
from verify.core.claims import load_check
from verify.gl_eps_knn import DEGREES

__all__ = [
    "CHECK_FIGURES",
    "FIGURES",
    "draw_gl_constants",
    "draw_gl_eps_knn",
    "draw_gl_gaussian",
    "fig_gl1",
    "fig_gl2",
    "fig_gl3",
]


@functools.cache
def _run(check: str, seed: int = 0):
    return load_check(check).run(seed=seed)


def _room_for_legend_below(ax) -> None:
    """Extend a log y-axis downwards so the lower half is free for a legend of many rows."""
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo * lo / hi, hi)


def _slope_line(ax, x, y0, order, **style):
    """A line of slope ``order`` in log-log through ``(x[0], y0)``."""
    x = np.asarray(x, dtype=float)
    ax.loglog(x, y0 * (x / x[0]) ** order, **style)


def _eps_knn_panel(q, ax, kind: str, names=("knn", "eps", "gghs")):
    """Errors of the gl_eps_knn constructions against n (one panel: eigenvalues or eigenvectors)."""
    n = np.asarray(q.sizes, dtype=float)
    label = {"knn": "k-NN", "eps": "eps-graph", "gghs": "GGHS eps-graph"}
    colors = {"knn": "C0", "eps": "C1", "gghs": "C2"}
    markers = {DEGREES[0]: "o", DEGREES[-1]: "s"}
    top = 0.0
    for name in names:
        errs = {"knn": q.knn, "eps": q.eps_graph, "gghs": q.gghs}[name]
        for l in DEGREES:
            err = errs.eigenvalue_error(q.m, l) if kind == "eigenvalue" else np.asarray(errs.eigenvector[l])
            mean = np.mean(err, axis=1)
            top = max(top, float(np.max(mean)))
            ax.loglog(n, mean, marker=markers.get(l, "^"), color=colors[name], ls="-" if l == DEGREES[0] else "--",
                      ms=4, lw=1.0, label=f"{label[name]}, l = {l}")
    m = q.m
    _slope_line(ax, n, top * 1.15, -1.0 / (m + 4), color="k", lw=0.8, ls=":", label=f"n^(-1/{m + 4}) (proved, CGT)")
    _slope_line(ax, n, top * 1.3, -1.0 / (2 * m), color="0.45", lw=0.8, ls="-.", label=f"n^(-1/{2 * m}) (GGHS)")
    ax.set_xlabel("n")
    ax.set_ylabel("mean |lambda - l(l+1)|" if kind == "eigenvalue" else "RMS sine to the exact eigenspace")
    plain_log_ticks(ax)


def draw_gl_eps_knn(result, ax):
    """Eigenvalue errors of the k-NN, eps- and GGHS graphs against n, with the proved slopes."""
    _eps_knn_panel(result.quantities, ax, "eigenvalue")
    ax.legend(fontsize=6, ncol=2)
    check_title(result, ax, f"S^{result.quantities.m}: eigenvalue errors against n")


def fig_gl1(out_dir, *, formats=("png",), seed=0):
    """GL Fig. 1: Calder-Garcia Trillos' S^2 experiment: eigenvalue and eigenvector errors of k-NN and eps-graphs."""
    res = _run("gl_eps_knn", seed)
    q = res.quantities
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.4))
    _eps_knn_panel(q, axes[0], "eigenvalue")
    axes[0].set_title("eigenvalues (groups l = 1, 2)", fontsize=9)
    _eps_knn_panel(q, axes[1], "eigenvector")
    axes[1].set_title("eigenvectors", fontsize=9)
    axes[1].legend(fontsize=6, ncol=2, loc="lower left")
    text = "; ".join(f"{r.name.split('_')[0]} {r.name.split('_')[1]} {r.name.split('_')[2]}: "
                     f"{r.measured:.2f} [{lo:.2f}, {hi:.2f}]"
                     for r in res.records if r.name.endswith("_order")
                     for lo, hi in [(res.measured[r.name + "_low"], res.measured[r.name + "_high"])])
    p = res.parameters
    caption(fig, f"Uniform points on S^{q.m}, n = {', '.join(str(int(v)) for v in q.sizes)}, {p['repeats']} samples "
                 f"each (seed {p['seed']}); k = n^(4/(m+4)) (k = {int(q.k[0])} .. {int(q.k[-1])}), the eps-graph at the "
                 f"smallest k-NN radius (Calder & Garcia Trillos' experiment), the GGHS eps-graph at "
                 f"{p['gghs_scale']:g} (log n / n)^(1/(2m)). Points: mean over samples of the mean |lambda - l(l+1)| of "
                 f"each group and of the RMS sine to the exact eigenspace; dotted and dash-dotted: the proved slopes. "
                 f"Fitted orders of the pooled errors with 95 % bootstrap intervals (verify.rates; GGHS after dividing "
                 f"by (log n)^(1/(2m))): {text}. Check gl_eps_knn: {res.verdict}.")
    return save(fig, out_dir, "gl-1", formats)


_RUN_LABELS = {"schedule_eigenvalue": "eps ~ (log N/N)^(1/(d/2+2))", "schedule_both": "eps ~ (log N/N)^(1/(d/2+3))",
               "density_corrected": "non-uniform, density-corrected", "uncorrected": "non-uniform, plain L_rw"}


def _gaussian_panel(q, ax, kind: str):
    n = np.asarray(q.sizes, dtype=float)
    top = 0.0
    for (name, label), color in zip(_RUN_LABELS.items(), ("C0", "C1", "C2", "C3")):
        run = getattr(q, name)
        err = run.eigenvalue_rms() if kind == "eigenvalue" else run.eigenvector_rms()
        mean = np.mean(err, axis=1)
        top = max(top, float(np.max(mean)))
        ax.loglog(n, mean, "o-", color=color, ms=4, lw=1.0, label=label)
        if kind == "eigenvalue" and name in ("schedule_eigenvalue", "schedule_both"):
            ax.loglog(n, run.bias_rms(), ":", color=color, lw=0.9, label=f"exact continuum bias ({label})")
    orders = ((-0.4, "N^-0.4"), (-2.0 / 7.0, "N^-2/7")) if kind == "eigenvalue" else ((-0.2, "N^-0.2"),
                                                                                        (-2.0 / 7.0, "N^-2/7"))
    for (order, text), style in zip(orders, ("--", "-.")):
        _slope_line(ax, n, top * 1.2, order, color="k", lw=0.8, ls=style, label=f"{text} (proved)")
    ax.set_xlabel("N")
    ax.set_ylabel("relative RMS eigenvalue error" if kind == "eigenvalue" else "RMS sine to span(cos kt, sin kt)")
    plain_log_ticks(ax)


def draw_gl_gaussian(result, ax):
    """Relative eigenvalue errors of the Gaussian-kernel Laplacians on S^1 against N, with the proved slopes."""
    _gaussian_panel(result.quantities, ax, "eigenvalue")
    _room_for_legend_below(ax)
    ax.legend(fontsize=6, loc="lower left")
    check_title(result, ax, "S^1: relative eigenvalue errors (modes 1-4) against N")


def fig_gl2(out_dir, *, formats=("png",), seed=0):
    """GL Fig. 2: Cheng & Wu's Fig. 2 analogue on S^1: eigen-convergence for both bandwidth schedules."""
    res = _run("gl_gaussian", seed)
    q = res.quantities
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.4))
    _gaussian_panel(q, axes[0], "eigenvalue")
    axes[0].set_title("eigenvalues (modes k = 1..4)", fontsize=9)
    _room_for_legend_below(axes[0])
    axes[0].legend(fontsize=6, loc="lower left")
    _gaussian_panel(q, axes[1], "eigenvector")
    axes[1].set_title("eigenvectors", fontsize=9)
    p = res.parameters
    text = "; ".join(f"{r.name[:-len('_order')].replace('_', ' ')} {r.measured:.2f} "
                     f"[{res.measured[r.name + '_low']:.2f}, {res.measured[r.name + '_high']:.2f}]"
                     for r in res.records if r.name.endswith("_order"))
    caption(fig, f"Unit circle, W = eps^(-1/2) exp(-|x-y|^2/(4 eps)) / (4 pi)^(1/2), {p['normalization']} Laplacian, "
                 f"N = {', '.join(str(int(v)) for v in q.sizes)}, {p['repeats']} samples each (seed {p['seed']}), "
                 f"eps = {p['scale']:g} (log N / N)^gamma; non-uniform density (1 + 0.5 cos t)/(2 pi). Points: mean "
                 f"relative RMS error over modes 1-4 and RMS sine of the eigenvector pairs (degree-weighted inner "
                 f"product); dotted: the same error of the exact continuum eigenvalues (the O(eps) bias). Fitted orders of "
                 f"error / (log N)^gamma with 95 % intervals (verify.rates): {text}. Check gl_gaussian: {res.verdict}.")
    return save(fig, out_dir, "gl-2", formats)


def _bias_panel(q, ax):
    for key, eps in q.bias_eps.items():
        style = "o-" if key.startswith("indicator") else "s--"
        ax.loglog(eps, q.bias[key], style, ms=3, lw=1.0,
                  label=f"{key} (order {q.bias_order[key]:.3f})")
    ax.set_xlabel("eps (indicator: chord radius; Gaussian: bandwidth)")
    ax.set_ylabel("max_l |lambda_l(eps) / (l(l+m-1)) - 1|, l = 2, 3")
    plain_log_ticks(ax)


def draw_gl_constants(result, ax):
    """Bias of the exact continuum graph Laplacians against eps: order 2 (indicator) and 1 (Gaussian)."""
    _bias_panel(result.quantities, ax)
    ax.legend(fontsize=6)
    check_title(result, ax, "continuum bias against eps")


def fig_gl3(out_dir, *, formats=("png",), seed=0):
    """GL Fig. 3: normalisation constants: continuum bias against eps, and sampled Laplacians against the continuum."""
    res = _run("gl_constants", seed)
    q = res.quantities
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.4), gridspec_kw={"width_ratios": [1.2, 1.0]})
    _bias_panel(q, axes[0])
    axes[0].legend(fontsize=6, loc="lower left")
    axes[0].set_title("exact continuum spectra on S^1, S^2", fontsize=9)
    names = list(q.sampled_deviation)
    dev = np.asarray([np.mean(q.sampled_deviation[name], axis=0) for name in names])  # [construction, degree]
    y = np.arange(len(names))
    for d in range(dev.shape[1]):
        axes[1].barh(y + (d - 1) * 0.25, 100 * dev[:, d], height=0.25, label=f"l = {d + 1}")
    axes[1].set_yticks(y, [f"{name} (eps {q.sampled_eps[name]:.3g})" for name in names], fontsize=6)
    axes[1].axvline(0.0, color="k", lw=0.6)
    axes[1].set_xlabel("sampled / continuum eigenvalue - 1 (%)")
    axes[1].set_title("sampled Laplacians at the same eps", fontsize=9)
    axes[1].legend(fontsize=6)
    p = res.parameters
    caption(fig, f"Left: the finite-eps continuum graph Laplacians on the unit S^1, S^2 (uniform density; closed forms "
                 f"by Funk-Hecke) tend to the Laplace-Beltrami eigenvalues with bias O(eps^2) for the indicator kernel "
                 f"and O(eps) for the Gaussian (eps a squared length). Right: the library's sampled Laplacians (n = "
                 f"{p['n']}, {p['repeats']} samples, seed {p['seed']}) against the continuum eigenvalue at the same eps "
                 f"(k-NN: eps_k = (k/(n p alpha_m))^(1/m), k = n^(2/3); its max(r_i, r_j) symmetrisation sits above). "
                 f"Constants against quadrature: max relative error {q.constants_error:.1e}. Check gl_constants: "
                 f"{res.verdict}.")
    return save(fig, out_dir, "gl-3", formats)


FIGURES = {"gl-1": fig_gl1, "gl-2": fig_gl2, "gl-3": fig_gl3}
CHECK_FIGURES = {"gl_eps_knn": draw_gl_eps_knn, "gl_gaussian": draw_gl_gaussian, "gl_constants": draw_gl_constants}
