"""verify.fna_rate (FNA-13): the FNA generator bias decays like s^(2-alpha); the paper's O(t) fails.

The measurement runs once at a cheap ladder; the assertions are held to it, to the printed claim and to
quantities a wrong implementation gives.
"""

import dataclasses
import math

import numpy as np
import pytest

from spectral.floor.memory import DenseMemoryError
from verify import fna_rate
from verify.testing import (assert_fails, assert_passes, assert_round_trip, changed_fields, failed_records, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = fna_rate.CHECK
CHEAP = dict(alphas=(1.8,), n_scales=4, scale_min=1e-3)
cheap = measurement_fixture(CHECK, **CHEAP)


def test_cheap_ladder_passes_with_exponent_two_minus_alpha(cheap):
    p, q = cheap
    r = assert_passes(CHECK, q, p)
    for k in (2, 5):
        exponent = r.record(f"exponent_a1.8_k{k}")
        assert exponent.expected == pytest.approx(0.2) and exponent.passed
        # the raw exponent (C' term kept) is informational and further from 2 - alpha
        assert not r.record(f"exponent_raw_a1.8_k{k}").deciding
    rate = q.rates[1.8]
    control = r.record("stable_control_bias_a1.8")
    assert control.measured <= control.tolerance
    # the raw bias is orders of magnitude above the stable control and the discretisation
    assert abs(rate.bias[0, 0]) > 100 * rate.discretisation_max and abs(rate.bias[0, 0]) > 1e6 * control.measured
    assert rate.bias.shape == (4, 2) and q.scales.shape == (4,)


def test_printed_rate_fails(cheap):
    p, q = cheap
    r = assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), {"exponent_a1.8_k2", "exponent_a1.8_k5"},
                     only=True)
    assert all("t = s^alpha" in f for f in r.failures)
    assert r.record("exponent_a1.8_k2").expected == pytest.approx(1.8)
    assert not r.record("amplitude_a1.8_k2").deciding  # the printed claim states no amplitude


def _rate(**change):
    """The change of the alpha = 1.8 rate's fields, each a function of that rate."""
    return lambda q: changed_fields(q, {("rates", 1.8, k): f(q.rates[1.8]) for k, f in change.items()})


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "cheap", [
    ({("rates", 1.8, "discretisation_max"): 1e-3}, "discretisation_max_a1.8"),
    (_rate(exponent=lambda r: (0.3, r.exponent[1])), "exponent_a1.8_k2"),
    (_rate(amplitude=lambda r: (r.amplitude[0], 1.5 * r.bias_constant)), "amplitude_a1.8_k5"),
    ({("rates", 1.8, "stable_control_bias"): 1e-6}, "stable_control_bias_a1.8"),
    (_rate(exponent=lambda r: (math.nan, r.exponent[1]), amplitude=lambda r: (math.nan, r.amplitude[1])),
     "exponent_a1.8_k2"),
])


def test_nan_exponent_names_the_sign_change(cheap):
    # the bias without the C' term changes sign on the ladder: nothing is fitted, and the failure says why
    p, q = cheap
    rate = dataclasses.replace(q.rates[1.8], exponent=(math.nan, math.nan), amplitude=(math.nan, math.nan))
    r = assert_fails(CHECK, q, p, {f"{kind}_a1.8_k{k}" for kind in ("exponent", "amplitude") for k in (2, 5)},
                     only=True, rates={1.8: rate})
    assert all("changes sign on the ladder" in f for f in r.failures)


def test_coarser_grid_than_claimed_fails_on_discretisation(monkeypatch):
    # negative control: build every FNA grid 3x coarser than h_ratio says (s/h = 21 instead of 64); the
    # discretisation record, bounded by 2 alpha (1 + alpha) / (12 h_ratio^2), catches it (~4.5x over)
    size = fna_rate._grid_size
    monkeypatch.setattr(fna_rate, "_grid_size", lambda scale, h_ratio: size(scale, h_ratio / 3))
    p, q = measured(CHECK, **CHEAP, control_scales=0)
    r = assert_fails(CHECK, q, p, "discretisation_max_a1.8")
    assert "not discretisation-free" in " ".join(r.failures)


