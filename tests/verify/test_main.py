"""python -m verify: listing, a selection with ledger verdicts, ERROR rows, summary by paper, JSON."""

import json
import os
import subprocess
import sys

import pytest

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


@pytest.mark.parametrize("args, words", [
    (["--all", "--report", "/proc/nope"], ["--report '/proc/nope'", "cannot create the folder"]),
    (["--all", "--report", "/proc"], ["--report '/proc'", "cannot write in this folder"]),
    (["--all", "--json", "/proc/nope.json"], ["--json '/proc/nope.json'", "cannot write this file"]),
    (["--all", "--report", "{tmp}/file"], ["exists and is not a folder"]),
    (["--all", "--report", "{tmp}/file/r"], ["is not a folder, so no folder can be made inside it"]),
    (["--all", "--json", "{tmp}"], ["is a folder; give a file path"]),
    (["--all", "--json", "{tmp}/no/such/x.json"], ["does not exist"]),
])
def test_output_paths_are_tried_before_any_check_runs(args, words, monkeypatch, tmp_path, capsys):
    # the reported bug: --report /proc/nope ran all 39 checks (2.5 min), then exited 2 with a raw errno
    if any(a.startswith("/proc") for a in args) and not os.path.isdir("/proc/self"):
        pytest.skip("needs Linux's /proc")
    (tmp_path / "file").write_text("x")

    def must_not_run(*a, **k):
        raise AssertionError("a check ran before the output paths were checked")

    monkeypatch.setattr(cli, "run_checks", must_not_run)
    assert cli.main([a.replace("{tmp}", str(tmp_path)) for a in args]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith("python -m verify: error: ") and "Errno" not in captured.err
    for w in words:
        assert w in captured.err


def test_an_unwritable_folder_is_refused_even_for_root(monkeypatch, tmp_path, capsys):
    # permission bits do not stop root (the tests run as root): the folder is tried, so a failing write refuses
    import tempfile

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    monkeypatch.setattr(cli, "run_checks", lambda *a, **k: pytest.fail("ran"))
    assert cli.main(["appendix_c", "--report", str(tmp_path / "new" / "r")]) == 2
    assert "cannot write in this folder (Permission denied)" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()  # the folders made to try it are removed again


def test_rows_are_runs_with_their_settings(monkeypatch, capsys):
    # weyl runs once per setting of its claims: S^1 (FNA-10) and S^2 (FNA-11), each row with its own claims
    from verify import weyl
    from verify.core.result import CheckResult, Record

    seen = []

    def fake(**kw):
        seen.append(kw)
        return CheckResult("weyl", ("FNA-10", "FNA-11"), f"on {kw['manifold']}",
                           (Record("gap", 0.0, "at_most", tolerance=1.0),), {"manifold": kw["manifold"]})

    import inspect

    fake.__signature__ = inspect.signature(weyl.run)  # the settings read the check's defaults from it
    monkeypatch.setattr(weyl, "run", fake)
    assert cli.main(["weyl", "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert seen == [{"manifold": "circle"}, {"manifold": "sphere"}]
    assert out[0].startswith("PASS  weyl                   [paper: holds only under stated assumptions]  on circle")
    assert out[1].startswith("PASS  weyl[manifold=sphere]  [paper: holds only under stated assumptions]  on sphere")
    assert out[-1] == "2 passed, 0 failed"
