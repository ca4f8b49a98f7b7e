"""Figures of the FNA limit checks (Weyl law, generator bias rate, Theorem 2 with a density,
a-normalisation) and FNA Fig. 2a itself.

Each ``draw_<check>(result, ax)`` draws one check's measured quantities (``result.quantities``, typed
fields) with its parameters and verdict on a matplotlib axes; :data:`CHECK_FIGURES` registers them for ``python -m verify.<check> --plot PATH``.
``fna-2a`` (:data:`FIGURES`) is the paper's Fig. 2a: sorted generator eigenvalues ``lambda_j`` against
the eigen-index ``j`` for alpha = 1.2 and 2 with ``j^1.2`` and ``j^2`` guides, at the paper's setting
(n = 500, kappa = 0.01) and at a resolved one (n = 2000, kappa = 2h), from :func:`verify.weyl.run`, with
the convergence panel from :func:`verify.fna_rate.run`. No numerics here beyond choosing what to draw:
every number shown comes from a check's result.
"""

from __future__ import annotations

import functools

import numpy as np

from figures._plotting import caption, plain_log_ticks, pyplot, save
from verify import fna_rate, weyl
from verify.fractional_limit import OPERATORS

__all__ = ["FIGURES", "CHECK_FIGURES", "fig_fna2a", "fig_fna2a_inset", "weyl_runs", "draw_weyl", "draw_fna_rate", "draw_fractional_limit",
           "draw_density_normalisation"]

#: colours of the paper's Fig. 2a: alpha < 2 blue, alpha = 2 red
ALPHA_COLOURS = {1.2: "tab:blue", 2.0: "tab:red"}
#: eigenvalues shown in Fig. 2a (the paper does not say how many): j = 1..40, i.e. frequencies k <= 20
FIG2A_MODES = 40
#: the two settings of Fig. 2a: the paper's (n = 500, kappa = 0.01) and the check's resolved default
FIG2A_SETTINGS = (("paper", dict(paper_setting=True)), ("resolved", dict()))
#: settings of the convergence panel (tests substitute cheaper ones): the check's defaults
RATE_ARGS: dict = {}


@functools.lru_cache(maxsize=4)
def _cached_rate(items: tuple):
    return fna_rate.run(**dict(items))


def _rate():
    """verify.fna_rate at RATE_ARGS, computed once per process (Fig. 2a and its inset share it)."""
    return _cached_rate(tuple(sorted(RATE_ARGS.items())))


def _multiplicity(result) -> np.ndarray:
    """How many eigenvalues lambda_j share each frequency k (2 on S^1) or degree l (2l+1 on S^2)."""
    idx = np.asarray(result.quantities.index, dtype=int)
    return np.full(idx.size, 2) if result.parameters["manifold"] == "circle" else 2 * idx + 1


def _per_j(result, values) -> np.ndarray:
    """A per-k (or per-l) array repeated over the eigenvalues j that share its frequency (degree)."""
    j = np.asarray(result.quantities.lambda_j).size
    return np.repeat(np.asarray(values, dtype=float), _multiplicity(result))[:j]


def _fit_window_j(result) -> tuple[int, int]:
    """The eigen-indices j spanned by the check's fit window of frequencies k (degrees l)."""
    lo, hi = result.parameters["fit_range"]
    if result.parameters["manifold"] == "circle":
        return 2 * lo - 1, 2 * hi
    return lo * lo, (hi + 1) ** 2 - 1


def _guide(ax, j, lam, exponent, colour, label, anchor):
    """A dashed ``c j^exponent`` eye guide through the measured eigenvalue at index ``anchor``."""
    c = lam[anchor - 1] / anchor**exponent
    ax.loglog(j, c * j.astype(float) ** exponent, "--", color=colour, lw=1.0, label=label, zorder=1)


def _exp(v: float) -> str:
    return f"{v:g}"


