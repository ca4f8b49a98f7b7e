"""figures.fna_levy: FNA Fig. 1 and the levy / levy_jumps check figures."""

import pytest

import figures
from figures import fna_levy

LEVY_CHEAP = dict(alphas=(1.2, 2.0), n_samples=200_000, n_ks=300)
JUMPS_CHEAP = dict(alphas=(1.5, 2.0), circle_n=800, circle_scale=0.12, circle_window=(0.6, 3.0), torus_n=800,
                   torus_scale=0.02, torus_window=(0.15, 0.45), jumps=0)


def test_registered():
    reg = figures.registry()
    assert reg["fna-1"] is fna_levy.fig_fna1
    assert figures.check_drawer("levy") is fna_levy.draw_levy
    assert figures.check_drawer("levy_jumps") is fna_levy.draw_levy_jumps


def test_fig1_cheap(tmp_path, monkeypatch, captured):
    # cheaper verify settings than the figure's (same code paths)
    monkeypatch.setattr(fna_levy, "LEVY_ARGS", LEVY_CHEAP)
    kept = captured(fna_levy)
    paths = fna_levy.fig_fna1(tmp_path, formats=("png", "pdf"), seed=2)
    assert [p.name for p in paths] == ["fna-1.png", "fna-1.pdf"] and paths[0].stat().st_size > 5000
    (fig,) = kept
    ccdf, flight, gauss = fig.axes[:3]
    from .conftest import points_under_legend

    assert points_under_legend(ccdf) == 0
    assert ccdf.get_xscale() == "log" and len(flight.get_lines()) >= 2 and gauss.get_lines()
    text = fig.texts[-1].get_text()
    assert "seed 2" in text and "2·10⁵" in text and "assumed" in text


def test_fig1_defaults_follow_the_figure_table():
    # the figure table: alpha in {1.2, 1.5, 2}, 10^6 Chambers-Mallows-Stuck samples
    assert fna_levy.LEVY_ARGS == dict(alphas=(1.2, 1.5, 2.0), n_samples=1_000_000)


def test_check_figures_through_plot_option(tmp_path, capsys):
    from verify import levy, levy_jumps

    argv = {levy: ["--alphas", "1.2,2", "--n-samples", "200000", "--n-ks", "300"],
            levy_jumps: ["--alphas", "1.5,2", "--circle-n", "800", "--circle-scale", "0.12", "--circle-window",
                         "0.6,3", "--torus-n", "800", "--torus-scale", "0.02", "--torus-window", "0.15,0.45",
                         "--jumps", "0"]}
    for module, args in argv.items():
        path = tmp_path / f"{module.CHECK.name}.png"
        assert module.main([*args, "--quiet", "--plot", str(path)]) == 0
        assert path.stat().st_size > 5000
    capsys.readouterr()


@pytest.mark.slow
def test_figures_default(tmp_path):
    for fn in fna_levy.FIGURES.values():
        paths = fn(tmp_path, formats=("png", "pdf"))
        assert all(p.stat().st_size > 5000 for p in paths)
