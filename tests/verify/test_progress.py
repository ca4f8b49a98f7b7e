"""verify.core.progress: plain lines with the time left off a terminal, a tqdm bar on one, nothing when quiet;
the heartbeat of long runs (watch) and the durations it remembers."""

import io
import re
import sys
import time

import pytest

from verify.core import progress as progress_module
from verify.core.progress import format_seconds, is_silenced, progress, silenced, watch


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_lines_off_a_terminal():
    out = io.StringIO()
    items = list(progress(["a", "b", "c"], desc="verify", label=str.upper, stream=out))
    assert items == ["a", "b", "c"]
    lines = out.getvalue().splitlines()
    assert re.fullmatch(r"verify \[1/3\] A \d+\.\d s, about \d+\.\d s left", lines[0])
    assert re.fullmatch(r"verify \[2/3\] B \d+\.\d s, about \d+\.\d s left", lines[1])
    assert re.fullmatch(r"verify \[3/3\] C \d+\.\d s", lines[2])  # the last item: nothing left
    assert lines[3].startswith("verify: 3 done in ") and lines[3].endswith(" s")


def test_time_left_follows_the_weights():
    # items of weight 1, 1, 8 taking 0.05 s per unit: after the first, about (1 + 8) * 0.05 = 0.45 s are left;
    # unweighted, 2 * 0.05 = 0.1 s (the estimate that the weights correct)
    for weight, low, high in ((lambda w: w, 0.3, 1.5), (None, 0.05, 0.3)):
        out = io.StringIO()
        steps = progress([1, 1, 8], desc="draws", stream=out, weight=weight)
        time.sleep(0.05 * next(steps))
        next(steps)  # the first item's line
        steps.close()
        left = float(re.search(r"about (\d+\.\d+) s left", out.getvalue()).group(1))
        assert low <= left <= high, (weight, left)


def test_format_seconds():
    assert [format_seconds(s) for s in (8.24, 100, 3000, 7500)] == ["8.2 s", "1 min 40 s", "50 min", "2 h 05 min"]


def test_unknown_total_and_default_stream_is_stderr(capsys):
    assert list(progress(iter(range(2)))) == [0, 1]
    captured = capsys.readouterr()
    assert captured.out == ""
    assert [line.split()[0] for line in captured.err.splitlines()[:2]] == ["[1]", "[2]"]


def test_an_item_that_raises_leaves_no_line():
    out = io.StringIO()
    with pytest.raises(ZeroDivisionError):
        for _ in progress([1, 2], desc="sweep", stream=out):
            raise ZeroDivisionError
    assert out.getvalue() == ""


def test_quiet_and_silenced_write_nothing():
    out = io.StringIO()
    assert list(progress([1, 2], quiet=True, stream=out)) == [1, 2]
    with silenced(True):
        assert is_silenced()
        with silenced(False):  # an inner command without --quiet does not undo the outer one
            assert list(progress([1, 2], stream=out)) == [1, 2]
        assert list(progress([3], quiet=False, stream=_Terminal())) == [3]  # explicit quiet=False still reports
    assert not is_silenced()
    assert out.getvalue() == ""


def test_bar_on_a_terminal_names_the_item():
    pytest.importorskip("tqdm")
    out = _Terminal()
    assert list(progress(["weyl", "levy"], desc="verify", label=str, stream=out)) == ["weyl", "levy"]
    text = out.getvalue()
    assert "verify" in text and "levy" in text and "\r" in text  # a redrawn bar, not plain lines
    assert "[1/2]" not in text


def test_terminal_without_tqdm_falls_back_to_lines(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now raises ImportError
    out = _Terminal()
    assert list(progress([1], desc="figures", stream=out)) == [1]
    assert out.getvalue().splitlines()[0].startswith("figures [1/1] ")


def test_heartbeat_reports_the_running_step_and_the_time_left(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LIMITS_DURATIONS", str(tmp_path / "durations.json"))
    out = io.StringIO()
    with watch("slow_check", parameters={"n": 1}, stream=out, first=0.1, every=0.1):
        for _ in progress([1, 2], desc="draws", stream=io.StringIO(), label=lambda i: f"draw {i}"):
            time.sleep(0.3)
    beats = out.getvalue().splitlines()
    assert beats and all(line.startswith("slow_check: ") for line in beats)
    assert any("draws [1/2] draw 1 running" in line and "time left unknown until a step finishes" in line
               for line in beats)
    assert any("draws [2/2] draw 2 running" in line and re.search(r"about \d\.\d s left", line) for line in beats)
    # the run took longer than `first`: the next one with the same parameters states its time left from it
    out = io.StringIO()
    with watch("slow_check", parameters={"n": 1}, stream=out, first=0.05, every=10):
        time.sleep(0.1)
    assert re.search(r"about 0\.\d s left \(the last run with these parameters took 0\.\d s\)", out.getvalue())
    out = io.StringIO()
    with watch("slow_check", parameters={"n": 2}, stream=out, first=0.05, every=10):
        time.sleep(0.1)
    assert "time left unknown (no earlier run with these parameters)" in out.getvalue()


def test_heartbeat_is_quiet_for_short_runs_and_when_silenced(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LIMITS_DURATIONS", "off")
    out = io.StringIO()
    with watch("quick", stream=out, first=5.0):
        time.sleep(0.05)
    with silenced(True), watch("silenced", stream=out, first=0.01, every=0.01):
        time.sleep(0.1)
    assert out.getvalue() == "" and progress_module.durations_path() is None


def test_a_loop_writing_lines_needs_no_heartbeat(monkeypatch):
    monkeypatch.setenv("ATTENTION_LIMITS_DURATIONS", "off")
    beats, lines = io.StringIO(), io.StringIO()
    with watch("busy", stream=beats, first=0.25, every=0.25):
        for _ in progress(range(6), desc="steps", stream=lines):
            time.sleep(0.06)
    assert beats.getvalue() == "" and len(lines.getvalue().splitlines()) == 7


def test_check_runs_are_watched(monkeypatch, capsys):
    # every check's measurement runs inside the skeleton's heartbeat
    import verify.core.progress as prog

    seen = []
    real = prog.watch

    def spy(desc, **kwargs):
        seen.append((desc, kwargs.get("parameters")))
        return real(desc, **kwargs)

    monkeypatch.setattr(prog, "watch", spy)
    from verify import pde_modes

    assert pde_modes.run().passed
    assert seen and seen[0][0] == "pde_modes" and seen[0][1]["seed"] == 0
