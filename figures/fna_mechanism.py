"""FNA Figs. 2b/2c (attention edges on a 3-mode mixture) and synthetic analogues of Figs. 5a-5e.

Every number comes from :mod:`verify.fig2bc` and :mod:`verify.multiscale` runs at their default
settings (cached per process); these functions only draw. Settings the paper leaves unstated are
written into each figure: kappa = 1 for Fig. 2b/2c, synthetic tokens instead of IMDb embeddings,
the alpha = 2 bandwidth of Fig. 5b, tau = 1. ``CHECK_FIGURES``: the figures ``--plot`` saves for
``verify.fig2bc`` (the first draw's edges for alpha and 2) and ``verify.multiscale`` (gap vs alpha).
"""

from __future__ import annotations

import functools

import numpy as np

from figures._plotting import pyplot, save

METHOD_STYLE = {"fna": ("tab:blue", "FNA alpha=1.2"), "local": ("tab:red", "LA alpha=2"), "dp": ("tab:gray", "DP")}


@functools.lru_cache(maxsize=1)
def _fig2bc():
    from verify import fig2bc

    return fig2bc.run()


@functools.lru_cache(maxsize=2)
def _multiscale(**kwargs):
    from verify import multiscale

    return multiscale.run(**kwargs)


#: Fig. 5e needs more sizes than the check's quick default: one data set and d, n = 32..256.
FIG5E_RUN = dict(datasets=("sequence",), dims=(8,), sizes=(32, 64, 128, 256), draws=4, dm_dims=(8,), dm_n=100,
                 alphas=(1.2, 2.0))


def draw_edges(ax, result, key, color, title):
    """Tokens and attention edges above the threshold of a :func:`verify.fig2bc.run` result (its
    first draw), line width proportional to A_ij; ``key`` is ``"A_alpha"`` or ``"A_2"``."""
    x = np.asarray(result.arrays["points"], dtype=float)
    A = np.asarray(result.arrays[key], dtype=float)
    thr = result.parameters["threshold"]
    i, j = np.nonzero((A > thr) & ~np.eye(A.shape[0], dtype=bool))
    wmax = A[i, j].max() if i.size else 1.0
    for a, b in zip(i, j):
        ax.plot(x[[a, b], 0], x[[a, b], 1], color=color, lw=3.0 * A[a, b] / wmax, alpha=0.7, zorder=1)
    ax.scatter(x[:, 0], x[:, 1], s=60, color="0.6", edgecolor="k", zorder=2)
    ax.set_aspect("equal")
    ax.set_title(f"{title}: {i.size} edges > {thr:g}")


def draw_fig2bc(result, ax):
    """Both panels of FNA Fig. 2b/2c (first draw) side by side inside ``ax``."""
    ax.set_axis_off()
    left = ax.inset_axes((0.0, 0.0, 0.47, 1.0))
    right = ax.inset_axes((0.53, 0.0, 0.47, 1.0))
    draw_edges(left, result, "A_alpha", "tab:blue", f"alpha = {result.parameters['alpha']:g}")
    draw_edges(right, result, "A_2", "tab:red", "alpha = 2")
    for panel in (left, right):
        panel.set_aspect("equal", adjustable="datalim")  # fill the panel height instead of shrinking it
        panel.title.set_fontsize(8)
        panel.tick_params(labelsize=7)
    m = result.measured
    a = f"alpha{result.parameters['alpha']:g}"
    ax.set_title(f"first of {result.parameters['draws']} draws, kappa = {result.parameters['kappa']:g}; inter-cluster "
                 f"mass {m[f'inter_mass_mean_{a}']:.2g} vs {m['inter_mass_mean_alpha2']:.2g} per row: "
                 f"{result.verdict}", fontsize=8, pad=24)


def draw_multiscale(result, ax):
    """Synthetic Fig. 5a for the first d of a :func:`verify.multiscale.run` result: spectral gap vs
    alpha (mean +- sd over token sets) under the three bandwidth protocols, DP dashed."""
    d = result.parameters["dims"][0]
    alphas = np.asarray(result.arrays["alphas"], dtype=float)
    for protocol, marker in zip(("paper", "equal", "matched"), "osd"):
        g = np.asarray(result.arrays[f"gap_vs_alpha_{protocol}_d{d}"], dtype=float)
        ax.errorbar(alphas, g[:, 0], yerr=g[:, 1], marker=marker, capsize=2, label=f"{protocol} kappa")
    dp = np.asarray(result.arrays[f"gap_vs_alpha_dp_d{d}"], dtype=float)
    ax.axhline(dp[0], color="0.4", ls="--", label="DP")
    ax.set_xlabel("alpha")
    ax.set_ylabel("spectral gap 1 - |eta_2|")
    ax.set_title(f"gap vs alpha, Gaussian tokens, d = {d}, n = {result.parameters['sizes'][-1]}: {result.verdict}",
                 fontsize=8)
    ax.legend(fontsize=7)


