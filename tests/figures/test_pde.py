"""figures.pde: PDE Figs. 16 (with the mode-damping panel), 2, 3, 4 and the --plot figures of the pde_* checks."""

import pytest

from figures import check_drawer, pde, registry, save_check_figure
from verify import pde_causal, pde_conservation, pde_convergence, pde_cost, pde_flow, pde_modes, pde_smoothing, \
    pde_spread

PAPER = ("pde-16", "pde-2", "pde-3", "pde-4")


def test_registered():
    reg = registry()
    for name in PAPER:
        assert reg[name] is pde.FIGURES[name]
    for name, draw in pde.CHECK_FIGURES.items():
        assert check_drawer(name) is draw


@pytest.mark.parametrize("make", [
    lambda: pde_conservation.run(sizes=(16,), steps=(1, 20)),
    lambda: pde_modes.run(size=64),
    lambda: pde_flow.run(times=(1.0,), dt_exponents=(1, 2, 3), hybrid_size=64, hybrid_steps=(0, 4, 16)),
    lambda: pde_spread.run(size=512, steps=64, softmax_draws=8),
    lambda: pde_smoothing.run(size=32, steps=200),
    lambda: pde_convergence.run(sgd_steps=500, chains=8),
    lambda: pde_causal.run(size=64, steps=(1, 2)),
    lambda: pde_cost.run(sizes=(64, 128, 256), steps=2),
])
def test_check_figures(make, tmp_path):
    res = make()
    save_check_figure(res, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 10_000


def test_plot_option_saves_the_check_figure(tmp_path, capsys):
    path = tmp_path / "m.png"
    assert pde_modes.main(["--size", "64", "--quiet", "--plot", str(path)]) == 0
    assert path.stat().st_size > 10_000
    capsys.readouterr()


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_write_png(name, tmp_path):
    paths = pde.FIGURES[name](tmp_path)
    assert [p.name for p in paths] == [f"{name}.png"]
    assert paths[0].stat().st_size > 20_000
