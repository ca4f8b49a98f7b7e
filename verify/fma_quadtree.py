"""FMA in 2-D: the quadtree sets cover the image, are tiled by squares, and their stencils.

FMA paper, "FMA in 2D": a ``W x W`` image flattened row-major (pixel ``(x, y)`` = token ``x W + y``),
near field ``N(i)`` = the 3 x 3 base cells of side ``r`` around the pixel's cell, far field
``F_l(i)`` = the 3 x 3 window of blocks of side ``r 2^l`` minus everything assigned before, tiled by
squares of side ``r 2^(l-1)`` (cut at the border when they do not divide ``W``). The sets are built
per pixel from these definitions (:func:`manifolds.references.fma.hierarchy_2d`) and compared with
:func:`spectral.fma_levels_2d` / :func:`spectral.fma_groups_2d`.

* FMA-5: disjoint cover, exact tiling, at most 27 squares per level, sources
  ``<= 9 r^2 + 27 (L - 1)``, including ``W = 14, r = 4`` (ViT-B/16 at 224^2, ``r`` does not divide
  ``W``) and ``W = 24, r = 8`` (384^2).
* FMA-6: the Swin paragraph says FMA2D has "an isotropic 3 x 3 stencil at the finest level and an
  almost isotropic 6 x 6 footprint at the first coarse tier, independent of the query's location".
  The 3 x 3 near stencil and the 6 x 6 level-1 footprint hold; but the far stencil (the offsets of the
  squares of ``F_l(i)`` from the pixel's own square) depends on the parity of the pixel's square
  index on each axis: 4 distinct stencils per level in 2-D (2 in 1-D), not one.
"""

from __future__ import annotations

import numpy as np

from spectral.validation import InputError, check_int, check_ints, check_option
from verify.core.check import Check
from verify.core.result import Recorder

CHECK = Check("fma_quadtree", claims=("FMA-5", "FMA-6"))

#: FMA Fig. 3: (a) W / r = 16 (L = 4) seen from one pixel, (b) W / r = 8 (L = 3), the whole matrix
FIG3A = (32, 2, (12, 19))
FIG3B = (16, 2)


