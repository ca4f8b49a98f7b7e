"""FNA Fig. 1 (stable steps and a Levy flight) and the Fig. 2a convergence inset, from verify runs.

``fna-1``: the log-log CCDF of |X| for symmetric alpha-stable steps (characteristic function
exp(-|u|^alpha)) with the tail law 2 Gamma(alpha) sin(pi alpha/2)/pi x^-alpha, and a 2-D flight of 2000
isotropic steps (radius |X|, uniform angle) for alpha = 1.2 against alpha = 2 (Gaussian steps);
data from :func:`verify.levy.run`. ``fna-2a-inset``: the relative bias of the FNA generator
eigenvalues against their s -> 0 limit on S^1, log-log against the scale, with s^(2-alpha) guides;
data from :func:`verify.fna_rate.run`. ``CHECK_FIGURES``: the figures ``--plot`` saves for
``verify.levy`` (the CCDF panel of Fig. 1) and ``verify.levy_jumps`` (jump-length masses per log bin).
"""

from __future__ import annotations

import numpy as np

from figures._plotting import pyplot, save

# verify settings used by the figures (tests substitute cheaper ones)
LEVY_ARGS: dict = {}
RATE_ARGS: dict = {}


def draw_levy(result, ax):
    """CCDF of |X| (unit scale) of every alpha of a :func:`verify.levy.run` result, log-log, with the
    exact tail law ``2 Gamma(alpha) sin(pi alpha/2)/pi x^-alpha`` (dashed) for alpha < 2."""
    from manifolds import stable

    for a in result.parameters["alphas"]:
        x = np.asarray(result.arrays[f"ccdf_x_a{a:g}"])
        p = np.asarray(result.arrays[f"ccdf_p_a{a:g}"])
        ax.loglog(x, p, ".", ms=2.5, label=f"alpha = {a:g}")
        if a < 2:
            grid = x[(x > 3) & (p > 1e-6)]
            ax.loglog(grid, stable.ccdf_tail_constant(a) * grid ** (-a), "--", color="k", lw=0.7)
    ax.set_xlim(1e-2, None)
    ax.set_xlabel("step size |X|")
    ax.set_ylabel("P(|X| > x)")
    ax.set_title(f"stable steps, char. fn. exp(-|u|^alpha), N = {result.parameters['n_samples']:.0e}, "
                 f"seed {result.parameters['seed']}: {result.verdict}", fontsize=8)
    ax.legend(fontsize=7, title="black dashed: 2 Gamma(a) sin(pi a/2)/pi x^-a", title_fontsize=7)


def draw_levy_jumps(result, ax):
    """Jump-length mass per log bin against r + s (log-log) on S^1 and the 2-torus for each alpha < 2
    of a :func:`verify.levy_jumps.run` result, with slope -alpha guides (dotted)."""
    for alpha in result.parameters["alphas"]:
        if alpha >= 2:
            continue
        for geo, mark in (("circle", "o"), ("torus", "s")):
            r = np.asarray(result.arrays[f"{geo}_r_a{alpha:g}"])
            m = np.asarray(result.arrays[f"{geo}_mass_a{alpha:g}"])
            line, = ax.loglog(r, m, mark, ms=3, label=f"{geo}, alpha {alpha:g}: slope "
                              f"{-result.measured[f'{geo}_exponent_a{alpha:g}']:.3f}")
            ax.loglog(r, m[0] * (r / r[0]) ** (-alpha), ":", color=line.get_color(), lw=0.8)
    ax.set_xlabel("r + s")
    ax.set_ylabel("jump-length mass per log bin")
    ax.set_title(f"FNA attention-walk jumps (dotted: slope -alpha): {result.verdict}", fontsize=8)
    ax.legend(fontsize=7)


def fig_fna1(out_dir, *, formats=("png",)):
    """FNA Fig. 1: stable step-size distributions (CCDF) and a Levy flight vs a Gaussian-step path."""
    from verify import levy

    result = levy.run(**LEVY_ARGS)
    alphas = result.parameters["alphas"]
    n = result.parameters["n_samples"]
    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 4))
    draw_levy(result, ax)
    ax.set_title("stable steps, char. fn. exp(-|u|^alpha)", fontsize=9)
    heavy = [a for a in alphas if a < 2]
    for a, colour in ((heavy[0], "C0"), (2.0, "C3")) if heavy and 2.0 in alphas else ():
        path = np.asarray(result.arrays[f"path_a{a:g}"])
        bx.plot(path[:, 0], path[:, 1], "-", lw=0.6, color=colour,
                label="Levy flight, alpha = %g" % a if a < 2 else "Gaussian steps, alpha = 2")
    bx.set_aspect("equal", adjustable="datalim")
    bx.set_title(f"2-D paths, {len(path)} isotropic steps", fontsize=9)
    bx.legend(fontsize=7)
    verdict = "PASS" if result.passed else "FAIL"
    fig.suptitle(f"FNA Fig. 1 analogue: {n:.0e} Chambers-Mallows-Stuck samples per alpha, seed "
                 f"{result.parameters['seed']}; path steps: radius |X| (unit scale), uniform angle "
                 f"(assumed; the paper does not state its construction). verify.levy: {verdict}", fontsize=8)
    return save(fig, out_dir, "fna-1", formats)


def fig_fna2a_inset(out_dir, *, formats=("png",)):
    """Convergence inset for FNA Fig. 2a: relative eigenvalue bias against the kernel scale."""
    from verify import fna_rate

    result = fna_rate.run(**RATE_ARGS)
    scales = np.asarray(result.arrays["scales"])
    modes = result.parameters["modes"]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 4))
    for i, a in enumerate(result.parameters["alphas"]):
        bias = np.abs(np.asarray(result.arrays[f"bias_a{a:g}"]))
        for j, k in enumerate(modes):
            ax.loglog(scales, bias[:, j], "o-" if j == 0 else "s--", ms=3, color=f"C{i}",
                      label=f"alpha {a:g}, k = {k}: fitted exponent {result.measured[f'exponent_a{a:g}_k{k}']:.3f}")
        ax.loglog(scales, bias[0, 0] * (scales / scales[0]) ** (2 - a), ":", color="k", lw=0.7)
    ax.set_xlabel("kernel scale s (kappa)")
    ax.set_ylabel("|lambda_k(s) / lambda_k(0) - 1|")
    p = result.parameters
    ax.set_title(f"S^1 grid, h = s/{p['h_ratio']:g} (n = 2 pi {p['h_ratio']:g}/s), d_M = 1, geodesic, "
                 f"t = s^alpha;\ndotted: s^(2-alpha); alpha = 2 has no bias (lambda_k = k^2/4). "
                 f"verify.fna_rate: {'PASS' if result.passed else 'FAIL'}", fontsize=7)
    ax.legend(fontsize=6)
    return save(fig, out_dir, "fna-2a-inset", formats)


FIGURES = {"fna-1": fig_fna1, "fna-2a-inset": fig_fna2a_inset}
CHECK_FIGURES = {"levy": draw_levy, "levy_jumps": draw_levy_jumps}