def _caption(fig, text):
    """Wrap ``text`` to the figure width and reserve room for it below the axes."""
    import textwrap

    width_in, height_in = fig.get_size_inches()
    lines = textwrap.wrap(text, width=int(width_in * 72 / 4.1))  # ~4.1 pt per character at 7 pt
    room = (len(lines) * 7 * 1.35 / 72 + 0.1) / height_in
    fig.tight_layout(rect=(0, room, 1, 1))
    fig.text(0.01, 0.01, "\n".join(lines), ha="left", va="bottom", fontsize=7)


def _fig2(out_dir, formats, key, color, name, label):
    res = _fig2bc()
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 3.4))
    draw_edges(ax, res, key, color, label)
    p = res.parameters
    m = res.measured
    a = "1.2" if key == "A_alpha" else "2"
    _caption(fig, f"FNA Fig. 2{'b' if a == '1.2' else 'c'} (synthetic): 18 tokens from (1/3) sum N(mu_i, I/4), "
                  f"mu = (3,0), (-3,0), (0, sqrt 3); Q = K = X, d_M = 2, kappa = {p['kappa']:g} (not stated in the "
                  f"paper); first of {p['draws']} draws. Line width proportional to A_ij. Over all draws: "
                  f"{m[f'inter_edges_mean_alpha{a}']:.1f} inter-cluster edges on average; "
                  f"draws where alpha=2 has no inter-cluster edge: {m['draws_without_inter_edges_alpha2']:.0%}.")
    return save(fig, out_dir, name, formats)


def fig_fna2b(out_dir, *, formats=("png",)):
    """FNA Fig. 2b: alpha = 1.2 attention edges above 3.12e-5 (blue)."""
    return _fig2(out_dir, formats, "A_alpha", "tab:blue", "fna-2b", "alpha = 1.2")


def fig_fna2c(out_dir, *, formats=("png",)):
    """FNA Fig. 2c: alpha = 2 attention edges above 3.12e-5 (red)."""
    return _fig2(out_dir, formats, "A_2", "tab:red", "fna-2c", "alpha = 2")


def fig_fna5a(out_dir, *, formats=("png",)):
    """Synthetic Fig. 5a: spectral gap vs alpha under the three bandwidth protocols, DP as a band."""
    res = _multiscale()
    plt = pyplot()
    dims = res.parameters["dims"]
    alphas = np.asarray(res.arrays["alphas"], dtype=float)
    fig, axes = plt.subplots(1, len(dims), figsize=(4.2 * len(dims), 3.4), squeeze=False)
    for ax, d in zip(axes[0], dims):
        for protocol, marker in zip(("paper", "equal", "matched"), "osd"):
            g = np.asarray(res.arrays[f"gap_vs_alpha_{protocol}_d{d}"], dtype=float)
            ax.errorbar(alphas, g[:, 0], yerr=g[:, 1], marker=marker, capsize=2, label=f"{protocol} kappa")
        dp = np.asarray(res.arrays[f"gap_vs_alpha_dp_d{d}"], dtype=float)
        ax.axhspan(dp[0] - dp[1], dp[0] + dp[1], color="0.8")
        ax.axhline(dp[0], color="0.4", ls="--", label="DP")
        ax.set_xlabel("alpha")
        ax.set_ylabel("spectral gap 1 - |eta_2|")
        ax.set_title(f"Gaussian tokens, d = {d}, n = {res.parameters['sizes'][-1]}")
        ax.legend(fontsize=7)
    _caption(fig, "Synthetic Fig. 5a (no accuracy axis): mean +- sd over "
                  f"{res.parameters['draws']} token sets. paper kappa: sqrt(d)/(2^(1/d)-1) for alpha<2, sqrt(d) at "
                  "alpha=2; equal: sqrt(d) for all; matched: alpha=2 with FNA-1.2's half-maximum width. "
                  "Under equal kappa the ordering reverses: the advantage of alpha<2 comes from the bandwidth.")
    return save(fig, out_dir, "fna-5a", formats)


def fig_fna5b(out_dir, *, formats=("png",)):
    """Synthetic Fig. 5b: 2-D diffusion maps of FNA (alpha = 1.2) and LA (alpha = 2)."""
    res = _multiscale()
    plt = pyplot()
    d = res.parameters["dm_dims"][0]
    fig, ax = plt.subplots(figsize=(4.4, 3.8))
    for m, key in (("local", f"dm_coords_local_d{d}"), ("fna", f"dm_coords_fna_d{d}")):
        c = np.asarray(res.arrays[key], dtype=float)
        color, label = METHOD_STYLE[m]
        ax.scatter(c[:, 0], c[:, 1], s=6, color=color, label=label, alpha=0.7)
    ax.set_xlabel("eta_1 psi_1")
    ax.set_ylabel("eta_2 psi_2")
    ax.set_aspect("equal", adjustable="datalim")
    ax.legend(fontsize=7)
    ax.set_title(f"diffusion maps, spread ratio FNA/LA = {res.measured[f'dm_spread_ratio_d{d}']:.2f}")
    _caption(fig, f"Synthetic Fig. 5b: n = {res.parameters['dm_n']} sinusoidal-sequence tokens in R^{d}, "
                  f"kappa = sqrt(d)/(2^(1/d)-1) sqrt(eps) (alpha=1.2), sqrt(d eps) (alpha=2, not stated in the paper), "
                  f"eps = {res.parameters['dm_eps']:g}, tau = 1 (not stated), psi normalised by pi.")
    return save(fig, out_dir, "fna-5b", formats)


