"""figures.fna_levy: FNA Fig. 1 and the Fig. 2a convergence inset write non-empty images."""

import pytest

from figures import fna_levy
from figures.__main__ import registry


def test_registered():
    reg = registry()
    assert reg["fna-1"] is fna_levy.fig_fna1 and reg["fna-2a-inset"] is fna_levy.fig_fna2a_inset


def test_figures_cheap(tmp_path, monkeypatch):
    # cheaper verify settings than the figures' defaults (same code paths)
    monkeypatch.setattr(fna_levy, "LEVY_ARGS", dict(alphas=(1.2, 2.0), n_samples=200_000, n_ks=300))
    monkeypatch.setattr(fna_levy, "RATE_ARGS", dict(alphas=(1.5,), n_scales=4, scale_min=1e-3))
    for fn, name in ((fna_levy.fig_fna1, "fna-1"), (fna_levy.fig_fna2a_inset, "fna-2a-inset")):
        paths = fn(tmp_path, formats=("png",))
        assert [p.name for p in paths] == [f"{name}.png"] and paths[0].stat().st_size > 5000


@pytest.mark.slow
def test_figures_default(tmp_path):
    for fn in fna_levy.FIGURES.values():
        paths = fn(tmp_path, formats=("png", "pdf"))
        assert all(p.stat().st_size > 5000 for p in paths)
