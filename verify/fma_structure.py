"""FMA in 1-D: the near/far sets cover [n] disjointly, are tiled by groups, and are causal-compatible.

FMA paper, section 3 "FMA in 1D": ``N(i)`` is the 3-block window of base cells of length ``r``,
``F_l(i)`` the 3-block window of blocks of length ``r 2^l`` minus everything assigned before, and
``G_l(i)`` the groups of length ``r 2^(l-1)`` inside ``F_l(i)``. For every (n, r) of the grid, and
every query ``i``, the sets are built from these definitions with a loop over queries
(:mod:`manifolds.references.fma`; for ``n <= 128`` a second time with Python sets) and compared with the
toolkit's vectorised :func:`spectral.fma_levels` / :func:`spectral.fma_groups`:

* FMA-1: ``N(i), F_1(i), ..., F_{L-1}(i)`` are pairwise disjoint and cover ``[n]``;
* FMA-2: the groups inside ``F_l(i)`` tile it exactly, at most 3 per level, windows nested;
* FMA-3: sources per query ``|N(i)| + p sum_l |G_l(i)| <= 3r + 3p(L-1)`` and total scores
  ``<= 3rn + 3p(L-1)n`` (O(rn + np log(n/r))) for ``n = 2^8 .. 2^max_exponent``; Table 6 depths;
* FMA-10: every far group lies wholly before or wholly after its query, and causal FMA output at
  ``i`` does not change when every token after ``i`` is replaced.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import spectral
from manifolds.references import fma
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration
from verify.core.check import Check, Context
from verify.core.memory import PathNeed
from verify.core.params import Choice, Int, Ints
from verify.core.reduce import worst
from verify.core.result import Recorder

CHECK = Check("fma_structure",
              host_only="the definition-based sets are (n, n) level matrices built query by query in Python "
                        "loops (n <= 8192), compared with the toolkit's on the host")

#: No measured tolerances: every assertion is an exact integer identity or an exact zero.
CALIBRATION = Calibration()

#: window blocks of level l: as printed (r 2^l) or the group length r 2^(l-1) (a mis-reading)
WINDOWS = {"paper": 0, "group-length": 1}
#: FMA Table 6: n = 1024 with r = 16, 32, 64 has 6, 5, 4 levels
TABLE6_LEVELS = {16: 6, 32: 5, 64: 4}


@CHECK.parameters
class Params:
    lengths: tuple = Ints((64, 96, 100, 40, 16, 24, 1024, 1024, 4096),
                          "Sequence lengths n of the exact set comparison, paired with cells (the default includes "
                          "r not dividing n and n / r not a power of two)", low=1, high=8192, unit="tokens")
    cells: tuple = Ints((4, 4, 5, 8, 8, 8, 16, 64, 128), "Base cell sizes r, one per length, each at most its n",
                        low=1, high=256, unit="tokens")
    max_exponent: int = Int(16, "Source counts are checked for n = 2^8 .. 2^max_exponent", low=8, high=20)
    count_cells: tuple = Ints((16, 64, 128), "Base cells r of the source counts", low=1, high=256, unit="tokens")
    ranks: tuple = Ints((1, 4), "Summary ranks p of the source counts", low=1, high=16)
    window: str = Choice("paper", tuple(WINDOWS),
                         'Block length of the level-l windows in the reference: "paper" is r 2^l as printed; '
                         '"group-length" (r 2^(l-1)) is the mis-reading the notation invites and must fail (the '
                         "top level no longer covers [n])")

    def resolve(self):
        """One base cell per length, each at most its length."""
        check_cells_per_size("cells", self.cells, "length", "n", self.lengths)
        return self


def check_cells_per_size(name: str, cells, what: str, symbol: str, sizes) -> None:
    """The rule between a grid's sizes and its cells: one cell per size, each at most its size."""
    if len(cells) != len(sizes):
        raise InputError(f"{name} must hold one r per {what} ({len(sizes)}), got {len(cells)}")
    for size, r in zip(sizes, cells):
        if r > size:
            raise InputError(f"{name} must be in [1, {symbol}]: r = {r} > {symbol} = {size}")


