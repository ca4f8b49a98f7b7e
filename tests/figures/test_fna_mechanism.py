"""figures.fna_mechanism: FNA Figs. 2b/2c and the synthetic Figs. 5a-5e draw what the checks return, with
captions that state the settings, integer hop colours, legends off the data; fig2bc / multiscale --plot."""

import re

import numpy as np
import pytest

import figures
from figures import fna_mechanism as figs

from .conftest import points_under_legend

CHEAP_MULTISCALE = dict(datasets=("sequence",), dims=(8,), sizes=(16, 32), draws=2, dm_dims=(8,), dm_n=64,
                        alphas=(1.2, 2.0))
CHEAP_5A = dict(datasets=("gaussian", "clusters", "sequence"), dims=(8, 16), sizes=(16, 32), draws=2, dm_dims=(8,),
                dm_n=32, alphas=(1.2, 1.6, 2.0))


@pytest.fixture
def cheap(monkeypatch):
    """Cheap verify runs behind every figure (the drawing is what is tested; full-size runs are slow tests)."""
    monkeypatch.setattr(figs, "FIG2BC_RUN", {"draws": 20})
    monkeypatch.setattr(figs, "MECHANISM_RUN", CHEAP_MULTISCALE)
    monkeypatch.setattr(figs, "FIG5A_RUN", CHEAP_5A)
    monkeypatch.setattr(figs, "FIG5E_RUN", dict(CHEAP_MULTISCALE, sizes=(16, 24, 32)))
    yield
    figs._cached.cache_clear()


def test_registry_names():
    assert set(figs.FIGURES) == {"fna-2b", "fna-2c", "fna-5a", "fna-5b", "fna-5c", "fna-5d", "fna-5e"}
    assert figures.check_drawer("fig2bc") is figs.draw_fig2bc
    assert figures.check_drawer("multiscale") is figs.draw_multiscale


@pytest.mark.parametrize("name", sorted(figs.FIGURES))
def test_figure_writes_png_and_pdf(name, cheap, tmp_path, captured):
    kept = captured(figs)
    paths = figs.FIGURES[name](tmp_path, formats=("png", "pdf"))
    assert [p.name for p in paths] == [f"{name}.png", f"{name}.pdf"]
    assert all(p.stat().st_size > 5000 for p in paths)
    (fig,) = kept
    for ax in fig.axes:
        assert points_under_legend(ax) == 0, f"{name}: a legend hides data"
    text = fig.texts[-1].get_text()
    assert "seed 0" in text, "every caption states the seed of its data"


def test_fig2bc_captions_read_as_sentences_with_the_checks_numbers(cheap, tmp_path, captured):
    kept = captured(figs)
    figs.fig_fna2b(tmp_path, formats=("png",))
    figs.fig_fna2c(tmp_path, formats=("png",))
    res = figs._run("fig2bc", figs.FIG2BC_RUN, 0)
    b, c = (fig.texts[-1].get_text() for fig in kept)
    mean = res.measured["inter_edges_mean_alpha1.2"]
    assert f"Over all 20 draws: {mean:.1f} on average" in b
    assert "κ = 1 (κ is not stated in the paper" in b and "0.0%" not in b
    first = int(res.arrays["inter_edges_2"][0])
    assert f"{first} of its " in c and "intra-cluster edges only" in c
    assert kept[0].axes[0].get_title().startswith("$\\alpha$ = 1.2:")


def test_fig5a_has_every_token_type_and_dimension(cheap, tmp_path, captured):
    kept = captured(figs)
    figs.fig_fna5a(tmp_path, formats=("png",))
    (fig,) = kept
    panels = [ax for ax in fig.axes if ax.get_lines()]
    assert len(panels) == 3 * 2
    assert [ax.get_title() for ax in panels[:2]] == ["d = 8", "d = 16"]
    rows = [ax.get_ylabel().split("\n")[0] for ax in panels[::2]]
    assert rows == ["Gaussian tokens", "clustered tokens", "smooth-sequence tokens"]
    assert len(fig.legends) == 1 and len(fig.legends[0].get_texts()) == 4  # DP + three protocols, once
    res = figs._run("multiscale", figs.FIG5A_RUN, 0)
    g = res.arrays["gap_vs_alpha_equal_clusters_d16"]
    assert g.shape == (3, 2)
    assert f"n = {CHEAP_5A['sizes'][-1]} tokens" in fig.texts[-1].get_text()


def test_fig5d_hop_counts_are_discrete(cheap, tmp_path, captured):
    kept = captured(figs)
    figs.fig_fna5d(tmp_path, formats=("png",))
    (fig,) = kept
    res = figs._run("multiscale", figs.MECHANISM_RUN, 0)
    top = int(max(np.max(res.arrays[f"example_hops_paper_{m}"]) for m in ("fna", "local", "dp")))
    bar = fig.axes[-1]
    ticks = [re.sub(r"\$\\mathdefault\{(.*)\}\$", r"\1", t.get_text()) for t in bar.get_yticklabels()]
    assert ticks == [str(k) for k in range(top + 1)]
    titles = [ax.get_title() for ax in fig.axes[:3]]
    assert all("at most" in t and ("1 hop" in t or "hops" in t) for t in titles)
    assert not any("1 hops" in t for t in titles)


def test_seed_reaches_the_checks(cheap, tmp_path, captured):
    kept = captured(figs)
    figs.fig_fna2b(tmp_path, formats=("png",), seed=3)
    assert "seed 3" in kept[0].texts[-1].get_text()
    assert figs._run("fig2bc", figs.FIG2BC_RUN, 3).parameters["seed"] == 3


def test_check_figures(tmp_path):
    from verify import fig2bc, multiscale

    for result in (multiscale.run(**CHEAP_MULTISCALE), fig2bc.run(draws=20)):
        path = tmp_path / f"{result.check}.png"
        figures.save_check_figure(result, path)
        assert path.stat().st_size > 5000


def test_plot_option(tmp_path, capsys):
    from verify import fig2bc

    path = tmp_path / "fig2bc.png"
    assert fig2bc.main(["--draws", "20", "--quiet", "--plot", str(path)]) == 0
    assert path.stat().st_size > 5000
    capsys.readouterr()


@pytest.mark.slow
def test_all_figures_at_default_settings(tmp_path):
    from figures.__main__ import main

    assert main([*sorted(figs.FIGURES), "--out", str(tmp_path), "--quiet"]) == 0
    assert all((tmp_path / f"{name}.png").stat().st_size > 5000 for name in figs.FIGURES)
