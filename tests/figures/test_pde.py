"""figures.pde: PDE Figs. 16 (with the mode-damping panel), 2, 3, 4 and the --plot figures of the pde_* checks.

Every check is measured once at small settings (a module-scoped fixture); the figures are drawn from
those results, the check figures from results read back from JSON (the typed quantities a figure
reads survive the round trip); the paper figures are laid out, not written (the slow tier writes them), the
--plot figure is written at the house 300 dpi.
"""

import pytest

from figures import pde
from figures._plotting import pyplot
from verify.core.result import CheckResult

from .conftest import assert_paper_figure_writes_png, assert_registered

PAPER = ("pde-16", "pde-2", "pde-3", "pde-4")

#: small settings of each check whose results the figures draw
SMALL = {
    "pde_conservation": {"sizes": (16,), "steps": (1,)},
    "pde_modes": {"size": 32, "rates": pde.FIG16_RATES},
    "pde_flow": {"size": 16, "times": (1.0,), "dt_exponents": (1, 2, 3), "long_dt": 1.0, "layers_time": 1.0,
                 "hybrid_size": 64, "hybrid_steps": (0, 4, 16)},
    "pde_spread": {"size": 256, "steps": 32, "random_rows": 1, "softmax_draws": 8},
    "pde_smoothing": {"size": 16, "steps": 100},
    "pde_convergence": {"gd_steps": 50, "sgd_steps": 500, "chains": 8},
    "pde_causal": {"size": 32, "steps": (1, 2), "stencil_steps": 10},
    "pde_cost": {"sizes": (64, 96, 128), "steps": 1},
}


def test_registered():
    assert set(pde.CHECK_FIGURES) == set(SMALL)
    assert_registered(pde, PAPER, pde.CHECK_FIGURES)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_check_figures_draw_the_typed_quantities(results, name):
    """Each drawer reads the typed quantities of a result read back from JSON (rendering: the --plot test and
    the paper figures, which render the same panels)."""
    import numpy as np

    res = CheckResult.from_json(results[name].to_json())
    assert type(res.quantities) is type(results[name].quantities) and not res.arrays
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    try:
        pde.CHECK_FIGURES[name](res, ax)
    finally:
        plt.close(fig)
    assert ax.get_title().startswith(f"{name}: {res.verdict}")
    drawn = [np.asarray(line.get_ydata(), dtype=float) for line in ax.get_lines()]
    assert sum(int(np.isfinite(y).sum()) for y in drawn) >= 3


def test_plot_option_saves_the_check_figure(tmp_path, capsys):
    from verify import pde_modes

    path = tmp_path / "m.png"
    assert pde_modes.main(["--size", "32", "--quiet", "--plot", str(path)]) == 0
    assert path.stat().st_size > 10_000
    capsys.readouterr()


@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_from_small_runs(results, name, tmp_path, monkeypatch):
    """Each paper figure drawn from the small results and laid out with its caption, handed to ``save`` (not
    written: saving draws a figure twice more; ``save`` is test_plotting's, the --plot test above writes a file
    and the slow tier writes every paper figure)."""
    seen, kept = [], []

    def small(check, seed=0, **kwargs):
        seen.append((check, seed))
        if check == "pde_modes":
            assert kwargs == {"rates": pde.FIG16_RATES}
        return results[check]

    def keep(fig, out_dir, name, formats=("png",)):
        kept.append(fig)
        return [tmp_path / f"{name}.{fmt}" for fmt in formats]

    monkeypatch.setattr(pde, "_run", small)
    monkeypatch.setattr(pde, "save", keep)
    takes_seed = name != "pde-2"  # pde-2 draws a delta row and a pulse: nothing random
    paths = pde.FIGURES[name](tmp_path, **({"seed": 4} if takes_seed else {}))
    assert [p.name for p in paths] == [f"{name}.png"]
    (fig,) = kept
    try:
        assert fig.texts and all(ax.has_data() for ax in fig.axes if ax.get_label() != "<colorbar>")
    finally:
        pyplot().close(fig)
    assert seen and all(seed == (4 if takes_seed else 0) for _, seed in seen)


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_write_png(name, tmp_path):
    assert_paper_figure_writes_png(pde, tmp_path, name, min_bytes=20_000)
