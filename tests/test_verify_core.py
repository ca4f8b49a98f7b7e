"""The check contract: results, JSON, fits, validation and the CLI builder."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from verify import core
from verify.core import CheckResult, cli_main, fit_linear, fit_power_law, make_result


def _result(passed=True, **extra):
    failures = () if passed else ("slope gap 0.2 > 0.02",)
    return make_result(
        check="toy", claims=("FNA-10",), statement="toy statement",
        measured={"slope": 1.19, "gap": 0.01, "big": float("inf")}, expected={"slope": 1.2},
        tolerance={"gap": 0.02}, parameters={"n": 8, "fit_range": (2, 10), "seed": 0},
        failures=failures, arrays={"k": np.arange(3.0)}, **extra,
    )


def test_result_fields_and_lines():
    r = _result()
    assert r.passed and r.verdict == "PASS"
    assert r.final_line() == "PASS toy: toy statement"
    bad = _result(passed=False)
    assert not bad.passed
    assert bad.final_line() == "FAIL toy: slope gap 0.2 > 0.02"
    assert set(r.versions) >= {"python", "numpy"}
    table = r.summary()
    assert "slope" in table and "1.19" in table and "fit_range=(2, 10)" in table


def test_json_round_trip(tmp_path):
    r = _result()
    r2 = CheckResult.from_json(r.to_json())
    assert r2.to_dict() == r.to_dict()
    assert math.isinf(r2.measured["big"])
    np.testing.assert_array_equal(r2.arrays["k"], [0.0, 1.0, 2.0])
    path = tmp_path / "r.json"
    r.to_json(path)
    assert CheckResult.from_json(str(path)).to_dict() == r.to_dict()
    json.loads(path.read_text())  # valid strict JSON (no bare Infinity)
    assert "Infinity" not in path.read_text()


def test_result_is_frozen():
    r = _result()
    with pytest.raises(AttributeError):
        r.passed = False


def test_power_law_fit_exact_and_stderr():
    x = np.arange(2.0, 11.0)
    fit = fit_power_law(x, 3.0 * x**1.2)
    # exact data: slope recovered to rounding (exact algebra tolerance)
    assert abs(fit.slope - 1.2) < 1e-12 and abs(math.exp(fit.intercept) - 3.0) < 1e-12
    assert fit.slope_stderr < 1e-12
    rng = np.random.default_rng(0)
    noisy = fit_power_law(x, 3.0 * x**1.2 * np.exp(0.05 * rng.standard_normal(x.size)))
    lo, hi = noisy.slope_interval(0.99)
    assert noisy.slope_stderr > 0 and lo < 1.2 < hi
    # an independent reference for the OLS slope: numpy.polyfit
    ref = np.polyfit(np.log(x), np.log(3.0 * x**1.2 * np.exp(0.05 * rng.standard_normal(x.size))), 1)
    assert abs(fit_linear(np.log(x), np.polyval(ref, np.log(x))).slope - ref[0]) < 1e-12


@pytest.mark.parametrize("x, y", [([1, 2], [1, -1]), ([0, 1], [1, 2]), ([1], [1])])
def test_power_law_fit_bad_input(x, y):
    with pytest.raises(ValueError):
        fit_power_law(x, y)


def test_require_range_messages():
    core.require_range("alpha", 1.2, low=0, high=2, low_open=True)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 2\], got 0"):
        core.require_range("alpha", 0, low=0, high=2, low_open=True)
    with pytest.raises(ValueError, match="scale"):
        core.require_range("scale", float("nan"), low=0, low_open=True)
    with pytest.raises(ValueError, match="n must be an integer"):
        core.require_int("n", 3.5, low=8)
    with pytest.raises(ValueError, match=r"n must be an integer in \[8, inf\)"):
        core.require_int("n", 4, low=8)


def toy_run(*, alpha=1.2, n=16, fit_range=(2, 10), flag=False, scale=None, seed=0, device="cpu"):
    """A toy check: passes iff alpha == 1.2."""
    core.require_range("alpha", alpha, low=0, high=2, low_open=True)
    if device == "gpu":
        raise RuntimeError("device='gpu' needs CuPy and a CUDA device")
    if n > 10**9:
        raise MemoryError("a dense matrix would need 8e9 GiB; use --matrix-free")
    failures = [] if alpha == 1.2 else [f"alpha {alpha} != 1.2"]
    return make_result(check="toy", claims=("FNA-10",), statement="alpha is 1.2",
                       measured={"alpha": alpha, "n": n}, expected={"alpha": 1.2}, tolerance={},
                       parameters=dict(alpha=alpha, n=n, fit_range=fit_range, flag=flag, scale=scale,
                                       seed=seed, device=device), failures=failures)


def test_cli_exit_codes(capsys, tmp_path):
    assert cli_main(toy_run, [], prog="toy") == 0
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1] == "PASS toy: alpha is 1.2"
    assert cli_main(toy_run, ["--alpha", "1.5", "--quiet"], prog="toy") == 1
    out = capsys.readouterr().out
    assert out.strip() == "FAIL toy: alpha 1.5 != 1.2"
    for argv in (["--alpha", "3"], ["--alpha", "abc"], ["--nope"], ["--device", "gpu"], ["--n", "2000000000"]):
        assert cli_main(toy_run, argv, prog="toy") == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err


def test_cli_parses_types_and_writes_json(tmp_path, capsys):
    path = tmp_path / "out.json"
    code = cli_main(toy_run, ["--fit-range", "3,7", "--flag", "true", "--scale", "0.5", "--n", "32",
                              "--json", str(path)], prog="toy")
    assert code == 0
    r = CheckResult.from_json(str(path))
    assert r.parameters["fit_range"] == [3, 7] and r.parameters["flag"] is True
    assert r.parameters["scale"] == 0.5 and r.parameters["n"] == 32
    assert cli_main(toy_run, ["--flag", "--json", str(path)], prog="toy") == 0  # bare bool flag = true
    assert CheckResult.from_json(str(path)).parameters["flag"] is True
    assert cli_main(toy_run, ["--plot", str(tmp_path / "p.png")], prog="toy") == 2  # no figure for toy
    assert "no figure" in capsys.readouterr().err


def test_cli_help_lists_options(capsys):
    assert cli_main(toy_run, ["--help"], prog="toy", help={"alpha": "claimed order (FNA eq. 10)"}) == 0
    out = capsys.readouterr().out
    assert "--alpha" in out and "FNA eq. 10" in out and "--json" in out and "default: 1.2" in out


def test_python_m_verify_lists_and_rejects():
    done = subprocess.run([sys.executable, "-m", "verify"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    bad = subprocess.run([sys.executable, "-m", "verify", "no_such_check"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "unknown check" in bad.stderr and bad.stderr.count("\n") == 1
