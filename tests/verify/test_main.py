"""python -m verify: listing, a selection with ledger verdicts, ERROR rows, summary by paper, JSON."""

import json
import subprocess
import sys

from verify import __main__ as cli
from verify import metric_scaling


def test_lists_and_rejects(capsys):
    assert cli.main([]) == 0
    assert "metric_scaling" in capsys.readouterr().out
    assert cli.main(["no_such_check"]) == 2
    assert "unknown check" in capsys.readouterr().err


def test_error_row_and_others_still_run(monkeypatch, capsys, tmp_path):
    def broken(**kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(metric_scaling, "run", broken)
    path = tmp_path / "all.json"
    code = cli.main(["metric_scaling", "appendix_c", "--json", str(path)])
    captured = capsys.readouterr()
    assert code == 1
    assert "ERROR metric_scaling" in captured.out and "ZeroDivisionError" in captured.err
    assert "appendix_c      [paper: false as stated -> corrected statement holds]" in captured.out
    data = json.loads(path.read_text())
    assert data["errors"]["metric_scaling"].startswith("ZeroDivisionError")
    assert [r["check"] for r in data["results"]] == ["appendix_c"]
    assert data["summary_by_paper"]["attention-drift-diffusion-metric"]["error"] == ["DRIFT-6"]


def test_version():
    out = subprocess.run([sys.executable, "-m", "verify", "--version"], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("attention-limits ")
