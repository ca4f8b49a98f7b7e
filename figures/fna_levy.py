"""FNA Fig. 1 (stable steps and a Levy flight) and the figures of the levy / levy_jumps checks.

``fna-1``: the log-log CCDF of |X| for symmetric alpha-stable steps (characteristic function
exp(-|u|^alpha)) with the tail law 2 Gamma(alpha) sin(pi alpha/2)/pi x^-alpha, and a 2-D flight of 2000
isotropic steps (radius |X|, uniform angle) for alpha = 1.2 against alpha = 2 (Gaussian steps); data
from :func:`verify.levy.run` (cached per process and seed), read from the typed fields of its
quantities. ``CHECK_FIGURES``: the figures ``--plot`` saves for ``verify.levy`` (the
CCDF panel of Fig. 1) and ``verify.levy_jumps`` (jump-length masses per log bin). The convergence inset
of Fig. 2a lives with Fig. 2a in :mod:`figures.fna_limits`.
"""

from __future__ import annotations

import functools
import math

from figures._plotting import caption, plain_log_ticks, pyplot, save
from manifolds import stable
from verify import levy

__all__ = ["FIGURES", "CHECK_FIGURES", "fig_fna1", "draw_levy", "draw_levy_jumps", "levy_result"]

#: verify.levy settings of Fig. 1: alpha = 1.2, 1.5 and 2 with 10^6 Chambers-Mallows-Stuck samples each
#: (tests substitute cheaper ones)
LEVY_ARGS: dict = dict(alphas=(1.2, 1.5, 2.0), n_samples=1_000_000)
ALPHA_COLOURS = {1.2: "tab:blue", 1.5: "tab:orange", 1.8: "tab:green", 2.0: "tab:red"}


def _count(n) -> str:
    """10^6 as '10⁶', 4e6 as '4·10⁶', other numbers as they are."""
    n = int(n)
    e = int(math.floor(math.log10(n)))
    m = n / 10**e
    sup = str(e).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    if m == 1:
        return f"10{sup}"
    return f"{m:g}·10{sup}" if float(m).is_integer() else f"{n:,}"


def _colour(alpha, i):
    return ALPHA_COLOURS.get(alpha, f"C{i}")


@functools.lru_cache(maxsize=4)
def _cached(items: tuple):
    return levy.run(**dict(items))


def levy_result(seed: int = 0):
    """The result of ``verify.levy.run(**LEVY_ARGS, seed=seed)``, computed once per process."""
    return _cached(tuple(sorted({**LEVY_ARGS, "seed": seed}.items())))


def draw_levy(result, ax):
    """CCDF of |X| (unit scale) of every alpha of a :func:`verify.levy.run` result, log-log, with the
    exact tail law ``2 Gamma(alpha) sin(pi alpha/2)/pi x^-alpha`` (dashed) for alpha < 2."""
    increments = result.quantities.increments
    for i, a in enumerate(result.parameters["alphas"]):
        x, p = increments[a].ccdf_x, increments[a].ccdf_p
        ax.loglog(x, p, ".", ms=2.5, color=_colour(a, i), label=rf"$\alpha$ = {a:g}")
        if a < 2:
            grid = x[(x > 3) & (p > 1e-6)]
            ax.loglog(grid, stable.ccdf_tail_constant(a) * grid ** (-a), "--", color="k", lw=0.8)
    ax.plot([], [], "--", color="k", lw=0.8, label=r"tail law $\propto x^{-\alpha}$")
    ax.set_xlim(1e-2, None)
    ax.set_xlabel("step size $|X|$")
    ax.set_ylabel(r"$P(|X| > x)$")
    ax.set_title(f"levy: {result.verdict}; stable steps, char. fn. $e^{{-|u|^\\alpha}}$, "
                 f"N = {_count(result.parameters['n_samples'])} per $\\alpha$, seed {result.parameters['seed']}", fontsize=8)
    ax.legend(fontsize=7, loc="lower left", markerscale=2.5)  # lower left: the CCDFs fall from the upper left


