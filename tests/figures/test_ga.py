"""figures.ga: the GA figures (moments against the ODEs, clouds; covariance growth and the coupling condition) and
the ga_* --plot figures, drawn from small measurements computed once (the defaults are the slow tier's)."""

import pytest

from figures import ga, save_check_figure

from .conftest import assert_check_drawer_reads_json, assert_paper_figure_writes_png, assert_registered

PAPER = ("ga-1", "ga-2")
SMALL = {
    "ga_moments": dict(cases=("softmax", "sinkhorn"), sizes=(16, 32, 64), repeats=4),
    "ga_covariance": dict(draws=1, dims=(3,), t_long=1000),
    "ga_conditions": dict(sizes=(32, 64, 128), repeats=4),
}

DRAWN = ga  # the figure module the ``results`` and ``small_runs`` fixtures (conftest) measure and draw with


def test_registered():
    assert_registered(ga, PAPER, SMALL)


def test_paper_figures_from_small_runs(small_runs, tmp_path):
    seeds, figs, captions = small_runs
    assert [p.name for p in ga.fig_ga1(tmp_path, seed=3)] == ["ga-1.png"]
    ga.fig_ga2(tmp_path)
    assert ("ga_moments", 3) in seeds
    assert set(figs) == set(PAPER)
    assert all(ax.has_data() for fig in figs.values() for ax in fig.axes)
    assert "T* = " in captions[1] and "Check ga_moments" in captions[0]


@pytest.mark.parametrize("name", list(SMALL))
def test_check_drawers_read_typed_quantities_from_json(results, name):
    assert_check_drawer_reads_json(ga, results[name], name)


def test_a_check_figure_is_written(results, tmp_path):
    save_check_figure(results["ga_covariance"], tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_write_png(tmp_path, name):
    assert_paper_figure_writes_png(ga, tmp_path, name)
