"""figures.fna_limits: FNA Fig. 2a and the figures of weyl, fna_rate, fractional_limit and density_normalisation."""

import numpy as np
import pytest

import figures
from figures import fna_limits
from verify.core.result import CheckResult

CHEAP = {
    "weyl": (["--n", "1000"], dict(n=1000)),
    "fna_rate": (["--alphas", "1.5,1.8", "--n-scales", "4", "--scale-min", "1e-3"],
                 dict(alphas=(1.5, 1.8), n_scales=4, scale_min=1e-3)),
    "fractional_limit": (["--densities", "cosine,vonmises", "--queries", "16", "--iid-n", "0"],
                         dict(densities=("cosine", "vonmises"), queries=16, iid_n=0)),
    "density_normalisation": (["--alphas", "2", "--n", "800", "--densities", "cosine"],
                              dict(alphas=(2.0,), n=800, densities=("cosine",))),
}


CHEAP_RATE = dict(alphas=(1.5,), n_scales=4, scale_min=1e-3, control_scales=0)


def test_registered():
    assert figures.registry()["fna-2a"] is fna_limits.fig_fna2a
    assert figures.registry()["fna-2a-inset"] is fna_limits.fig_fna2a_inset
    for name in CHEAP:
        assert figures.check_drawer(name) is getattr(fna_limits, f"draw_{name}")


@pytest.mark.parametrize("name", sorted(CHEAP))
def test_plot_option_saves_the_figure(tmp_path, capsys, name):
    from verify.core.claims import load_check

    argv, _ = CHEAP[name]
    path = tmp_path / f"{name}.png"
    assert load_check(name).main([*argv, "--quiet", "--plot", str(path)]) == 0
    assert path.stat().st_size > 5000
    capsys.readouterr()


@pytest.mark.parametrize("name", sorted(CHEAP))
def test_draws_a_result_read_back_from_json(name):
    # a figure draws what the check returned, also after the JSON round trip (lists for tuples)
    from verify.core.claims import load_check

    from figures._plotting import pyplot

    _, kwargs = CHEAP[name]
    result = CheckResult.from_json(load_check(name).run(**kwargs).to_json())
    plt = pyplot()
    fig, ax = plt.subplots()
    try:
        getattr(fna_limits, f"draw_{name}")(result, ax)
        assert ax.get_title().startswith(f"{name}: PASS")
        assert len(ax.get_lines()) + len(ax.collections) >= 2 and ax.get_legend() is not None
    finally:
        plt.close(fig)


def test_weyl_figure_shows_a_failed_verdict():
    from verify import weyl

    from figures._plotting import pyplot

    plt = pyplot()
    fig, ax = plt.subplots()
    try:
        fna_limits.draw_weyl(weyl.run(n=400, kernel_alpha=1.5), ax)
        assert ax.get_title().startswith("weyl: FAIL")
    finally:
        plt.close(fig)


def test_weyl_figure_plots_lambda_j_against_j_with_guides():
    from verify import weyl

    from figures._plotting import pyplot

    from .conftest import points_under_legend

    plt = pyplot()
    res = weyl.run(alpha=1.2, modes=30)
    fig, ax = plt.subplots()
    try:
        fna_limits.draw_weyl(res, ax)
        lines = {line.get_label(): line for line in ax.get_lines()}
        measured = next(v for k, v in lines.items() if k.startswith("measured"))
        assert np.array_equal(measured.get_xdata(), np.arange(1, 31))  # against j, not k
        assert np.allclose(measured.get_ydata(), res.arrays["lambda_j"])
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


def test_fna2a_draws_both_settings_both_alphas_and_the_convergence_panel(tmp_path, monkeypatch, captured):
    monkeypatch.setattr(fna_limits, "RATE_ARGS", CHEAP_RATE)
    figs = captured(fna_limits)
    paths = fna_limits.fig_fna2a(tmp_path, formats=("png", "pdf"))
    assert [p.name for p in paths] == ["fna-2a.png", "fna-2a.pdf"] and all(p.stat().st_size > 20_000 for p in paths)
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
    from verify import weyl

    paper = weyl.run(alpha=1.2, modes=fna_limits.FIG2A_MODES, paper_setting=True)
    for needed in ("d_M = 1", "not stated in the paper", "assumed", f"{paper.measured['naive_slope_j']:.3f}",
                   f"{paper.measured['slope']:.3f}", "FNA-13"):
        assert needed in text, needed


def test_fna2a_inset(tmp_path, monkeypatch, captured):
    monkeypatch.setattr(fna_limits, "RATE_ARGS", CHEAP_RATE)
    kept = captured(fna_limits)
    paths = fna_limits.fig_fna2a_inset(tmp_path, formats=("png",))
    assert [p.name for p in paths] == ["fna-2a-inset.png"] and paths[0].stat().st_size > 5000
    text = kept[0].texts[-1].get_text()
    assert "not like t = κ^α" in text and "(α = 1.5, k = 2)" in text
