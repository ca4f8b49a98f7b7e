"""Adversarial kernel profiles held to the Weyl law (verify.weyl --kernel module:function).

The contract: the discrete generator spectrum of the user's profile has the shape of the exact
continuum spectrum of the same profile (quadrature) and of Phi_alpha's for the claimed alpha. Each
wrong profile must fail for its own reason, at the calibrated circle grid (n = 1000, the smallest n
the grid tolerances were measured at). The profiles live in this module (``<module>:<function>``).
"""

import numpy as np
import pytest

from verify import weyl as check
from verify.core.implementation import ImplementationError
from verify.testing import (assert_passes, assert_refused, failed_records, measured, measurement_fixture,
                            negative_controls)

CHECK = check.CHECK
SMALL = {"n": 1000}


def _name(fn) -> str:
    return f"{__name__}:{fn.__name__}"


# -- profiles that hold --------------------------------------------------------------------------------
def fna_1_2(z):
    return (1.0 + z) ** -2.2  # Phi_1.2 on S^1 (d_M = 1)


def fna_1_2_float32(z):
    return ((1.0 + z) ** -2.2).astype(np.float32)


def gaussian(z):
    return np.exp(-z * z)  # alpha = 2


# -- profiles that must fail the numbers ---------------------------------------------------------------
def fna_1_25(z):
    return (1.0 + z) ** -2.25  # order 1.25 claimed as 1.2


def ambient_dimension(z):
    return (1.0 + z) ** -3.2  # the S^2 exponent on S^1: the ambient-dimension trap of FNA-10


def truncated_tail(z):
    return np.where(z < 20.0, (1.0 + z) ** -2.2, 0.0)  # a cut heavy tail (sparse attention)


def nan_profile(z):
    return np.full(np.shape(z), np.nan)


def nan_at_zero(z):
    return np.where(z == 0, np.nan, (1.0 + z) ** -2.2)


def negative_profile(z):
    return np.cos(z)


def zero_profile(z):
    return np.zeros_like(z)


# -- profiles that are not the contract's function: one line, exit 2 ----------------------------------
def flattened(z):
    return ((1.0 + z) ** -2.2).ravel()


def integer_profile(z):
    return (z < 3).astype(np.int64)


def raises(z):
    raise RuntimeError("profile needs torch")


def hangs(z):
    import time

    time.sleep(60)
right = measurement_fixture(CHECK, kernel=_name(fna_1_2), **SMALL)


def _run(fn, **kwargs):
    return check.run(kernel=_name(fn), **{**SMALL, **kwargs})


def test_the_fna_profile_holds_the_contract(right):
    p, q = right
    res = assert_passes(CHECK, q, p)
    assert res.final_line().startswith(f"PASS weyl [contract on {_name(fna_1_2)}: holds]: contract of the profile")
    assert q.reference_quadrature_error < 1e-10 and abs(q.best_fit_alpha - 1.2) < 0.005


def test_the_user_profile_matches_the_toolkit_kernel(right):
    # the same profile as the built-in Phi_1.2: the same spectrum to rounding, and the same continuum reference
    p, q = right
    _, builtin = measured(CHECK, **SMALL)
    assert np.allclose(q.lambda_j, builtin.lambda_j, rtol=1e-10, atol=0)
    assert np.allclose(q.reference, builtin.reference, rtol=1e-12, atol=0)


@pytest.mark.parametrize("fn, kwargs", [(fna_1_2_float32, {}), (gaussian, {"alpha": 2.0}),
                                        (fna_1_2, {"points": "random", "method": "matrix-free"})])
def test_other_profiles_and_paths_hold(fn, kwargs):
    res = _run(fn, **kwargs)
    assert res.passed, res.failures


@pytest.mark.parametrize("fn", [fna_1_25, ambient_dimension])
def test_a_profile_of_another_order_fails_the_best_fit_only(fn):
    res = _run(fn)
    assert failed_records(res) == {"best_fit_alpha"}
    assert res.final_line().startswith(f"FAIL weyl [contract on {_name(fn)}: violated]")


def test_a_truncated_tail_is_not_resolved_and_not_of_order_alpha():
    assert {"reference_quadrature_error", "best_fit_alpha"} <= failed_records(_run(truncated_tail))


@pytest.mark.parametrize("fn, words", [(nan_profile, "NaN or inf"), (nan_at_zero, "the first at z = 0"),
                                       (negative_profile, "negative values"), (zero_profile, "vanishes")])
def test_profile_values_no_kernel_has_fail_their_record(fn, words):
    res = _run(fn)
    assert [r.name for r in res.records] == ["profile_values"] and not res.passed
    assert words in res.failures[0] and _name(fn) in res.failures[0]


@pytest.mark.parametrize("fn, match", [
    (flattened, r"returned profile values of shape \(1000,\), expected \(1, 1000\)"),
    (integer_profile, "dtype int64"),
    (raises, "raises' raised RuntimeError: profile needs torch"),
])
def test_profiles_that_are_not_the_contracts_give_one_line_errors(fn, match):
    with pytest.raises(ImplementationError, match=match):
        _run(fn)


def test_a_hanging_profile_stops_at_the_timeout():
    with pytest.raises(ImplementationError, match=r"kernel '.*hangs' ran past its time limit of 0.2 s"):
        _run(hangs, timeout=0.2)


@pytest.mark.parametrize("kwargs, match", [
    ({"kernel_alpha": 1.2}, "kernel_alpha configures the built-in kernels"),
    ({"dim": 1.0}, "dim configures"), ({"temperature": 1.0}, "temperature configures"),
    ({"paper_setting": True}, "paper_setting"), ({"device": "gpu"}, "runs on the host"),
])
def test_options_of_the_builtin_kernels_are_refused(kwargs, match):
    assert_refused(_run, match, fn=fna_1_2, **kwargs)


def test_unknown_kernel_names_the_forms():
    assert_refused(check.run, "'fna', 'softmax' or 'package.module:function'", kernel="nope")
    assert_refused(check.run, "cannot be loaded", kernel="no_such_module_xyz:phi")


test_each_contract_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "right", [
    ({"reference_quadrature_error": 1e-3}, "reference_quadrature_error"),
    ({"reference_quadrature_error": float("nan")}, "reference_quadrature_error"),
    ({"shape_error": float("nan")}, "shape_error"),
    ({"best_fit_alpha": float("nan")}, "best_fit_alpha"),
])


def test_cli(capsys):
    assert check.main(["--kernel", _name(fna_1_2), "--n", "1000", "--quiet"]) == 0
    assert f"[contract on {_name(fna_1_2)}: holds]" in capsys.readouterr().out
    assert check.main(["--kernel", _name(fna_1_25), "--n", "1000", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--kernel", _name(raises), "--n", "1000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and _name(raises) in err[0] and "RuntimeError" in err[0]


@pytest.mark.slow
def test_the_s2_profile_holds_on_the_sphere_and_the_s1_profile_does_not():
    assert check.run(kernel=f"{__name__}:ambient_dimension", manifold="sphere").passed  # (1 + z)^-3.2 on S^2
    res = check.run(kernel=_name(fna_1_2), manifold="sphere")
    assert res.record("best_fit_alpha").passed is False
