"""python -m verify.rate: the checks' command-line contract for a user's own rate (exit 0, 1, 2; --json, --plot)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from verify import rate
from verify.core.result import CheckResult

ROOT = Path(__file__).resolve().parents[2]

USER_MODULE = textwrap.dedent('''
    import math

    def mc(n, rng):
        return abs(rng.standard_normal()) / math.sqrt(n)

    def second_order(n):
        return 0.3 * n ** -2.0

    def mixture(n):
        return 5 * n ** -0.5 - 4 / n

    def n_log_n(n):
        return math.log(n) / n

    def one_element(n):
        return [1.0 / n]

    def ignores_rng(n, rng):
        return 1.0 / n

    def slow(n):
        import time
        time.sleep(5)
        return 1.0 / n

    def boom(n):
        raise ZeroDivisionError("division by zero")

    def text(n):
        return "small"

    def nan(n):
        return math.nan if n > 100 else 1.0 / n

    NOT_CALLABLE = 3
''')


@pytest.fixture
def user(tmp_path, monkeypatch):
    """A module ``rate_user_errors`` on the path, as a user's own file in the current folder would be."""
    (tmp_path / "rate_user_errors.py").write_text(USER_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "rate_user_errors"
    sys.modules.pop("rate_user_errors", None)


def _one_line_error(capsys, argv):
    code = rate.main(argv)
    out = capsys.readouterr()
    assert code == 2, (argv, out)
    assert out.err.count("\n") == 1 and "Traceback" not in out.err, out.err
    return out.err


def test_pass_exit_0_with_table_json_and_plot(user, capsys, tmp_path):
    pytest.importorskip("matplotlib")
    out_json, out_png = tmp_path / "r.json", tmp_path / "r.png"
    code = rate.main([f"{user}:second_order", "--sizes", "100,200,400,800", "--claimed", "-2", "--json",
                      str(out_json), "--plot", str(out_png)])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = out.strip().splitlines()
    assert lines[0] == "rate" and "asymptotic_order_low" in out and "local_orders" in out
    assert lines[-1].startswith(f"PASS rate: {user}:second_order: the asymptotic order of the error equals p = -2")
    data = json.loads(out_json.read_text())
    assert data["check"] == "rate" and data["passed"] and data["claims"] == []
    assert data["parameters"]["error"] == f"{user}:second_order" and data["parameters"]["sizes"] == [100, 200, 400, 800]
    back = CheckResult.from_json(str(out_json))
    assert back.passed and back.record("order").measured == pytest.approx(-2.0)
    assert out_png.stat().st_size > 10_000


def test_random_error_with_repeats_and_seed(user, capsys):
    argv = [f"{user}:mc", "--sizes", "1000,2000,4000,8000,16000", "--claimed", "-0.5", "--repeats", "1500",
            "--tolerance", "0.25", "--seed", "4", "--quiet"]
    assert rate.main(argv) == 0
    first = capsys.readouterr().out
    assert first.count("\n") == 1 and first.startswith("PASS rate:")
    res = rate.run(error=f"{user}:mc", sizes=(1000, 2000, 4000, 8000, 16000), claimed=-0.5, repeats=64,
                   tolerance=0.25, seed=4)
    assert not res.passed and res.quantities.errors.shape == (5, 64) and res.parameters["seed"] == 4
    assert res.record("needed_repeats").measured > 64  # the message and the table say how many would decide


def test_automatic_repeats_record_what_they_spent(user, capsys, tmp_path):
    out_json = tmp_path / "auto.json"
    argv = [f"{user}:mc", "--sizes", "1000,2000,4000,8000,16000", "--claimed", "-0.5", "--tolerance", "0.25",
            "--budget", "20000 calls", "--seed", "5", "--json", str(out_json), "--quiet"]
    assert rate.main(argv) == 0
    line = capsys.readouterr().out
    assert line.startswith("PASS rate:")
    back = CheckResult.from_json(str(out_json))
    spent = back.record("spent").measured
    assert "calls" in spent and "budget 20000 calls" in spent and back.passed
    # the figure and the table decide again from the JSON at the level of the last look: the same verdict
    assert rate.decision(back.quantities, back.parameters).passed


def test_failing_claims_exit_1_and_say_why(user, capsys):
    assert rate.main([f"{user}:second_order", "--sizes", "100,200,400,800", "--claimed", "-1", "--quiet"]) == 1
    assert "does not hold" in capsys.readouterr().out
    assert rate.main([f"{user}:second_order", "--sizes", "100,200,400", "--claimed", "-1", "--kind", "bound",
                      "--quiet"]) == 0
    capsys.readouterr()
    # pre-asymptotic: exit 1 (a complete run that does not establish the claim), naming the sizes that would decide
    assert rate.main([f"{user}:mixture", "--sizes", "4,8,16,32", "--claimed", "-0.5", "--quiet"]) == 1
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"FAIL rate: {user}:mixture: cannot decide error ~ n^-0.5 yet: the local orders still move")
    assert "sizes up to about n = " in line
    # --extend-sizes grows the ladder until it decides
    assert rate.main([f"{user}:mixture", "--sizes", "4,8,16,32", "--claimed", "-0.5", "--extend-sizes",
                      "--quiet"]) == 0
    capsys.readouterr()
    assert rate.main([f"{user}:nan", "--sizes", "10,100,1000", "--claimed", "-1", "--quiet"]) == 1
    assert "not finite (nan at n = 1000" in capsys.readouterr().out
    assert rate.main([f"{user}:mc", "--sizes", "100,200,400", "--claimed", "-0.5", "--repeats", "8", "--quiet"]) == 1
    assert "cannot decide" in capsys.readouterr().out
    # a log factor claimed, and not
    assert rate.main([f"{user}:n_log_n", "--sizes", "16,32,64,128,256", "--claimed", "-1", "--log-power", "1",
                      "--quiet"]) == 0
    assert rate.main([f"{user}:n_log_n", "--sizes", "16,32,64,128,256", "--claimed", "-1", "--quiet"]) == 1
    capsys.readouterr()


