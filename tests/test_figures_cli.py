"""python -m figures: listing and bad input (the figures themselves are tested per module)."""

from figures.__main__ import main, registry


def test_listing_and_errors(capsys):
    assert main([]) == 0
    listed = capsys.readouterr().out.split()
    assert listed == list(registry()) or listed == ["no", "figures", "installed"]
    assert main(["no-such-figure", "--out", "x"]) == 2
    err = capsys.readouterr().err
    assert "unknown figure" in err and err.count("\n") == 1
    if registry():
        assert main([next(iter(registry()))]) == 2
        assert "--out" in capsys.readouterr().err