def fig_fna5c(out_dir, *, formats=("png",)):
    """Synthetic Fig. 5c: the shortest path between one token pair for FNA, LA and DP."""
    res = _multiscale()
    plt = pyplot()
    src, dst = (int(v) for v in np.asarray(res.arrays["example_pair_paper"]))
    fig, ax = plt.subplots(figsize=(6.0, 2.8))
    for row, m in enumerate(("fna", "local", "dp")):
        nodes = np.asarray(res.arrays[f"example_path_paper_{m}"], dtype=int)
        color, label = METHOD_STYLE[m]
        ax.plot(nodes, np.full(nodes.size, row), "-o", color=color)
        ax.annotate(f"{nodes.size - 1} hop{'s' if nodes.size != 2 else ''}", (nodes[-1], row), xytext=(6, 0),
                    textcoords="offset points", va="center", fontsize=8)
    ax.set_yticks([0, 1, 2], [METHOD_STYLE[m][1] for m in ("fna", "local", "dp")])
    ax.set_ylim(-0.5, 2.5)
    ax.set_xlabel("token position on the path")
    ax.set_title(f"shortest path {src} -> {dst} (weights 1/A_ij)")
    data, d, n = (str(v) for v in np.asarray(res.arrays["example_tokens"]))
    _caption(fig, f"Synthetic Fig. 5c: {data} tokens, d = {d}, n = {n}, paper kappa; the pair with the most DP hops.")
    return save(fig, out_dir, "fna-5c", formats)


def fig_fna5d(out_dir, *, formats=("png",)):
    """Synthetic Fig. 5d: the hop-count matrix of every token pair for FNA, LA and DP."""
    res = _multiscale()
    plt = pyplot()
    mats = {m: np.asarray(res.arrays[f"example_hops_paper_{m}"], dtype=float) for m in ("fna", "local", "dp")}
    vmax = max(v.max() for v in mats.values())
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.6))
    for ax, (m, h) in zip(axes, mats.items()):
        im = ax.imshow(h, vmin=0, vmax=vmax, cmap="viridis")
        ax.set_title(f"{METHOD_STYLE[m][1]}: max {int(h.max())} hops")
        ax.set_xlabel("key token j")
        ax.set_ylabel("query token i")
        ax.grid(False)
    data, d, n = (str(v) for v in np.asarray(res.arrays["example_tokens"]))
    _caption(fig, f"Synthetic Fig. 5d: {data} tokens, d = {d}, n = {n}, paper kappa, one token set.")
    fig.colorbar(im, ax=axes, shrink=0.8, label="hops on the shortest path")
    return save(fig, out_dir, "fna-5d", formats)


def fig_fna5e(out_dir, *, formats=("png",)):
    """Synthetic Fig. 5e: mean hop count vs n (error bars 0.2 sd, as in the paper), two protocols."""
    res = _multiscale(**FIG5E_RUN)
    plt = pyplot()
    sizes = np.asarray(res.arrays["sizes"], dtype=float)
    data, d = res.parameters["datasets"][-1], res.parameters["dims"][0]
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.2), sharey=True)
    for ax, protocol in zip(axes, ("paper", "equal")):
        for m in ("fna", "local", "dp"):
            v = np.asarray(res.arrays[f"hops_vs_n_{protocol}_{m}_{data}_d{d}"], dtype=float)
            color, label = METHOD_STYLE[m]
            ax.errorbar(sizes, v[:, 0], yerr=0.2 * v[:, 1], marker="o", capsize=2, color=color, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("sequence length n")
        ax.set_title(f"{protocol} kappa")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("mean hops per shortest path")
    _caption(fig, f"Synthetic Fig. 5e: {data} tokens, d = {d}, {res.parameters['draws']} token sets per n, error "
                  "bars 0.2 sd (the paper's scaling). Under equal kappa = sqrt(d) FNA needs the most hops.")
    return save(fig, out_dir, "fna-5e", formats)


CHECK_FIGURES = {"fig2bc": draw_fig2bc, "multiscale": draw_multiscale}

FIGURES = {
    "fna-2b": fig_fna2b,
    "fna-2c": fig_fna2c,
    "fna-5a": fig_fna5a,
    "fna-5b": fig_fna5b,
    "fna-5c": fig_fna5c,
    "fna-5d": fig_fna5d,
    "fna-5e": fig_fna5e,
}
