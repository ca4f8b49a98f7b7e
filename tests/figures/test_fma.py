"""figures.fma: FMA Figs. 1, 2, 3a/3b, 7 and the Fig. 9-left count analogue, and the fma_* --plot figures."""

import pytest

from figures import check_drawer, fma, registry, save_check_figure
from verify import fma_contract, fma_counts, fma_hmatrix, fma_structure

PAPER = ("fma-1", "fma-2", "fma-3a", "fma-3b", "fma-7", "fma-9-left")
CHECKS = ("fma_structure", "fma_quadtree", "fma_counts", "fma_hmatrix", "fma_contract", "fma_lowrank")


def test_registered():
    reg = registry()
    for name in PAPER:
        assert reg[name] is fma.FIGURES[name]
    for name in CHECKS:
        assert check_drawer(name) is fma.CHECK_FIGURES[name]


@pytest.mark.parametrize("result", [
    lambda: fma_structure.run(lengths=(64,), cells=(4,), max_exponent=9),
    lambda: fma_counts.run(max_exponent=10, reference_lengths=(256,)),
    lambda: fma_hmatrix.run(n=64, ranks=(1,)),
    lambda: fma_contract.run(n=64, draws=1, claim="printed"),
], ids=["structure", "counts", "hmatrix", "contract-printed"])
def test_check_figures(tmp_path, result):
    res = result()
    save_check_figure(res, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 10_000


def test_fig1_from_a_structure_run(tmp_path, monkeypatch):
    small = fma_structure.run(lengths=(64,), cells=(4,), max_exponent=9)
    monkeypatch.setattr(fma, "_run", lambda check, seed=0: small)
    paths = fma.fig_fma1(tmp_path)
    assert [p.name for p in paths] == ["fma-1.png"] and paths[0].stat().st_size > 10_000
    assert fma.fig_fma2(tmp_path)[0].stat().st_size > 10_000


def test_fig7_and_fig9_at_their_settings(tmp_path):
    # cheap at the figure's own settings; fig. 7 draws random tokens and takes the seed
    paths = fma.fig_fma7(tmp_path, formats=("png", "pdf"), seed=3)
    assert [p.name for p in paths] == ["fma-7.png", "fma-7.pdf"]
    assert fma._run("fma_hmatrix", 3).parameters["seed"] == 3
    assert fma.fig_fma9_left(tmp_path)[0].stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_write_png(tmp_path, name):
    paths = fma.FIGURES[name](tmp_path)
    assert [p.name for p in paths] == [f"{name}.png"]
    assert paths[0].stat().st_size > 10_000
