"""The device run's scripts on a machine without a GPU: benchmarks/device_run.sh, device_check.sh, device_verify.py.

They are for the device tool's one prepared call (benchmarks/README.md, "What to run when a device is lent").
Here: without CuPy they say why, write ``"gpu": false`` and exit 0; the dry walk (``DEVICE_RUN_DRY=1``) runs the
step and timeout logic with every part replaced (one failing, one hanging past its timeout) and the next parts
still run; device_verify's plumbing (the device side and the host child, the comparison) runs with a claimed
GPU on which every device run fails.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spectral.floor.backend import available_devices

ROOT = Path(__file__).resolve().parents[1]
no_gpu = pytest.mark.skipif("gpu" in available_devices(), reason="a GPU is here: the scripts would run for real")


def _bash(script, out, **env):
    return subprocess.run(["bash", str(ROOT / "benchmarks" / script), str(out)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHON": sys.executable, **env})


@no_gpu
def test_device_run_without_a_gpu_says_so_and_exits_0(tmp_path):
    done = _bash("device_run.sh", tmp_path / "out")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["gpu"] is False and summary["parts"] == [] and "CuPy" in summary["reason"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["run.log", "summary.json"]
    assert "no GPU here" in (tmp_path / "out" / "run.log").read_text()


def test_device_run_keeps_going_after_a_failure_and_a_timeout(tmp_path):
    done = _bash("device_run.sh", tmp_path / "out", DEVICE_RUN_DRY="1", DEVICE_RUN_DRY_FAIL="pytest_gpu",
                 DEVICE_RUN_DRY_HANG="device_check", DEVICE_RUN_DRY_CAP_S="1")
    assert done.returncode == 1, done.stdout + done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["gpu"] is False and summary["dry"] is True
    parts = {p["part"]: p for p in summary["parts"]}
    assert list(parts) == ["versions", "pytest_gpu", "device_check", "verify"]
    assert parts["pytest_gpu"]["exit_code"] == 1 and parts["device_check"]["timed_out"]
    assert parts["versions"]["exit_code"] == parts["verify"]["exit_code"] == 0  # the parts after them ran
    assert "--junitxml=" in parts["pytest_gpu"]["command"] and "-x" not in parts["pytest_gpu"]["command"].split()
    # the budget: a part with less than 5 s of it left is not started, and says so
    done = _bash("device_run.sh", tmp_path / "short", DEVICE_RUN_DRY="1", DEVICE_RUN_BUDGET_S="4")
    parts = json.loads((tmp_path / "short" / "summary.json").read_text())["parts"]
    assert len(parts) == 4 and all(p["exit_code"] is None and "budget" in p["command"] for p in parts), parts
    assert done.returncode == 1


@no_gpu
def test_device_check_without_a_gpu(tmp_path):
    done = _bash("device_check.sh", tmp_path / "dev")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((tmp_path / "dev" / "summary.json").read_text())["gpu"] is False


@no_gpu
def test_device_verify_without_a_gpu(tmp_path):
    out = tmp_path / "verify.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "device_verify.py"), "--json", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and json.loads(out.read_text())["gpu"] is False


@no_gpu
@pytest.mark.slow  # 3 s: the host child imports the toolkit
def test_device_verify_compares_the_device_with_the_host(tmp_path, monkeypatch, capsys):
    # a claimed GPU on which nothing runs: the device side's run is an ERROR, the host child's a PASS, and the
    # JSON says they differ (the plumbing a real device run goes through)
    import importlib.util

    import spectral.floor.backend as backend

    spec = importlib.util.spec_from_file_location("device_verify", ROOT / "benchmarks" / "device_verify.py")
    device_verify = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(device_verify)
    monkeypatch.setattr(backend, "available_devices", lambda: ["cpu", "gpu"])
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` fails: every device run raises
    out = tmp_path / "verify.json"
    assert "pde_modes" in device_verify.gpu_checks()
    code = device_verify.main(["--json", str(out), "--checks", "pde_modes", "--budget-s", "60"])
    data = json.loads(out.read_text())
    assert code == 1 and data["gpu"] is True and data["done"] is True
    assert [r["verdict"] for r in data["device_runs"]] == ["ERROR"]
    assert [r["verdict"] for r in data["host_runs"]] == ["PASS"]
    assert data["comparison"]["differ"] == {"pde_modes": {"device": "ERROR", "host": "PASS"}}
    assert "1 verdicts differ" in capsys.readouterr().out