def _draw_eigenvalues(result, ax, *, colour="tab:blue", label=None, reference_label=None, limit_label=None):
    """lambda_j against j (log-log) of one weyl result, the exact continuum spectrum at the same scale (thin
    black) and, when the result has it, the s -> 0 limit (dotted). Returns (j, lambda_j)."""
    q = result.quantities
    lam = np.asarray(q.lambda_j, dtype=float)
    j = np.arange(1, lam.size + 1)
    ax.loglog(j, lam, "-o", color=colour, ms=2.5, lw=1.3, zorder=3, label=label)
    ax.loglog(j, _per_j(result, q.reference), "-", color="k", lw=0.7, zorder=4, label=reference_label)
    if q.limit is not None:
        ax.loglog(j, _per_j(result, q.limit), ":", color=colour, lw=1.2, zorder=2, label=limit_label)
    return j, lam


def draw_weyl(result, ax) -> None:
    """Generator eigenvalues lambda_j = -log(eta_j)/t against the eigen-index j (log-log), as in FNA Fig. 2a.

    Measured eigenvalues, the exact continuum spectrum of the same kernel at the same scale (what the
    check compares with), the s -> 0 limit (S^1, alpha < 2), the check's fit window, and Weyl-law guides
    ``j^(alpha/d)`` and ``j^(2/d)`` (d = 1 on S^1, 2 on S^2) through the measured eigenvalue in the
    middle of the window.
    """
    p = result.parameters
    circle = p["manifold"] == "circle"
    d = 1 if circle else 2
    j_lo, j_hi = _fit_window_j(result)
    lo, hi = p["fit_range"]
    ax.axvspan(j_lo, j_hi, color="0.93", zorder=0, label=f"fit window {'k' if circle else 'l'} = {lo}..{hi}")
    alpha = p["alpha"]
    j, lam = _draw_eigenvalues(result, ax, label=rf"measured $\lambda_j = -\log\eta_j/t$, $\alpha$ = {alpha:g}",
                               reference_label="exact continuum spectrum, same scale",
                               limit_label=r"$\kappa\to 0$ limit $m(k)/M_0$")
    anchor = int(round(np.sqrt(j_lo * j_hi)))
    exponents = sorted({p["alpha"] / d, 2.0 / d})
    for e, colour in zip(exponents, ("tab:blue", "tab:red") if len(exponents) == 2 else ("tab:red",)):
        _guide(ax, j, lam, e, colour, rf"$j^{{{_exp(e)}}}$ guide", anchor)
    plain_log_ticks(ax)
    ax.set_xlabel(r"eigen-index $j$" + (r" (frequency $k = \lceil j/2\rceil$)" if circle else
                                         r" (degree $l$: $l^2 \leq j < (l+1)^2$)"))
    ax.set_ylabel(r"generator eigenvalue $\lambda_j$")
    best = result.quantities.best_fit_alpha
    where = "$S^1$" if circle else "$S^2$"
    pts = {"grid": "equispaced" if circle else "Fibonacci", "random": "i.i.d."}[p["points"]]
    kernel = (rf"$\Phi_{{{p['kernel_alpha']:g}}}$, $d_M$ = {p['dim']:g}" if p["kernel"] == "fna" else
              f"softmax T = {p['temperature']:.3g}" if p["kernel"] == "softmax" else f"profile {p['kernel']}")
    fitted = rf", best-fit $\alpha$ = {best:.4f}" if best is not None else ""
    ax.set_title(f"weyl: {result.verdict}; claimed $\\alpha$ = {p['alpha']:g}{fitted}\n{where}, n = {p['n']} {pts} "
                 f"points, {kernel}, $\\kappa$ = {p['scale']:.3g}", fontsize=8)
    ax.legend(fontsize=6.5, loc="upper left")


