"""verify.pde_conservation (PDE-1): row sums and positivity by PDE, axis and boundary; the printed claim fails."""

import pytest

from spectral.validation import InputError
from verify import pde_conservation as check

SMALL = {"sizes": (16, 32), "steps": (1, 4, 20)}


def test_default_passes(default_result):
    res = default_result("pde_conservation")
    assert res.passed, res.failures
    assert res.record("conserving_pairs_mismatched").measured == 0
    assert res.measured["wave_min_entry"] < 0 <= res.measured["diffusion_min_entry"]
    assert res.record("diffusion_conserving_row_sum_deviation").measured <= \
        res.record("diffusion_conserving_row_sum_deviation").tolerance
    for pde in ("diffusion", "wave", "reaction_diffusion", "advection_diffusion"):
        assert res.arrays[f"fig16_rows_{pde}"].shape == (5, 64)


def test_printed_fails_on_sums_and_positivity():
    res = check.run(**SMALL, claim="printed")
    assert not res.passed
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"printed_max_row_sum_deviation", "printed_min_entry"}
    assert "PDE-1 as printed" in res.failures[0]


def test_small_sizes_pass():
    res = check.run(**SMALL)
    assert res.passed, res.failures


@pytest.mark.parametrize("kwargs, match", [
    ({"alpha": 0.3}, "alpha"), ({"c": 0.8}, "c"), ({"beta_advection": 0.3}, "beta_advection"),
    ({"sizes": (4,)}, "sizes"), ({"steps": (0,)}, "steps"), ({"dt": 0.0}, "dt"), ({"claim": "paper"}, "claim"),
    ({"sizes": ()}, "sizes")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
