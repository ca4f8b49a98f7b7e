"""figures.fna_mechanism: every figure writes a non-empty PNG (and PDF on request); the fig2bc and
multiscale check figures draw through ``--plot``."""

import pytest

import figures
from figures import fna_mechanism as figs

CHEAP_MULTISCALE = dict(datasets=("sequence",), dims=(8,), sizes=(16, 32), draws=2, dm_dims=(8,), dm_n=64,
                        alphas=(1.2, 2.0))


@pytest.fixture(scope="module")
def runs():
    from verify import fig2bc, multiscale

    return multiscale.run(**CHEAP_MULTISCALE), fig2bc.run(draws=20)


@pytest.fixture
def cheap_runs(runs, monkeypatch):
    """Draw from cheap verify runs (the drawing code is what is tested here; the full-size
    runs are in the slow test below and in tests/verify/)."""
    ms, f2 = runs
    monkeypatch.setattr(figs, "_multiscale", lambda **kwargs: ms)
    monkeypatch.setattr(figs, "_fig2bc", lambda: f2)


def test_registry_names():
    assert set(figs.FIGURES) == {"fna-2b", "fna-2c", "fna-5a", "fna-5b", "fna-5c", "fna-5d", "fna-5e"}
    assert figures.check_drawer("fig2bc") is figs.draw_fig2bc
    assert figures.check_drawer("multiscale") is figs.draw_multiscale


@pytest.mark.parametrize("name", sorted(figs.FIGURES))
def test_figure_writes_png(name, cheap_runs, tmp_path):
    paths = figs.FIGURES[name](tmp_path, formats=("png",))
    assert [p.name for p in paths] == [f"{name}.png"]
    assert paths[0].stat().st_size > 5000


def test_pdf_on_request(cheap_runs, tmp_path):
    paths = figs.fig_fna2b(tmp_path, formats=("png", "pdf"))
    assert sorted(p.suffix for p in paths) == [".pdf", ".png"]
    assert all(p.stat().st_size > 1000 for p in paths)


def test_check_figures(runs, tmp_path):
    for result in runs:
        path = tmp_path / f"{result.check}.png"
        figures.save_check_figure(result, path)
        assert path.stat().st_size > 5000


def test_plot_option(tmp_path, capsys):
    from verify import fig2bc

    path = tmp_path / "fig2bc.png"
    assert fig2bc.main(["--draws", "20", "--quiet", "--plot", str(path)]) == 0
    assert path.stat().st_size > 5000
    capsys.readouterr()


@pytest.mark.slow
def test_all_figures_at_default_settings(tmp_path):
    from figures.__main__ import main

    assert main([*sorted(figs.FIGURES), "--out", str(tmp_path)]) == 0
    assert all((tmp_path / f"{name}.png").stat().st_size > 5000 for name in figs.FIGURES)
