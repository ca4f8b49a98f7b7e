"""figures.fna_limits: FNA Fig. 2a and the figures of weyl, fna_rate, fractional_limit and density_normalisation.

Each check is measured once per module at a cheap setting (module fixtures); the drawers are held to
those results, also after a JSON round trip. Fig. 2a is drawn from cheap weyl and fna_rate results
passed in (its scale sweep shortened to s = 1e-2, 1e-3: the sweep is not drawn).
"""

import numpy as np
import pytest

import figures
from figures import fna_limits
from verify.core.result import CheckResult

CHEAP = {
    "weyl": dict(n=1000),
    "fna_rate": dict(alphas=(1.5, 1.8), n_scales=4, scale_min=1e-3, control_scales=0),
    "fractional_limit": dict(densities=("cosine", "vonmises"), queries=16, iid_n=0, n=100_000, scale=5e-4),
    "density_normalisation": dict(alphas=(2.0,), n=800, densities=("cosine",)),
}


def _pyplot():
    from figures._plotting import pyplot

    return pyplot()


@pytest.fixture(scope="module")
def results():
    """check name -> its result at the cheap setting, computed once."""
    from verify.core.claims import load_check

    return {name: load_check(name).run(**kwargs) for name, kwargs in CHEAP.items()}


@pytest.fixture(scope="module")
def fig2a_inputs(results):
    """The weyl results of Fig. 2a (both settings, both alphas; the sweep shortened) and a cheap fna_rate result."""
    from verify import weyl

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(weyl, "SWEEP_SCALES", (1e-2, 1e-3))
        runs = fna_limits.weyl_runs()
    return runs, results["fna_rate"]


def test_registered():
    assert figures.registry()["fna-2a"] is fna_limits.fig_fna2a
    assert figures.registry()["fna-2a-inset"] is fna_limits.fig_fna2a_inset
    for name in CHEAP:
        assert figures.check_drawer(name) is getattr(fna_limits, f"draw_{name}")


def test_plot_option_saves_the_figure(tmp_path, capsys):
    from verify import weyl

    path = tmp_path / "weyl.png"
    assert weyl.main(["--n", "1000", "--quiet", "--plot", str(path)]) == 0
    assert path.stat().st_size > 5000
    capsys.readouterr()


@pytest.mark.parametrize("name", sorted(CHEAP))
def test_draws_a_result_read_back_from_json(results, name):
    # a figure draws what the check measured, also after the JSON round trip (lists for tuples)
    result = CheckResult.from_json(results[name].to_json())
    assert type(result.quantities) is type(results[name].quantities)
    plt = _pyplot()
    fig, ax = plt.subplots()
    try:
        getattr(fna_limits, f"draw_{name}")(result, ax)
        assert ax.get_title().startswith(f"{name}: PASS")
        assert len(ax.get_lines()) + len(ax.collections) >= 2 and ax.get_legend() is not None
    finally:
        plt.close(fig)


def test_weyl_figure_shows_a_failed_verdict():
    from verify import weyl

    plt = _pyplot()
    fig, ax = plt.subplots()
    try:
        fna_limits.draw_weyl(weyl.run(n=400, kernel_alpha=1.5), ax)
        assert ax.get_title().startswith("weyl: FAIL")
    finally:
        plt.close(fig)


def test_weyl_figure_plots_lambda_j_against_j_with_guides():
    from verify import weyl

    from .conftest import points_under_legend

    plt = _pyplot()
    res = weyl.run(alpha=1.2, modes=30)
    fig, ax = plt.subplots()
    try:
        fna_limits.draw_weyl(res, ax)
        lines = {line.get_label(): line for line in ax.get_lines()}
        measured = next(v for k, v in lines.items() if k.startswith("measured"))
        assert np.array_equal(measured.get_xdata(), np.arange(1, 31))  # against j, not k
        assert np.allclose(measured.get_ydata(), res.quantities.lambda_j)
        guides = {k: v for k, v in lines.items() if k.endswith("guide")}
        assert set(guides) == {"$j^{1.2}$ guide", "$j^{2}$ guide"}
        for label, exponent in (("$j^{1.2}$ guide", 1.2), ("$j^{2}$ guide", 2.0)):
            x, y = guides[label].get_xdata(), guides[label].get_ydata()
            assert np.polyfit(np.log(x), np.log(y), 1)[0] == pytest.approx(exponent)
        assert points_under_legend(ax) == 0
        ticks = [t.get_text() for t in ax.get_xticklabels() + ax.get_xticklabels(minor=True) if t.get_text()]
        assert ticks and all("$" not in t for t in ticks)  # one kind of tick label
    finally:
        plt.close(fig)


def test_fna2a_draws_both_settings_both_alphas_and_the_convergence_panel(tmp_path, captured, fig2a_inputs):
    runs, rate = fig2a_inputs
    figs = captured(fna_limits, write=False)  # laid out, not written: --plot above writes a file
    paths = fna_limits.fig_fna2a(tmp_path, formats=("png",), runs=runs, rate=rate)
    assert [p.name for p in paths] == ["fna-2a.png"]
    (fig,) = figs
    from .conftest import points_under_legend

    a, b, c = fig.axes[:3]
    assert "n = 500" in a.get_title() and "0.01" in a.get_title() and "n = 2000" in b.get_title()
    for ax in (a, b):
        labels = [line.get_label() for line in ax.get_lines()]
        assert {"$\\alpha$ = 1.2 (measured)", "$\\alpha$ = 2 (measured)", "$j^{1.2}$ guide", "$j^{2}$ guide"} <= set(labels)
        measured = [line for line in ax.get_lines() if line.get_label().endswith("(measured)")]
        assert all(len(line.get_xdata()) == fna_limits.FIG2A_MODES for line in measured)
        assert points_under_legend(ax) == 0
    assert c.get_xscale() == "log" and len(c.get_lines()) >= 2 and points_under_legend(c) == 0
    text = fig.texts[-1].get_text()
    paper = runs[("paper", 1.2)].quantities
    for needed in ("d_M = 1", "not stated in the paper", "assumed", f"{paper.naive_slope_j:.3f}",
                   f"{paper.slope:.3f}", "FNA-13"):
        assert needed in text, needed


def test_fna2a_inset(tmp_path, captured, fig2a_inputs):
    _, rate = fig2a_inputs
    kept = captured(fna_limits, write=False)  # laid out, not written: --plot above writes a file
    paths = fna_limits.fig_fna2a_inset(tmp_path, formats=("png",), rate=rate)
    assert [p.name for p in paths] == ["fna-2a-inset.png"] and kept[0].axes[0].has_data()
    text = kept[0].texts[-1].get_text()
    assert "not like t = κ^α" in text and "(α = 1.5, k = 2)" in text


@pytest.mark.slow
def test_fna2a_and_inset_write_png(tmp_path):
    """Fig. 2a and its inset from their own weyl and fna_rate runs, written (the default tier lays them out from
    cheap runs)."""
    paths = fna_limits.fig_fna2a(tmp_path)
    assert [p.name for p in paths] == ["fna-2a.png"] and paths[0].stat().st_size > 20_000
    paths = fna_limits.fig_fna2a_inset(tmp_path)
    assert [p.name for p in paths] == ["fna-2a-inset.png"] and paths[0].stat().st_size > 5000
