"""figures.sk: SK figures 1-4 and the --plot figures of the sk_* checks, from cheap runs.

The default tier draws one check figure and one read back from JSON (matplotlib at 300 dpi is most of the
cost); the paper figures and the other check figures are in the slow tier.
"""

import functools

import pytest

from figures import save_check_figure, sk
from verify import sk_convergence, sk_generator, sk_heat, sk_rates

from .conftest import assert_registered

PAPER = ("sk-1", "sk-2", "sk-3", "sk-4")
CHECK_OF = {"sk-1": "sk_heat", "sk-2": "sk_generator", "sk-3": "sk_rates", "sk-4": "sk_convergence"}


@functools.cache
def _cheap(check, seed=0):
    if check == "sk_heat":
        return sk_heat.run(circle_n=150, sphere_n=300, eps=0.06, circle_time=0.12, sphere_time=0.12, seed=seed)
    if check == "sk_generator":
        return sk_generator.run(circle_grid_n=500, sphere_grid_n=500, sphere_grid_eps=0.06, circle_iid_n=500,
                                sphere_iid_n=500, sphere_iid_eps=0.06, seed=seed)
    if check == "sk_rates":
        return sk_rates.run(manifolds=("circle",), sizes=(60, 120, 240), repeats=2, seed=seed)
    return sk_convergence.run(n=120, seed=seed)


def test_registered():
    assert_registered(sk, PAPER, sk.CHECK_FIGURES)


@pytest.mark.parametrize("check", ["sk_convergence", *(pytest.param(c, marks=pytest.mark.slow)
                                                       for c in ("sk_generator", "sk_heat", "sk_rates"))])
def test_check_figures(check, tmp_path):
    save_check_figure(_cheap(check), tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_from_cheap_runs(name, tmp_path, monkeypatch):
    seen = []

    def cheap(check, seed=0):
        seen.append(check)
        return _cheap(check, seed)

    monkeypatch.setattr(sk, "_run", cheap)
    paths = sk.FIGURES[name](tmp_path, formats=("png",), seed=0)
    assert [p.name for p in paths] == [f"{name}.png"] and paths[0].stat().st_size > 20_000
    assert seen == [CHECK_OF[name]]


def test_figures_read_results_back_from_json(tmp_path):
    from verify.core.result import CheckResult

    back = CheckResult.from_json(_cheap("sk_generator").to_json())
    save_check_figure(back, tmp_path / "back.png")
    assert (tmp_path / "back.png").stat().st_size > 10_000