@CHECK.memory
def needs(p: Params) -> dict:
    """The set comparison: per length the reference's (n, n) int8 levels and the toolkit's (n, n) int64 distances.

    tracemalloc peaks 18.9 / 73.6 MiB at lengths (1024,) / (2048,) (r = 16; 75.7 MiB at r = 1) fit 18.2
    bytes per pair (n^2 exactly); 20 bytes leave a margin.
    """
    longest = max(p.lengths)
    return {"dense": PathNeed(lambda m: (8 << 20) + 20 * m * m, longest, "--lengths", 1,
                              f"the (n, n) level matrices at --lengths up to {longest}")}


def _counts_need(p: Params) -> PathNeed:
    """The source counts: per far level the (n, 3) int64 groups of every query, their (n, L - 1) counts.

    Peaks 41.8 / 87.8 / 186.3 MiB at n = 2^16 / 2^17 / 2^18 (r = 1) fit 43.6 bytes per token and far level,
    n (L - 1) (r = 16: 135.0 / 615.2 MiB measured at 2^18 / 2^20, 142.6 / 655 predicted); 48 bytes leave a
    margin. It runs after the set comparison, so it is held to the memory on its own (at the start of the
    measurement: the skeleton holds one need per check without --method).
    """
    r_min = min(p.count_cells)
    return PathNeed(lambda e: (8 << 20) + 48 * 2**e * max(spectral.fma_depth(2**e, r=r_min) - 1, 0), p.max_exponent,
                    "--max-exponent", 8, f"the per-query far groups at n = 2^{p.max_exponent}, r = {r_min}",
                    other="larger --count-cells (fewer levels)")


@dataclasses.dataclass(frozen=True)
class SetDefects:
    """The sets built from the definitions against the toolkit's, summed over a grid (exact integers).

    Shared by fma_structure (1-D) and fma_quadtree (2-D): every count is 0 for a correct hierarchy.
    """

    #: keys (pixels) in no set, and in more than one set
    uncovered: int
    doubled: int
    #: (query, level) far sets not tiled exactly by their groups, and windows missing part of the previous one
    untiled: int
    non_nested: int
    #: the most groups (squares) in one level of one query
    max_groups: int
    #: grid points whose toolkit level matrix differs from the reference
    level_mismatches: int
    #: (query, level) pairs whose toolkit groups differ from the reference
    group_mismatches: int
    #: far groups holding their own query (1-D; None where not counted)
    straddling: int | None = None

    @staticmethod
    def total(parts) -> SetDefects:
        """The defects of a whole grid: counts summed, the largest group count kept."""
        parts = list(parts)
        out = {f.name: sum(getattr(d, f.name) for d in parts) for f in dataclasses.fields(SetDefects)
               if f.name not in ("max_groups", "straddling")}
        straddling = [d.straddling for d in parts]
        return SetDefects(**out, max_groups=max(d.max_groups for d in parts),
                          straddling=None if None in straddling else sum(straddling))


def compare_sets(h, toolkit_levels, toolkit_groups, *, straddle: bool) -> tuple[SetDefects, np.ndarray]:
    """Defects of one definition-based hierarchy ``h`` against the toolkit's levels and groups.

    Returns the defects and, per query, the number of far groups over all levels (the reference count).
    """
    far = np.zeros(h.n, dtype=np.int64)
    max_groups = mismatch = straddling = 0
    for lev in range(1, h.depth):
        members = h.group_members[lev - 1]
        got_level = toolkit_groups[lev - 1] if lev - 1 < len(toolkit_groups) else None
        for i in range(h.n):
            mine = h.groups[lev - 1][i]
            max_groups = max(max_groups, len(mine))
            far[i] += len(mine)
            if straddle:
                straddling += sum(1 for m in mine if members[m][0] <= i <= members[m][-1])
            got = got_level[i] if got_level is not None else ()
            mismatch += int(sorted(int(x) for x in got if x >= 0) != mine)
    defects = SetDefects(
        uncovered=int(np.count_nonzero(h.level == -1)), doubled=int(np.count_nonzero(h.level == -2)),
        untiled=int(np.count_nonzero(~h.tiled)), non_nested=int(np.count_nonzero(~h.nested)), max_groups=max_groups,
        level_mismatches=int(not np.array_equal(toolkit_levels, h.level)), group_mismatches=mismatch,
        straddling=straddling if straddle else None)
    return defects, far


