"""verify.sa_equiangular (SA-6): the simulator on the equiangular ODE, the Gram ODE, and its orders.

The measurement runs once at small settings; the assertions are held to those quantities, to
quantities a wrong implementation gives, and to wrong dynamics (the other normaliser, a beta 1 %
off, no projection) measured at a smaller setting.
"""

import numpy as np
import spectral
from verify import sa_equiangular as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, assert_same_records,
                            changed_fields, failed_records, measured, measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(betas=(0.0, 4.0), sizes=(4,), t_max=2.0, rtol=1e-10, gram_n=4)
TINY = dict(betas=(1.0,), sizes=(3,), t_max=2.0, rtol=1e-10, gram_n=3)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass_with_their_orders(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.measured["rho_relative_error"] < 1e-9
    for method, order in (("euler", 1), ("rk4", 4), ("dopri5", 5)):
        assert abs(res.measured[f"{method}_order_estimate"] - order) < 0.1
        lo, hi = (float(v) for v in res.measured[f"{method}_order_interval"].strip("[]").split(","))
        assert lo <= res.measured[f"{method}_order_estimate"] <= hi  # the interval is reported
    assert set(q.rho) == {(b, 4, norm) for b in (0.0, 4.0) for norm in ("softmax", "uniform")}


def _wrapped(monkeypatch, change, record):
    real = spectral.attention_flow

    def wrong(X0, **kwargs):
        return real(X0, **change(dict(kwargs)))

    monkeypatch.setattr(spectral, "attention_flow", wrong)
    p, q = measured(CHECK, **TINY)
    return failed_records(assert_fails(CHECK, q, p, record))


def test_the_other_normaliser_fails(monkeypatch):
    def swap(kw):
        kw["normalisation"] = {"softmax": "uniform", "uniform": "softmax"}[kw.get("normalisation", "softmax")]
        return kw

    failed = _wrapped(monkeypatch, swap, {"rho_relative_error", "gram_error", "rk4_order"})  # order reference: (SA)
    assert "norm_error" not in failed


def test_a_beta_one_percent_off_fails(monkeypatch):
    _wrapped(monkeypatch, lambda kw: {**kw, "beta": 1.01 * kw["beta"]}, {"rho_relative_error", "gram_error"})


def test_no_projection_fails(monkeypatch):
    _wrapped(monkeypatch, lambda kw: {**kw, "geometry": "euclidean"},
             {"rho_relative_error", "norm_error", "gram_error"})


def _rates(method, errors):
    return {("rate_errors", method): np.asarray(errors, dtype=float)}


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("rho_error", (4.0, 4, "uniform")): 2e-8}, "rho_relative_error"),
    ({("one_minus_rho_error", (0.0, 4, "softmax")): 2e-6}, "one_minus_rho_relative_error"),
    ({("spread", (0.0, 4, "softmax")): 1e-8}, "equiangular_spread"),
    ({"norm_error": 1e-12}, "norm_error"),
    ({("gram_error", (4.0, "softmax")): 1e-7}, "gram_error"),
    ({"reference_beta0_gap": 1e-9}, "reference_beta0_gap"),
    (lambda q: changed_fields(q, _rates("rk4", np.asarray(q.rate_sizes["rk4"], float) ** -3.0)), "rk4_order"),
    (lambda q: changed_fields(q, _rates("euler", np.asarray(q.rate_sizes["euler"], float) ** -2.0)), "euler_order"),
    (_rates("dopri5", [1e-4, 1e-6, 1e-7, 2e-8]), "dopri5_order_asymptotic"),
])


def test_nan_never_passes(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, ("rho_error", (0.0, 4, "softmax")), "rho_relative_error")
    # 1 - rho is compared at t = 0 in every run (rho0 <= 0.99), so a NaN there is a NaN simulation: it fails
    assert_nan_fails(CHECK, q, p, ("one_minus_rho_error", (0.0, 4, "softmax")), "one_minus_rho_relative_error")
    assert_fails(CHECK, q, p, "rk4_order", **changed_fields(q, _rates("rk4", [1e-3, float("nan"), 1e-5, 1e-6])))


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.rho) == set(q.rho) and all(isinstance(k[0], float) and isinstance(k[1], int) for k in back.rho)
    np.testing.assert_array_equal(back.rate_errors["rk4"], q.rate_errors["rk4"])


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"sizes": (1,)}, "sizes"), ({"betas": (-1.0,)}, "betas"), ({"t_max": 0.0}, "t_max"), ({"rho0": 0.999}, "rho0"),
    ({"t_max": 1e-300}, r"t_max must be in \[0.001, 20"),  # was a ValueError traceback
])


def test_cli_exit_codes(capsys):
    assert check.main(["--betas", "1", "--sizes", "3", "--t-max", "1", "--gram-n", "3", "--quiet"]) == 0
    capsys.readouterr()
    assert check.main(["--t-max", "-1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "t_max" in err.replace("-", "_") and err.count("\n") == 1


def test_computes_in_the_given_namespace(strict_xp):
    """Declared for the GPU: the flows run in the namespace given (array_api_strict wraps NumPy: the same records)."""
    p, q = measured(CHECK, betas=(1.0,), sizes=(3,), t_max=1.0, rtol=1e-9, gram_n=3)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert "asarray" in strict_xp.used
    assert_same_records(CHECK.assess(q, p), got)
