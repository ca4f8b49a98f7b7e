"""figures.fna_levy: FNA Fig. 1 and the levy / levy_jumps check figures, drawn from one small levy run."""

import pytest

import figures
from figures import fna_levy
from verify.core.result import CheckResult

from .conftest import points_under_legend

#: cheaper verify settings than the figure's (same code paths)
LEVY_CHEAP = dict(alphas=(1.2, 2.0), n_samples=200_000, n_ks=100, high_alphas=(3.0,))


@pytest.fixture(scope="module")
def levy_result():
    """The levy run behind Fig. 1 at cheap settings, seed 2: computed once, reused by every drawing."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fna_levy, "LEVY_ARGS", LEVY_CHEAP)
        yield fna_levy.levy_result(seed=2)
    fna_levy._cached.cache_clear()


def test_registered():
    reg = figures.registry()
    assert reg["fna-1"] is fna_levy.fig_fna1
    assert figures.check_drawer("levy") is fna_levy.draw_levy
    assert figures.check_drawer("levy_jumps") is fna_levy.draw_levy_jumps


def test_fig1_defaults_follow_the_figure_table():
    # the figure table: alpha in {1.2, 1.5, 2}, 10^6 Chambers-Mallows-Stuck samples
    assert fna_levy.LEVY_ARGS == dict(alphas=(1.2, 1.5, 2.0), n_samples=1_000_000)


def test_fig1(levy_result, tmp_path, monkeypatch):
    kept = []
    monkeypatch.setattr(fna_levy, "save", lambda fig, out_dir, name, formats: kept.append(fig) or [])
    fna_levy.fig_fna1(tmp_path, seed=2)  # laid out, not written (the slow tier writes it)
    (fig,) = kept
    ccdf, flight, gauss = fig.axes[:3]
    assert points_under_legend(ccdf) == 0
    assert ccdf.get_xscale() == "log" and len(flight.get_lines()) >= 2 and gauss.get_lines()
    # the flight drawn is the typed path of the alpha = 1.2 increments
    x, y = flight.get_lines()[0].get_data()
    assert (x[-1], y[-1]) == tuple(levy_result.quantities.increments[1.2].path[-1])
    text = fig.texts[-1].get_text()
    assert "seed 2" in text and "2·10⁵" in text and "assumed" in text


def test_check_figure_of_levy_read_back_from_json(levy_result):
    from figures._plotting import pyplot

    back = CheckResult.from_json(levy_result.to_json())
    plt = pyplot()
    fig, ax = plt.subplots()
    try:
        fna_levy.draw_levy(back, ax)
        x, p = ax.get_lines()[0].get_data()
        inc = levy_result.quantities.increments[1.2]
        assert list(x) == list(inc.ccdf_x) and list(p) == list(inc.ccdf_p)
        assert ax.get_title().startswith("levy: PASS; stable steps") and "seed 2" in ax.get_title()
    finally:
        plt.close(fig)


def test_levy_jumps_figure_draws_the_jump_laws():
    from figures._plotting import pyplot
    from verify import levy_jumps

    p = levy_jumps.CHECK.params(alphas=(1.5, 2.0), circle_n=800, circle_scale=0.12, circle_window=(0.6, 3.0),
                                torus_n=800, torus_scale=0.02, torus_window=(0.15, 0.45), jumps=0, method="dense")
    res = levy_jumps.CHECK.assess(levy_jumps.CHECK.measure(p), p)
    plt = pyplot()
    fig, ax = plt.subplots()
    try:
        fna_levy.draw_levy_jumps(res, ax)
        law = res.quantities.laws[1.5]
        circle = ax.get_lines()[0]
        assert list(circle.get_xdata()) == list(law.circle_r) and list(circle.get_ydata()) == list(law.circle_mass)
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert labels[0] == f"$S^1$, $\\alpha$ = 1.5: slope {-law.circle_exponent:.3f}" and len(labels) == 3
    finally:
        plt.close(fig)


@pytest.mark.slow
def test_figures_default(tmp_path):
    for fn in fna_levy.FIGURES.values():
        paths = fn(tmp_path, formats=("png", "pdf"))
        assert all(p.stat().st_size > 5000 for p in paths)
