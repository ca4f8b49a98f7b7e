"""docs/guide.md: every example in docs/examples runs, and the guide shows exactly those files; the README's rate check."""

import contextlib
import io
import re
import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.py"))
_BLOCK = re.compile(r"<!-- example: (docs/examples/[\w.]+\.py) -->\n```python\n(.*?)```", re.S)


def test_the_guide_shows_every_example_as_it_is():
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    shown = dict(_BLOCK.findall(guide))
    assert sorted(shown) == [p.relative_to(ROOT).as_posix() for p in EXAMPLES] and len(shown) == 5
    for name, code in shown.items():
        assert code == (ROOT / name).read_text(encoding="utf-8"), f"docs/guide.md: copy {name} again"


@pytest.fixture
def isolated(monkeypatch):
    """Run an example as ``python docs/examples/X.py`` would, leaving sys.path and sys.modules as they were."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name in ("attention_contract", "check_your_rate"):
            del sys.modules[name]


#: the rate example decides a Monte Carlo order with a few thousand repeats per size, the spectrum example starts
#: worker processes and computes a spectrum twice: seconds, the slow tier
_SLOW_EXAMPLES = ("check_your_rate.py", "spectrum_on_dask.py")


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.name in _SLOW_EXAMPLES else p
                                  for p in EXAMPLES], ids=lambda p: p.name)
def test_example_runs(path, isolated, capsys):
    if path.name in ("sweep_on_dask.py", "spectrum_on_dask.py"):
        pytest.importorskip("dask.distributed")
    runpy.run_path(str(path), run_name="__main__")  # each example asserts its own outcome
    out = capsys.readouterr().out
    assert out.strip(), "an example prints what it found"
    if path.name == "check_your_rate.py":
        assert "PASS rate: __main__:mc_error: the asymptotic order of the error equals p = -0.5 within 0.1" in out
    if path.name == "attention_contract.py":
        assert "PASS attention_contract" in out and "FAIL attention_contract" in out and "temperature" in out
    if path.name == "sweep_on_dask.py":
        assert "pde_modes: 2 passed, 2 failed (4 runs)" in out
    if path.name == "spectrum_on_dask.py":
        assert "4 tile parts on a Dask cluster of 2 workers (cpu)" in out and "the same bits" in out


def _readme_rate_block():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Checking your own convergence rate")[1].split("\n## ")[0]
    return section, re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_rate_check_is_five_lines_on_the_automatic_repeats():
    _, block = _readme_rate_block()
    assert len(block.strip().splitlines()) == 5  # the five-line rate check
    assert "repeats" not in block  # the default: as many as the decision needs (run in the slow tier below)


@pytest.mark.slow
def test_readme_rate_check_runs_and_prints_what_it_says():
    section, block = _readme_rate_block()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {"__name__": "__main__"})
    stated = re.search(r"It prints `(.*?) \.\.\.`", section).group(1)
    stated = stated.replace("PASS rate: ...: ", "")
    line = out.getvalue().strip()
    assert line.startswith("PASS rate: __main__:error: ") and stated in line
