"""figures.fna_mechanism: FNA Figs. 2b/2c and the synthetic Figs. 5a-5e draw what the checks return, with
captions that state the settings, integer hop colours, legends off the data; fig2bc / multiscale --plot.

Every figure is drawn once per module from small verify runs (computed once, cached per settings and seed).
"""

import re

import numpy as np
import pytest

import figures
from figures import fna_mechanism as figs
from verify.core.result import CheckResult

from .conftest import points_under_legend

CHEAP_MULTISCALE = dict(datasets=("sequence",), dims=(8,), sizes=(16, 32), draws=2, dm_dims=(8,), dm_n=64,
                        alphas=(1.2, 2.0))
CHEAP_5A = dict(datasets=("gaussian", "clusters", "sequence"), dims=(8, 16), sizes=(16, 32), draws=2, dm_dims=(8,),
                dm_n=32, alphas=(1.2, 1.6, 2.0))
SEED = 3


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """name -> figure: every figure laid out once at cheap verify settings, seed 3 (not written: the slow tier
    writes every figure as PNG and PDF at its default settings, and --plot below writes a check figure)."""
    out = tmp_path_factory.mktemp("fna_mechanism")
    kept = {}

    def keep(fig, out_dir, name, formats=("png",)):
        kept[name] = fig  # laid out by caption(); points_under_legend draws where a legend needs extents
        return []

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(figs, "FIG2BC_RUN", {"draws": 20})
        mp.setattr(figs, "MECHANISM_RUN", CHEAP_MULTISCALE)
        mp.setattr(figs, "FIG5A_RUN", CHEAP_5A)
        mp.setattr(figs, "FIG5E_RUN", dict(CHEAP_MULTISCALE, sizes=(16, 24, 32)))
        mp.setattr(figs, "save", keep)
        for fn in figs.FIGURES.values():
            fn(out, seed=SEED)
        yield kept
    import matplotlib.pyplot as plt

    for fig in kept.values():
        plt.close(fig)
    figs._cached.cache_clear()


def test_registry_names():
    assert set(figs.FIGURES) == {"fna-2b", "fna-2c", "fna-5a", "fna-5b", "fna-5c", "fna-5d", "fna-5e"}
    assert figures.check_drawer("fig2bc") is figs.draw_fig2bc
    assert figures.check_drawer("multiscale") is figs.draw_multiscale


@pytest.mark.parametrize("name", sorted(figs.FIGURES))
def test_every_figure_states_its_seed_and_keeps_legends_off_the_data(drawn, name):
    fig = drawn[name]
    for ax in fig.axes:
        assert points_under_legend(ax) == 0, f"{name}: a legend hides data"
    assert f"seed {SEED}" in fig.texts[-1].get_text(), "every caption states the seed of its data"


def test_fig2bc_captions_read_as_sentences_with_the_checks_numbers(drawn):
    res = figs._run("fig2bc", figs.FIG2BC_RUN, SEED)
    assert res.parameters["seed"] == SEED  # the seed reaches the check
    b, c = (drawn[name].texts[-1].get_text() for name in ("fna-2b", "fna-2c"))
    mean = res.measured["inter_edges_mean_alpha1.2"]
    assert f"Over all 20 draws: {mean:.1f} on average" in b
    assert "κ = 1 (κ is not stated in the paper" in b and "0.0%" not in b
    first = int(res.quantities.inter_edges_2[0])
    assert f"{first} of its " in c and "intra-cluster edges only" in c
    assert drawn["fna-2b"].axes[0].get_title().startswith("$\\alpha$ = 1.2:")


def test_fig5a_has_every_token_type_and_dimension(drawn):
    fig = drawn["fna-5a"]
    panels = [ax for ax in fig.axes if ax.get_lines()]
    assert len(panels) == 3 * 2
    assert [ax.get_title() for ax in panels[:2]] == ["d = 8", "d = 16"]
    rows = [ax.get_ylabel().split("\n")[0] for ax in panels[::2]]
    assert rows == ["Gaussian tokens", "clustered tokens", "smooth-sequence tokens"]
    assert len(fig.legends) == 1 and len(fig.legends[0].get_texts()) == 4  # DP + three protocols, once
    res = figs._run("multiscale", figs.FIG5A_RUN, SEED)
    assert res.quantities.gap_vs_alpha[("clusters", 16)].equal.shape == (3, 2)
    assert f"n = {CHEAP_5A['sizes'][-1]} tokens" in fig.texts[-1].get_text()


def test_fig5d_hop_counts_are_discrete(drawn):
    fig = drawn["fna-5d"]
    hops = figs._run("multiscale", figs.MECHANISM_RUN, SEED).quantities.examples["paper"].hops
    top = int(max(np.max(hops[m]) for m in ("fna", "local", "dp")))
    bar = fig.axes[-1]
    ticks = [re.sub(r"\$\\mathdefault\{(.*)\}\$", r"\1", t.get_text()) for t in bar.get_yticklabels()]
    assert ticks == [str(k) for k in range(top + 1)]
    titles = [ax.get_title() for ax in fig.axes[:3]]
    assert all("at most" in t and ("1 hop" in t or "hops" in t) for t in titles)
    assert not any("1 hops" in t for t in titles)


def test_fig5c_draws_the_example_paths(drawn):
    fig = drawn["fna-5c"]
    example = figs._run("multiscale", figs.MECHANISM_RUN, SEED).quantities.examples["paper"]
    drawn_paths = [tuple(line.get_xdata()) for line in fig.axes[0].get_lines()]
    assert drawn_paths == [tuple(example.paths[m]) for m in ("fna", "local", "dp")]
    assert fig.axes[0].get_title() == f"shortest path from token {example.pair[0]} to token {example.pair[1]}"


def test_multiscale_check_figure_read_back_from_json(drawn):
    from figures._plotting import pyplot

    res = figs._run("multiscale", figs.MECHANISM_RUN, SEED)
    back = CheckResult.from_json(res.to_json())
    plt = pyplot()
    fig, ax = plt.subplots()
    try:
        figs.draw_multiscale(back, ax)
        curve = res.quantities.gap_vs_alpha[("sequence", 8)]
        paper = next(c for c in ax.containers if c.get_label() == r"paper $\kappa$")
        np.testing.assert_array_equal(paper.lines[0].get_ydata(), curve.paper[:, 0])
        assert ax.get_title().startswith(f"multiscale: {res.verdict}; gap vs $\\alpha$, smooth-sequence tokens")
    finally:
        plt.close(fig)


def test_fig2bc_plot_option(tmp_path, capsys):
    from verify import fig2bc

    path = tmp_path / "fig2bc.png"
    assert fig2bc.main(["--draws", "20", "--quiet", "--plot", str(path)]) == 0
    assert path.stat().st_size > 5000
    capsys.readouterr()


@pytest.mark.slow
def test_all_figures_at_default_settings(tmp_path):
    from figures.__main__ import main

    assert main([*sorted(figs.FIGURES), "--out", str(tmp_path), "--format", "png,pdf", "--quiet"]) == 0
    assert all((tmp_path / f"{name}.{fmt}").stat().st_size > 5000 for name in figs.FIGURES for fmt in ("png", "pdf"))
