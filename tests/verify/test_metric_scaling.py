"""verify.metric_scaling (DRIFT-6): At scales by m^2 under g -> g/m^2; a claimed m^1 fails."""

import pytest

from spectral.validation import InputError
from verify import metric_scaling as check


@pytest.fixture(scope="module")
def passed():
    return check.run(n=2000, modes=4)


def test_m_squared_scaling(passed):
    assert passed.passed, passed.failures
    dev = passed.record("max_relative_ratio_deviation")
    assert passed.measured["ratio_m4_mode1"] == pytest.approx(16.0, rel=dev.tolerance)


@pytest.mark.parametrize("power", [1.0, 3.0])
def test_wrong_power_fails(power):
    res = check.run(n=2000, modes=2, scales=(1.0, 2.0), power=power)
    assert not res.passed and res.record("max_relative_ratio_deviation").passed is False
    assert "deviate" in res.failures[0] and "predicted eps bias" not in res.failures[0]


def test_unresolved_eps_fails_and_says_why():
    # eps = 1e-3, k = 6, m = 4: eps bias 2.7 % measured, 3.5 % predicted (> tol / 2)
    res = check.run(n=2000, eps=1e-3)
    assert not res.passed and "predicted eps bias" in res.failures[0]


def test_cli(capsys):
    assert check.main(["--n", "2000", "--modes", "2", "--scales", "1,2", "--quiet"]) == 0
    assert check.main(["--n", "2e3", "--modes", "2", "--scales", "1,2", "--power", "1", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--n", "600", "--eps", "1e-6"]) == 2
    err = capsys.readouterr().err
    assert "n too small" in err and err.count("\n") == 1


@pytest.mark.parametrize("kwargs, match", [({"scales": (1.0,)}, "scales"), ({"eps": 1.0}, "eps"),
                                           ({"modes": 0}, "modes"), ({"power": True}, "power")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