def test_a_broken_function_is_one_line_naming_it(user, capsys):
    args = ["--sizes", "10,20,40", "--claimed", "-1"]
    err = _one_line_error(capsys, [f"{user}:boom", *args])
    assert f"error function '{user}:boom' raised ZeroDivisionError: division by zero (at n = 10)" in err
    err = _one_line_error(capsys, [f"{user}:text", *args])
    assert f"error function {user}:text must return one real number, got str 'small' at n = 10" in err
    err = _one_line_error(capsys, [f"{user}:one_element", *args])
    assert "got a list of length 1 at n = 10 (return float(x[0]) or x.item(), not the array)" in err
    assert "ignores its rng" in _one_line_error(capsys, [f"{user}:ignores_rng", *args])
    err = _one_line_error(capsys, [f"{user}:slow", *args, "--timeout", "0.2"])
    assert f"error function '{user}:slow' ran past its time limit of 0.2 s" in err and "(at n = 10)" in err
    assert "cannot be loaded" in _one_line_error(capsys, [f"{user}:nope", *args])
    assert "not callable" in _one_line_error(capsys, [f"{user}:NOT_CALLABLE", *args])
    assert "No module named" in _one_line_error(capsys, ["no_such_module_x:f", *args])
    assert "package.module:function" in _one_line_error(capsys, ["justaname", *args])


def test_bad_options_are_one_line(user, capsys):
    fn = f"{user}:second_order"
    assert "error must be given" in _one_line_error(capsys, ["--sizes", "10,20,40", "--claimed", "-1"])
    assert "sizes must be given" in _one_line_error(capsys, [fn, "--claimed", "-1"])
    assert "claimed must be given" in _one_line_error(capsys, [fn, "--sizes", "10,20,40"])
    assert "sizes must increase" in _one_line_error(capsys, [fn, "--sizes", "10,40,20", "--claimed", "-1"])
    assert "at least 3" in _one_line_error(capsys, [fn, "--sizes", "10,20", "--claimed", "-1"])
    assert "kind" in _one_line_error(capsys, [fn, "--sizes", "10,20,40", "--claimed", "-1", "--kind", "lower"])
    assert "tolerance" in _one_line_error(capsys, [fn, "--sizes", "10,20,40", "--claimed", "-1", "--tolerance", "0"])
    assert "seed" in _one_line_error(capsys, [fn, "--sizes", "10,20,40", "--claimed", "-1", "--seed", "-1"])
    assert "runs on the host only" in _one_line_error(capsys, [fn, "--sizes", "10,20,40", "--claimed", "-1",
                                                               "--device", "gpu"])
    assert "--plot" in _one_line_error(capsys, [fn, "--sizes", "10,20,40", "--claimed", "-1", "--plot", "x.txt"])
    assert "budget" in _one_line_error(capsys, [fn, "--sizes", "10,20,40", "--claimed", "-1", "--budget", "soon"])
    assert "timeout" in _one_line_error(capsys, [fn, "--sizes", "10,20,40", "--claimed", "-1", "--timeout", "0"])
    assert "--extend-sizes needs" in _one_line_error(capsys, [fn, "--sizes", "10,20,40", "--claimed", "-1",
                                                              "--extend-sizes", "--repeats", "8"])


def test_help_lists_every_option(capsys):
    assert rate.main(["--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--error", "--sizes", "--claimed", "--kind", "--log-power", "--repeats", "--budget",
                   "--extend-sizes", "--confidence", "--tolerance", "--correction", "--floor", "--roundoff", "--timeout",
                   "--seed", "--json", "--plot", "--quiet"):
        assert option in out
    assert rate.CHECK.claims == () and rate.CHECK.quantities_type.__name__ == "RateQuantities"


def test_python_dash_m(user, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}  # the user's module; verify from this checkout (cwd)
    proc = subprocess.run([sys.executable, "-m", "verify.rate", f"{user}:second_order", "--sizes", "10,20,40",
                           "--claimed", "-2", "--quiet"], capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"PASS rate: {user}:second_order")


def test_operating_characteristics_command(capsys, monkeypatch):
    from verify import rate_oc

    few = tuple(c for c in rate_oc.CASES if c.name in ("trapezoid-exp", "audit-0.3-8"))
    monkeypatch.setattr(rate_oc, "CASES", few)
    monkeypatch.setattr(rate_oc.characteristics, "__defaults__", (few,) + rate_oc.characteristics.__defaults__[1:])
    monkeypatch.setattr(rate_oc, "AUTO_CASES", ("audit-0.3-8",))
    monkeypatch.setattr(rate_oc.auto_characteristics, "__defaults__",
                        (("audit-0.3-8",),) + rate_oc.auto_characteristics.__defaults__[1:])
    assert rate.main(["--operating-characteristics", "--runs", "10", "--auto-runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "| quadrature | trapezoid-exp |" in out and "| mixture | audit-0.3-8 |" in out
    assert "repeats='auto'" in out and "a wrong claim passed in at most" in out
    assert rate.main(["--operating-characteristics", "--runs", "3"]) == 2
