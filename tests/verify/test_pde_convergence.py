"""verify.pde_convergence (PDE-13): PL bounds for GD with the right minimiser; the SGD noise floor."""

import pytest

from spectral.validation import InputError
from verify import pde_convergence as check

FAST = {"sgd_steps": 3000, "chains": 16}


def test_default_passes(default_result):
    res = default_result("pde_convergence")
    assert res.passed, res.failures
    assert res.measured["sgd_floor_measured"] > 1e3 * res.measured["eq16_bound_at_end"]


def test_printed_fails():
    res = check.run(**FAST, claim="printed")
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"printed_eq15_min_norm_max_ratio", "printed_sgd_eq16_ratio_at_end"}


def test_floor_tracks_the_step_size():
    # a larger batch lowers the floor; the exact stationary prediction follows it
    res = check.run(sgd_steps=3001, chains=16, batch=40)  # an odd length of the averaging window too
    assert res.passed, res.failures
    assert res.measured["sgd_floor_predicted"] < 0.5 * check.run(**FAST).measured["sgd_floor_predicted"]


@pytest.mark.parametrize("kwargs, match", [({"rank": 50}, "rank"), ({"noise": 0.0}, "noise"), ({"batch": 0}, "batch"),
                                           ({"chains": 2}, "chains"), ({"n": 10}, "n")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
