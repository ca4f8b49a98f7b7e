"""verify.fma_structure (FMA-1, 2, 3, 10): the sets built from the definitions equal the toolkit's; group-length
windows fail; bad input.

The measurement runs once at small settings; the assertions are held to those quantities and to quantities a
wrong hierarchy would give.
"""

import numpy as np
from verify import fma_structure as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"lengths": (64, 100, 24), "cells": (4, 5, 8), "max_exponent": 9, "count_cells": (16,)}
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass_with_the_paper_numbers(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.measured["max_sources_n1024_r64"] == 199  # <= 3r + 3(L-1) = 201
    assert res.record("max_groups_per_level").measured == 3
    assert res.measured["causal_future_influence"] == 0.0
    assert res.measured["fma_linear_causal_future_influence"] > 0  # pooled queries leak (noted)
    assert any("FMA-linear" in note for note in res.notes)
    assert set(q.levels) == {(64, 4), (100, 5), (24, 8)} and q.levels[(64, 4)].shape == (64, 64)


def test_group_length_windows_fail():
    p, q = measured(CHECK, **{**SMALL, "window": "group-length"})
    res = assert_fails(CHECK, q, p, {"uncovered_keys", "untiled_far_sets", "toolkit_level_mismatches"})
    assert any("FMA-1" in f for f in res.failures)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("sets", "uncovered"): 1}, "uncovered_keys"),
    ({("sets", "doubled"): 2}, "keys_in_two_sets"),
    ({("sets", "untiled"): 1}, "untiled_far_sets"),
    ({("sets", "max_groups"): 4}, "max_groups_per_level"),
    ({("sets", "non_nested"): 1}, "non_nested_windows"),
    ({"python_set_mismatches": 1}, "python_set_mismatches"),
    ({("sets", "level_mismatches"): 1}, "toolkit_level_mismatches"),
    ({("sets", "group_mismatches"): 1}, "toolkit_group_mismatches"),
    ({"source_count_mismatches": 1}, "toolkit_source_count_mismatches"),
    ({("sets", "straddling"): 1}, "straddling_groups"),
    ({"max_source_excess": 1}, "max_source_excess"),
    ({"max_total_over_memory_bound": 1.01}, "max_total_over_memory_bound"),
    ({"max_total_over_memory_bound": float("nan")}, "max_total_over_memory_bound"),
    ({("table6_levels", 64): 5}, "levels_n1024_r64"),
    ({"causal_future_influence": 1e-17}, "causal_future_influence"),
    ({"causal_future_influence": float("nan")}, "causal_future_influence"),
])


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert type(back.sets) is check.SetDefects and back.sets == q.sets
    assert np.array_equal(back.levels[(64, 4)], q.levels[(64, 4)])
    assert np.array_equal(back.max_sources[(16, 4)], q.max_sources[(16, 4)])


test_bad_input = refusals(check.run, [
    ({"lengths": (64, 32), "cells": (4,)}, "cells"), ({"lengths": (8,), "cells": (9,)}, "cells"),
    ({"lengths": (0,), "cells": (1,)}, "lengths"), ({"max_exponent": 7}, "max_exponent"), ({"ranks": ()}, "ranks"),
    ({"window": "groups"}, "window"), ({"count_cells": (0,)}, "count_cells"),
])


def test_cli(capsys):
    assert check.main(["--lengths", "64,100", "--cells", "4,5", "--max-exponent", "9", "--count-cells", "16",
                       "--quiet"]) == 0
    assert check.main(["--lengths", "64", "--cells", "4", "--max-exponent", "9", "--count-cells", "16", "--window",
                       "group-length", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--lengths", "8", "--cells", "9"]) == 2
    assert "cells" in capsys.readouterr().err


def test_a_nan_causal_output_fails(small, inject_nan):
    # fma_attention's output with later tokens replaced (cut 7, joint, p = 2) NaN after a finite per-level
    # difference: Python's max kept 0.0
    p, q = small
    poisoned = inject_nan("spectral.fma_attention", call=5, at=0)
    causal = check._causal(p.seed)  # measure() runs this part last
    assert poisoned == [5]
    assert_fails(CHECK, q, p, "causal_future_influence", only=True, **causal)