def draw_fna_rate(result, ax) -> None:
    """Relative generator bias |lambda_k(s)/lambda_k - 1| against the kernel scale (log-log), per alpha and k."""
    q, p = result.quantities, result.parameters
    scales = np.asarray(q.scales, dtype=float)
    printed = p.get("claim", "corrected") == "printed"
    for i, alpha in enumerate(p["alphas"]):
        rate = q.rates[alpha]
        bias = np.abs(np.asarray(rate.bias, dtype=float))
        asserted = alpha if printed else 2 - alpha
        for j, k in enumerate(p["modes"]):
            slope = rate.exponent[j]
            fitted = f"{slope:.3f}" if np.isfinite(slope) else "n/a"
            ax.loglog(scales, bias[:, j], "-o" if j == 0 else "--s", ms=3, color=f"C{i}",
                      label=rf"$\alpha$ = {alpha:g}, k = {k}: exponent {fitted} (asserted {asserted:g})")
    plain_log_ticks(ax)
    ax.set_xlabel(r"kernel scale $s$ ($\kappa$)")
    ax.set_ylabel(r"relative bias $|\lambda_k(s)/\lambda_k - 1|$")
    claimed = r"$s^{2-\alpha}$ (corrected)" if not printed else r"$t = s^\alpha$ (printed claim)"
    ax.set_title(f"fna_rate: {result.verdict}; $S^1$ grid, h = s/{p['h_ratio']:g}; asserted bias ~ {claimed}\n"
                 f"exponent fitted after removing the next-order $C'(ks)$ term", fontsize=8)
    ax.legend(fontsize=6.5, loc="lower right")


def draw_fractional_limit(result, ax) -> None:
    """Discrete (A f - f)/t at the query points against the asserted limit operator, per density."""
    q, p = result.quantities, result.parameters
    operator = OPERATORS[p["claim"]]
    for i, name in enumerate(p["densities"]):
        d = q.densities[name]
        th = np.asarray(d.theta, dtype=float)
        ax.plot(th, np.asarray(d.limits[operator]), "-", lw=1, color=f"C{i}", label=f"limit ({name})")
        ax.plot(th, np.asarray(d.discrete), ".", ms=4, color=f"C{i}",
                label=rf"$(Af - f)/t$ ({name}): rel. $L^2$ error {d.rel_l2[operator]:.3g}")
    ax.set_xlabel(r"angle $x$")
    ax.set_ylabel(rf"operator applied to $f = \cos({p['mode']}x)$")
    ax.set_title(f"fractional_limit: {result.verdict}; claim '{p['claim']}', $\\alpha$ = {p['alpha']:g}, "
                 f"s = {p['scale']:g}, n = {p['n']} quantile points", fontsize=8)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)


def draw_density_normalisation(result, ax) -> None:
    """n pi_i against rho(x_i) (log-log) for each exponent a: the stationary law rho^(1-2a)."""
    q, p = result.quantities, result.parameters
    name, alpha = p["densities"][0], p["alphas"][0]
    grid = q.grids[name]
    rho = np.asarray(grid.rho, dtype=float)
    for a in p["exponents"]:
        norm = grid.normalisations[alpha, a]
        pi, slope = np.asarray(norm.pi, dtype=float), norm.law_slope
        ax.loglog(rho, pi * len(pi), ".", ms=2, label=f"a = {a:g}: fitted slope {slope:.3f} (1 − 2a = {1 - 2 * a:g})".replace("-", "−"))
    plain_log_ticks(ax)
    ax.set_xlabel(r"density $\rho(x_i)$")
    ax.set_ylabel(r"$n\,\pi_i$ (stationary law)")
    ax.set_title(f"density_normalisation: {result.verdict}; {name} density, $\\alpha$ = {alpha:g}, s = {p['scale']:g}, "
                 f"n = {p['n']}", fontsize=8)
    ax.legend(fontsize=7, markerscale=3)