def assert_rows(rec: Recorder, rows) -> None:
    """Exact assertions from rows ``(sense, name, measured, expected or bound, why, label)``."""
    for sense, name, measured, expected, why, label in rows:
        getattr(rec, sense)(name, measured, expected, why=why, label=label)


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What fma_structure measures (counts are exact integers)."""

    #: the definition-based sets of the (lengths, cells) grid against spectral.fma_levels / fma_groups
    sets: SetDefects
    #: (grid point, p) whose toolkit source counts differ from |N(i)| + p sum_l |G_l(i)| of the reference
    source_count_mismatches: int
    #: queries (n <= 128) whose Python-set reference differs from the boolean-row reference
    python_set_mismatches: int
    #: spectral.fma_levels of the grid points with n <= 128, keyed (n, r): FMA Figs. 1 and 2
    levels: dict[tuple[int, int], np.ndarray]
    #: max over r, p, n = 2^8 .. 2^max_exponent of max_i sources - (3r + 3p(L - 1))
    max_source_excess: int
    #: max of total scores / (3rn + 3p(L - 1)n)
    max_total_over_memory_bound: float
    #: min and max of total scores / (n log2 n)
    total_over_n_log2n_min: float
    total_over_n_log2n_max: float
    #: max_i sources per n = 2^8 .. 2^max_exponent, keyed (r, p)
    max_sources: dict[tuple[int, int], np.ndarray]
    max_sources_n1024_r64: int
    #: spectral.fma_depth(1024, r) for the r of FMA Table 6
    table6_levels: dict[int, int]
    #: max |causal output before the cut - the same with later tokens replaced| (pooled queries: _linear)
    causal_future_influence: float
    fma_linear_causal_future_influence: float


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Sets against the definitions, source counts for n = 2^8 .. 2^max_exponent, the causal test."""
    _counts_need(p).require(device=p.device)
    with ctx.timed("sets"):
        sets = _sets(p.lengths, p.cells, p.ranks, WINDOWS[p.window])
    with ctx.timed("counts"):
        counts = _counts(p.count_cells, p.ranks, p.max_exponent)
    with ctx.timed("causal"):
        causal = _causal(p.seed)
    return Quantities(**sets, **counts, **causal)


def _sets(lengths, cells, ranks, shift) -> dict:
    """FMA-1, 2, 10: the sets built from the definitions against the toolkit's, per (n, r) of the grid."""
    parts, levels = [], {}
    count_mismatch = set_mismatch = 0
    for n, r in zip(lengths, cells):
        h = fma.hierarchy_1d(n, r, shift=shift)
        toolkit_levels = spectral.fma_levels(n, r=r)
        if n <= 128:
            levels[(n, r)] = toolkit_levels  # FMA Figs. 1 and 2
        toolkit = spectral.fma_groups(n, r=r)
        defects, far = compare_sets(h, toolkit_levels, toolkit.groups, straddle=True)
        parts.append(defects)
        near = np.count_nonzero(h.level == 0, axis=1)
        for rank in ranks:
            count_mismatch += int(not np.array_equal(toolkit.sources(rank), near + rank * far))
        if n <= 128:  # a second, slower reference: Python sets with loops over every key
            for i in range(n):
                sets = fma.python_sets_1d(n, r, i)
                rows = [set(np.flatnonzero(h.level[i] == lev).tolist()) for lev in range(len(sets))]
                set_mismatch += int(sets != rows)
    return dict(sets=SetDefects.total(parts), source_count_mismatches=count_mismatch,
                python_set_mismatches=set_mismatch, levels=levels)


