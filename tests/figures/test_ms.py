"""figures.ms: the MS figures (growth rates, phase table, escape rates) and the ms_* --plot figures.

The figures draw from small measurements computed once for the module (``ms._run`` replaced by them);
the figures at the checks' defaults are the slow tier's.
"""

import pytest

from figures import ms, save_check_figure

from .conftest import assert_check_drawer_reads_json, assert_paper_figure_writes_png, assert_registered

PAPER = ("ms-1", "ms-2", "ms-3")
SMALL = {
    "ms_growth": dict(betas=(2.0, 5.0), lattice_n=32, sizes=(16, 32, 64), repeats=8),
    "ms_phase": dict(betas=(2.0, 5.0), n=40, draws=3),
    "ms_escape": dict(ks=(3,), betas=(2.0, 2.5), cap_betas=(10.0,), cap_m=1),
}

DRAWN = ms


def test_registered():
    assert_registered(ms, PAPER, SMALL)


def test_paper_figures_from_small_runs(small_runs, tmp_path):
    seeds, figs, captions = small_runs
    assert [p.name for p in ms.fig_ms1(tmp_path, seed=3)] == ["ms-1.png"]
    assert [p.name for p in ms.fig_ms2(tmp_path, formats=("png", "pdf"))] == ["ms-2.png", "ms-2.pdf"]
    ms.fig_ms3(tmp_path)
    assert ("ms_growth", 3) in seeds  # random starts: the seed reaches the check
    assert set(figs) == set(PAPER)
    assert all(ax.has_data() for fig in figs.values() for ax in fig.axes)
    assert "n = 40 tokens per beta" in captions[1] and "1 - alpha" in captions[2]


@pytest.mark.parametrize("name", list(SMALL))
def test_check_drawers_read_typed_quantities_from_json(results, name):
    assert_check_drawer_reads_json(ms, results[name], name)


def test_a_check_figure_is_written(results, tmp_path):
    save_check_figure(results["ms_escape"], tmp_path / "e.png")
    assert (tmp_path / "e.png").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_write_png(tmp_path, name):
    assert_paper_figure_writes_png(ms, tmp_path, name)
