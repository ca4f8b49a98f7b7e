"""Figures of the Gaussian Transformer-PDE paper (GA) from the ``ga_*`` checks, and their ``--plot`` figures.

* ``ga-1``: Gaussian tokens against the moment ODEs (:mod:`verify.ga_moments`): the errors of the empirical
  mean and covariance against n for softmax, L2, multi-head and Sinkhorn attention with the slope
  ``n^(-1/2)``; the softmax cloud at ``t = 1`` with the ODE's covariance ellipses; the sigmoid cloud (no
  Gaussian solution) with the ellipses of its own moments.
* ``ga-2``: the covariance dynamics and the condition of the rate: ``tr Sigma(t)`` of softmax (finite-time
  blow-up at ``T*``), L2 and Sinkhorn attention with the same ``Q``, ``K`` (:mod:`verify.ga_covariance`);
  the error of ``n`` Gaussian tokens' moment right-hand sides at a weak and a strong coupling, with the
  slopes ``-1/2`` and ``-1/(1 + kappa^2)`` (:mod:`verify.ga_conditions`).

The drawers read the typed fields of ``result.quantities``; every number comes from a check run (cached per
process). These functions only draw.
"""

from __future__ import annotations

import functools

import numpy as np

from figures._plotting import caption, check_title, plain_log_ticks, pyplot, save
from verify.core.claims import load_check
from verify.ga_conditions import predicted_order

__all__ = ["CHECK_FIGURES", "FIGURES", "draw_ga_moments", "draw_ga_covariance", "draw_ga_conditions", "fig_ga1",
           "fig_ga2"]

_LABELS = {"softmax": "softmax", "softmax_cluster": "softmax, K = -Q", "l2": "L2", "multihead": "two heads",
           "sinkhorn": "Sinkhorn", "sinkhorn_l2": "Sinkhorn, L2 scores"}


@functools.cache
def _run(check: str, seed: int = 0):
    return load_check(check).run(seed=seed)


def _slope_line(ax, x, y0, order, **style):
    x = np.asarray(x, dtype=float)
    ax.loglog(x, y0 * (x / x[0]) ** order, **style)


def _errors_panel(q, ax):
    n = np.asarray(q.sizes, dtype=float)
    top = 0.0
    for k, c in enumerate(q.mean_errors):
        color = f"C{k}"
        mean, cov = np.mean(q.mean_errors[c], axis=1), np.mean(q.cov_errors[c], axis=1)
        top = max(top, float(np.max(mean)), float(np.max(cov)))
        ax.loglog(n, cov, "o-", color=color, ms=4, lw=1.0, label=f"{_LABELS.get(c, c)}: covariance")
        ax.loglog(n, mean, "s--", color=color, ms=3, lw=0.8, label=f"{_LABELS.get(c, c)}: mean")
    _slope_line(ax, n, top * 1.3, -0.5, color="k", lw=0.8, ls=":", label="n^(-1/2)")
    ax.set_xlabel("tokens n")
    ax.set_ylabel("relative error of the moments at t = T")
    plain_log_ticks(ax)


def _ellipses(ax, mean, cov, color, label):
    w, U = np.linalg.eigh(cov)
    theta = np.linspace(0.0, 2.0 * np.pi, 200)
    circle = np.stack([np.cos(theta), np.sin(theta)])
    for k, r in enumerate((1.0, 2.0, 3.0)):
        pts = np.asarray(mean)[:, None] + U @ (r * np.sqrt(w)[:, None] * circle)
        ax.plot(pts[0], pts[1], color=color, lw=1.0, label=label if k == 0 else None)


def _cloud_panel(q, ax, case, title, own_moments=False):
    X = q.clouds[case]
    ax.scatter(X[:, 0], X[:, 1], s=2, color="0.55", alpha=0.6, label=f"{len(X)} tokens at t = T")
    if own_moments:
        _ellipses(ax, X.mean(axis=0), np.cov(X.T, bias=True), "C3", "Gaussian of the cloud's moments: 1, 2, 3 sd")
    else:
        _ellipses(ax, q.reference_mean[case], q.reference_cov[case], "C0", "ODE solution N(alpha, Sigma): 1, 2, 3 sd")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x_1")
    ax.set_ylabel("x_2")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, loc="upper left")


def draw_ga_moments(result, ax):
    """Moment errors of Gaussian tokens against the ODE solutions, against n, with the slope n^(-1/2)."""
    _errors_panel(result.quantities, ax)
    ax.legend(fontsize=6, ncol=2, loc="lower left")
    check_title(result, ax, "moments against the Gaussian solution")


