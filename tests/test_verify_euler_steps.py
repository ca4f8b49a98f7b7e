"""verify.euler_steps (DRIFT-5): attention layers = Euler steps of length eps/2; wrong maps fail."""

import subprocess
import sys

import numpy as np
import pytest

from verify import euler_steps as check
from verify.claims import CHECKS
from verify.core import CheckResult

FAST = {"n": 1000, "eps_grid": (0.002, 0.004, 0.008, 0.016), "figure_n": 1000, "figure_steps": (0, 20)}


@pytest.fixture(scope="module")
def passed():
    return check.run(**FAST)


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_first_order_passes(passed):
    assert passed.passed, passed.failures
    assert abs(passed.measured["error_slope"] - 1.0) < 0.15


@pytest.mark.parametrize("kwargs", [{"time_per_step": 1.0}, {"drift": 1.0}])
def test_wrong_time_map_or_drift_fails(kwargs):
    res = check.run(**FAST, **kwargs)
    assert not res.passed
    assert any("smallest-eps" in f for f in res.failures)


def test_reference_solver_uniform_density():
    """Independent oracle: p uniform => heat equation, cos(k theta) decays like exp(-k^2 t)."""
    th = np.linspace(-3, 3, 7)
    got = check.pde_solution(th, 0.3, amplitude=0.0, drift=2.0)
    want = np.exp(-0.3) * np.cos(th) + 0.5 * np.exp(-4 * 0.3) * np.sin(2 * th) + 0.3 * np.exp(-9 * 0.3) * np.cos(3 * th)
    # expm of the stiff collocation matrix (k^2 up to 6.5e4): round-off measured 3e-12; bound 1e-10
    assert np.max(np.abs(got - want)) < 1e-10


def test_figure_arrays(passed):
    a = passed.arrays
    assert a["figure_iterates"].shape == (2, 1000) and a["figure_pde"].shape == (2, 1000)
    assert np.all(np.diff(a["figure_theta"]) >= 0)


def test_json_round_trip(passed):
    back = CheckResult.from_json(passed.to_json())
    assert back.measured == passed.measured
    assert np.allclose(back.arrays["figure_pde"], passed.arrays["figure_pde"])


def test_cli(capsys, tmp_path):
    args = ["--n", "2000", "--eps-grid", "0.002,0.004,0.008,0.016", "--figure-n", "600", "--figure-steps", "0,5"]
    assert check.main(args + ["--quiet", "--plot", str(tmp_path / "e.png")]) == 0
    assert (tmp_path / "e.png").stat().st_size > 0
    assert check.main(args + ["--time-per-step", "1", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--n", "600", "--amplitude", "0.9"]) == 2
    err = capsys.readouterr().err
    assert "n too small" in err and err.count("\n") == 1


@pytest.mark.parametrize("kwargs, match", [({"eps_grid": (0.01, 0.02)}, "eps_grid"), ({"amplitude": 1.0}, "amplitude"),
                                           ({"amplitude": 0.0}, "amplitude"),
                                           ({"figure_steps": (-1,)}, "figure_steps")])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.euler_steps", "--n", "2000", "--eps-grid",
                          "0.002,0.004,0.008,0.016", "--figure-n", "600", "--figure-steps", "0,5", "--quiet"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("PASS euler_steps")
