"""figures.neural: NEURAL Fig. 1 and Figs. 2/3 write non-empty files; the check drawers draw their results.

The figures draw from small measurements made once per module (the drawing code is what is tested),
and the check drawers read results that went through JSON (typed quantities read back).
"""

import pytest

from figures import neural as figs
from verify.core.result import CheckResult


@pytest.fixture(scope="module")
def runs():
    from verify import neural_cost, neural_geometry

    return neural_geometry.run(grid=101, surface_grid=31), neural_cost.run(n=4, memory_n=64)


@pytest.fixture
def cheap_runs(runs, monkeypatch):
    """Draw from cheap verify runs: the drawing code is what is tested here."""
    geometry, cost = runs
    monkeypatch.setattr(figs, "_geometry", lambda seed=0: geometry)
    monkeypatch.setattr(figs, "_cost", lambda seed=0: cost)


def test_registry_names():
    assert set(figs.FIGURES) == {"neural-1", "neural-2"}
    assert set(figs.CHECK_FIGURES) == {"neural_rank", "neural_geometry", "neural_cost", "neural_expressivity"}


@pytest.mark.parametrize("name, formats", [("neural-1", ("png",)), ("neural-2", ("pdf",))])  # pdf on request
def test_figure_hands_its_files_to_save(name, formats, cheap_runs, tmp_path, monkeypatch):
    """Each figure is drawn, laid out and handed to ``save`` with the formats asked for, not written (saving is
    test_plotting's; save_check_figure writes a file below; the slow tier writes both at the defaults)."""
    from figures._plotting import pyplot

    kept = []
    monkeypatch.setattr(figs, "save", lambda fig, out_dir, name, formats: kept.append((fig, formats)) or [
        tmp_path / f"{name}.{fmt}" for fmt in formats])
    paths = figs.FIGURES[name](tmp_path, formats=formats)
    assert sorted(p.name for p in paths) == sorted(f"{name}.{fmt}" for fmt in formats)
    ((fig, asked),) = kept
    try:
        assert asked == formats and fig.texts and all(ax.tables or ax.has_data() for ax in fig.axes)
    finally:
        pyplot().close(fig)


class _Drawn(Exception):
    pass


def test_seed_reaches_the_checks(monkeypatch, tmp_path):
    seen = []

    def stop(check):
        def run(seed=0):
            seen.append((check, seed))
            raise _Drawn
        return run

    monkeypatch.setattr(figs, "_geometry", stop("geometry"))
    monkeypatch.setattr(figs, "_cost", stop("cost"))
    for fig in (figs.fig_neural1, figs.fig_neural2):
        with pytest.raises(_Drawn):
            fig(tmp_path, formats=("png",), seed=5)
    assert seen == [("geometry", 5), ("cost", 5)]


def _json(result):
    return CheckResult.from_json(result.to_json())


def test_check_figure_is_saved_from_a_json_round_trip(runs, tmp_path):
    from figures import save_check_figure

    geometry, _ = runs  # the ReLU run of the module: its crease lines are drawn
    back = _json(geometry)
    assert type(back.quantities) is type(geometry.quantities)
    save_check_figure(back, tmp_path / "g.png")
    assert (tmp_path / "g.png").stat().st_size > 5000


@pytest.mark.parametrize("check, kwargs", [
    ("neural_rank", dict(n=32, d=8, d_prime=(2,), hidden=(4,))),
    ("neural_geometry", dict(grid=51, surface_grid=21, activation="tanh")),  # no creases
    ("neural_cost", None),
    ("neural_expressivity", dict(n=32, hidden=4, max_iter=5)),
])
def test_check_drawers_render_a_json_round_trip(check, kwargs, runs):
    from figures._plotting import pyplot
    from verify.core.claims import load_check

    result = _json(load_check(check).run(**kwargs) if kwargs is not None else runs[1])
    assert type(result.quantities) is load_check(check).CHECK.quantities_type
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    try:
        figs.CHECK_FIGURES[check](result, ax)
        fig.canvas.draw()  # renders every artist (the figure's file format is save_check_figure's business)
        assert ax.get_title().startswith(f"{check}") and (ax.lines or ax.patches or ax.collections)
        if check == "neural_geometry":
            assert not ax.lines  # a smooth surface has no crease lines
    finally:
        plt.close(fig)


@pytest.mark.slow
def test_figures_at_default_settings(tmp_path):
    from figures.__main__ import main

    assert main(["neural-1", "neural-2", "--out", str(tmp_path)]) == 0
    assert all((tmp_path / f"{name}.png").stat().st_size > 5000 for name in figs.FIGURES)
