"""verify.core.report and ``python -m verify --report``: report.json, the static page, figures, claims.md.

The report is built from three cheap checks, a small run of weyl on the sphere (the setting of FNA-11) and one
made-up ERROR row (not from every check), and loaded in a real headless browser when Debian's chromium is
installed.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import types
from html.parser import HTMLParser

import pytest

from spectral.floor.validation import InputError
from verify import __main__ as cli
from verify.core import runner
from verify.core.claims import CHECKS, LEDGER
from verify.core.claims import claim_records
from verify.core.report import REPORT_HTML, REPORT_JSON, check_output_dir, load_report, write_report

CHEAP = ("weyl", "appendix_c", "metric_attention")  # 0.04, 0.2 and 0.1 s at their defaults; weyl has a drawer
CHROMIUM = "/usr/bin/chromium"


#: weyl in FNA-11's setting, small: n = 200 points on S^2 resolve the kernel too coarsely, so it FAILS (and FNA-10,
#: decided by the default run on S^1, still PASSES: each claim takes its outcome from its own run)
SPHERE = {"manifold": "sphere", "n": 200}


@pytest.fixture(scope="module")
def sphere_result():
    from verify import weyl

    return weyl.run(**SPHERE)


@pytest.fixture(scope="module")
def report_dir(default_result, sphere_result, tmp_path_factory):
    rows = [(name, default_result(name), "") for name in CHEAP]
    rows.insert(1, runner.CheckRow("weyl", sphere_result, "", {"manifold": "sphere"}))
    rows.append(("levy", None, "ZeroDivisionError: a bug"))
    out = tmp_path_factory.mktemp("report") / "r"
    write_report(out, rows, options={"checks": [*CHEAP, "levy"], "full": False}, quiet=True)
    return out


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.images, self.anchors = {}, [], set()
        self._row = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.anchors.add(attrs["id"])
        if tag == "tr" and attrs.get("id", "").startswith("claim-"):
            self._row = attrs["id"][len("claim-"):]
            self.rows[self._row] = attrs.get("class", "")
        if tag == "img":
            self.images.append(attrs["src"])


def _parse(text):
    page = _Page()
    page.feed(text)
    return page


def test_report_files_and_json(report_dir):
    assert {p.name for p in report_dir.iterdir()} >= {REPORT_JSON, REPORT_HTML, "claims.md", "figures"}
    data = load_report(report_dir)
    assert [r["check"] for r in data["results"]] == ["weyl", "weyl", "appendix_c", "metric_attention"]
    assert [r["setting"] for r in data["results"]] == [{}, {"manifold": "sphere"}, {}, {}]
    assert data["errors"] == {"levy": "ZeroDivisionError: a bug"}
    fna = data["summary_by_paper"]["fractional-neural-attention"]
    assert "FNA-10" in fna["confirmed under stated assumptions"] and fna["check failed"] == ["FNA-11"]
    assert data["options"]["full"] is False and data["versions"]["attention-limits"]
    assert data["summary_by_paper"]["fractional-neural-attention"]["error"] == list(CHECKS["levy"])
    assert load_report(report_dir / REPORT_JSON) == data


def test_page_has_a_row_per_claim_and_the_figures(report_dir):
    page = _parse((report_dir / REPORT_HTML).read_text(encoding="utf-8"))
    assert set(page.rows) == {c.id for c in LEDGER}
    assert "row-PASS" in page.rows["FNA-10"] and "row-PASS" in page.rows["DRIFT-13"]
    assert "row-FAIL" in page.rows["FNA-11"]  # from the run on the sphere, not from the passing one on the circle
    assert "row-ERROR" in page.rows["FNA-1"] and "row-notrun" in page.rows["FNA-12"]
    assert page.images == ["figures/weyl.png", "figures/weyl-manifold-sphere.png"]  # weyl is the one with a drawer
    assert (report_dir / "figures" / "weyl.png").stat().st_size > 10_000
    assert {"fig-weyl", "check-weyl", "check-weyl-manifold-sphere", "check-appendix_c", "paper-PDE"} <= page.anchors
    text = (report_dir / REPORT_HTML).read_text(encoding="utf-8")
    assert "<script" not in text
    assert 'href="#fig-weyl"' in text and "ZeroDivisionError: a bug" in text


def test_claims_md_of_the_run_has_the_numbers(report_dir, default_result):
    text = (report_dir / "claims.md").read_text(encoding="utf-8")
    weyl = default_result("weyl")
    section = text.split("### FNA-10 ")[1].split("### ")[0]
    assert "**Last run:** PASS" in section
    for record in claim_records(weyl, "FNA-10"):
        assert f"`{record.name}`" in section
    assert "**Last run:** ERROR: ZeroDivisionError: a bug" in text.split("### FNA-1 ")[1].split("### ")[0]
    assert "this check was not part of the run" in text.split("### FNA-12 ")[1].split("### ")[0]
    section = text.split("### FNA-11 ")[1].split("### ")[0]
    assert "**Last run of `weyl[manifold=sphere]`:** FAIL" in section and "| NO |" in section
    assert "`python -m verify.weyl --manifold sphere`" in section


def test_claims_md_says_when_a_check_ran_in_another_setting_only(default_result):
    from verify.core.claims_doc import claims_markdown
    from verify.core.report import report_data

    text = claims_markdown(report_data([("weyl", default_result("weyl"), "")]))
    section = text.split("### FNA-11 ")[1].split("### ")[0]
    assert "ran, but not in this claim's setting (`weyl[manifold=sphere]`)" in section
    assert "**Last run:** PASS" in text.split("### FNA-10 ")[1].split("### ")[0]


def test_claim_records_split_a_check_by_claim(default_result):
    from verify.core.result import CheckResult, Record

    res = CheckResult("x", ("FNA-16", "FNA-17"), "s", (
        Record("a", 1.0, "at_most", tolerance=2.0, why="FNA-16 entropy bound"),
        Record("b", 1.0, "at_most", tolerance=2.0, why="FNA-17 gap order"),
        Record("c", 1.0, "at_most", tolerance=2.0, why="shared"),
        Record("d", 1.0)), {})
    assert [r.name for r in claim_records(res, "FNA-16")] == ["a", "c"]
    assert [r.name for r in claim_records(res, "FNA-17")] == ["b", "c"]


def test_a_figure_that_cannot_be_drawn_is_said_on_the_page(default_result, tmp_path, monkeypatch):
    import figures

    def broken(result, path):
        raise RuntimeError("no ink")

    monkeypatch.setattr(figures, "save_check_figure", broken)
    page = write_report(tmp_path / "r", [("weyl", default_result("weyl"), "")], quiet=True)
    text = page.read_text(encoding="utf-8")
    assert "could not be drawn: RuntimeError: no ink" in text and "<img" not in text


def test_output_folder_is_tried(tmp_path, monkeypatch):
    check_output_dir("--report", tmp_path / "new" / "deeper")  # missing folders are made when the report is written
    assert list(tmp_path.iterdir()) == []  # and the ones made to try it are removed again
    check_output_dir("--report", tmp_path)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="exists and is not a folder"):
        check_output_dir("--report", tmp_path / "file")
    with pytest.raises(InputError, match="is not a folder, so no folder can be made inside it"):
        check_output_dir("--report", tmp_path / "file" / "r")
    if os.path.isdir("/proc/self"):  # Linux: root may write anywhere by the permission bits, but not in /proc
        with pytest.raises(InputError, match="cannot create the folder '/proc/nope'"):
            check_output_dir("--report", "/proc/nope")
        with pytest.raises(InputError, match="cannot write in this folder"):
            check_output_dir("--report", "/proc")
    with pytest.raises(InputError, match="no report"):
        load_report(tmp_path)


def test_output_file_is_tried(tmp_path):
    from verify.core.report import check_output_file

    check_output_file("--json", tmp_path / "a.json")
    assert list(tmp_path.iterdir()) == []  # tried and removed
    (tmp_path / "b.json").write_text("keep")
    check_output_file("--json", tmp_path / "b.json")
    assert (tmp_path / "b.json").read_text() == "keep"  # an existing file is left as it was
    with pytest.raises(InputError, match="is a folder"):
        check_output_file("--json", tmp_path)
    with pytest.raises(InputError, match="does not exist"):
        check_output_file("--json", tmp_path / "no" / "a.json")
    if os.path.isdir("/proc/self"):
        with pytest.raises(InputError, match="cannot write this file"):
            check_output_file("--json", "/proc/nope.json")


def test_cli_report_validates_before_the_work(capsys, tmp_path):
    (tmp_path / "file").write_text("x")
    assert cli.main(["weyl", "--report", str(tmp_path / "file" / "r")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "--report" in captured.err


def test_cli_report_end_to_end_quiet(tmp_path, capsys):
    assert cli.main(["metric_attention", "--report", str(tmp_path / "r"), "--quiet"]) == 0  # 0.1 s, no figure
    captured = capsys.readouterr()
    assert captured.err == ""  # --quiet silences progress
    assert f"report: {tmp_path / 'r' / REPORT_HTML}" in captured.out
    assert captured.out.strip().endswith("1 passed, 0 failed")
    assert json.loads((tmp_path / "r" / REPORT_JSON).read_text())["results"][0]["check"] == "metric_attention"


def test_full_goes_only_to_checks_that_have_it(monkeypatch):
    calls = {}

    def with_full(*, full=False, seed=0):
        calls["with_full"] = full
        raise ZeroDivisionError("stop")

    def without(*, seed=0):
        calls["without"] = seed
        raise ZeroDivisionError("stop")

    modules = {"with_full": types.SimpleNamespace(run=with_full), "without": types.SimpleNamespace(run=without)}
    monkeypatch.setattr(runner, "load_check", modules.__getitem__)
    rows = runner.run_checks(["with_full", "without"], full=True, quiet=True, seed=3)
    assert calls == {"with_full": True, "without": 3}
    assert [row.error for row in rows] == ["ZeroDivisionError: stop"] * 2


def test_progress_on_stderr_without_quiet(capsys):
    rows = runner.run_checks(["pde_modes"])  # 0.02 s; on a loaded machine a heartbeat may come first
    err = capsys.readouterr().err
    assert rows[0][1].passed and re.search(r"^verify \[1/1\] pde_modes \d", err, re.M)


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (apt-get install chromium)")
def test_page_in_a_headless_browser(report_dir):
    profile = tempfile.mkdtemp()
    try:
        out = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}", "--dump-dom",
             (report_dir / REPORT_HTML).as_uri()], capture_output=True, text=True, timeout=120, check=True)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    page = _parse(out.stdout)
    assert set(page.rows) == {c.id for c in LEDGER}
    assert page.images == ["figures/weyl.png", "figures/weyl-manifold-sphere.png"]
    for src in page.images:
        assert (report_dir / src).is_file()
