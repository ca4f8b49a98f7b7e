"""figures.neural: NEURAL Fig. 1 and Figs. 2/3 write non-empty files; the check drawers draw their results."""

import pytest

from figures import neural as figs


@pytest.fixture(scope="module")
def runs():
    from verify import neural_cost, neural_geometry

    return neural_geometry.run(grid=201, surface_grid=41), neural_cost.run(n=6, memory_n=128)


@pytest.fixture
def cheap_runs(runs, monkeypatch):
    """Draw from cheap verify runs: the drawing code is what is tested here."""
    geometry, cost = runs
    monkeypatch.setattr(figs, "_geometry", lambda seed=0: geometry)
    monkeypatch.setattr(figs, "_cost", lambda seed=0: cost)


def test_registry_names():
    assert set(figs.FIGURES) == {"neural-1", "neural-2"}
    assert set(figs.CHECK_FIGURES) == {"neural_rank", "neural_geometry", "neural_cost", "neural_expressivity"}


@pytest.mark.parametrize("name", sorted(figs.FIGURES))
def test_figure_writes_png(name, cheap_runs, tmp_path):
    paths = figs.FIGURES[name](tmp_path, formats=("png",))
    assert [p.name for p in paths] == [f"{name}.png"]
    assert paths[0].stat().st_size > 5000


def test_seed_reaches_the_checks(monkeypatch, tmp_path, runs):
    seen = []
    geometry, cost = runs
    monkeypatch.setattr(figs, "_geometry", lambda seed=0: seen.append(("geometry", seed)) or geometry)
    monkeypatch.setattr(figs, "_cost", lambda seed=0: seen.append(("cost", seed)) or cost)
    figs.fig_neural1(tmp_path, formats=("png",), seed=5)
    figs.fig_neural2(tmp_path, formats=("png",), seed=5)
    assert seen == [("geometry", 5), ("cost", 5)]


def test_pdf_on_request(cheap_runs, tmp_path):
    paths = figs.fig_neural2(tmp_path, formats=("png", "pdf"))
    assert sorted(p.suffix for p in paths) == [".pdf", ".png"]


@pytest.mark.parametrize("check, kwargs", [
    ("neural_rank", dict(n=32, d=8, d_prime=(2,), hidden=(4,))),
    ("neural_geometry", dict(grid=101, surface_grid=31, activation="tanh")),
    ("neural_cost", dict(n=4, memory_n=64)),
    ("neural_expressivity", dict(n=8, hidden=4, max_iter=5)),
])
def test_check_figures_draw(check, kwargs, tmp_path):
    from figures import save_check_figure
    from verify.core.claims import load_check

    result = load_check(check).run(**kwargs)
    path = tmp_path / f"{check}.png"
    save_check_figure(result, path)
    assert path.stat().st_size > 5000


def test_drawers_read_a_json_round_trip(runs, tmp_path):
    from figures import save_check_figure
    from verify.core.result import CheckResult

    geometry, _ = runs
    back = CheckResult.from_json(geometry.to_json())
    save_check_figure(back, tmp_path / "g.png")
    assert (tmp_path / "g.png").stat().st_size > 5000


@pytest.mark.slow
def test_figures_at_default_settings(tmp_path):
    from figures.__main__ import main

    assert main(["neural-1", "neural-2", "--out", str(tmp_path)]) == 0
    assert all((tmp_path / f"{name}.png").stat().st_size > 5000 for name in figs.FIGURES)