def _draw_convergence(result, ax) -> None:
    """Relative bias |lambda_k(s)/lambda_k(0) - 1| against s of a fna_rate result, s^(2-alpha) guides dotted."""
    q, p = result.quantities, result.parameters
    scales = np.asarray(q.scales, dtype=float)
    colours = ("tab:blue", "tab:green", "tab:purple", "tab:orange", "tab:brown")
    for i, alpha in enumerate(p["alphas"]):
        bias = np.abs(np.asarray(q.rates[alpha].bias, dtype=float))
        colour = ALPHA_COLOURS.get(alpha, colours[i % len(colours)])
        for jk, k in enumerate(p["modes"]):
            ax.loglog(scales, bias[:, jk], "-o" if jk == 0 else "--s", ms=3, lw=1.1, color=colour,
                      label=rf"$\alpha$ = {alpha:g}" if jk == 0 else None)
            ax.loglog(scales, bias[-1, jk] * (scales / scales[-1]) ** (2 - alpha), ":", color="k", lw=0.7, zorder=1)
    ax.plot([], [], "-o", color="0.4", ms=3, label=f"k = {p['modes'][0]}")
    if len(p["modes"]) > 1:
        ax.plot([], [], "--s", color="0.4", ms=3, label=f"k = {p['modes'][1]}")
    ax.plot([], [], ":", color="k", lw=0.7, label=r"$\propto\kappa^{2-\alpha}$")
    plain_log_ticks(ax)
    ax.set_xlabel(r"kernel scale $\kappa$")
    ax.set_ylabel(r"relative bias $|\lambda_k(\kappa)/\lambda_k(0) - 1|$")
    ax.legend(fontsize=6.5, loc="lower right", ncol=2)


def _fmt(value, fmt=".3f") -> str:
    return format(value, fmt) if isinstance(value, (int, float)) and np.isfinite(value) else "n/a"


def weyl_runs() -> dict:
    """The verify.weyl results Fig. 2a draws: ``(setting, alpha) -> CheckResult`` (FIG2A_SETTINGS x ALPHA_COLOURS)."""
    return {(name, a): weyl.run(alpha=a, modes=FIG2A_MODES, **kwargs) for name, kwargs in FIG2A_SETTINGS
            for a in ALPHA_COLOURS}


def fig_fna2a(out_dir, *, formats=("png",), runs=None, rate=None):
    """FNA Fig. 2a: eigenvalues lambda_j vs j with j^1.2 and j^2 guides, paper's and resolved setting, convergence.

    ``runs`` (:func:`weyl_runs`) and ``rate`` (a verify.fna_rate result) are computed when not given.
    """
    runs = weyl_runs() if runs is None else runs
    rate = _rate() if rate is None else rate
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(11.0, 4.0), gridspec_kw={"width_ratios": [1, 1, 1]})
    titles = {"paper": "(a) the paper's setting", "resolved": "(b) resolved"}
    for ax, (name, _) in zip(axes, FIG2A_SETTINGS):
        for a, colour in ALPHA_COLOURS.items():
            res = runs[(name, a)]
            j_lo, j_hi = _fit_window_j(res)
            j, lam = _draw_eigenvalues(res, ax, colour=colour, label=rf"$\alpha$ = {a:g} (measured)",
                                       reference_label="exact continuum, same $\\kappa$" if a == 2 else None,
                                       limit_label=r"$\kappa\to 0$ limit" if a < 2 else None)
            anchor = int(round(np.sqrt(j_lo * j_hi)))
            _guide(ax, j, lam, a, colour, rf"$j^{{{a:g}}}$ guide", anchor)
        p = runs[(name, 2.0)].parameters
        ax.set_title(f"{titles[name]}: n = {p['n']}, $\\kappa$ = {p['scale']:.3g} (h/$\\kappa$ = "
                     f"{2 * np.pi / p['n'] / p['scale']:.2f})")
        ax.set_xlabel(r"eigen-index $j$")
        ax.legend(fontsize=6.5, loc="lower right")  # the spectra rise from lower left to upper right
        plain_log_ticks(ax)
    axes[0].set_ylabel(r"$\lambda_j = -\log\eta_j\,/\,t$")
    axes[1].sharey(axes[0])
    _draw_convergence(rate, axes[2])
    axes[2].set_title(r"(c) convergence as $\kappa\to 0$ ($S^1$, $h = \kappa/%g$)" % rate.parameters["h_ratio"])

    def setting(name):
        r12, r2 = runs[(name, 1.2)], runs[(name, 2.0)]
        q12, q2 = r12.quantities, r2.quantities
        lo, hi = r12.parameters["fit_range"]
        return (f"log-log slope over k = {lo}..{hi}: {_fmt(q12.slope)} for α = 1.2 (exact continuum at this κ "
                f"{_fmt(q12.slope_reference)}, κ → 0 limit {_fmt(q12.limit_slope)}) and {_fmt(q2.slope)} "
                f"for α = 2; fitted against j = 1..{FIG2A_MODES}, as the figure invites: {_fmt(q12.naive_slope_j)} "
                f"and {_fmt(q2.naive_slope_j)}; verify.weyl {r12.verdict} (α = 1.2, best-fit α "
                f"{_fmt(q12.best_fit_alpha, '.4f')}) and {r2.verdict} (α = 2)")

    p12 = runs[("paper", 1.2)].parameters
    text = (f"FNA Fig. 2a on S¹: sorted generator eigenvalues λ_j = −log(η_j)/t, t = κ^α, of the FNA attention matrix "
            f"(W_Q = W_K = I, H = 1) on n equispaced points, Φ_α(z) = (1 + z)^−(d_M + α) with d_M = {p12['dim']:g} "
            f"and {p12['distance']} distance (both assumed: the main text's d_M = d_H = 2 gives about j² for every α, "
            f"FNA-10); j = 1..{FIG2A_MODES} shown (not stated in the paper). Eigenvalues come in equal pairs "
            f"(frequency k = ⌈j/2⌉), hence the steps. Dashed: j^1.2 (blue) and j² (red) guides through the middle of "
            f"the fit window; thin black: the exact continuum spectrum of the same kernel at the same κ; dotted blue: "
            f"the κ → 0 limit. (a) n = {p12['n']}, κ = √(1e−4) = {p12['scale']:g}: {setting('paper')}. "
            f"(b) n = {runs[('resolved', 1.2)].parameters['n']}, κ = 2h: {setting('resolved')}. "
            f"(c) relative bias of λ_k against its κ → 0 limit (verify.fna_rate): it decays like κ^(2 − α) "
            f"(dotted), not like t = κ^α as the proof of Lemma 1 implies (FNA-13); α = 2 has no bias "
            f"(λ_k = k²/4 at every κ); verify.fna_rate {rate.verdict}.")
    caption(fig, text)
    return save(fig, out_dir, "fna-2a", formats)


