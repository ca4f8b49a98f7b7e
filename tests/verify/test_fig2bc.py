"""verify.fig2bc (FNA-15): robust statements pass; the printed "alpha = 2: intra-cluster only" fails at kappa = 1."""

import numpy as np
import pytest

from spectral.validation import InputError
from verify import fig2bc as check


def test_default_passes_and_reports_counts(default_result):
    res = default_result("fig2bc")
    assert res.passed, res.failures
    m = res.measured
    # at kappa = 1 alpha = 2 draws ~30 inter-cluster edges on average, and never none
    assert 15 < m["inter_edges_mean_alpha2"] < 60
    assert m["draws_without_inter_edges_alpha2"] == 0.0
    assert m["inter_mass_mean_alpha1.2"] > 5 * m["inter_mass_mean_alpha2"]
    assert not res.record("draws_without_inter_edges_alpha2").deciding  # printed reading only under claim="printed"
    assert res.arrays["A_alpha"].shape == (18, 18) and res.arrays["points"].shape == (18, 2)


def test_labels_follow_the_mixture():
    x, lab = check.sample_tokens(check.mixture("paper"), 3000, np.random.default_rng(0))
    for k, mu in enumerate(check.mixture("paper").means):
        pts = x[lab == k]
        # ~1000 draws per mode, sd 1/2: the sample mean is within 5 sigma = 5 * 0.5 / sqrt(900)
        assert np.abs(pts.mean(0) - mu).max() < 5 * 0.5 / np.sqrt(900)
        assert abs(pts.std(0).mean() - 0.5) < 0.05


def test_printed_claim_fails_at_kappa_1_and_small_kappa():
    res = check.run(draws=50, claim="printed")
    assert not res.passed
    assert [r.name for r in res.records if r.passed is False] == ["draws_without_inter_edges_alpha2"]
    assert "printed claim" in res.failures[0]
    # even kappa = 0.5 leaves inter-cluster edges in some draws (12 %)
    assert not check.run(draws=100, kappa=0.5, claim="printed").passed


def test_printed_claim_holds_for_equilateral_layout():
    res = check.run(draws=50, layout="equilateral", claim="printed")
    assert res.passed, res.failures
    assert res.measured["draws_without_inter_edges_alpha2"] == 1.0


def test_wide_kernel_fails_and_says_why():
    # kappa = 3 is 0.87 of the closest cluster-mean distance: alpha = 2 is no longer local there
    res = check.run(kappa=3.0, draws=40)
    assert not res.passed
    assert all("not local at the cluster scale" in f for f in res.failures)
    assert res.measured["kappa_over_cluster_spacing"] == pytest.approx(3.0 / 12**0.5)


@pytest.mark.parametrize("kwargs, match", [
    ({"alpha": 2.0}, "alpha"), ({"n": 3}, "n must"), ({"draws": 5}, "draws"),
    ({"threshold": 0.0}, "threshold"), ({"layout": "x"}, "layout"), ({"claim": "paper"}, "claim"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
