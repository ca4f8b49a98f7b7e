"""verify.sk_convergence (SK-4): alternating Sinkhorn at lambda_2^2 per sweep (~1/eps sweeps), the symmetric
scaling at (1 - lambda_min)/2 <= 1/2 per update (bounded).

Measured once on the 400-point von Mises quantile grid of S^1 (the default) and on a 300-point vMF Fibonacci set
of S^2; the assertions are held to those quantities, to the
swapped orders (bounded alternating counts, 1/eps symmetric counts), to an undamped symmetric iteration (which
oscillates), and to altered rates.
"""

import dataclasses

import numpy as np

import spectral
from verify import sk_convergence as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, assert_same_records, changed_fields,
                            measured, measurement_fixture, refusals)

CHECK = check.CHECK
small = measurement_fixture(CHECK, manifolds=("circle",))


def test_small_setting_passes(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    run = q.runs["circle"]
    assert np.all(run.symmetric_rate <= 0.5) and np.all(run.symmetric_updates <= 40)
    assert abs(res.measured["circle_alternating_order"] + 1) < 0.1
    assert np.all(np.diff(run.alternating_sweeps) > 0)
    assert "circle_symmetric_order" not in res.measured  # the grid's counts fall with eps: asserted on samples


def test_swapped_orders_fail(small):
    p, q = small
    assert_fails(CHECK, q, dataclasses.replace(p, alternating_order=0.0), "circle_alternating_order", only=True)
    sweeps = q.runs["circle"].symmetric_updates + 200  # bounded counts in place of the sweeps
    assert_fails(CHECK, q, p, "circle_alternating_order",
                 **changed_fields(q, {("runs", "circle", "alternating_sweeps"): sweeps}))
    slow = np.sqrt(q.runs["circle"].alternating_rate)  # a rate of lambda_2 per sweep instead of lambda_2^2
    assert_fails(CHECK, q, p, "circle_alternating_rate",
                 **changed_fields(q, {("runs", "circle", "alternating_rate"): slow}))


def test_the_alternating_rate_for_the_symmetric_scaling_fails(small):
    p, q = small
    run = q.runs["circle"]
    slow = dataclasses.replace(run, symmetric_rate=run.lambda_2**2)
    assert_fails(CHECK, q, p, "circle_symmetric_rate", runs={"circle": slow})


def test_an_undamped_symmetric_iteration_fails(monkeypatch):
    """d <- 1/(C d) without the square root oscillates: it never reaches tol (updates = max_iter)."""
    real = spectral.sinkhorn_normalize

    def undamped(W, tol=1e-12, max_iter=1000):
        d = 1 / np.sqrt(W.sum(axis=1))
        history = []
        for it in range(300):
            w = W @ d
            history.append(float(np.max(np.abs(d * w - 1))))
            d = 1 / w
        res = real(W, tol=tol)
        return dataclasses.replace(res, iterations=300, residuals=tuple(history))

    monkeypatch.setattr(spectral, "sinkhorn_normalize", undamped)
    monkeypatch.setitem(check.EPS, "circle", (0.4, 0.2, 0.1))
    p, q = measured(CHECK, manifolds=("circle",), n=120)
    assert_fails(CHECK, q, p, {"circle_symmetric_update_excess", "circle_symmetric_rate"})


def test_nan_never_passes(small):
    p, q = small
    run = q.runs["circle"]
    sweeps = run.alternating_sweeps.astype(float)
    sweeps[2] = np.nan
    assert_fails(CHECK, q, p, "circle_alternating_order",
                 **changed_fields(q, {("runs", "circle", "alternating_sweeps"): sweeps}))
    rate = run.symmetric_rate.copy()
    rate[0] = np.nan
    assert_fails(CHECK, q, p, "circle_symmetric_rate", **changed_fields(q, {("runs", "circle", "symmetric_rate"): rate}))


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    np.testing.assert_array_equal(back.runs["circle"].lambda_2, q.runs["circle"].lambda_2)


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"n": 10}, "n"), ({"manifolds": ("plane",)}, "manifolds"), ({"alternating_order": 5.0}, "alternating_order"),
])


def test_sphere_passes_and_its_symmetric_rate_reaches_the_bound():
    p, q = measured(CHECK, manifolds=("sphere",), n=300)
    assert_passes(CHECK, q, p)
    run = q.runs["sphere"]
    assert np.all(run.symmetric_rate > 0.85 * (1 - run.lambda_min) / 2)  # the set's irregularities: every mode
    assert np.all(run.symmetric_tail_rate > 0.9 * (1 - run.lambda_min) / 2)
    assert_fails(CHECK, q, dataclasses.replace(p, symmetric_order=-1.0), "sphere_symmetric_order", only=True)


def test_computes_in_the_given_namespace(strict_xp, monkeypatch):
    monkeypatch.setitem(check.EPS, "circle", (0.4, 0.2, 0.1))
    p, q = measured(CHECK, manifolds=("circle",), n=80)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert_same_records(CHECK.assess(q, p), got)