def _counts(count_cells, ranks, max_exponent) -> dict:
    """FMA-3: source counts of the toolkit's groups for n = 2^8 .. 2^max_exponent; Table 6 depths."""
    worst_excess, worst_total_ratio = -np.inf, 0.0
    per_nlogn, max_sources = [], {}
    for r in count_cells:
        for e in range(8, max_exponent + 1):
            n = 2**e
            if r > n:
                continue
            g = spectral.fma_groups(n, r=r)
            far_levels = max(g.depth - 1, 0)
            for rank in ranks:
                src = g.sources(rank)
                worst_excess = max(worst_excess, int(src.max()) - (3 * r + 3 * rank * far_levels))
                worst_total_ratio = max(worst_total_ratio, int(src.sum()) / (3 * r * n + 3 * rank * far_levels * n))
                per_nlogn.append(int(src.sum()) / (n * e))
                max_sources.setdefault((r, rank), []).append(int(src.max()))
    return dict(max_source_excess=worst_excess, max_total_over_memory_bound=worst_total_ratio,
                total_over_n_log2n_min=min(per_nlogn), total_over_n_log2n_max=max(per_nlogn),
                max_sources={key: np.array(values) for key, values in max_sources.items()},
                max_sources_n1024_r64=int(spectral.fma_groups(1024, r=64).sources().max()),
                table6_levels={r: spectral.fma_depth(1024, r=r) for r in TABLE6_LEVELS})


