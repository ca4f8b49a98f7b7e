"""verify.metric_scaling (DRIFT-6): At scales by m^2 under g -> g/m^2; a claimed m^1 fails.

Measured once at n = 1000, eps = 2.5e-4; held to wrong exponents, to an unresolved eps, to altered
quantities, and to a NaN kernel entry and eigenvalue.
"""

import dataclasses

import numpy as np
import pytest

from verify import metric_scaling as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"n": 1000, "eps": 2.5e-4, "modes": 4}
CHEAP_CLI = ["--n", "500", "--eps", "1e-3", "--modes", "2", "--scales", "1,2", "--quiet"]
small = measurement_fixture(CHECK, **SMALL)


def test_m_squared_scaling(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    dev = res.record("max_relative_ratio_deviation")
    assert res.measured["ratio_m4_mode1"] == pytest.approx(16.0, rel=dev.tolerance)
    assert sorted(q.generator) == [1.0, 2.0, 4.0] and q.generator[1.0].shape == (4,)


@pytest.mark.parametrize("power", [1.0, 3.0])
def test_wrong_power_fails(small, power):
    p, q = small
    res = assert_fails(CHECK, q, dataclasses.replace(p, power=power), "max_relative_ratio_deviation", only=True)
    assert "deviate" in res.failures[0] and "predicted eps bias" not in res.failures[0]


def test_unresolved_eps_fails_and_says_why():
    # eps = 1e-3, k = 6, m = 4: eps bias 2.7 % measured, 3.5 % predicted (> tol / 2)
    p, q = measured(CHECK, n=500, eps=1e-3)
    res = CHECK.assess(q, p)
    assert not res.passed and "predicted eps bias" in res.failures[0]


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"entrywise_max_difference": 1e-12}, "entrywise_max_difference"),
    ({"entrywise_max_difference": float("nan")}, "entrywise_max_difference"),
    (lambda q: {"generator": {**q.generator, 4.0: 1.05 * q.generator[4.0]}}, "max_relative_ratio_deviation"),
    ({("generator", 4.0): np.full(4, np.nan)}, "max_relative_ratio_deviation"),
], only=True)


def test_json_round_trip(small):
    p, q = small
    assert_round_trip(CHECK, q, p)  # typed again: the generator's float keys and arrays


def test_cli(capsys):
    assert check.main(CHEAP_CLI) == 0
    assert check.main([*CHEAP_CLI[:1], "5e2", *CHEAP_CLI[2:], "--power", "1"]) == 1
    capsys.readouterr()
    assert check.main(["--n", "600", "--eps", "1e-6"]) == 2
    err = capsys.readouterr().err
    assert "n too small" in err and err.count("\n") == 1


test_bad_input = refusals(check.run, [({"scales": (1.0,)}, "scales"), ({"eps": 1.0}, "eps"),
                                      ({"modes": 0}, "modes"), ({"power": True}, "power")])


def test_one_mode_makes_each_record_once(small):
    p, q = small
    one = dataclasses.replace(q, generator={m: v[:1] for m, v in q.generator.items()})
    res = assert_passes(CHECK, one, dataclasses.replace(p, modes=1))
    assert "ratio_m4_mode1" in res.measured


TINY = {"n": 500, "eps": 1e-3, "modes": 2, "scales": (1.0, 2.0)}


def test_a_nan_kernel_entry_fails(inject_nan):
    # m = 2's scaled kernel (call 2): Python's max kept m = 1's finite difference
    p = CHECK.params(**TINY)
    poisoned = inject_nan("spectral.heat_kernel", call=2, at=17)
    q = CHECK.measure(p)
    assert poisoned == [2]
    res = assert_fails(CHECK, q, p, "entrywise_max_difference", only=True)
    assert np.isnan(res.measured["entrywise_max_difference"])


def test_a_nan_eigenvalue_fails_as_nan(monkeypatch):
    # ARPACK returns one NaN eigenvalue for m = 2 (its second call): sorted first and dropped with the top
    # eigenvalue 1, it shifted the modes (a finite deviation 1.0); kept last, the deviation is NaN
    import scipy.sparse.linalg

    real, calls = scipy.sparse.linalg.eigsh, []

    def eigsh(*args, **kwargs):
        vals, vecs = real(*args, **kwargs)
        calls.append(len(calls))
        if len(calls) == 2:
            vals = vals.copy()
            vals[0] = np.nan
        return vals, vecs

    p = CHECK.params(**TINY)
    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", eigsh)
    q = CHECK.measure(p)
    assert calls == [0, 1]
    res = assert_fails(CHECK, q, p, "max_relative_ratio_deviation", only=True)
    assert np.isnan(res.measured["max_relative_ratio_deviation"])
