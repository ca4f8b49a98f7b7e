"""Figures of the FMA paper (Fast Multipole Attention) from the ``fma_*`` checks, and their ``--plot`` figures.

* ``fma-1``: one query's view (n = 64, r = 4, query 37): the exact 3r window and the coarse groups,
  shaded by level (FMA Fig. 1), from :mod:`verify.fma_structure`'s level matrix (``quantities.levels``).
* ``fma-2``: the 1-D sparsified attention matrix of levels (n = 64, r = 4, L = 4; Fig. 2).
* ``fma-3a`` / ``fma-3b``: the quadtree seen from one pixel (W = 32, r = 2, W / r = 16, L = 4) and the
  2-D level matrix of the top-left quarter (W = 16, r = 2, W / r = 8, L = 3; Fig. 3), from
  :mod:`verify.fma_quadtree`.
* ``fma-7``: the groups of each level (down-sampling), the near block ``A`` and the far blocks
  ``B^(l)`` of the per-level FMA matrix on random tokens, and their sum (Fig. 7, n = 64, r = 4), from
  :mod:`verify.fma_hmatrix`.
* ``fma-9-left``: the memory-scaling analogue of Fig. 9 (left) as counts of stored attention scores
  (not GB): full ``n^2``, FMA and FMA-linear with r = 64 / 128, p = 4, from :mod:`verify.fma_counts`.

Shading follows the paper: white = near field (exact), darker grey = coarser level. Every array
is a typed field of the ``quantities`` of a check run at its defaults (cached per process); these
functions only draw.
"""

from __future__ import annotations

import functools

import numpy as np

from figures._plotting import caption, pyplot, save
from verify.core.claims import load_check
from verify.fma_quadtree import FIG3A

FIG1_QUERY = 37


@functools.lru_cache(maxsize=None)
def _run(check: str, seed: int = 0):
    return load_check(check).run(seed=seed)


def _level_cmap(depth: int):
    """White for the near field, then greys darkening with the level (as in the paper's figures)."""
    from matplotlib.colors import ListedColormap

    greys = [(1.0, 1.0, 1.0)] + [(g, g, g) for g in np.linspace(0.78, 0.25, max(depth - 1, 1))]
    return ListedColormap(greys[:max(depth, 1)])


def _level_legend(ax, depth, outside=True):
    """Legend of the level shades, outside the axes on the right (it would hide cells otherwise)."""
    from matplotlib.patches import Patch

    cmap = _level_cmap(depth)
    handles = [Patch(facecolor=cmap(lev), edgecolor="k", lw=0.5,
                     label="near field (exact)" if lev == 0 else f"level {lev}") for lev in range(depth)]
    if outside:
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), framealpha=0.9)
    else:
        ax.legend(handles=handles, fontsize=7, loc="upper right", framealpha=0.9)


def _matrix_image(ax, levels, title):
    depth = int(levels.max()) + 1
    ax.imshow(levels, cmap=_level_cmap(depth), vmin=-0.5, vmax=depth - 0.5, interpolation="nearest")
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    ax.set_title(title, fontsize=9)
    ax.grid(False)
    return depth