def fig_ga1(out_dir, *, formats=("png",), seed=0):
    """GA Fig. 1: Gaussian tokens follow the moment ODEs at n^(-1/2); a softmax cloud stays Gaussian, sigmoid's not."""
    res = _run("ga_moments", seed)
    q = res.quantities
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13.0, 4.6), gridspec_kw={"width_ratios": [1.25, 1.0, 1.0]})
    _errors_panel(q, axes[0])
    axes[0].legend(fontsize=6, ncol=2, loc="lower left")
    axes[0].set_title("errors against the ODE (mean over draws)", fontsize=9)
    _cloud_panel(q, axes[1], "softmax", "softmax attention at t = T")
    if "sigmoid" in q.clouds:
        _cloud_panel(q, axes[2], "sigmoid", "sigmoid attention (beta = 12) at t = T", own_moments=True)
    p = res.parameters
    orders = "; ".join(f"{_LABELS.get(c, c)} {res.measured[f'{c}_cov_order']:.2f} "
                       f"{res.measured[f'{c}_cov_order_interval']}" for c in q.mean_errors)
    caption(fig, f"Tokens drawn i.i.d. from N(alpha_0, Sigma_0) in d = 2 (alpha_0 = (0.5, -0.3), Sigma_0 = [[1, 0.3], "
                 f"[0.3, 0.6]]), {p['repeats']} draws per n (seed {p['seed']}), moved by spectral.attention_flow (RK4, "
                 f"step {p['dt']:g}) to T = {p['t_final']:g} with non-symmetric Q, K, V; errors |m_n - alpha| / "
                 f"sqrt(tr Sigma) (squares) and |Sigma_n - Sigma|_F / |Sigma|_F (circles) against the moment ODEs "
                 f"(solve_ivp, rtol 1e-10). Covariance orders with 95 % intervals (verify.rates): {orders}. Middle: the "
                 f"first draw at n = {int(q.sizes[-1])}, softmax, with the ellipses of the ODE's Gaussian; right: "
                 f"saturated sigmoid attention, whose velocity is not affine, deforms the cloud away from any Gaussian "
                 f"(its Gaussianity statistic is {res.measured['sigmoid_gaussianity_ratio']:.1f}x softmax's). Check "
                 f"ga_moments: {res.verdict}.")
    return save(fig, out_dir, "ga-1", formats)


def _growth_panel(q, ax):
    T = q.blowup_times["softmax"]
    t = np.asarray(q.growth_times) / T
    styles = {"softmax": ("C0", "-", "softmax (blows up at T*)"), "l2": ("C1", "--", "L2 (no finite-time blow-up)"),
              "sinkhorn": ("C2", "-.", "Sinkhorn (no finite-time blow-up)")}
    for name, (color, ls, label) in styles.items():
        tr = np.asarray(q.growth_traces[name])
        ok = np.isfinite(tr)
        ax.semilogy(t[ok], tr[ok], color=color, ls=ls, lw=1.2, label=label)
    ax.axvline(1.0, color="k", lw=0.7, ls=":", label="T* = 1/(2 beta mu_max)")
    ax.set_xlabel("t / T*")
    ax.set_ylabel("tr Sigma(t)")
    ax.legend(fontsize=6, loc="upper left")


def _conditions_panel(q, ax):
    n = np.asarray(q.sizes, dtype=float)
    for k, (kappa, errs) in enumerate(q.rhs_errors.items()):
        mean = np.mean(errs, axis=1)
        ax.loglog(n, mean, "o-", color=f"C{k}", ms=4, lw=1.0, label=f"kappa = {kappa:g}")
        _slope_line(ax, n, mean[0] * 1.15, predicted_order(kappa), color=f"C{k}", lw=0.8, ls=":",
                    label=f"n^{predicted_order(kappa):.2f} (predicted)")
    ax.set_xlabel("tokens n")
    ax.set_ylabel("error of the moment right-hand sides")
    plain_log_ticks(ax)
    ax.legend(fontsize=6, loc="lower left")


def draw_ga_covariance(result, ax):
    """tr Sigma(t) of softmax (blow-up at T*), L2 and Sinkhorn attention with the same Q, K."""
    _growth_panel(result.quantities, ax)
    check_title(result, ax, "covariance growth")


def draw_ga_conditions(result, ax):
    """Errors of n Gaussian tokens' moment right-hand sides at weak and strong softmax coupling."""
    _conditions_panel(result.quantities, ax)
    check_title(result, ax, "the rate needs kappa < 1")


def fig_ga2(out_dir, *, formats=("png",), seed=0):
    """GA Fig. 2: covariance blow-up (softmax) vs growth (L2, Sinkhorn); the coupling kappa < 1 behind n^(-1/2)."""
    cov = _run("ga_covariance", seed)
    cond = _run("ga_conditions", seed)
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.4))
    _growth_panel(cov.quantities, axes[0])
    axes[0].set_title("V = I, Q^T K + K^T Q positive definite", fontsize=9)
    _conditions_panel(cond.quantities, axes[1])
    axes[1].set_title("n Gaussian tokens, d = 1, softmax", fontsize=9)
    qc = cond.quantities
    text = "; ".join(f"kappa {k:g}: {cond.measured[f'kappa{k:g}_order']:.2f} {cond.measured[f'kappa{k:g}_order_interval']}"
                     for k in qc.rhs_errors)
    caption(fig, f"Left: the covariance ODE from Sigma_0 = [[1, 0.3], [0.3, 0.6]] with V = I and Q, K whose B = Q^T K has a "
                 f"positive definite symmetric part: softmax attention blows up at T* = "
                 f"{cov.quantities.blowup_times['softmax']:.4g} (closed form; the solver agrees to 1e-8), while L2 and "
                 f"Sinkhorn attention with the same Q, K grow at most exponentially. Right: the mean and covariance "
                 f"right-hand sides computed from n i.i.d. N(0, 1) tokens (d = 1, V = 1, B = kappa) against the exact "
                 f"ones: n^(-1/2) while kappa < 1, n^(-1/(1 + kappa^2)) beyond (the softmax weights' heavy tail); "
                 f"orders with 95 % intervals: {text}; {cond.parameters['repeats']} draws per n, seed "
                 f"{cond.parameters['seed']}. Checks ga_covariance: {cov.verdict}; ga_conditions: {cond.verdict}.")
    return save(fig, out_dir, "ga-2", formats)


FIGURES = {"ga-1": fig_ga1, "ga-2": fig_ga2}
CHECK_FIGURES = {"ga_moments": draw_ga_moments, "ga_covariance": draw_ga_covariance,
                 "ga_conditions": draw_ga_conditions}
