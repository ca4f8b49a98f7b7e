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


CHEAP = {
    "pde_conservation": lambda seed: pde_conservation.run(sizes=(16,), steps=(1, 20), seed=seed),
    "pde_modes": lambda seed: pde_modes.run(size=64, rates=pde.FIG16_RATES, seed=seed),
    "pde_spread": lambda seed: pde_spread.run(size=512, steps=64, softmax_draws=8, seed=seed),
    "pde_smoothing": lambda seed: pde_smoothing.run(size=32, steps=200, seed=seed),
    "pde_convergence": lambda seed: pde_convergence.run(sgd_steps=500, chains=8, seed=seed),
}


@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_from_cheap_runs(name, tmp_path, monkeypatch):
    seen = []

    def cheap(check, seed=0, **kwargs):
        seen.append((check, seed))
        return CHEAP[check](seed)

    monkeypatch.setattr(pde, "_run", cheap)
    takes_seed = name != "pde-2"  # pde-2 draws a delta row and a pulse: nothing random
    paths = pde.FIGURES[name](tmp_path, formats=("png", "pdf"), **({"seed": 4} if takes_seed else {}))
    assert [p.name for p in paths] == [f"{name}.png", f"{name}.pdf"]
    assert all(seed == (4 if takes_seed else 0) for _, seed in seen)


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_write_png(name, tmp_path):
    paths = pde.FIGURES[name](tmp_path)
    assert [p.name for p in paths] == [f"{name}.png"]
    assert paths[0].stat().st_size > 20_000
