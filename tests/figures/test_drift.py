"""figures.drift: DRIFT Fig. 2 from verify.euler_steps, and the --plot figures of three DRIFT checks."""

import pytest

from figures import check_drawer, drift, registry, save_check_figure
from verify import euler_steps
from verify.claims import load_check


def test_registered():
    assert registry()["drift-2"] is drift.fig_drift2
    for name in ("drift_diffusion", "heat_rate", "euler_steps"):
        assert check_drawer(name) is drift.CHECK_FIGURES[name]


@pytest.mark.parametrize("name, kwargs", [("euler_steps", {"n": 1000, "eps_grid": (0.002, 0.004, 0.008, 0.016)}),
                                          ("drift_diffusion", {"tiers": ("circle_grid",), "grid_n": 2000}),
                                          ("heat_rate", {"repeats": 4, "test_points": 4})])
def test_check_figures(name, kwargs, tmp_path):
    res = load_check(name).run(**kwargs)
    save_check_figure(res, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 10_000


def test_plot_option_saves_the_check_figure(tmp_path, capsys):
    path = tmp_path / "e.png"
    argv = ["--n", "1000", "--eps-grid", "0.002,0.004,0.008,0.016", "--quiet", "--plot", str(path)]
    assert euler_steps.main(argv) == 0
    assert path.stat().st_size > 10_000
    capsys.readouterr()


@pytest.mark.slow
def test_drift2_writes_png(tmp_path):
    paths = drift.fig_drift2(tmp_path)
    assert [p.name for p in paths] == ["drift-2.png"]
    assert paths[0].stat().st_size > 10_000
