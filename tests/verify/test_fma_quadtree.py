"""verify.fma_quadtree (FMA-5, 6): the default passes; the printed stencil claim fails; bad input."""

import pytest

from spectral.validation import InputError
from verify import fma_quadtree as check


def test_default_passes_with_the_paper_configurations(default_result):
    res = default_result("fma_quadtree")
    assert res.passed, res.failures
    m = res.measured
    assert m["max_sources_W64_r4"] == 205 <= 9 * 16 + 27 * 3
    assert m["max_sources_W14_r4"] == 151 <= 9 * 16 + 27
    assert m["near_field_max_W24_r8"] == 576  # centre pixels see the whole 24 x 24 image exactly
    assert m["far_stencils_2d_level1"] == 4 and m["far_stencils_1d_level1"] == 2
    assert m["level1_footprint_positions"] == 4


def test_printed_location_independence_fails():
    res = check.run(widths=(32,), cells=(4,), stencil_length=128, claim="printed")
    assert not res.passed
    failed = {r.name for r in res.records if r.passed is False}
    assert "far_stencils_2d_level1" in failed and "far_stencils_1d_level1" in failed
    assert "uncovered_pixels" not in failed  # the cover itself holds


def test_no_stencil_level_is_named():
    res = check.run(widths=(14,), cells=(4,), stencil_length=64)
    assert not res.passed and "no width/cell pair" in " ".join(res.failures)


@pytest.mark.parametrize("kwargs, match", [
    ({"widths": (14, 24), "cells": (4,)}, "cells"), ({"widths": (8,), "cells": (9,)}, "cells"),
    ({"widths": (65,), "cells": (4,)}, "widths"), ({"stencil_length": 8}, "stencil_length"),
    ({"stencil_cell": 64}, "stencil_cell"), ({"claim": "paper"}, "claim"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