def fig_fna2a_inset(out_dir, *, formats=("png",), rate=None):
    """FNA Fig. 2a convergence inset: relative eigenvalue bias against the kernel scale, kappa^(2-alpha) guides.

    ``rate`` (a verify.fna_rate result) is computed when not given.
    """
    rate = _rate() if rate is None else rate
    p = rate.parameters
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 4.0))
    _draw_convergence(rate, ax)
    ax.set_title(r"bias of $\lambda_k$ as $\kappa \to 0$ on $S^1$")
    slopes = ", ".join(f"{_fmt(rate.quantities.rates[a].exponent[j])} (α = {a:g}, k = {k})" for a in p["alphas"]
                       for j, k in enumerate(p["modes"]))
    caption(fig, f"Convergence inset of FNA Fig. 2a: relative bias |λ_k(κ)/λ_k(0) − 1| of the FNA generator "
                 f"eigenvalues on S¹ (equispaced grid, h = κ/{p['h_ratio']:g}, d_M = 1, geodesic distance, t = κ^α) "
                 f"against their κ → 0 limit. Dotted: κ^(2 − α). Fitted exponents after removing the next-order term: "
                 f"{slopes}. The bias decays like κ^(2 − α), not like t = κ^α as the proof of Lemma 1 implies "
                 f"(FNA-13); α = 2 has none (λ_k = k²/4 at every κ). verify.fna_rate: {rate.verdict}.")
    return save(fig, out_dir, "fna-2a-inset", formats)


FIGURES = {"fna-2a": fig_fna2a, "fna-2a-inset": fig_fna2a_inset}

CHECK_FIGURES = {
    "weyl": draw_weyl,
    "fna_rate": draw_fna_rate,
    "fractional_limit": draw_fractional_limit,
    "density_normalisation": draw_density_normalisation,
}
