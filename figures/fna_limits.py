"""Figures of the FNA limit checks: Weyl law, generator bias rate, Theorem 2 with a density, a-normalisation.

Each ``draw_<check>(result, ax)`` draws one check's returned data (its arrays, parameters and records)
on a matplotlib axes; :data:`CHECK_FIGURES` registers them for ``python -m verify.<check> --plot PATH``.
No numerics here beyond choosing what to draw: every number shown comes from the check's result.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CHECK_FIGURES", "draw_weyl", "draw_fna_rate", "draw_fractional_limit", "draw_density_normalisation"]


def _verdict(result) -> str:
    return "PASS" if result.passed else "FAIL"


def _plain_ticks(ax) -> None:
    """Tick labels of a log-log axes as plain numbers (0.01, 2, 30) instead of 10^-2, 2x10^0."""
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(plain)
    ax.tick_params(which="minor", labelsize=6)


def _measured(result, name):
    """The measured value of record ``name``, or None when the check did not make it."""
    return result.measured.get(name)


def draw_weyl(result, ax) -> None:
    """Generator eigenvalues -log(eta)/t against the mode index (log-log): measured, continuum, s -> 0 limit."""
    a, p = result.arrays, result.parameters
    idx = np.asarray(a["index"], dtype=float)
    circle = p["manifold"] == "circle"
    lo, hi = p["fit_range"]
    ax.axvspan(lo, hi, color="0.9", zorder=0, label=f"fit window {'k' if circle else 'l'} = {lo}..{hi}")
    ax.loglog(idx, np.asarray(a["lambda"]), "o", ms=4, label="measured -log(eta)/t" + (" (pair means)" if circle
                                                                                    else " (shell means)"))
    ax.loglog(idx, np.asarray(a["reference"]), "-", label=f"exact continuum, same scale s = {p['scale']:.3g}")
    if "limit" in a:
        ax.loglog(idx, np.asarray(a["limit"]), "--", label="s -> 0 limit m(k)/M0")
    _plain_ticks(ax)
    ax.set_xlabel("frequency k" if circle else "degree l")
    ax.set_ylabel("generator eigenvalue")
    best = _measured(result, "best_fit_alpha")
    fitted = f", best-fit alpha {best:.4f}" if best is not None else ""
    where = "S^1" if circle else "S^2"
    ax.set_title(f"weyl: {_verdict(result)}; {where}, {p['points']} n = {p['n']}, claimed alpha = {p['alpha']:g}"
                 f"{fitted}", fontsize=8)
    ax.legend(fontsize=7)


def draw_fna_rate(result, ax) -> None:
    """Relative generator bias |lambda_k(s)/lambda_k - 1| against the kernel scale (log-log), per alpha and k."""
    scales = np.asarray(result.arrays["scales"], dtype=float)
    p = result.parameters
    for i, alpha in enumerate(p["alphas"]):
        bias = np.abs(np.asarray(result.arrays[f"bias_a{alpha:g}"], dtype=float))
        for j, k in enumerate(p["modes"]):
            slope = _measured(result, f"exponent_a{alpha:g}_k{k}")
            ax.loglog(scales, bias[:, j], "o-" if j == 0 else "s--", ms=3, color=f"C{i}",
                      label=f"alpha {alpha:g}, k = {k}: exponent {slope:.3f} (2 - alpha = {2 - alpha:g})")
    ax.set_xlabel("kernel scale s")
    ax.set_ylabel("|lambda_k(s) / lambda_k - 1|")
    claimed = "s^(2-alpha)" if p.get("claim", "corrected") == "corrected" else "t = s^alpha"
    ax.set_title(f"fna_rate: {_verdict(result)}; S^1 grid h = s/{p['h_ratio']:g}; exponent fitted after removing "
                 f"the C'(k s) term, asserted {claimed}", fontsize=8)
    ax.legend(fontsize=6)


def draw_fractional_limit(result, ax) -> None:
    """Discrete (A f - f)/t at the query points against the asserted limit operator, per density."""
    p = result.parameters
    for i, name in enumerate(p["densities"]):
        th = np.asarray(result.arrays[f"theta_{name}"], dtype=float)
        err = _measured(result, f"rel_l2_{name}")
        ax.plot(th, np.asarray(result.arrays[f"limit_{name}"]), "-", lw=1, color=f"C{i}", label=f"limit ({name})")
        ax.plot(th, np.asarray(result.arrays[f"discrete_{name}"]), ".", ms=4, color=f"C{i}",
                label=f"(A f - f)/t ({name}): rel. L2 error {err:.3g}")
    ax.set_xlabel("angle x")
    ax.set_ylabel(f"operator applied to f = cos({p['mode']} x)")
    ax.set_title(f"fractional_limit: {_verdict(result)}; claim '{p['claim']}', alpha = {p['alpha']:g}, "
                 f"s = {p['scale']:g}, n = {p['n']} quantile points", fontsize=8)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)


def draw_density_normalisation(result, ax) -> None:
    """n pi_i against rho(x_i) (log-log) for each exponent a: the stationary law rho^(1-2a)."""
    p = result.parameters
    name, alpha = p["densities"][0], p["alphas"][0]
    rho = np.asarray(result.arrays[f"rho_{name}"], dtype=float)
    for a in p["exponents"]:
        pi = np.asarray(result.arrays[f"pi_{name}_alpha{alpha:g}_a{a:g}"], dtype=float)
        slope = _measured(result, f"law_slope_{name}_alpha{alpha:g}_a{a:g}")
        ax.loglog(rho, pi * len(pi), ".", ms=2, label=f"a = {a:g}: fitted slope {slope:.3f} (1 - 2a = {1 - 2 * a:g})")
    _plain_ticks(ax)
    ax.set_xlabel("rho(x_i)")
    ax.set_ylabel("n pi_i")
    ax.set_title(f"density_normalisation: {_verdict(result)}; {name} density, alpha = {alpha:g}, s = {p['scale']:g}, "
                 f"n = {p['n']}", fontsize=8)
    ax.legend(fontsize=7)


CHECK_FIGURES = {
    "weyl": draw_weyl,
    "fna_rate": draw_fna_rate,
    "fractional_limit": draw_fractional_limit,
    "density_normalisation": draw_density_normalisation,
}
