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

import dataclasses

import numpy as np

import spectral
from manifolds.references import fma
from spectral.floor.validation import InputError
from verify.core.calibration import Calibration
from verify.core.check import Check, Context
from verify.core.params import Int, Ints
from verify.core.result import Recorder
from verify.fma_structure import SetDefects, assert_rows, check_cells_per_size, compare_sets

CHECK = Check("fma_quadtree",
              printed="one far stencil per level 'independent of the query's location' (FMA section 2, Swin "
                      "paragraph), which fails: 4 in 2-D, 2 in 1-D",
              host_only="the definition-based sets are (W^2, W^2) level matrices built pixel by pixel in Python "
                        "loops (W <= 64), compared with the toolkit's on the host")

#: No measured tolerances: every assertion is an exact integer identity.
CALIBRATION = Calibration()

#: FMA Fig. 3: (a) W / r = 16 (L = 4) seen from one pixel, (b) W / r = 8 (L = 3), the whole matrix
FIG3A = (32, 2, (12, 19))
FIG3B = (16, 2)


@CHECK.parameters
class Params:
    widths: tuple = Ints((14, 24, 16, 28, 32, 32, 64),
                         "Image widths W (n = W^2 pixels), paired with cells; the default holds the paper's W = 14, "
                         "r = 4 (224^2, r does not divide W) and W = 24, r = 8 (384^2)", low=1, high=64,
                         unit="pixels")
    cells: tuple = Ints((4, 8, 2, 4, 2, 8, 4), "Base cell sides r, one per width, each at most its W", low=1,
                        high=64, unit="pixels")
    stencil_length: int = Int(256, "Sequence length of the 1-D stencil count", low=16, high=4096, unit="tokens")
    stencil_cell: int = Int(4, "Base cell of the 1-D stencil count, at most stencil_length / 16 (at least 6 groups "
                               "at level 1)", low=1, high=256, unit="tokens")

    def resolve(self):
        """One cell per width, each at most its width; at least 6 level-1 groups in the 1-D stencil count."""
        check_cells_per_size("cells", self.cells, "width", "W", self.widths)
        if self.stencil_cell > self.stencil_length // 16:
            raise InputError(f"stencil_cell must be an integer in [1, {self.stencil_length // 16}], got "
                             f"{self.stencil_cell}")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What fma_quadtree measures (counts are exact integers)."""

    #: the definition-based quadtree sets of the (widths, cells) grid against spectral.fma_levels_2d / fma_groups_2d
    sets: SetDefects
    #: grid points whose toolkit source counts differ from the reference's
    source_count_mismatches: int
    #: max over the grid of max sources - (9 r^2 + 27 (L - 1))
    max_source_excess: int
    #: per (W, r): the most sources of a pixel and the largest near field
    max_sources: dict[tuple[int, int], int]
    near_field_max: dict[tuple[int, int], int]
    #: distinct near stencils of interior cells (r | W)
    near_stencils_interior: int
    #: distinct (extent x, extent y, cells) of the level-1 footprints N(i) + F_1(i), and their positions
    level1_footprint_shapes: tuple[tuple[int, int, int], ...]
    level1_footprint_positions: int
    #: per level with >= 6 squares per axis: the number of distinct far stencils, 2-D and 1-D
    far_stencils_2d: dict[int, int]
    far_stencils_1d: dict[int, int]
    #: FMA Fig. 3a (W = 32, r = 2, pixel (12, 19)): its level per pixel, its far squares (level, x0, y0, side)
    fig3a_query_levels: np.ndarray | None
    fig3a_query_squares: np.ndarray | None
    #: FMA Fig. 3b: the level matrix at W = 16, r = 2
    fig3b_levels: np.ndarray | None


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


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """The per-pixel sets against the toolkit's, source counts, near stencils, footprints and far stencils."""
    parts, figures = [], {}
    count_mismatch, worst_excess = 0, -np.inf
    max_sources, near_max = {}, {}
    stencils2d, near_stencils, footprints = {}, set(), set()
    with ctx.timed("sets"):
        for w, r in zip(p.widths, p.cells):
            h = fma.hierarchy_2d(w, r)
            n = w * w
            toolkit_levels = spectral.fma_levels_2d(w, r=r)
            toolkit = spectral.fma_groups_2d(w, r=r)
            if (w, r) == FIG3A[:2]:
                pixel = FIG3A[2][0] * w + FIG3A[2][1]
                figures["fig3a_query_levels"] = toolkit_levels[pixel].reshape(w, w)
                squares = [(lev, (sq // -(-w // g)) * g, (sq % -(-w // g)) * g, g)
                           for lev, g in enumerate(toolkit.group_size, start=1)
                           for sq in toolkit.groups[lev - 1][pixel] if sq >= 0]
                figures["fig3a_query_squares"] = np.array(squares, dtype=np.int64).reshape(-1, 4)
            if (w, r) == FIG3B:
                figures["fig3b_levels"] = toolkit_levels
            defects, ref_far = compare_sets(h, toolkit_levels, toolkit.groups, straddle=False)
            parts.append(defects)
            ref_near = np.count_nonzero(h.level == 0, axis=1)
            src = ref_near + ref_far
            count_mismatch += int(not np.array_equal(toolkit.sources(), src))
            worst_excess = max(worst_excess, int(src.max()) - (9 * r * r + 27 * max(h.depth - 1, 0)))
            max_sources[(w, r)] = int(src.max())
            near_max[(w, r)] = int(ref_near.max())
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
    with ctx.timed("stencils_1d"):
        h1 = fma.hierarchy_1d(p.stencil_length, p.stencil_cell)
        stencils1d = {lev: len(found) for lev, (m, found) in _far_stencils(h1, p.stencil_length, 1).items()
                      if m >= 6}
    return Quantities(
        sets=SetDefects.total(parts), source_count_mismatches=count_mismatch, max_source_excess=worst_excess,
        max_sources=max_sources, near_field_max=near_max, near_stencils_interior=len(near_stencils),
        level1_footprint_shapes=tuple(sorted({f[:3] for f in footprints})),
        level1_footprint_positions=len({f[3:] for f in footprints}),
        far_stencils_2d={lev: len(found) for lev, found in sorted(stencils2d.items())},
        far_stencils_1d=dict(sorted(stencils1d.items())),
        fig3a_query_levels=figures.get("fig3a_query_levels"), fig3a_query_squares=figures.get("fig3a_query_squares"),
        fig3b_levels=figures.get("fig3b_levels"))


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Exact cover, tiling and source bounds (FMA-5); near stencil, level-1 footprint, far stencil counts (FMA-6)."""
    for (w, r), value in q.max_sources.items():
        rec.info(f"max_sources_W{w}_r{r}", value)
        rec.info(f"near_field_max_W{w}_r{r}", q.near_field_max[(w, r)])
    s = q.sets
    assert_rows(rec, (
        ("equal", "uncovered_pixels", s.uncovered, 0, "FMA-5 exact: the level-(L-1) window holds the whole image",
         "FMA-5: pixels in no set"),
        ("equal", "pixels_in_two_sets", s.doubled, 0, "FMA-5 exact: each F_l removes what earlier sets took",
         "FMA-5: pixels in more than one set"),
        ("equal", "untiled_far_sets", s.untiled, 0,
         "FMA-5 exact: F_l is a union of aligned (border-cut) squares of side r 2^(l-1)",
         "FMA-5: far sets not tiled exactly by their squares"),
        ("equal", "non_nested_windows", s.non_nested, 0, "FMA-5 exact: per axis, block b_l = floor(b_(l-1) / 2)",
         "FMA-5: a level window misses part of the previous one"),
        ("at_most", "max_squares_per_level", s.max_groups, 27, "FMA-5 exact: 6 x 6 squares minus the inner 3 x 3",
         "FMA-5: more than 27 squares in one level"),
        ("at_most", "max_source_excess", q.max_source_excess, 0,
         "FMA-5 exact: |N(i)| <= 9 r^2 and <= 27 squares per level, so sources <= 9 r^2 + 27 (L - 1)",
         "FMA-5: a pixel has more than 9 r^2 + 27 (L - 1) sources"),
        ("equal", "toolkit_level_mismatches", s.level_mismatches, 0,
         "spectral.fma_levels_2d (max of the two axis levels) vs the per-pixel reference, exact",
         "spectral.fma_levels_2d differs from the definition"),
        ("equal", "toolkit_square_mismatches", s.group_mismatches, 0,
         "spectral.fma_groups_2d (27 offsets per parity pair) vs square inclusion tests, exact",
         "spectral.fma_groups_2d differs from the definition"),
        ("equal", "toolkit_source_count_mismatches", q.source_count_mismatches, 0,
         "source counts two ways, exact integers", "FMA-5: toolkit source counts differ from the reference"),
        # FMA-6
        ("equal", "near_stencils_interior", q.near_stencils_interior, 1,
         "FMA-6 exact: the near field is the 3 x 3 cells around the pixel's cell (interior cells, r | W)",
         "FMA-6: the finest-level stencil is not one centred 3 x 3"),
    ))
    shapes = list(q.level1_footprint_shapes)
    rec.holds("level1_footprint_6x6", shapes == [(6, 6, 36)],
              why="FMA-6 exact: N(i) plus F_1(i) is the level-1 window, 3 x 3 blocks of side 2r = 6 x 6 cells",
              label=f"FMA-6: the level-1 footprint is not a full 6 x 6 cells square (got {shapes})")
    rec.info("level1_footprint_positions", q.level1_footprint_positions)
    printed = p.claim == "printed"
    expected = (1, 1) if printed else (4, 2)
    why = ("the paper's 'independent of the query's location' (Swin paragraph), taken literally" if printed else
           "FMA-6 exact: the level window starts 2 or 3 squares before the query's square by its parity on each "
           "axis, 2^dim forms")
    for lev, count in q.far_stencils_2d.items():
        rec.equal(f"far_stencils_2d_level{lev}", count, expected[0], why=why,
                  label=f"FMA-6: level-{lev} far stencils in 2-D")
    for lev, count in q.far_stencils_1d.items():
        rec.equal(f"far_stencils_1d_level{lev}", count, expected[1], why=why,
                  label=f"FMA-6: level-{lev} far stencils in 1-D")
    if not q.far_stencils_2d:
        rec.holds("stencil_levels_present", False, why="FMA-6 needs a level with >= 6 squares per axis",
                  label="no width/cell pair has a level with 6 squares per axis", hint="add e.g. W = 64, r = 4")
    rec.note("The 6 x 6 level-1 footprint contains the 3 x 3 near window at offset 1 or 2 per axis (by the parity "
             "of the pixel's base cell), so the footprint is 'almost isotropic' but shifted with the query.")
    return ("2-D FMA quadtree sets are a disjoint cover tiled by <= 27 squares per level with <= 9 r^2 + "
            f"27 (L - 1) sources; far stencils take {expected[0]} forms per level in 2-D ({expected[1]} in 1-D)")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