def _far_stencils(h, side, dim):
    """Per level: the distinct offset sets (square minus own square) of queries with a full stencil."""
    full = 27 if dim == 2 else 3
    out = {}
    coords = np.divmod(np.arange(h.n), side) if dim == 2 else (np.arange(h.n),)
    for lev in range(1, h.depth):
        g = h.r * 2 ** (lev - 1)
        m = -(-side // g)
        found = set()
        for i in range(h.n):
            squares = h.groups[lev - 1][i]
            if len(squares) != full:
                continue
            own = tuple(int(c[i]) // g for c in coords)
            cells = [divmod(s, m) if dim == 2 else (s,) for s in squares]
            found.add(frozenset(tuple(a - b for a, b in zip(cell, own)) for cell in cells))
        out[lev] = (m, found)
    return out


@CHECK.define
def run(*, widths=(14, 24, 16, 28, 32, 32, 64), cells=(4, 8, 2, 4, 2, 8, 4), stencil_length=256, stencil_cell=4,
        claim="corrected", seed=0, device="cpu"):
    """Quadtree cover, tiling and source counts of 2-D FMA, and its far-field stencils.

    Parameters
    ----------
    widths : tuple of int
        Image widths W (n = W^2 pixels), each in [1, 64], paired with ``cells``; the default holds
        the paper's W = 14, r = 4 (224^2, r does not divide W) and W = 24, r = 8 (384^2).
    cells : tuple of int
        Base cell sides r, one per width, each in [1, W].
    stencil_length : int
        Sequence length of the 1-D stencil count, in [16, 4096].
    stencil_cell : int
        Base cell of the 1-D stencil count, in [1, stencil_length / 16] (at least 6 groups at level 1).
    claim : {"corrected", "printed"}
        "corrected": the far stencil takes 2^dim forms per level (4 in 2-D, 2 in 1-D), by the parity of
        the query's square on each axis. "printed": one stencil "independent of the query's location"
        (FMA section 2, Swin paragraph); fails.
    seed : int
        Unused (the check is deterministic); recorded for the contract.
    device : {"cpu"}
        Array device; this check runs on the host only.

    Returns
    -------
    CheckResult
        Passes when the per-pixel sets built from the definitions are a disjoint cover tiled by at
        most 27 squares per level, equal the toolkit's, obey 9 r^2 + 27 (L - 1), and the stencil
        counts match the claim variant.
    """
    from spectral import fma_groups_2d, fma_levels_2d
    from manifolds.references.fma import hierarchy_1d, hierarchy_2d

    widths = check_ints("widths", widths, low=1, high=64)
    cells = check_ints("cells", cells, low=1, high=64)
    if len(cells) != len(widths):
        raise InputError(f"cells must hold one r per width ({len(widths)}), got {len(cells)}")
    for w, r in zip(widths, cells):
        if r > w:
            raise InputError(f"cells must be in [1, W]: r = {r} > W = {w}")
    stencil_length = check_int("stencil_length", stencil_length, low=16, high=4096)
    stencil_cell = check_int("stencil_cell", stencil_cell, low=1, high=stencil_length // 16)
    check_option("claim", claim, ("corrected", "printed"))

    rec = Recorder()
    uncovered = doubled = untiled = non_nested = level_mismatch = group_mismatch = count_mismatch = 0
    max_squares, worst_excess = 0, -np.inf
    stencils2d, near_stencils, footprints = {}, set(), set()
    with rec.timed("sets"):
        for w, r in zip(widths, cells):
            h = hierarchy_2d(w, r)
            n = w * w
            uncovered += int(np.count_nonzero(h.level == -1))
            doubled += int(np.count_nonzero(h.level == -2))
            untiled += int(np.count_nonzero(~h.tiled))
            non_nested += int(np.count_nonzero(~h.nested))
            toolkit_levels = fma_levels_2d(w, r=r)
            level_mismatch += int(not np.array_equal(toolkit_levels, h.level))
            toolkit = fma_groups_2d(w, r=r)
            if (w, r) == FIG3A[:2]:
                pixel = FIG3A[2][0] * w + FIG3A[2][1]
                rec.array("fig3a_query_levels", toolkit_levels[pixel].reshape(w, w))
                squares = [(lev, (sq // -(-w // g)) * g, (sq % -(-w // g)) * g, g)
                           for lev, g in enumerate(toolkit.group_size, start=1)
                           for sq in toolkit.groups[lev - 1][pixel] if sq >= 0]
                rec.array("fig3a_query_squares", np.array(squares, dtype=np.int64).reshape(-1, 4))
            if (w, r) == FIG3B:
                rec.array("fig3b_levels", toolkit_levels)
            ref_far = np.zeros(n, dtype=np.int64)
            for lev in range(1, h.depth):
                for i in range(n):
                    mine = h.groups[lev - 1][i]
                    max_squares = max(max_squares, len(mine))
                    ref_far[i] += len(mine)
                    got = sorted(int(x) for x in toolkit.groups[lev - 1][i] if x >= 0)
                    group_mismatch += int(got != mine)
            ref_near = np.count_nonzero(h.level == 0, axis=1)
            count_mismatch += int(not np.array_equal(toolkit.sources(), ref_near + ref_far))
            src = ref_near + ref_far
            worst_excess = max(worst_excess, int(src.max()) - (9 * r * r + 27 * max(h.depth - 1, 0)))
            rec.info(f"max_sources_W{w}_r{r}", int(src.max()))
            rec.info(f"near_field_max_W{w}_r{r}", int(ref_near.max()))
            # FMA-6 (2-D): stencils of this image
            x, y = np.divmod(np.arange(n), w)
            mcell = -(-w // r)
            for i in range(n):
                cx, cy = x[i] // r, y[i] // r
                if 1 <= cx <= mcell - 2 and 1 <= cy <= mcell - 2 and w % r == 0:
                    near = np.flatnonzero(h.level[i] == 0)
                    near_stencils.add(frozenset(zip((x[near] // r - cx).tolist(), (y[near] // r - cy).tolist())))
                if h.depth >= 2 and len(h.groups[0][i]) == 27 and w % (2 * r) == 0:
                    foot = np.flatnonzero(h.level[i] <= 1)
                    fx, fy = x[foot] // r - cx, y[foot] // r - cy
                    footprints.add((int(fx.max() - fx.min() + 1), int(fy.max() - fy.min() + 1),
                                    len(foot) // (r * r), int(-fx.min()), int(-fy.min())))
            for lev, (m, found) in _far_stencils(h, w, 2).items():
                if m >= 6:
                    stencils2d.setdefault(lev, set()).update(found)
    rec.equal("uncovered_pixels", uncovered, 0, why="FMA-5 exact: the level-(L-1) window holds the whole image",
              label="FMA-5: pixels in no set")
    rec.equal("pixels_in_two_sets", doubled, 0, why="FMA-5 exact: each F_l removes what earlier sets took",
              label="FMA-5: pixels in more than one set")
    rec.equal("untiled_far_sets", untiled, 0,
              why="FMA-5 exact: F_l is a union of aligned (border-cut) squares of side r 2^(l-1)",
              label="FMA-5: far sets not tiled exactly by their squares")
    rec.equal("non_nested_windows", non_nested, 0, why="FMA-5 exact: per axis, block b_l = floor(b_(l-1) / 2)",
              label="FMA-5: a level window misses part of the previous one")
    rec.at_most("max_squares_per_level", max_squares, 27, why="FMA-5 exact: 6 x 6 squares minus the inner 3 x 3",
                label="FMA-5: more than 27 squares in one level")
    rec.at_most("max_source_excess", worst_excess, 0,
                why="FMA-5 exact: |N(i)| <= 9 r^2 and <= 27 squares per level, so sources <= 9 r^2 + 27 (L - 1)",
                label="FMA-5: a pixel has more than 9 r^2 + 27 (L - 1) sources")
    rec.equal("toolkit_level_mismatches", level_mismatch, 0,
              why="spectral.fma_levels_2d (max of the two axis levels) vs the per-pixel reference, exact",
              label="spectral.fma_levels_2d differs from the definition")
    rec.equal("toolkit_square_mismatches", group_mismatch, 0,
              why="spectral.fma_groups_2d (27 offsets per parity pair) vs square inclusion tests, exact",
              label="spectral.fma_groups_2d differs from the definition")
    rec.equal("toolkit_source_count_mismatches", count_mismatch, 0, why="source counts two ways, exact integers",
              label="FMA-5: toolkit source counts differ from the reference")

    # FMA-6
    rec.equal("near_stencils_interior", len(near_stencils), 1,
              why="FMA-6 exact: the near field is the 3 x 3 cells around the pixel's cell (interior cells, r | W)",
              label="FMA-6: the finest-level stencil is not one centred 3 x 3")
    shapes = sorted({f[:3] for f in footprints})
    rec.holds("level1_footprint_6x6", shapes == [(6, 6, 36)],
              why="FMA-6 exact: N(i) plus F_1(i) is the level-1 window, 3 x 3 blocks of side 2r = 6 x 6 cells",
              label=f"FMA-6: the level-1 footprint is not a full 6 x 6 cells square (got {shapes})")
    rec.info("level1_footprint_positions", len({f[3:] for f in footprints}))
    h1 = hierarchy_1d(stencil_length, stencil_cell)
    stencils1d = {lev: found for lev, (m, found) in _far_stencils(h1, stencil_length, 1).items() if m >= 6}
    expected = {"corrected": (4, 2), "printed": (1, 1)}[claim]
    why = {"corrected": "FMA-6 exact: the level window starts 2 or 3 squares before the query's square by its "
                        "parity on each axis, 2^dim forms",
           "printed": "the paper's 'independent of the query's location' (Swin paragraph), taken literally"}[claim]
    for lev, found in sorted(stencils2d.items()):
        rec.equal(f"far_stencils_2d_level{lev}", len(found), expected[0], why=why,
                  label=f"FMA-6: level-{lev} far stencils in 2-D")
    for lev, found in sorted(stencils1d.items()):
        rec.equal(f"far_stencils_1d_level{lev}", len(found), expected[1], why=why,
                  label=f"FMA-6: level-{lev} far stencils in 1-D")
    if not stencils2d:
        rec.holds("stencil_levels_present", False, why="FMA-6 needs a level with >= 6 squares per axis",
                  label="no width/cell pair has a level with 6 squares per axis", hint="add e.g. W = 64, r = 4")
    rec.note("The 6 x 6 level-1 footprint contains the 3 x 3 near window at offset 1 or 2 per axis (by the parity "
             "of the pixel's base cell), so the footprint is 'almost isotropic' but shifted with the query.")
    return rec.finish("2-D FMA quadtree sets are a disjoint cover tiled by <= 27 squares per level with <= 9 r^2 + "
                      f"27 (L - 1) sources; far stencils take {expected[0]} forms per level in 2-D "
                      f"({expected[1]} in 1-D)")


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
