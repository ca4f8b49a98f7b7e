"""figures.drift: DRIFT Fig. 2 from verify.euler_steps, and the --plot figures of three DRIFT checks.

The check figures are drawn from small measurements made once per module (their typed quantities).
"""

import dataclasses

import numpy as np
import pytest

from figures import check_drawer, drift, registry
from verify import drift_diffusion, euler_steps, heat_rate
from verify.core.result import CheckResult

from .conftest import points_under_legend

SMALL = {"euler_steps": (euler_steps, {"n": 1000, "eps_grid": (0.002, 0.004, 0.008, 0.016)}),
         "drift_diffusion": (drift_diffusion, {"tiers": ("circle_grid",), "grid_n": 2000}),
         "heat_rate": (heat_rate, {"repeats": 4, "test_points": 4})}


@pytest.fixture(scope="module")
def measured():
    """name -> (params, quantities) at small settings."""
    out = {}
    for name, (module, kwargs) in SMALL.items():
        p = module.CHECK.params(**kwargs)
        out[name] = (p, module.CHECK.measure(p))
    return out


def _result(measured, name, **change):
    p, q = measured[name]
    return SMALL[name][0].CHECK.assess(q, dataclasses.replace(p, **change))


def test_registered():
    assert registry()["drift-2"] is drift.fig_drift2
    for name in ("drift_diffusion", "heat_rate", "euler_steps"):
        assert check_drawer(name) is drift.CHECK_FIGURES[name]


@pytest.mark.parametrize("name", list(SMALL))
def test_check_figures(measured, name):
    # a result read back from JSON draws from the same typed quantities as a fresh one; drawn (every artist
    # rendered once) rather than written: save_check_figure writes euler_steps' in the --plot test below
    from figures._plotting import pyplot

    res = CheckResult.from_json(_result(measured, name).to_json())
    assert type(res.quantities) is type(measured[name][1])
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    try:
        check_drawer(name)(res, ax)
        fig.canvas.draw()
        assert ax.get_title().startswith(f"{name}: {res.verdict}")
        assert len(ax.get_lines()) + len(ax.collections) >= 2 and ax.get_legend() is not None
    finally:
        plt.close(fig)


def test_plot_option_saves_the_check_figure(tmp_path, capsys):
    path = tmp_path / "e.png"
    argv = ["--n", "1000", "--eps-grid", "0.002,0.004,0.008,0.016", "--quiet", "--plot", str(path)]
    assert euler_steps.main(argv) == 0
    assert path.stat().st_size > 10_000
    capsys.readouterr()


def test_drift2_cheap(tmp_path, monkeypatch, captured):
    monkeypatch.setattr(drift, "_FIG2_N", 1000)
    monkeypatch.setattr(drift, "_FIG2_EPS", (0.002, 0.004, 0.008, 0.016))
    monkeypatch.setattr(drift, "_FIG2_TIMES", (0.0125, 0.05))
    kept = captured(drift, write=False)  # laid out, not written: the --plot test writes a file, the slow test drift-2
    paths = drift.fig_drift2(tmp_path, formats=("svg",))
    assert [p.name for p in paths] == ["drift-2.svg"]
    (fig,) = kept
    _density, layers = fig.axes[:2]
    assert points_under_legend(layers) == 0
    assert len([line for line in layers.get_lines() if line.get_label().startswith("L = ")]) == 2
    text = fig.texts[-1].get_text()
    assert "N = 1000" in text and "not stated in the paper" in text and "t = Lε/2" in text


def test_drift_diffusion_figure_shows_the_asserted_limit_when_it_is_wrong(measured):
    from figures._plotting import pyplot

    plt = pyplot()
    for wrong, curves in (("none", 2), ("sign_flip", 3)):
        res = _result(measured, "drift_diffusion", wrong_limit=wrong)
        fig, ax = plt.subplots()
        try:
            drift.draw_drift_diffusion(res, ax)
            assert len(ax.get_lines()) == curves
            assert ax.get_title().startswith(f"drift_diffusion: {'PASS' if wrong == 'none' else 'FAIL'}")
        finally:
            plt.close(fig)
    grid = res.quantities.grid
    assert not np.allclose(grid.limit("sign_flip", 0.0), grid.reference)
    np.testing.assert_allclose(grid.limit("corrected", 0.0), grid.reference, atol=1e-12)


@pytest.mark.slow
def test_drift2_writes_png(tmp_path):
    paths = drift.fig_drift2(tmp_path)
    assert [p.name for p in paths] == ["drift-2.png"]
    assert paths[0].stat().st_size > 10_000
