"""verify.sk_rates (SK-3): bias O(eps), sampling error O(n^-1/2), for both normalisations.

Measured once on S^1 at small settings (the quantile grid for eps, 3 sizes x 4 repeats for n); the assertions
are held to those quantities, to the wrong orders (eps^2, n^-1, n^-1/4), to a generator with a spurious O(1)
error and to errors that stop decaying.
"""

import dataclasses

import numpy as np

from verify import sk_rates as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, assert_same_records, changed_fields,
                            measured, measurement_fixture, refusals)

CHECK = check.CHECK
small = measurement_fixture(CHECK, manifolds=("circle",), sizes=(150, 300, 600), repeats=4)


def test_small_setting_passes_with_orders_one_and_minus_one_half(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    for norm in ("sinkhorn", "softmax"):
        assert abs(res.measured[f"circle_{norm}_eps_order"] - 1) < 0.02
        assert abs(res.measured[f"circle_{norm}_n_order"] + 0.5) < 0.06


def test_wrong_orders_fail(small):
    p, q = small
    names = lambda kind: {f"circle_{norm}_{kind}_order" for norm in ("sinkhorn", "softmax")}  # noqa: E731
    assert_fails(CHECK, q, dataclasses.replace(p, eps_order=2.0), names("eps"), only=True)
    assert_fails(CHECK, q, dataclasses.replace(p, n_order=-1.0), names("n"), only=True)
    assert_fails(CHECK, q, dataclasses.replace(p, n_order=-0.25), names("n"), only=True)


def test_errors_that_stop_decaying_fail(small):
    p, q = small
    eps = q.eps["circle"]
    biased = q.eps_errors["circle", "sinkhorn"] + 0.01  # an O(1) error left at eps -> 0
    assert_fails(CHECK, q, p, "circle_sinkhorn_eps_order",
                 **changed_fields(q, {("eps_errors", ("circle", "sinkhorn")): biased}))
    err = q.n_errors["circle", "softmax"]
    floor = np.maximum(err, err[1].max())  # a sampling error that stops falling at the middle size
    assert_fails(CHECK, q, p, "circle_softmax_n_order",
                 **changed_fields(q, {("n_errors", ("circle", "softmax")): floor}))
    assert eps.size == 4


def test_nan_never_passes(small):
    p, q = small
    bad = q.n_errors["circle", "sinkhorn"].copy()
    bad[1, 2] = np.nan
    assert_fails(CHECK, q, p, "circle_sinkhorn_n_order",
                 **changed_fields(q, {("n_errors", ("circle", "sinkhorn")): bad}))


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    np.testing.assert_array_equal(back.n_errors["circle", "softmax"], q.n_errors["circle", "softmax"])


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"sizes": (100, 50, 200)}, "sizes"), ({"sizes": (10, 20, 40)}, "sizes"), ({"repeats": 1}, "repeats"),
    ({"eps_order": -1.0}, "eps_order"), ({"n_order": 0.5}, "n_order"),
])


def test_computes_in_the_given_namespace(strict_xp):
    p, q = measured(CHECK, manifolds=("circle",), sizes=(60, 120, 240), repeats=2)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert_same_records(CHECK.assess(q, p), got)
