"""verify.fma_quadtree (FMA-5, 6): the 2-D sets equal the toolkit's; the printed stencil claim fails; bad input.

The measurement runs once at small settings (the paper's W = 14, r = 4 and a W = 24 image with full level-1
stencils); the assertions are held to those quantities, to the printed claim and to altered quantities.
"""

import dataclasses

import numpy as np
from verify import fma_quadtree as check
from verify.fma_structure import SetDefects
from verify.testing import (assert_fails, assert_passes, assert_round_trip, failed_records, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
small = measurement_fixture(CHECK, widths=(14, 24), cells=(4, 4), stencil_length=128)


def test_small_settings_pass_with_the_paper_configuration(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    m = res.measured
    assert m["max_sources_W14_r4"] == 151 <= 9 * 16 + 27
    assert m["near_field_max_W14_r4"] == 144  # 3 x 3 cells of 4 x 4 pixels, cut at the border
    assert m["far_stencils_2d_level1"] == 4 and m["far_stencils_1d_level1"] == 2
    assert m["level1_footprint_positions"] == 4
    assert q.fig3a_query_levels is None and q.fig3b_levels is None  # (32, 2) and (16, 2) not in this grid


def test_printed_location_independence_fails(small):
    p, q = small
    res = assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), {
        f"far_stencils_2d_level{lev}" for lev in q.far_stencils_2d} | {
        f"far_stencils_1d_level{lev}" for lev in q.far_stencils_1d}, only=True)
    assert {"far_stencils_2d_level1", "far_stencils_1d_level1"} <= failed_records(res)  # the cover itself holds


def test_no_stencil_level_is_named():
    p, q = measured(CHECK, widths=(14,), cells=(4,), stencil_length=64)
    res = CHECK.assess(q, p)
    assert not res.passed and "no width/cell pair" in " ".join(res.failures)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("sets", "uncovered"): 1}, "uncovered_pixels"),
    ({("sets", "doubled"): 1}, "pixels_in_two_sets"),
    ({("sets", "untiled"): 1}, "untiled_far_sets"),
    ({("sets", "non_nested"): 1}, "non_nested_windows"),
    ({("sets", "max_groups"): 28}, "max_squares_per_level"),
    ({"max_source_excess": 1}, "max_source_excess"),
    ({("sets", "level_mismatches"): 1}, "toolkit_level_mismatches"),
    ({("sets", "group_mismatches"): 1}, "toolkit_square_mismatches"),
    ({"source_count_mismatches": 1}, "toolkit_source_count_mismatches"),
    ({"near_stencils_interior": 2}, "near_stencils_interior"),
    ({"level1_footprint_shapes": ((6, 6, 36), (5, 6, 30))}, "level1_footprint_6x6"),
    ({"far_stencils_2d": {1: 1}}, "far_stencils_2d_level1"),
    ({"far_stencils_1d": {1: 1}}, "far_stencils_1d_level1"),
    ({"far_stencils_2d": {}}, "stencil_levels_present"),
])


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert type(back.sets) is SetDefects and back.sets == q.sets and back.sets.straddling is None
    assert back.max_sources == q.max_sources and back.far_stencils_2d == q.far_stencils_2d
    assert back.level1_footprint_shapes == ((6, 6, 36),)


test_bad_input = refusals(check.run, [
    ({"widths": (14, 24), "cells": (4,)}, "cells"), ({"widths": (8,), "cells": (9,)}, "cells"),
    ({"widths": (65,), "cells": (4,)}, "widths"), ({"stencil_length": 8}, "stencil_length"),
    ({"stencil_cell": 64}, "stencil_cell"), ({"claim": "paper"}, "claim"),
])


def test_shares_the_set_comparison_with_fma_structure():
    from manifolds.references.fma import hierarchy_2d
    from spectral import fma_groups_2d, fma_levels_2d
    from verify.fma_structure import compare_sets

    h = hierarchy_2d(6, 2)
    defects, far = compare_sets(h, fma_levels_2d(6, r=2), fma_groups_2d(6, r=2).groups, straddle=False)
    assert defects == SetDefects(0, 0, 0, 0, max_groups=defects.max_groups, level_mismatches=0, group_mismatches=0)
    assert np.array_equal(np.count_nonzero(h.level == 0, axis=1) + far, fma_groups_2d(6, r=2).sources())