# ------------------------------------------------------------------------------ paper figures
def fig_fma1(out_dir, *, formats=("png",)):
    """FMA Fig. 1: what query 37 of n = 64 (r = 4) sees: the 3r exact window and coarse groups."""
    from matplotlib.patches import Rectangle

    levels = _run("fma_structure").quantities.levels[(64, 4)]
    row = levels[FIG1_QUERY]
    depth = int(levels.max()) + 1
    cmap = _level_cmap(depth)
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(8.0, 2.6), gridspec_kw={"height_ratios": (1, 1)})
    top, bottom = axes
    for ax in axes:
        ax.set_xlim(-0.5, 64.5)
        ax.set_ylim(0, 1)
        ax.set_yticks([])
        ax.grid(False)
    for j in range(64):
        top.add_patch(Rectangle((j, 0.1), 1, 0.8, facecolor="white", edgecolor="0.4", lw=0.4))
    top.add_patch(Rectangle((FIG1_QUERY, 0.1), 1, 0.8, facecolor="tab:red", edgecolor="k", lw=0.8))
    top.set_title(f"full attention: query i = {FIG1_QUERY} interacts with all 64 tokens", fontsize=9)
    near = np.flatnonzero(row == 0)
    for j in near:
        bottom.add_patch(Rectangle((j, 0.1), 1, 0.8, facecolor="white", edgecolor="0.4", lw=0.4))
    for lev in range(1, depth):
        g = 4 * 2 ** (lev - 1)
        cols = np.flatnonzero(row == lev)
        for start in np.unique(cols // g) * g:  # one box per group of the level
            bottom.add_patch(Rectangle((start, 0.1), g, 0.8, facecolor=cmap(lev), edgecolor="k", lw=0.9))
    bottom.add_patch(Rectangle((FIG1_QUERY, 0.1), 1, 0.8, facecolor="tab:red", edgecolor="k", lw=0.8))
    bottom.set_title("FMA: exact 3r window (white) and one interaction per group (grey, darker = coarser)", fontsize=9)
    bottom.set_xlabel("token index j")
    _level_legend(bottom, depth)
    caption(fig, f"FMA Fig. 1 (computed): n = 64, r = 4, L = {depth}, query i = {FIG1_QUERY} (red). Level-l groups "
                  "have length r 2^(l-1) = 4, 8, 16; at most 3 per level. From verify.fma_structure "
                  "(spectral.fma_levels, checked against the definitions).")
    return save(fig, out_dir, "fma-1", formats)


def fig_fma2(out_dir, *, formats=("png",)):
    """FMA Fig. 2: the 1-D sparsified attention matrix (levels), n = 64, r = 4."""
    levels = _run("fma_structure").quantities.levels[(64, 4)]
    return _level_matrix_figure(
        levels, "FMA 1-D sparsified attention matrix",
        "FMA Fig. 2 (computed): level l(i, j) of key j for query i, n = 64, r = 4 (L = 4). White: near field, "
        "exact; darker grey: coarser group summaries. From verify.fma_structure.", out_dir, "fma-2", formats,
        figsize=(6.4, 4.9))


def _level_matrix_figure(levels, title, text, out_dir, name, formats, *, figsize=(6.6, 5.3)):
    """One level matrix with its legend and caption, saved as ``name``."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=figsize)
    depth = _matrix_image(ax, np.asarray(levels), title)
    _level_legend(ax, depth)
    caption(fig, text)
    return save(fig, out_dir, name, formats)


def fig_fma3a(out_dir, *, formats=("png",)):
    """FMA Fig. 3a: the quadtree seen from one pixel, W = 32, r = 2 (W / r = 16, L = 4)."""
    from matplotlib.patches import Rectangle

    q = _run("fma_quadtree").quantities
    grid = q.fig3a_query_levels
    squares = q.fig3a_query_squares.reshape(-1, 4)
    w, r, (px, py) = FIG3A
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.6, 5.3))
    depth = int(grid.max()) + 1
    # image rows = x (first index of the row-major flattening), columns = y
    ax.imshow(grid, cmap=_level_cmap(depth), vmin=-0.5, vmax=depth - 0.5, interpolation="nearest",
              extent=(-0.5, w - 0.5, w - 0.5, -0.5))
    for lev, x0, y0, side in squares:
        ax.add_patch(Rectangle((y0 - 0.5, x0 - 0.5), side, side, fill=False, edgecolor="k", lw=0.8))
    near = np.argwhere(grid == 0)
    x0, y0 = near.min(axis=0)
    x1, y1 = near.max(axis=0)
    ax.add_patch(Rectangle((y0 - 0.5, x0 - 0.5), y1 - y0 + 1, x1 - x0 + 1, fill=False, edgecolor="tab:blue", lw=1.4))
    ax.plot([py], [px], "s", color="tab:red", ms=5)
    ax.set_xlabel("y (column)")
    ax.set_ylabel("x (row)")
    ax.set_title("FMA 2-D quadtree seen from one pixel", fontsize=9)
    ax.grid(False)
    _level_legend(ax, depth)
    caption(fig, f"FMA Fig. 3a (computed): W = {w}, r = {r} (W/r = 16, L = {depth}), query pixel (x, y) = "
                  f"({px}, {py}) "
                  "(red). Blue: the exact 3 x 3-cell near field; black: the far squares of side r 2^(l-1) = 2, 4, 8, "
                  "at most 27 per level. From verify.fma_quadtree.")
    return save(fig, out_dir, "fma-3a", formats)


def fig_fma3b(out_dir, *, formats=("png",)):
    """FMA Fig. 3b: 2-D sparsified attention matrix, W = 16, r = 2 (W / r = 8, L = 3), row-major."""
    return _level_matrix_figure(
        _run("fma_quadtree").quantities.fig3b_levels, "FMA 2-D sparsified attention matrix",
        "FMA Fig. 3b (computed): level of pixel j for pixel i on a 16 x 16 image, r = 2 (W/r = 8, L = 3), pixels "
        "flattened row-major (x W + y): the top-left quarter of Fig. 3a's image. From verify.fma_quadtree.",
        out_dir, "fma-3b", formats)


def fig_fma7(out_dir, *, formats=("png",), seed=0):
    """FMA Fig. 7: groups per level, near block A, far blocks B^(l) and their sum (n = 64, r = 4)."""
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle

    res = _run("fma_hmatrix", seed)
    a, levels = res.quantities.fig7_matrix, res.quantities.fig7_levels
    n = a.shape[0]
    depth = int(levels.max()) + 1
    cmap = _level_cmap(depth)
    plt = pyplot()
    fig = plt.figure(figsize=(10.0, 4.6))
    grid = fig.add_gridspec(2, depth + 1, height_ratios=(1.0, 1.6))
    ax0 = fig.add_subplot(grid[0, :])
    for lev in range(depth):
        size = 4 * 2 ** max(lev - 1, 0)
        for start in range(0, n, size):
            ax0.add_patch(Rectangle((start, depth - 1 - lev), size, 0.8, facecolor=cmap(lev), edgecolor="k", lw=0.6))
    ax0.set_xlim(0, n)
    ax0.set_ylim(-0.1, depth)
    ax0.set_yticks([depth - 1 - lev + 0.4 for lev in range(depth)])
    ax0.set_yticklabels(["tokens (near field)"] + [f"level {lev}: groups of {4 * 2 ** (lev - 1)}"
                                                   for lev in range(1, depth)], fontsize=7)
    ax0.set_xlabel("token index")
    ax0.set_title("(a) down-sampling: each level summarises groups of r 2^(l-1) tokens", fontsize=9)
    ax0.grid(False)
    positive = a[a > 0]
    norm = LogNorm(vmin=float(positive.min()), vmax=float(positive.max()))
    for lev in range(depth):
        ax = fig.add_subplot(grid[1, lev])
        block = np.where(levels == lev, a, np.nan)
        ax.imshow(np.ma.masked_invalid(block), cmap="viridis", norm=norm, interpolation="nearest")
        ax.set_title("(b) A (near, exact)" if lev == 0 else f"(b) B^({lev})", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    ax = fig.add_subplot(grid[1, depth])
    im = ax.imshow(a, cmap="viridis", norm=norm, interpolation="nearest")
    ax.set_title("(c) A + sum B^(l)", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="weight")
    caption(fig, f"FMA Fig. 7 (computed): bidirectional FMA with n = {n}, r = 4 ({depth} levels, n/r = 16), per-level "
                  "normalisation as printed, group means, random Gaussian queries and keys (d = "
                  f"{res.parameters['d']}, seed {res.parameters['seed']}); entries of the effective matrix on a log "
                  "scale, blank = not in this block. Far blocks have rank <= p = 1 (FMA-7). From verify.fma_hmatrix.")
    return save(fig, out_dir, "fma-7", formats)


def fig_fma9_left(out_dir, *, formats=("png",)):
    """Synthetic FMA Fig. 9 (left): stored attention scores against n (not measured GB)."""
    res = _run("fma_counts")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 4.2))
    _draw_counts(res.quantities.fig9, ax)
    caption(fig, "Analogue of FMA Fig. 9 (left): number of attention scores stored per head (exact counts, not "
                  "GPU memory): full n^2, FMA (one query per token, p = 4) with its bound 3rn + 3p(L-1)n, and "
                  "FMA-linear (queries pooled per group, the toolkit's reading of FMA-4). From verify.fma_counts.")
    return save(fig, out_dir, "fma-9-left", formats)


def _draw_counts(counts, ax):
    """The stored-score counts of the synthetic Fig. 9-left (``verify.fma_counts.Fig9Counts``)."""
    n = np.asarray(counts.n, dtype=float)
    ax.loglog(n, counts.full, "k-o", ms=3, label="full attention, n^2")
    for r, color in ((64, "tab:blue"), (128, "tab:green")):
        ax.loglog(n, counts.fma[r], "-o", color=color, ms=3, label=f"FMA, r = {r}")
        ax.loglog(n, counts.fma_bound[r], ":", color=color, lw=1, label=f"3rn + 3p(L-1)n, r = {r}")
        ax.loglog(n, counts.fma_linear[r], "--s", color=color, ms=3, label=f"FMA-linear, r = {r}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(n, [str(int(v)) for v in n])
    ax.minorticks_off()
    ax.set_xlabel("sequence length n")
    ax.set_ylabel("stored attention scores")
    ax.set_title("memory scaling as score counts (p = 4)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")


# ------------------------------------------------------------------------------ check figures
def draw_fma_structure(result, ax):
    """Level matrix of the first n <= 128 grid entry (Fig. 2 style)."""
    levels = result.quantities.levels
    if not levels:
        ax.text(0.5, 0.5, "no n <= 128 in this run", ha="center", va="center", transform=ax.transAxes)
        return
    n, r = (64, 4) if (64, 4) in levels else min(levels)
    depth = _matrix_image(ax, levels[(n, r)], f"{result.check}: {result.verdict} (levels_n{n}_r{r})")
    _level_legend(ax, depth)


def draw_fma_quadtree(result, ax):
    """The 2-D level matrix (W = 16, r = 2) when the run has it, else the far-stencil counts."""
    q = result.quantities
    if q.fig3b_levels is not None:
        depth = _matrix_image(ax, q.fig3b_levels, f"{result.check}: {result.verdict}")
        _level_legend(ax, depth)
        return
    counts = {**{f"far_stencils_2d_level{lev}": c for lev, c in q.far_stencils_2d.items()},
              **{f"far_stencils_1d_level{lev}": c for lev, c in q.far_stencils_1d.items()}}
    names = list(counts)
    ax.bar(range(len(names)), list(counts.values()))
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=60, fontsize=6)
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def draw_fma_counts(result, ax):
    _draw_counts(result.quantities.fig9, ax)
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def draw_fma_hmatrix(result, ax):
    from matplotlib.colors import LogNorm

    a = result.quantities.fig7_matrix
    im = ax.imshow(a, cmap="viridis", norm=LogNorm(vmin=float(a[a > 0].min()), vmax=float(a.max())),
                   interpolation="nearest")
    ax.figure.colorbar(im, ax=ax, label="weight")
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    ax.set_title(f"{result.check}: {result.verdict} (per-level FMA matrix, n = 64, r = 4)", fontsize=9)
    ax.grid(False)


def draw_fma_contract(result, ax):
    rows = result.quantities.row_sums_v_ones
    params = result.parameters
    ax.plot(rows, lw=1, label=f"output with V = 1 ({params['implementation']}, {params['claim']})")
    ax.axhline(1.0, color="k", ls="--", lw=0.8, label="softmax contract: 1")
    ax.set_xlabel("token i")
    ax.set_ylabel("output row")
    ax.legend(fontsize=7, loc="best")
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


def draw_fma_lowrank(result, ax):
    rank = result.quantities.eps_rank
    sizes = sorted(int(s) for s in result.parameters["block_sizes"])
    for kind, color in (("smooth", "tab:blue"), ("mix", "tab:orange"), ("iid", "tab:red")):
        ax.plot(sizes, [rank[(kind, s, 1e-6)] for s in sizes], "-o", color=color, label=f"{kind}, eps 1e-6")
        ax.plot(sizes, [rank[(kind, s, 1e-3)] for s in sizes], "--s", color=color, ms=3, label=f"{kind}, eps 1e-3")
    ax.plot(sizes, sizes, "k:", lw=0.8, label="full rank")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("block size s (gap s)")
    ax.set_ylabel("eps-rank of exp(Q K^T / sqrt d) block")
    ax.legend(fontsize=6, loc="upper left")
    ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)


FIGURES = {"fma-1": fig_fma1, "fma-2": fig_fma2, "fma-3a": fig_fma3a, "fma-3b": fig_fma3b, "fma-7": fig_fma7,
           "fma-9-left": fig_fma9_left}
CHECK_FIGURES = {"fma_structure": draw_fma_structure, "fma_quadtree": draw_fma_quadtree,
                 "fma_counts": draw_fma_counts, "fma_hmatrix": draw_fma_hmatrix, "fma_contract": draw_fma_contract,
                 "fma_lowrank": draw_fma_lowrank}
