"""Figures of the NEURAL paper (Neural Attention): Fig. 1 and Figs. 2/3, and the checks' ``--plot`` figures.

* ``neural-1`` (Fig. 1): the dot-product paraboloid ``z = x^2 + y^2`` next to the ReLU-MLP score surface
  ``z = w_a . ReLU(W_h [x, y, x, y] + b_h) + b_a`` on ``[-2, 2]^2`` (h = 16, seeded random weights; the
  paper states neither h nor the weights), with the crease lines ``a_m x + c_m y + b_m = 0`` drawn on the
  surface. Data: :func:`verify.neural_geometry.run` at its defaults.
* ``neural-2`` (Figs. 2/3, with the scores of Figs. 7/8): the toy ``n = 3``, ``d' = 2`` arrays ``Q'``,
  ``K'``, the broadcast tensors, the concatenated tensor ``C[i, j] = [q'_i; k'_j]`` and the resulting
  score matrix ``A`` (shared weights, h = 4, the check's activation, seeded), printed as tables. Data:
  :func:`verify.neural_cost.run` at its defaults.

``CHECK_FIGURES`` draws ``neural_rank`` (singular values by activation), ``neural_geometry`` (the
surface as a map with its creases), ``neural_cost`` (stored floats against n) and
``neural_expressivity`` (residuals per target). The figures do no numerics of their own.
"""

from __future__ import annotations

import functools

import numpy as np

from figures._plotting import caption, pyplot, save
from verify import neural_cost, neural_geometry
from verify.neural_expressivity import TARGETS

__all__ = ["FIGURES", "CHECK_FIGURES", "fig_neural1", "neural1_caption", "fig_neural2", "draw_neural_rank",
           "draw_neural_geometry", "draw_neural_cost", "draw_neural_expressivity"]


@functools.lru_cache(maxsize=4)
def _geometry(seed: int = 0):
    return neural_geometry.run(seed=seed)


@functools.lru_cache(maxsize=4)
def _cost(seed: int = 0):
    return neural_cost.run(seed=seed)


def fig_neural1(out_dir, *, formats=("png",), seed=0):
    """NEURAL Fig. 1: paraboloid (dot product) vs creased ReLU-MLP surface (Neural Attention)."""
    res = _geometry(seed)
    q = res.quantities
    g = np.asarray(q.grid, dtype=float)
    X, Y = np.meshgrid(g, g, indexing="ij")
    plt = pyplot()
    fig = plt.figure(figsize=(9.0, 4.6))
    ax1 = fig.add_subplot(1, 2, 1, projection="3d")
    ax1.plot_surface(X, Y, np.asarray(q.z_dp, dtype=float), cmap="viridis", linewidth=0, antialiased=True,
                     alpha=0.95)
    ax1.set_title("dot product: z = q.k = x^2 + y^2", fontsize=9)
    ax2 = fig.add_subplot(1, 2, 2, projection="3d")
    ax2.plot_surface(X, Y, np.asarray(q.z_na, dtype=float), cmap="viridis", linewidth=0, antialiased=True,
                     alpha=0.85)
    label = "creases a_m x + c_m y + b_m = 0"
    for line in np.asarray(q.cells.creases_xyz, dtype=float) if q.cells is not None else ():
        if np.all(np.isnan(line)):
            continue
        ax2.plot(line[:, 0], line[:, 1], line[:, 2], color="crimson", lw=1.1, label=label)
        label = None
    ax2.set_title("Neural Attention: z = w_a.ReLU(W_h [x,y,x,y] + b_h) + b_a", fontsize=9)
    ax2.legend(fontsize=7, loc="upper left")
    for ax in (ax1, ax2):
        ax.set_xlabel("x = q_1 = k_1", fontsize=8)
        ax.set_ylabel("y = q_2 = k_2", fontsize=8)
        ax.set_zlabel("score z", fontsize=8)
        ax.tick_params(labelsize=7)
    caption(fig, neural1_caption(res))
    return save(fig, out_dir, "neural-1", formats)


def neural1_caption(res) -> str:
    """The caption of NEURAL Fig. 1, every number from the :func:`verify.neural_geometry.run` result it draws.

    The network has h crease lines; only those crossing the square are drawn and cut it into cells,
    so the caption counts both (the check's statement says "the cells of its h crease lines").
    """
    p, cells = res.parameters, res.quantities.cells
    h = p["hidden"]
    text = (f"NEURAL Fig. 1 regenerated: q = k = (x, y) on [-{p['half_width']:g}, {p['half_width']:g}]^2. Right: "
            f"h = {h} hidden units with seeded random weights (seed {p['seed']}; the paper gives neither h nor the "
            f"weights). ")
    if cells is not None:
        crossing = cells.lines_crossing_square
        text += (f"Of its {h} crease lines a_m x + c_m y + b_m = 0, {crossing} cross the square (red); they cut it "
                 f"into {cells.regions_by_sign_patterns} cells (at most 1 + h + C(h, 2) = "
                 f"{res.measured['arrangement_bound']} for h lines in the plane), on each of which the surface is "
                 f"linear. ")
    else:
        text += f"With σ = {p['activation']} the surface is smooth: it has no crease lines. "
    text += f"The dot product is a paraboloid with Hessian 2 I. Check neural_geometry: {res.verdict}"
    failures = res.failures
    return text + (f" ({'; '.join(failures)})." if failures else ".")


