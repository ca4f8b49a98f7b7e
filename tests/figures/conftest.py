"""Helpers of the figure tests: checks measured at small settings, a figure module drawing from them without
writing files, a figure captured before it is saved, data hidden under a legend."""

from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _low_dpi(request, monkeypatch):
    """PNG files at 72 dpi in the figure tests: what is drawn does not depend on it, and rasterising at the house
    300 dpi cost most of these tests' time. A test of the dpi itself asks for ``house_dpi`` and keeps it."""
    if "house_dpi" in request.fixturenames:
        return
    from matplotlib.figure import Figure

    savefig = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *args, **kwargs: savefig(self, *args, **{**kwargs, "dpi": 72}))


@pytest.fixture
def house_dpi():
    """Keep the dpi a figure is saved with (the house 300, or what the test sets): no 72-dpi shortcut."""


def small_results(small: dict) -> dict:
    """check name -> its result at the small settings ``small[name]`` (measured and assessed once)."""
    from verify.core.claims import load_check

    out = {}
    for name, kwargs in small.items():
        check = load_check(name).CHECK
        p = check.params(**kwargs)
        out[name] = check.assess(check.measure(p), p)
    return out


def drawing_from(module, results, monkeypatch):
    """``module._run`` returns ``results`` (recording the seeds asked for), ``module.save`` keeps the figures and
    ``module.caption`` the captions (their layout and the files are the slow tier's, at the defaults).

    A generator for a fixture: yields ``(seeds, figs, captions)`` and closes the figures afterwards.
    """
    seeds, figs, captions = [], {}, []

    def run(check, seed=0):
        seeds.append((check, seed))
        return results[check]

    def keep(fig, out_dir, name, formats=("png",)):
        figs[name] = fig
        return [Path(out_dir) / f"{name}.{fmt}" for fmt in formats]

    monkeypatch.setattr(module, "_run", run)
    monkeypatch.setattr(module, "save", keep)
    monkeypatch.setattr(module, "caption", lambda fig, text, **kw: captions.append(text))
    yield seeds, figs, captions
    from figures._plotting import pyplot

    for fig in figs.values():
        pyplot().close(fig)


@pytest.fixture(scope="module")
def results(request):
    """The test module's checks measured at its small settings ``SMALL`` once (:func:`small_results`)."""
    return small_results(request.module.SMALL)


@pytest.fixture
def small_runs(request, results, monkeypatch):
    """The test module's figure module ``DRAWN`` drawing from ``results``, kept without files or caption layout
    (:func:`drawing_from`)."""
    yield from drawing_from(request.module.DRAWN, results, monkeypatch)


def assert_registered(module, paper, checks):
    """Each paper figure ``paper`` of ``module.FIGURES`` and each check drawer ``checks`` of ``module.CHECK_FIGURES``
    is the one the registry names."""
    from figures import check_drawer, registry

    reg = registry()
    for name in paper:
        assert reg[name] is module.FIGURES[name]
    for name in checks:
        assert check_drawer(name) is module.CHECK_FIGURES[name]


@pytest.fixture
def captured(monkeypatch):
    """``captured(module, write=True)``: ``module.save`` keeps every figure (open) in the returned list and writes
    its files as usual (saving draws the figure; :func:`points_under_legend` lays it out again where extents are
    read); with ``write=False`` it returns the paths it would write and writes nothing (saving draws a figure
    twice: a module writes one of its figures, the slow tier every figure)."""
    figs = []

    def install(module, write=True):
        def keep(fig, out_dir, name, formats=("png",)):
            figs.append(fig)
            paths = []
            for fmt in formats:
                path = Path(out_dir) / f"{name}.{fmt}"
                if write:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    fig.savefig(path)
                paths.append(path)
            return paths

        monkeypatch.setattr(module, "save", keep)
        return figs

    yield install
    import matplotlib.pyplot as plt

    for fig in figs:
        plt.close(fig)


def points_under_legend(ax) -> int:
    """How many plotted data points (line vertices, scatter offsets) lie inside the axes' legend box."""
    legend = ax.get_legend()
    if legend is None:
        return 0
    fig = ax.figure
    if fig.stale:  # lay out (and place a loc="best" legend) once; a figure drawn since its last change is current
        fig.canvas.draw()
    box = legend.get_window_extent(fig.canvas.get_renderer())

    def inside(xy):
        x, y = xy[:, 0], xy[:, 1]
        return int(np.sum((x >= box.x0) & (x <= box.x1) & (y >= box.y0) & (y <= box.y1)))

    count = 0
    for line in ax.get_lines():
        xy = np.column_stack([np.asarray(v, dtype=float) for v in line.get_data()])
        if xy.size:
            count += inside(line.get_transform().transform(xy))
    for coll in ax.collections:
        offsets = np.asarray(coll.get_offsets(), dtype=float)
        if offsets.ndim == 2 and offsets.size:
            count += inside(coll.get_offset_transform().transform(offsets))
    return count


def assert_check_drawer_reads_json(module, result, name):
    """``module.CHECK_FIGURES[name]`` draws ``result`` after a JSON round trip (typed quantities back) on one axes
    titled with the check's name."""
    from figures._plotting import pyplot
    from verify.core.claims import load_check
    from verify.core.result import CheckResult

    result = CheckResult.from_json(result.to_json())
    assert type(result.quantities) is load_check(name).CHECK.quantities_type
    plt = pyplot()
    fig, ax = plt.subplots()
    try:
        module.CHECK_FIGURES[name](result, ax)
        fig.canvas.draw()
        assert ax.has_data() and ax.get_title().startswith(name)
    finally:
        plt.close(fig)


def assert_paper_figure_writes_png(module, out_dir, name, *, min_bytes=10_000):
    """``module.FIGURES[name](out_dir)`` writes one PNG named after the figure, of a drawn size."""
    paths = module.FIGURES[name](out_dir)
    assert [p.name for p in paths] == [f"{name}.png"]
    assert paths[0].stat().st_size > min_bytes
