"""figures.gl: GL figures 1-3 and the --plot figures of the gl_* checks, from cheap runs."""

import functools

import pytest

from figures import gl, save_check_figure
from verify import gl_constants, gl_eps_knn, gl_gaussian

from .conftest import assert_registered

PAPER = ("gl-1", "gl-2", "gl-3")


@functools.cache
def _cheap(check, seed=0):
    if check == "gl_eps_knn":
        return gl_eps_knn.run(sizes=(128, 256, 512), repeats=2, seed=seed)
    if check == "gl_gaussian":
        return gl_gaussian.run(sizes=(128, 256, 512), repeats=2, seed=seed)
    return gl_constants.run(n=600, repeats=1, seed=seed)


def test_registered():
    assert_registered(gl, PAPER, gl.CHECK_FIGURES)


@pytest.mark.parametrize("check", ("gl_eps_knn", "gl_gaussian", "gl_constants"))
def test_check_figures(check, tmp_path):
    save_check_figure(_cheap(check), tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 10_000


@pytest.mark.parametrize("name", PAPER)
def test_paper_figures_from_cheap_runs(name, tmp_path, monkeypatch):
    seen = []

    def cheap(check, seed=0):
        seen.append(check)
        return _cheap(check, seed)

    monkeypatch.setattr(gl, "_run", cheap)
    paths = gl.FIGURES[name](tmp_path, formats=("png",), seed=0)
    assert [p.name for p in paths] == [f"{name}.png"] and paths[0].stat().st_size > 20_000
    assert seen == [{"gl-1": "gl_eps_knn", "gl-2": "gl_gaussian", "gl-3": "gl_constants"}[name]]


def test_figures_read_results_back_from_json(tmp_path):
    from verify.core.result import CheckResult

    back = CheckResult.from_json(_cheap("gl_eps_knn").to_json())
    save_check_figure(back, tmp_path / "back.png")
    assert (tmp_path / "back.png").stat().st_size > 10_000
