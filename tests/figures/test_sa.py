"""figures.sa: the SA figures (phase diagram, equiangular ODE and orders, phase-transition curve, two-cluster
plateaus) and the sa_* --plot figures.

The figures draw from small measurements computed once for the module (``sa._run`` replaced by them);
the figures at the checks' defaults are the slow tier's.
"""


import pytest

from figures import sa, save_check_figure

from .conftest import assert_check_drawer_reads_json, assert_paper_figure_writes_png, assert_registered

PAPER = ("sa-1", "sa-2", "sa-3", "sa-4")
SMALL = {
    "sa_equiangular": dict(betas=(0.0, 4.0), sizes=(4,), t_max=2.0, gram_n=3, rtol=1e-9),
    "sa_clustering": dict(n=6, dims=(3,), betas=(0.0,), draws=2, t_max=32.0),
    "sa_hemisphere": dict(n=4, dims=(2,), uniform_n=3, betas=(1.0,), draws=2, t_max=15.0, mc_draws=20),
    "sa_metastability": dict(n=2, betas=(2.0, 3.0), phase_n=6, phase_betas=(1.0, 9.0), draws=2, phase_t=16.0),
    "sa_polytope": dict(n=6, dims=(2,), draws=1),
    "sa_boolean": dict(n=6, draws=3),
    "sa_high_dimension": dict(n=6, betas=(1.0,), dims=(64, 128, 256), repeats=3, t_max=1.0, curve_betas=(0.0, 4.0),
                              curve_t=4.0),
}


DRAWN = sa  # the figure module the ``results`` and ``small_runs`` fixtures (conftest) measure and draw with


def test_registered():
    assert_registered(sa, PAPER, SMALL)


def test_paper_figures_from_small_runs(small_runs, tmp_path):
    seeds, figs, captions = small_runs
    assert [p.name for p in sa.fig_sa1(tmp_path, seed=4)] == ["sa-1.png"]
    sa.fig_sa2(tmp_path)
    sa.fig_sa3(tmp_path)
    assert [p.name for p in sa.fig_sa4(tmp_path, formats=("png", "pdf"))] == ["sa-4.png", "sa-4.pdf"]
    assert ("sa_metastability", 4) in seeds  # random starts: the seed reaches the check
    assert set(figs) == set(PAPER)
    assert all(ax.has_data() for fig in figs.values() for ax in fig.axes if ax.get_label() != "<colorbar>")
    assert "n = 6 tokens on S^1" in captions[0] and "gamma_beta(t) = 1 - 0.1" in captions[2]


@pytest.mark.parametrize("name", list(SMALL))
def test_check_drawers_read_typed_quantities_from_json(results, name):
    assert_check_drawer_reads_json(sa, results[name], name)


def test_a_check_figure_is_written(results, tmp_path):
    save_check_figure(results["sa_polytope"], tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_write_png(tmp_path, name):
    assert_paper_figure_writes_png(sa, tmp_path, name)
