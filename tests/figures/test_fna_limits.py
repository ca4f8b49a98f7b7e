"""figures.fna_limits: the figures of weyl, fna_rate, fractional_limit and density_normalisation."""

import pytest

import figures
from figures import fna_limits
from verify.result import CheckResult

CHEAP = {
    "weyl": (["--n", "1000"], dict(n=1000)),
    "fna_rate": (["--alphas", "1.5,1.8", "--n-scales", "4", "--scale-min", "1e-3"],
                 dict(alphas=(1.5, 1.8), n_scales=4, scale_min=1e-3)),
    "fractional_limit": (["--densities", "cosine,vonmises", "--queries", "16", "--iid-n", "0"],
                         dict(densities=("cosine", "vonmises"), queries=16, iid_n=0)),
    "density_normalisation": (["--alphas", "2", "--n", "800", "--densities", "cosine"],
                              dict(alphas=(2.0,), n=800, densities=("cosine",))),
}


def test_registered():
    for name in CHEAP:
        assert figures.check_drawer(name) is getattr(fna_limits, f"draw_{name}")


@pytest.mark.parametrize("name", sorted(CHEAP))
def test_plot_option_saves_the_figure(tmp_path, capsys, name):
    from verify.claims import load_check

    argv, _ = CHEAP[name]
    path = tmp_path / f"{name}.png"
    assert load_check(name).main([*argv, "--quiet", "--plot", str(path)]) == 0
    assert path.stat().st_size > 5000
    capsys.readouterr()


@pytest.mark.parametrize("name", sorted(CHEAP))
def test_draws_a_result_read_back_from_json(name):
    # a figure draws what the check returned, also after the JSON round trip (lists for tuples)
    from verify.claims import load_check

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