def test_full_resolves_the_ladder(monkeypatch):
    # full=True replaces the ladder and records the values used; the FNA grids (n up to 1.3e7) are
    # replaced here by the exact finite-scale continuum eigenvalues, which the check must accept
    from manifolds.kernel_spectra import circle_generator_eigenvalues

    def continuum(alpha, scale, modes, *, h_ratio, xp=np):
        return np.asarray(circle_generator_eigenvalues(np.array(modes), alpha=alpha, scale=scale))

    monkeypatch.setattr(fna_rate, "fna_eigenvalues", continuum)
    p = CHECK.params(full=True, alphas=(1.5,), control_scales=1)
    assert p.scale_min == pytest.approx(3e-5) and p.n_scales == 10 and p.h_ratio == 64.0
    q = CHECK.measure(p)
    assert q.scales.size == 10
    r = assert_passes(CHECK, q, p)
    assert r.parameters["scale_min"] == pytest.approx(3e-5) and r.parameters["n_scales"] == 10


def test_a_ladder_below_the_grid_error_fails_and_names_the_grid():
    # h_ratio 24 down to scale 5.03e-5: the grid error alpha (1 + alpha) / (12 h_ratio^2) is 0.16 of the smallest
    # alpha = 1.2 bias; the fit fails (exponent ~0.76) and the failure says why, while alpha = 1.8 passes. (The
    # smallest scale is 2 pi 24 / 3e6: a grid of 3e6 = 2^6 3 5^6 points, whose FFT is 5x faster than that of
    # the 3015930 = 2 3 5 100531 points of scale 5e-5.)
    p = CHECK.params(alphas=(1.2, 1.8), scale_min=2 * math.pi * 24 / 3e6, n_scales=4, h_ratio=24.0, control_scales=0)
    assert fna_rate._grid_size(p.scale_min, p.h_ratio) == 3_000_000
    q = CHECK.measure(p)
    r = CHECK.assess(q, p)
    assert not r.passed and q.rates[1.2].grid_error_over_smallest_bias > 0.1
    assert all("a1.2" in name for name in failed_records(r)), failed_records(r)
    assert "outside the measured regime: the grid error" in " ".join(r.failures)
    assert "raise --h-ratio or --scale-min" in " ".join(r.failures)


def test_computes_in_the_given_namespace(cheap, strict_xp):
    p, q = cheap
    got = CHECK.measure(dataclasses.replace(p, control_scales=0), xp=strict_xp)
    assert {"arange", "minimum"} <= strict_xp.used
    # array_api_strict wraps numpy: the same numbers
    np.testing.assert_array_equal(got.rates[1.8].bias, q.rates[1.8].bias)
    assert got.rates[1.8].exponent == q.rates[1.8].exponent


def test_json_round_trip_keeps_the_typed_quantities(cheap):
    p, q = cheap
    back = assert_round_trip(CHECK, q, p).quantities
    assert list(back.rates) == [1.8]
    np.testing.assert_array_equal(back.rates[1.8].bias, q.rates[1.8].bias)


def test_the_grid_is_refused_before_it_is_built(available_memory):
    # 40 MiB + 32 bytes per point: at 128 MiB the default ladder's 2e6 points fit (101 MiB), 1e7 (scale_min 4e-5) do not
    available_memory(128 << 20)
    CHECK.choose(CHECK.params())
    with pytest.raises(DenseMemoryError, match=r"raise --scale-min \(at least .* fits now\) or lower --h-ratio$"):
        CHECK.choose(CHECK.params(scale_min=4e-5))


test_bad_input = refusals(CHECK.params, [
    (dict(alphas=(2.0,)), "alphas"), (dict(alphas=(1.0,)), "alphas"), (dict(alphas=()), "alphas"),
    (dict(modes=(0,)), "modes"), (dict(modes=()), "modes"), (dict(modes=(2.5,)), "modes"),
    (dict(n_scales=2), "n_scales"), (dict(claim="paper"), "claim"), (dict(scale_min=0.0), "scale_min"),
    (dict(scale_max=1e-4), "scale_max"), (dict(h_ratio=16.0), "h_ratio"),
    (dict(scale_min=1e-6, h_ratio=512.0), "grid points"), (dict(control_scales=7), "control_scales"),
])


@pytest.mark.slow
def test_full_ladder_passes():
    r = fna_rate.run(full=True)
    assert r.passed, r.failures
    assert r.parameters["scale_min"] == pytest.approx(3e-5) and r.parameters["n_scales"] == 10


def test_a_nan_control_eigenvalue_fails(inject_nan):
    # circulant_spectrum NaN at the second (last) control scale, after a finite first one: Python's max kept it
    # eigenvalue 3 is frequency k = 2 (frequencies 0, 1, 1, 2, 2, ...)
    poisoned = inject_nan("spectral.circulant_spectrum", call=5, field="eigenvalues", at=3)
    p, q = measured(CHECK, **CHEAP)
    assert poisoned == [5]
    assert_fails(CHECK, q, p, "stable_control_bias_a1.8", only=True)
