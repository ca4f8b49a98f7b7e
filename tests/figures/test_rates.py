"""figures.rates: the rate check's figure (python -m verify.rate --plot, RateResult.plot)."""

import math

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from figures import check_drawer, rates  # noqa: E402
from figures._plotting import pyplot  # noqa: E402
from verify.core.result import CheckResult  # noqa: E402
from verify.rates import check_rate  # noqa: E402


def _gauss(n, rng):
    return abs(rng.standard_normal()) / math.sqrt(n)


@pytest.fixture(scope="module")
def results():
    return {
        "random": check_rate(_gauss, [100, 400, 1600, 6400], claimed=-0.5, repeats=32, tolerance=0.2),
        "floor": check_rate(lambda n: abs(3 * n**-3.0 + 1e-12 * math.sin(n)), [8 * 2**k for k in range(11)],
                            claimed=-3),
        "pre-asymptotic": check_rate(lambda n: 5 * n**-0.5 - 4 / n, [4, 8, 16, 32], claimed=-0.5),
        "non-finite": check_rate(lambda n: math.nan if n == 20 else 1 / n, [10, 20, 40], claimed=-1),
    }


def test_registered():
    assert check_drawer("rate") is rates.draw_rate


def test_draws_the_errors_the_asymptotic_interval_and_the_claimed_slope(results):
    res = results["random"]
    plt = pyplot()
    fig, ax = plt.subplots()
    try:
        rates.draw_rate(res.check_result(), ax)
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert labels[0] == "error, 32 repeats" and "level per size (power mean 1/4)" in labels
        lo, hi = res.asymptotic_interval
        assert f"asymptotic order in [{lo:.3g}, {hi:.3g}] (95 %)" in labels
        assert any(t.startswith(f"fit over all sizes: {res.order:.3g}") for t in labels)
        assert "claimed: n^-0.5 (tolerance 0.2)" in labels and any(t.startswith("local orders") for t in labels)
        assert ax.get_xscale() == ax.get_yscale() == "log"
        assert ax.get_title() == f"rate of {res.quantities.label}: FAIL (inconclusive)"
        wedge = [c for c in ax.collections if c.get_label().startswith("asymptotic order")]
        assert len(wedge) == 1
        fit = next(line for line in ax.get_lines() if line.get_label().startswith("fit"))
        n, e = fit.get_data()
        assert np.allclose(np.diff(np.log(e)) / np.diff(np.log(n)), res.order)  # the fitted slope is drawn
        claimed = next(line for line in ax.get_lines() if line.get_label().startswith("claimed"))
        n, e = claimed.get_data()
        assert np.allclose(np.diff(np.log(e)) / np.diff(np.log(n)), -0.5)
    finally:
        plt.close(fig)


def test_sizes_left_out_at_a_floor_are_marked(results):
    res = results["floor"]
    plt = pyplot()
    fig, ax = plt.subplots()
    try:
        rates.draw_rate(CheckResult.from_json(res.to_json()), ax)
        marked = next(line for line in ax.get_lines() if line.get_label() == "left out: round-off floor")
        assert sorted(marked.get_data()[0]) == sorted(float(n) for n in res.left_out)
        assert ax.get_title().endswith("FAIL (round-off)")
    finally:
        plt.close(fig)


@pytest.mark.parametrize("name", ["pre-asymptotic", "non-finite"])
def test_runs_that_do_not_pass_are_drawn_with_their_status(results, name):
    res = results[name]
    plt = pyplot()
    fig, ax = plt.subplots()
    try:
        rates.draw_rate(CheckResult.from_json(res.to_json()), ax)  # as read back from --json
        assert ax.get_title().endswith(f"FAIL ({name})")
        has_fit = any(line.get_label().startswith("fit") for line in ax.get_lines())
        assert has_fit == (name == "pre-asymptotic")
    finally:
        plt.close(fig)


def test_rate_result_plot_writes_the_file(results, tmp_path):
    path = tmp_path / "rate.png"
    results["pre-asymptotic"].plot(path)
    assert path.stat().st_size > 10_000
    from spectral.floor.validation import InputError

    with pytest.raises(InputError, match="suffix"):
        results["pre-asymptotic"].plot(tmp_path / "rate.txt")
