"""figures.fna_levy: FNA Fig. 1, the Fig. 2a convergence inset and the levy / levy_jumps check figures."""

import pytest

import figures
from figures import fna_levy

LEVY_CHEAP = dict(alphas=(1.2, 2.0), n_samples=200_000, n_ks=300)
JUMPS_CHEAP = dict(alphas=(1.5, 2.0), circle_n=800, circle_scale=0.12, circle_window=(0.6, 3.0), torus_n=800,
                   torus_scale=0.02, torus_window=(0.15, 0.45), jumps=0)


def test_registered():
    reg = figures.registry()
    assert reg["fna-1"] is fna_levy.fig_fna1 and reg["fna-2a-inset"] is fna_levy.fig_fna2a_inset
    assert figures.check_drawer("levy") is fna_levy.draw_levy
    assert figures.check_drawer("levy_jumps") is fna_levy.draw_levy_jumps


def test_figures_cheap(tmp_path, monkeypatch):
    # cheaper verify settings than the figures' defaults (same code paths)
    monkeypatch.setattr(fna_levy, "LEVY_ARGS", LEVY_CHEAP)
    monkeypatch.setattr(fna_levy, "RATE_ARGS", dict(alphas=(1.5,), n_scales=4, scale_min=1e-3))
    for fn, name in ((fna_levy.fig_fna1, "fna-1"), (fna_levy.fig_fna2a_inset, "fna-2a-inset")):
        paths = fn(tmp_path, formats=("png",))
        assert [p.name for p in paths] == [f"{name}.png"] and paths[0].stat().st_size > 5000


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
