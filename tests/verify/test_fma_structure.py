"""verify.fma_structure (FMA-1, 2, 3, 10): the default passes; group-length windows fail; bad input."""

import pytest

from spectral.validation import InputError
from verify import fma_structure as check


def test_default_passes_with_the_paper_numbers(default_result):
    res = default_result("fma_structure")
    assert res.passed, res.failures
    assert res.measured["max_sources_n1024_r64"] == 199  # <= 3r + 3(L-1) = 201
    assert res.record("max_groups_per_level").measured == 3
    assert res.measured["causal_future_influence"] == 0.0
    assert res.measured["fma_linear_causal_future_influence"] > 0  # pooled queries leak (noted)
    assert any("FMA-linear" in note for note in res.notes)


def test_group_length_windows_fail():
    res = check.run(lengths=(64, 100, 24), cells=(4, 5, 8), max_exponent=10, window="group-length")
    assert not res.passed
    failed = {r.name for r in res.records if r.passed is False}
    assert {"uncovered_keys", "untiled_far_sets", "toolkit_level_mismatches"} <= failed
    assert any("FMA-1" in f for f in res.failures)


def test_small_grid_passes():
    res = check.run(lengths=(16, 17, 33, 7), cells=(16, 16, 16, 3), max_exponent=9, count_cells=(4,), ranks=(2,))
    assert res.passed, res.failures


@pytest.mark.parametrize("kwargs, match", [
    ({"lengths": (64, 32), "cells": (4,)}, "cells"), ({"lengths": (8,), "cells": (9,)}, "cells"),
    ({"lengths": (0,), "cells": (1,)}, "lengths"), ({"max_exponent": 7}, "max_exponent"),
    ({"ranks": ()}, "ranks"), ({"window": "groups"}, "window"), ({"count_cells": (0,)}, "count_cells"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)


def test_cli(capsys):
    assert check.main(["--lengths", "64,100", "--cells", "4,5", "--max-exponent", "9", "--quiet"]) == 0
    assert check.main(["--lengths", "64", "--cells", "4", "--max-exponent", "9", "--window", "group-length",
                       "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--lengths", "8", "--cells", "9"]) == 2
    assert "cells" in capsys.readouterr().err