def _table(ax, cells, rows, cols, title, color):
    ax.axis("off")
    tab = ax.table(cellText=cells, rowLabels=rows, colLabels=cols, loc="center", cellLoc="center")
    tab.auto_set_font_size(False)
    tab.set_fontsize(7.5)
    tab.scale(1.0, 1.35)
    for (r, c), cell in tab.get_celld().items():
        if r > 0 and c >= 0:
            cell.set_facecolor(color)
    ax.set_title(title, fontsize=8.5)


def fig_neural2(out_dir, *, formats=("png",), seed=0):
    """NEURAL Figs. 2/3 (+7/8): reshape/broadcast/concat of toy Q', K' and the resulting score matrix."""
    res = _cost(seed)
    toy = res.quantities
    q = np.asarray(toy.toy_q, dtype=float)
    k = np.asarray(toy.toy_k, dtype=float)
    C = np.asarray(toy.toy_C, dtype=float)
    A = np.asarray(toy.toy_A, dtype=float)
    n, dp = q.shape
    p = res.parameters
    plt = pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(12.0, 5.2), gridspec_kw={"width_ratios": [0.6, 1.3, 1.7]})
    idx = [str(i + 1) for i in range(n)]
    _table(axes[0, 0], [[f"{v:g}" for v in row] for row in q], [f"q'_{i}" for i in idx],
           [f"c={c + 1}" for c in range(dp)], "Q' (n x d')", "#fde0c5")
    _table(axes[1, 0], [[f"{v:g}" for v in row] for row in k], [f"k'_{j}" for j in idx],
           [f"c={c + 1}" for c in range(dp)], "K' (n x d')", "#cfe3f5")
    bq = [[", ".join(f"{v:g}" for v in C[i, j, :dp]) for j in range(n)] for i in range(n)]
    bk = [[", ".join(f"{v:g}" for v in C[i, j, dp:]) for j in range(n)] for i in range(n)]
    _table(axes[0, 1], bq, [f"i={i}" for i in idx], [f"j={j}" for j in idx],
           "broadcast Q'[i, j, :] = q'_i  (n x 1 x d' -> n x n x d')", "#fde0c5")
    _table(axes[1, 1], bk, [f"i={i}" for i in idx], [f"j={j}" for j in idx],
           "broadcast K'[i, j, :] = k'_j  (1 x n x d' -> n x n x d')", "#cfe3f5")
    cc = [["[" + ", ".join(f"{v:g}" for v in C[i, j]) + "]" for j in range(n)] for i in range(n)]
    _table(axes[0, 2], cc, [f"i={i}" for i in idx], [f"j={j}" for j in idx],
           "C[i, j, :] = [q'_i; k'_j]  (eq. 7, n x n x 2d')", "#e8e1f2")
    _table(axes[1, 2], [[f"{v:.4f}" for v in row] for row in A], [f"i={i}" for i in idx],
           [f"j={j}" for j in idx], f"A[i, j] = w_a.{p['activation']}(W_h C[i, j] + b_h) + b_a", "#e3f1e0")
    caption(fig, f"NEURAL Figs. 2/3 regenerated with numbers: n = {n}, d' = {dp}; q'_i = (i.1, i.2) and "
                  "k'_j = -(j.1, j.2) so that every entry names its row. The broadcast copies q'_i along j and k'_j "
                  "along i; C concatenates them along the last axis (checked entry by entry against a loop). A uses "
                  f"one shared MLP (h = 4, {p['activation']}, seeded weights, seed {p['seed']}); the paper's eq. (8) "
                  "would give every pair its own W_h[i, j], W_a[i, j] (App. B, Figs. 7/8), which contradicts its parameter counts "
                  f"(check neural_cost: {res.verdict}).")
    return save(fig, out_dir, "neural-2", formats)


FIGURES = {"neural-1": fig_neural1, "neural-2": fig_neural2}


# --------------------------------------------------------------------------- check figures (--plot)