def _causal(seed) -> dict:
    """FMA-10: causal FMA output up to a cut against the same with every later token replaced."""
    rng = child_rng(seed, "causal")
    n, r, d = 100, 5, 8
    q, k, v = rng.standard_normal((3, n, d))
    influence, leak = 0.0, 0.0
    for cut in (7, 33, 64):
        q2, k2, v2 = q.copy(), k.copy(), v.copy()
        future = child_rng(seed, "future", cut).standard_normal((3, n - cut - 1, d))
        q2[cut + 1:], k2[cut + 1:], v2[cut + 1:] = future
        for norm in ("per-level", "joint"):
            a = spectral.fma_attention(q, k, v, r=r, p=2, normalisation=norm, causal=True)
            b = spectral.fma_attention(q2, k2, v2, r=r, p=2, normalisation=norm, causal=True)
            influence = worst(influence, float(np.max(np.abs(a[:cut + 1] - b[:cut + 1]))))
            a = spectral.fma_attention(q, k, v, r=r, normalisation=norm, causal=True, downsample_queries=True)
            b = spectral.fma_attention(q2, k2, v2, r=r, normalisation=norm, causal=True, downsample_queries=True)
            leak = worst(leak, float(np.max(np.abs(a[:cut + 1] - b[:cut + 1]))))
    return dict(causal_future_influence=influence, fma_linear_causal_future_influence=leak)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Exact cover, tiling, agreement with the toolkit, source bounds, Table 6 depths and causality."""
    grid = ", ".join(f"({n},{r})" for n, r in zip(p.lengths, p.cells))
    s = q.sets
    assert_rows(rec, (
        ("equal", "uncovered_keys", s.uncovered, 0,
         "FMA-1 exact: the top window (3 blocks of r 2^(L-1) >= n/2) holds every key",
         f"FMA-1: keys in no set N(i), F_l(i) on the grid {grid}"),
        ("equal", "keys_in_two_sets", s.doubled, 0, "FMA-1 exact: each F_l removes what earlier sets took",
         "FMA-1: keys in more than one set"),
        ("equal", "untiled_far_sets", s.untiled, 0,
         ("FMA-2 exact: F_l(i) is the level-l window minus the nested level-(l-1) window, a union of aligned "
          "blocks of r 2^(l-1) = the groups"), "FMA-2: far sets not tiled exactly by their groups"),
        ("at_most", "max_groups_per_level", s.max_groups, 3,
         "FMA-2 exact: 6 groups per level window minus the 3 of the previous window",
         "FMA-2: more than 3 groups in one level"),
        ("equal", "non_nested_windows", s.non_nested, 0, "FMA-2 exact: block b_l = floor(b_(l-1) / 2)",
         "FMA-2: a level window misses part of the previous one"),
        ("equal", "python_set_mismatches", q.python_set_mismatches, 0,
         "two definition-based constructions (boolean rows, Python sets) must agree exactly",
         "the Python-set reference disagrees with the boolean-row reference"),
        ("equal", "toolkit_level_mismatches", s.level_mismatches, 0,
         "spectral.fma_levels (per-level block distances) vs the per-query reference, exact integers",
         "spectral.fma_levels differs from the definition"),
        ("equal", "toolkit_group_mismatches", s.group_mismatches, 0,
         "spectral.fma_groups (even/odd offsets (-2,2,3)/(-3,-2,2)) vs inclusion tests, exact",
         "spectral.fma_groups differs from the definition"),
        ("equal", "toolkit_source_count_mismatches", q.source_count_mismatches, 0,
         "|N(i)| + p sum_l |G_l(i)| counted two ways, exact integers",
         "FMA-3: toolkit source counts differ from the reference"),
        ("equal", "straddling_groups", s.straddling, 0,
         "FMA-10 exact: far groups sit at offsets -3, -2, +2, +3 groups from the query's own group",
         "FMA-10: a far group contains its query's position"),
        ("at_most", "max_source_excess", q.max_source_excess, 0,
         "FMA-3 exact: |N(i)| <= 3r and |G_l(i)| <= 3 per level, so max sources <= 3r + 3p(L-1)",
         "FMA-3: a query has more than 3r + 3p(L-1) sources"),
        ("at_most", "max_total_over_memory_bound", q.max_total_over_memory_bound, 1.0,
         "FMA-3 exact: total scores <= n (3r + 3p(L-1)), i.e. O(rn + np log(n/r))",
         "FMA-3: total scores exceed 3rn + 3p(L-1)n"),
    ))
    rec.info("total_over_n_log2n_min", q.total_over_n_log2n_min)
    rec.info("total_over_n_log2n_max", q.total_over_n_log2n_max)
    rec.info("max_sources_n1024_r64", q.max_sources_n1024_r64)
    for r, levels in TABLE6_LEVELS.items():
        rec.equal(f"levels_n1024_r{r}", q.table6_levels[r], levels,
                  why="FMA Table 6 header: r = 16, 32, 64 at n = 1024 have 6, 5, 4 levels (ceil(log2(n/r)))",
                  label=f"FMA-3: L(1024, {r}) differs from Table 6")
    rec.equal("causal_future_influence", q.causal_future_influence, 0.0,
              why="FMA-10 exact: future groups are dropped whole and near keys j > i masked, so their weights "
                  "are exact zeros (n = 100, r = 5, p = 2, both normalisations, three cut points)",
              label="FMA-10: causal FMA output depends on later tokens")
    leak = q.fma_linear_causal_future_influence
    rec.info("fma_linear_causal_future_influence", leak)
    if not leak <= 0:  # a NaN is shown too
        rec.note(f"With query downsampling (FMA-linear, pooled block queries) causal outputs change by up to "
                 f"{leak:.3g} when later tokens change: the pooled query of a block mixes later queries into "
                 "earlier positions. The paper reports autoregressive FMA-linear results without saying how "
                 "queries are pooled.")
    return ("1-D FMA near/far sets are a disjoint cover of [n] tiled by <= 3 groups per level, with "
            "<= 3r + 3p(L-1) sources per query, and no far group straddles its query")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
