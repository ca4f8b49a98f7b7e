"""verify.sk_heat (SK-1): the Sinkformer flow is the heat flow at D = 1/2, the row-softmax flow at D = 1.

Measured once at small settings (S^1, 300 tokens, eps = 0.04, 8 layers); the assertions are held to those
quantities, to a wrong diffusivity, to the two normalisations swapped inside the flow, and to altered moments.
"""

import dataclasses

import numpy as np

import spectral
from verify import sk_heat as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, assert_same_records,
                            changed_fields, failed_records, measured, measurement_fixture, refusals)

CHECK = check.CHECK
SMALL = dict(manifolds=("circle",), circle_n=300, eps=0.04, circle_time=0.32)
small = measurement_fixture(CHECK, **SMALL)


def test_small_setting_passes_with_diffusivity_one_half(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    for k in check.MODES:
        assert abs(res.measured[f"circle_sinkhorn_diffusivity_k{k}"] - 0.5) < 2e-3
    assert abs(res.measured["circle_softmax_diffusivity_k1"] - 1.0) < 0.02


def test_the_softmax_diffusivity_asserted_for_the_sinkformer_fails(small):
    p, q = small
    res = assert_fails(CHECK, q, dataclasses.replace(p, diffusivity=1.0),
                       {f"circle_sinkhorn_diffusivity_k{k}" for k in check.MODES} | {"circle_sinkhorn_moment_error"})
    assert not any("softmax" in name for name in failed_records(res))


def test_normalisations_swapped_in_the_flow_fail(monkeypatch):
    real = spectral.sinkformer_flow

    def swapped(X0, **kw):
        kw["normalisation"] = {"sinkhorn": "softmax", "softmax": "sinkhorn"}[kw["normalisation"]]
        return real(X0, **kw)

    monkeypatch.setattr(spectral, "sinkformer_flow", swapped)
    p, q = measured(CHECK, manifolds=("circle",), circle_n=200, eps=0.05, circle_time=0.2)
    assert_fails(CHECK, q, p, {"circle_sinkhorn_diffusivity_k1", "circle_softmax_diffusivity_k1"})


def test_moments_off_the_heat_flow_fail(small):
    p, q = small
    flow = q.flows["circle", "sinkhorn"]
    bent = flow.moments.copy()
    bent[-1, 0] *= 1.02  # one moment 2 % off at the last time
    assert_fails(CHECK, q, p, "circle_sinkhorn_moment_error",
                 **changed_fields(q, {("flows", ("circle", "sinkhorn"), "moments"): bent}))


def test_nan_never_passes(small):
    p, q = small
    bad = q.flows["circle", "softmax"].moments.copy()
    bad[2, 1] = np.nan
    assert_fails(CHECK, q, p, "circle_softmax_diffusivity_k2",
                 **changed_fields(q, {("flows", ("circle", "softmax"), "moments"): bad}))
    assert_nan_fails(CHECK, q, p, ("flows", ("circle", "sinkhorn"), "moments"), "circle_sinkhorn_moment_error",
                     at=3)


def test_sphere_small_setting_measures_one_half():
    p, q = measured(CHECK, manifolds=("sphere",), sphere_n=700, eps=0.06, sphere_time=0.12)
    d = q.flows["sphere", "sinkhorn"].diffusivity("sphere")
    assert np.all(np.abs(d - 0.5) < 0.03), d  # under-resolved at this size: within 0.03, not the default's 0.01
    assert_fails(CHECK, q, dataclasses.replace(p, diffusivity=1.0), "sphere_sinkhorn_diffusivity_l1")


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.flows) == {("circle", "sinkhorn"), ("circle", "softmax")}


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"circle_n": 10}, "circle_n"), ({"eps": 0.0}, "eps"), ({"step": -0.1}, "step"), ({"diffusivity": -1.0},
                                                                                       "diffusivity"),
    ({"manifolds": ("torus",)}, "manifolds"),
])


def test_cli_exit_codes(capsys):
    assert check.main(["--manifolds", "circle", "--circle-n", "200", "--eps", "0.05", "--circle-time", "0.2",
                       "--quiet"]) == 0
    capsys.readouterr()
    assert check.main(["--eps", "-1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "eps" in err and err.count("\n") == 1


def test_computes_in_the_given_namespace(strict_xp):
    p, q = measured(CHECK, manifolds=("circle",), circle_n=150, eps=0.06, circle_time=0.12)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert_same_records(CHECK.assess(q, p), got)
