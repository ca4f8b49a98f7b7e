"""python -m figures: the listing, options checked before any work, formats/dpi/seed passed through, errors.

The figures themselves are tested per module (tests/figures/test_<module>.py); here stand-in figures
record what the command line hands them, so nothing heavy runs.
"""

import subprocess
import sys

import pytest

import figures
from figures import __main__ as cli
from figures._plotting import pyplot, save


def _stand_in(line=None):
    """A 2 x 1 inch figure with an axes frame (and a line) but no text: no fonts to lay out or embed."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(2.0, 1.0))
    ax.set_xticks([])
    ax.set_yticks([])
    if line is not None:
        ax.plot(line, line)
    return fig


@pytest.fixture
def fake(monkeypatch):
    """A registry of two stand-in figures: 'seeded' (takes a seed) and 'fixed' (does not); calls recorded."""
    calls = []

    def seeded(out_dir, *, formats=("png",), seed=0):
        """Seeded stand-in: a line."""
        calls.append(("seeded", seed, formats))
        return save(_stand_in([0, 1]), out_dir, "seeded", formats)

    def fixed(out_dir, *, formats=("png",)):
        """Fixed stand-in: nothing random."""
        calls.append(("fixed", None, formats))
        return save(_stand_in(), out_dir, "fixed", formats)

    monkeypatch.setattr(cli, "registry", lambda: {"fixed": fixed, "seeded": seeded})
    return calls


def test_listing_has_one_description_line_per_figure(capsys):
    assert cli.main([]) == 0
    out = capsys.readouterr().out.splitlines()
    reg = figures.registry()
    for name, fn in reg.items():
        row = next(line for line in out if line.split()[:1] == [name])
        assert row.split(None, 1)[1] == figures.describe(fn) != "(no description)"
    assert len([line for line in out if line.split()[:1] and line.split()[0] in reg]) == len(reg)


#: every figure of the papers that can be regenerated from synthetic data (the ledger's figure table)
PAPER_FIGURES = {"fna-1", "fna-2a", "fna-2a-inset", "fna-2b", "fna-2c", "fna-5a", "fna-5b", "fna-5c", "fna-5d", "fna-5e",
                 "drift-2", "pde-16", "pde-2", "pde-3", "pde-4", "fma-1", "fma-2", "fma-3a", "fma-3b", "fma-7",
                 "fma-9-left", "neural-1", "neural-2"}


def test_the_figure_table_is_complete():
    assert PAPER_FIGURES <= set(figures.registry())


def test_every_registered_figure_takes_out_dir_and_formats():
    import inspect

    for name, fn in figures.registry().items():
        params = inspect.signature(fn).parameters
        assert "formats" in params and params["formats"].kind is inspect.Parameter.KEYWORD_ONLY, name
        if "seed" in params:
            assert params["seed"].default == 0, name


@pytest.mark.parametrize("argv, words", [
    (["nope", "--out", "{tmp}"], ["unknown figure 'nope'", "available"]),
    (["fixed"], ["--out DIR is required"]),
    (["fixed", "--out", "/dev/null/x"], ["--out", "'/dev/null' is not a folder"]),
    (["fixed", "--out", "{tmp}/file.txt"], ["--out", "is not a folder"]),
    (["fixed", "--out", "{tmp}", "--format", "png,jpg"], ["--format", "'jpg'"]),
    (["fixed", "--out", "{tmp}", "--dpi", "10"], ["--dpi", "[50, 1200]", "10"]),
    (["fixed", "--out", "{tmp}", "--dpi", "3e2"], ["--dpi must be an integer"]),
    (["fixed", "--out", "{tmp}", "--seed", "-1"], ["--seed", "-1"]),
])
def test_bad_input_is_one_line_before_any_work(fake, tmp_path, capsys, argv, words):
    (tmp_path / "file.txt").write_text("x")
    assert cli.main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("python -m figures: error:")
    for w in words:
        assert w in err
    assert fake == []  # nothing was computed


def test_unwritable_folder_is_refused(fake, monkeypatch, tmp_path, capsys):
    # the tests run as root, whom permission bits do not stop: the folder is tried, and a write that fails refuses
    import tempfile

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert cli.main(["fixed", "--out", str(tmp_path / "figs")]) == 2
    assert "cannot write in this folder (Permission denied)" in capsys.readouterr().err
    assert not (tmp_path / "figs").exists()  # the folder made to try it is removed again
    assert cli.main(["fixed", "--out", str(tmp_path)]) == 2
    assert "cannot write in this folder" in capsys.readouterr().err
    assert fake == []


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs Linux's /proc")
@pytest.mark.parametrize("out, words", [("/proc/nope", "cannot create the folder '/proc/nope'"),
                                        ("/proc", "cannot write in this folder")])
def test_proc_is_refused_before_any_figure(fake, capsys, out, words):
    # the reported bug: `figures all --out /proc/nope` drew a figure, then printed two chained tracebacks
    assert cli.main(["all", "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err
    assert fake == []


def test_a_write_that_fails_after_the_check_is_one_line(monkeypatch, tmp_path, capsys):
    def full_disk(out_dir, *, formats=("png",)):
        """Fails to write."""
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli, "registry", lambda: {"a": full_disk})
    assert cli.main(["all", "--out", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"python -m figures a: error: cannot write to --out {str(tmp_path)!r}: No space left on "
                           "device")


def test_formats_dpi_and_seed_reach_the_figures(fake, tmp_path, capsys, house_dpi):
    out = tmp_path / "new" / "figs"  # created on demand
    assert cli.main(["seeded", "fixed", "--out", str(out), "--format", "png,pdf", "--format", "svg",
                     "--dpi", "100", "--seed", "7", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert ("seeded", 7, ("png", "pdf", "svg")) in fake and ("fixed", None, ("png", "pdf", "svg")) in fake
    printed = captured.out.split()
    assert sorted(printed) == sorted(str(out / f"{n}.{e}") for n in ("seeded", "fixed") for e in ("png", "pdf", "svg"))
    assert "--seed does not change fixed" in captured.err
    from PIL import Image

    with Image.open(out / "seeded.png") as im:  # 2 x 1 inch at 100 dpi, bbox tight trims a little
        assert 120 <= im.size[0] <= 205 and im.info["dpi"][0] == pytest.approx(100, abs=0.5)
    assert (out / "seeded.pdf").read_bytes()[:5] == b"%PDF-"


def test_default_is_300_dpi_png_and_vector_pdf(fake, tmp_path, capsys, house_dpi):
    assert cli.main(["all", "--out", str(tmp_path), "--quiet"]) == 0
    capsys.readouterr()
    from PIL import Image

    with Image.open(tmp_path / "seeded.png") as im:
        assert im.info["dpi"][0] == pytest.approx(300, abs=0.5)
    assert (tmp_path / "seeded.pdf").exists()


def test_a_refusing_figure_is_reported_and_the_others_still_drawn(monkeypatch, tmp_path, capsys):
    from spectral.floor.validation import InputError

    def refusing(out_dir, *, formats=("png",)):
        """Refuses."""
        raise InputError("n must be an integer in [8, inf), got 3")

    def fine(out_dir, *, formats=("png",)):
        """Draws."""
        return save(_stand_in(), out_dir, "fine", formats)

    monkeypatch.setattr(cli, "registry", lambda: {"a": refusing, "b": fine})
    assert cli.main(["all", "--out", str(tmp_path), "--format", "png", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == "python -m figures a: error: n must be an integer in [8, inf), got 3"
    assert captured.out.split() == [str(tmp_path / "fine.png")]


def test_a_bug_is_not_hidden(monkeypatch, tmp_path):
    def broken(out_dir, *, formats=("png",)):
        """Broken."""
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli, "registry", lambda: {"broken": broken})
    with pytest.raises(ZeroDivisionError):
        cli.main(["broken", "--out", str(tmp_path), "--quiet"])


def test_progress_lines_on_stderr(fake, tmp_path, capsys):
    assert cli.main(["fixed", "--out", str(tmp_path), "--format", "png"]) == 0
    err = capsys.readouterr().err
    assert "figures [1/1] fixed" in err


def test_module_entry_point_refuses_dev_null_fast(tmp_path):
    # the reported bug: `--out /dev/null/x` computed for 6 s, then printed a traceback
    proc = subprocess.run([sys.executable, "-m", "figures", "fna-2b", "--out", "/dev/null/x"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