def draw_neural_rank(result, ax):
    """sigma_i / sigma_1 of the score matrices by activation (smallest d', largest h), logits and softmax."""
    q = result.quantities
    cases = q.cases  # keyed by (activation, d', h)
    if cases:
        d = min(dd for _, dd, _ in cases)
        h = max(hh for _, dd, hh in cases if dd == d)
        for (act, dd, hh), case in sorted(cases.items()):
            if dd == d and hh == h:
                s = np.asarray(case.ranks.singular, dtype=float)
                ax.semilogy(np.arange(1, s.size + 1), np.maximum(s, 1e-18), lw=1.2, label=f"MLP {act}")
    for ranks, label, style in ((q.logits, "Q K^T", "k--"), (q.softmax, "softmax(Q K^T/sqrt d)", "k:")):
        s = np.asarray(ranks.singular, dtype=float)
        ax.semilogy(np.arange(1, s.size + 1), np.maximum(s, 1e-18), style, lw=1.0, label=label)
    for tol in (1e-6, 1e-10):
        ax.axhline(tol, color="0.6", lw=0.6)
        ax.text(0.99, tol, f"tol {tol:g}", transform=ax.get_yaxis_transform(), ha="right", va="bottom",
                fontsize=6.5, color="0.4")
    ax.set_ylim(1e-18, 2)
    ax.set_xlabel("index i")
    ax.set_ylabel("sigma_i / sigma_1")
    if cases:
        ax.set_title(f"{result.check}: {result.verdict} (MLP: d' = {d}, h = {h})", fontsize=9)
    else:
        ax.set_title(f"{result.check}: {result.verdict}", fontsize=9)
    ax.legend(fontsize=6.5, loc="lower left", ncol=2)


def draw_neural_geometry(result, ax):
    """The Neural Attention surface as a colour map, with its crease lines (ReLU) over the square."""
    q = result.quantities
    g = np.asarray(q.grid, dtype=float)
    im = ax.pcolormesh(g, g, np.asarray(q.z_na, dtype=float).T, shading="auto", cmap="viridis")
    ax.figure.colorbar(im, ax=ax, label="score z")
    if q.cells is not None:
        for line in np.asarray(q.cells.creases_xyz, dtype=float):
            ax.plot(line[:, 0], line[:, 1], color="crimson", lw=0.9)
    ax.set_xlim(g[0], g[-1])
    ax.set_ylim(g[0], g[-1])
    ax.set_aspect("equal")
    ax.set_xlabel("x = q_1 = k_1")
    ax.set_ylabel("y = q_2 = k_2")
    ax.set_title(f"{result.check} ({result.parameters['activation']}): {result.verdict}", fontsize=9)


def draw_neural_cost(result, ax):
    """Stored floats of the score computation against n: dot product, concatenated and factored forms."""
    q = result.quantities
    n = np.asarray(q.count_sizes, dtype=float)
    ax.loglog(n, np.asarray(q.floats_dp_curve, dtype=float), "k-", label="dot product (n^2)")
    curves = [("concat", d, c) for d, c in q.floats_concat_curve.items()]
    curves += [("factored", d, c) for d, c in q.floats_factored_curve.items()]
    for form, d, curve in sorted(curves, key=lambda t: (t[0], str(t[1]))):
        ax.loglog(n, np.asarray(curve, dtype=float), "--" if form == "factored" else "-",
                  label=f"{form} NA, d'={d} (count)")
    big = max(q.floats_concat_curve)
    sizes = sorted({size for size, d in q.peaks.concat if d == big})
    for form, peaks in (("concat", q.peaks.concat), ("factored", q.peaks.factored)):
        ax.loglog(sizes, [peaks[size, big] / 8 for size in sizes], "o" if form == "concat" else "s", mfc="none",
                  label=f"{form}, d'={big}: measured peak / 8 bytes")
    ticks = sorted(set(np.concatenate([np.asarray(sizes, dtype=float), n]).tolist()))
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{int(t)}" for t in ticks], fontsize=7)
    ax.minorticks_off()
    ax.set_xlabel("sequence length n")
    ax.set_ylabel("floats stored (one head)")
    ax.legend(fontsize=6.5)
    ax.set_title(f"{result.check} (h = {result.parameters['hidden']}): {result.verdict}", fontsize=9)


def draw_neural_expressivity(result, ax):
    """Doubly-centred residuals per target: bilinear fit, MLP fit and MLP on a held-out grid."""
    q = result.quantities
    names = list(q.bilinear_residual)
    x = np.arange(len(names))
    for off, values, label in ((-0.27, q.bilinear_residual, "bilinear q^T M k"), (0.0, q.mlp_residual, "MLP fit"),
                               (0.27, q.mlp_held_out_residual, "MLP, held-out grid")):
        ax.bar(x + off, [values[name] for name in names], width=0.26, label=label)
    ax.axhline(0.05, color="0.4", lw=0.7, ls=":")
    ax.text(len(names) - 0.5, 0.05, "5%", ha="right", va="bottom", fontsize=6.5, color="0.4")
    ax.set_xticks(x)
    ax.set_xticklabels([TARGETS[n][0] if n in TARGETS else n for n in names], fontsize=7)
    ax.set_ylabel("relative residual (doubly centred)")
    ax.legend(fontsize=7)
    ax.set_title(f"{result.check} (h = {result.parameters['hidden']}): {result.verdict}", fontsize=9)


CHECK_FIGURES = {"neural_rank": draw_neural_rank, "neural_geometry": draw_neural_geometry,
                 "neural_cost": draw_neural_cost, "neural_expressivity": draw_neural_expressivity}