def draw_levy_jumps(result, ax):
    """Jump-length mass per log bin against r + s (log-log) on S^1 and the 2-torus for each alpha < 2
    of a :func:`verify.levy_jumps.run` result, with slope -alpha guides (dotted)."""
    laws = result.quantities.laws
    for i, alpha in enumerate(result.parameters["alphas"]):
        if alpha >= 2:
            continue
        for geo, mark in (("circle", "o"), ("torus", "s")):
            law = laws[alpha]
            r, m = getattr(law, f"{geo}_r"), getattr(law, f"{geo}_mass")
            slope = -getattr(law, f"{geo}_exponent")
            line, = ax.loglog(r, m, mark, ms=3.5, color=_colour(alpha, i) if geo == "circle" else None,
                              mfc="none" if geo == "torus" else None,
                              label=rf"{'$S^1$' if geo == 'circle' else '$T^2$'}, $\alpha$ = {alpha:g}: slope {slope:.3f}")
            ax.loglog(r, m[0] * (r / r[0]) ** (-alpha), ":", color=line.get_color(), lw=0.9)
    ax.plot([], [], ":", color="k", lw=0.9, label=r"slope $-\alpha$")
    plain_log_ticks(ax)
    ax.set_xlabel("jump length r + s")
    ax.set_ylabel("jump-length mass per log bin")
    ax.set_title(f"levy_jumps: {result.verdict}; one-step jumps of the FNA attention walk", fontsize=8)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)  # below: no corner is free


def fig_fna1(out_dir, *, formats=("png",), seed=0):
    """FNA Fig. 1: stable step-size distributions (CCDF, alpha = 1.2, 1.5, 2) and a Levy flight vs a Gaussian path."""
    result = levy_result(seed)
    p, q = result.parameters, result.quantities
    alphas = p["alphas"]
    plt = pyplot()
    fig, (ax, bx, cx) = plt.subplots(1, 3, figsize=(12.0, 4.2), gridspec_kw={"width_ratios": [1.25, 1.0, 0.8]})
    draw_levy(result, ax)
    ax.set_title(r"(a) step sizes: CCDF of $|X|$")
    heavy = [a for a in alphas if a < 2]
    shown = [(heavy[0], "Lévy flight"), (2.0, "Gaussian steps")] if heavy and 2.0 in alphas else []
    for a, what in shown:
        path = q.increments[a].path
        bx.plot(path[:, 0], path[:, 1], "-", lw=0.6, color=ALPHA_COLOURS.get(a, "k"),
                label=rf"{what}, $\alpha$ = {a:g}")
        bx.plot(path[-1, 0], path[-1, 1], "o", ms=3, color=ALPHA_COLOURS.get(a, "k"))
    bx.plot(0, 0, "k+", ms=8, mew=1.2, label="start")
    bx.set_aspect("equal", adjustable="datalim")
    if shown:  # the Gaussian path is tiny next to the flight: draw it again on its own scale
        gauss = q.increments[2.0].path
        cx.plot(gauss[:, 0], gauss[:, 1], "-", lw=0.6, color=ALPHA_COLOURS[2.0])
        cx.plot(gauss[-1, 0], gauss[-1, 1], "o", ms=3, color=ALPHA_COLOURS[2.0])
        cx.plot(0, 0, "k+", ms=8, mew=1.2)
        cx.set_aspect("equal", adjustable="datalim")
        cx.set_xlabel("$x_1$")
    cx.set_title(r"(c) the $\alpha$ = 2 path, magnified")
    steps = len(q.increments[shown[0][0]].path) if shown else 0
    bx.set_title(f"(b) 2-D paths, {steps} isotropic steps")
    bx.set_xlabel("$x_1$")
    bx.set_ylabel("$x_2$")
    bx.legend(fontsize=7, loc="best")
    caption(fig, f"FNA Fig. 1 analogue: (a) empirical CCDF of |X| for symmetric α-stable steps with characteristic "
                 f"function exp(−|u|^α), {_count(p['n_samples'])} Chambers–Mallows–Stuck samples per α (seed {p['seed']}); "
                 f"dashed: the exact tail law 2Γ(α) sin(πα/2)/π · x^−α (slope −α). (b) 2-D paths of the same steps, (c) the "
                 f"Gaussian one on its own scale: radius |X|, uniform angle (this isotropic construction is assumed: the paper does not state its "
                 f"own). verify.levy: {result.verdict}.")
    return save(fig, out_dir, "fna-1", formats)


FIGURES = {"fna-1": fig_fna1}
CHECK_FIGURES = {"levy": draw_levy, "levy_jumps": draw_levy_jumps}
