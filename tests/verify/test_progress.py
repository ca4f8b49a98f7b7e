"""verify.core.progress: plain lines off a terminal, a tqdm bar on one, nothing when quiet."""

import io
import sys

import pytest

from verify.core.progress import is_silenced, progress, silenced


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_lines_off_a_terminal():
    out = io.StringIO()
    items = list(progress(["a", "b", "c"], desc="verify", label=str.upper, stream=out))
    assert items == ["a", "b", "c"]
    lines = out.getvalue().splitlines()
    assert [line.rsplit(" ", 2)[0] for line in lines[:3]] == ["verify [1/3] A", "verify [2/3] B", "verify [3/3] C"]
    assert all(line.endswith(" s") for line in lines)
    assert lines[3].startswith("verify: 3 done in ") and lines[3].endswith(" s")


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
