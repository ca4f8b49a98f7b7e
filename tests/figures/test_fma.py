"""figures.fma: FMA Figs. 1, 2, 3a/3b, 7 and the Fig. 9-left count analogue, and the fma_* --plot figures.

Every figure draws from small measurements computed once for the module (``fma._run`` replaced by them);
the paper figures at the checks' defaults are the slow tier's.
"""

import dataclasses

import pytest

from figures import fma, save_check_figure
from verify.core.claims import load_check
from verify.core.result import CheckResult

from .conftest import assert_paper_figure_writes_png, assert_registered

PAPER = ("fma-1", "fma-2", "fma-3a", "fma-3b", "fma-7", "fma-9-left")
CHECKS = ("fma_structure", "fma_quadtree", "fma_counts", "fma_hmatrix", "fma_contract", "fma_lowrank")

#: small settings holding what the figures draw: (64, 4) for Figs. 1-2, (16, 2) for Fig. 3b
SMALL = {
    "fma_structure": {"lengths": (64,), "cells": (4,), "max_exponent": 9, "count_cells": (16,)},
    "fma_quadtree": {"widths": (16,), "cells": (2,), "stencil_length": 64},
    "fma_counts": {"max_exponent": 12, "count_cells": (16,), "reference_lengths": (256,)},
    "fma_hmatrix": {"n": 64, "ranks": (1,), "seed": 3},
    "fma_contract": {"n": 64, "draws": 1, "claim": "printed"},
    "fma_lowrank": {"n": 256, "d": 32, "block_sizes": (16, 32, 64), "max_frequency": 2.0},
}


DRAWN = fma  # the figure module the ``results`` and ``small_runs`` fixtures (conftest) measure and draw with


def test_registered():
    assert_registered(fma, PAPER, CHECKS)


def test_check_drawers_read_typed_quantities(results):
    from figures._plotting import pyplot

    plt = pyplot()
    fig, axes = plt.subplots(2, 4)
    for (name, result), ax in zip(results.items(), axes.flat):
        if name == "fma_quadtree":  # as read back from JSON: typed quantities again
            result = CheckResult.from_json(result.to_json())
        fma.CHECK_FIGURES[name](result, ax)
        assert ax.has_data(), name
    # without the W = 16, r = 2 image the quadtree figure shows the far-stencil counts
    res = results["fma_quadtree"]
    check = load_check("fma_quadtree").CHECK
    other = check.assess(dataclasses.replace(res.quantities, fig3b_levels=None), check.params(**SMALL["fma_quadtree"]))
    fma.draw_fma_quadtree(other, axes.flat[-1])
    assert [t.get_text() for t in axes.flat[-1].get_xticklabels()] == [
        "far_stencils_2d_level1", "far_stencils_1d_level1", "far_stencils_1d_level2"]
    plt.close(fig)


def test_paper_figures_from_small_runs(small_runs, tmp_path):
    seeds, figs, captions = small_runs
    assert [p.name for p in fma.fig_fma1(tmp_path)] == ["fma-1.png"]
    fma.fig_fma2(tmp_path)
    fma.fig_fma3b(tmp_path)
    fma.fig_fma9_left(tmp_path)
    assert [p.name for p in fma.fig_fma7(tmp_path, formats=("png", "pdf"), seed=3)] == ["fma-7.png", "fma-7.pdf"]
    assert ("fma_hmatrix", 3) in seeds  # Fig. 7 draws random tokens: the seed reaches the check
    assert set(figs) == {"fma-1", "fma-2", "fma-3b", "fma-9-left", "fma-7"}
    assert "(d = 16, seed 3)" in captions[-1] and "L = 4" in captions[0]
    assert all(ax.has_data() or ax.patches for fig in figs.values() for ax in fig.axes if ax.get_label() != "<colorbar>")


def test_a_figure_is_written(results, tmp_path):
    save_check_figure(results["fma_contract"], tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_write_png(tmp_path, name):
    assert_paper_figure_writes_png(fma, tmp_path, name)
