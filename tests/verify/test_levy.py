"""verify.levy (FNA-1..5): Levy-stable ground truth passes, and fails on each stated wrong claim.

The measurement runs once at small settings; the assertions are held to those quantities, to the
printed claim, and to quantities a wrong implementation would give.
"""

import dataclasses

import numpy as np
import pytest

from spectral.validation import InputError
from verify import levy
from verify.core.check import Context
from verify.core.result import CheckResult

CHECK = levy.CHECK
SMALL = dict(alphas=(1.2, 2.0), n_samples=100_000, n_ks=100, high_alphas=(3.0,))


@pytest.fixture(scope="module")
def small():
    p = CHECK.params(**SMALL)
    return p, CHECK.measure(p)


def _only(result, *prefixes):
    assert not result.passed
    assert result.failures and all(f.startswith(prefixes) for f in result.failures), result.failures


def test_small_setting_passes(small):
    p, q = small
    r = CHECK.assess(q, p)
    assert r.passed, r.failures
    assert r.measured["c_dalpha_rel_err_origin"] < 1e-12
    assert r.measured["poisson_printed_mass_growth_1e4_to_1e8"] > 1.5
    assert r.measured["kernel_min_a3"] < -1e-3
    assert q.increments[1.2].path.shape == (2000, 2) and q.increments[2.0].variance is not None
    # with the ~12000 window samples of N = 4e6 the calibrated 0.05 decides, not 4 sd
    many = dataclasses.replace(q.increments[1.2], tail_count=12_000)
    tail = CHECK.assess(dataclasses.replace(q, increments={**q.increments, 1.2: many}), p).record("tail_exponent_a1.2")
    assert tail.sense == "close" and tail.expected == 1.2 and tail.tolerance == pytest.approx(0.05)


def test_wrong_constant_fails(small):
    # c_{d,alpha} off by 1e-6 relative is already caught (quadrature agrees to 1e-15)
    p, q = small
    worst0, worst1 = levy._constant(p.const_alphas, 1 + 1e-6)
    r = CHECK.assess(dataclasses.replace(q, c_dalpha_rel_err_origin=worst0, c_1alpha_rel_err_x=worst1), p)
    _only(r, "FNA-1")
    assert r.record("c_dalpha_rel_err_origin").passed is False and r.record("c_1alpha_rel_err_x").passed is False


def test_printed_claim_fails_on_each_printed_statement(small):
    p, q = small
    r = CHECK.assess(q, dataclasses.replace(p, claim="printed"))
    _only(r, "FNA-3 as printed", "FNA-5 as printed")
    # FNA-3: the printed kernel is not a density (mass 8.5 on |x| <= 1e8 and growing)
    assert r.record("poisson_printed_mass_R1e8").passed is False and r.measured["poisson_printed_mass_R1e8"] > 2
    assert r.record("poisson_printed_mass_growth_1e4_to_1e8").passed is False
    # FNA-5: every alpha > 2 kernel changes sign and moves mass outside the support
    for a in p.high_alphas:
        assert r.record(f"kernel_min_a{a:g}").passed is False
        assert r.record(f"outside_support_a{a:g}").passed is False
    # the corrected Poisson kernel and the alpha <= 2 controls still hold
    assert r.record("poisson_corrected_mass_err").passed and r.record("outside_support_a2").passed


def test_wrong_stable_index_fails(small):
    # increments drawn with alpha 1.6 but claimed alpha 1.2: ECF and tail exponent reject. The tail MLE's
    # tolerance is max(0.05, 4 sd): 4 sd = 0.2 at N = 2e5 (~600 window samples) is half the 0.4 shift; the
    # default N = 4e6 (4 sd 0.044) catches a 0.15 shift too
    p, q = small
    shifted = CHECK.params(alphas=(1.2,), n_samples=200_000, n_ks=100, sampler_alpha_shift=0.4)
    inc = levy._increments(shifted, Context())
    r = CHECK.assess(dataclasses.replace(q, increments={**q.increments, **inc}), p)
    assert r.record("ecf_max_err_a1.2").passed is False
    assert r.record("tail_exponent_a1.2").passed is False


def test_small_alpha_tail_constant_uses_the_second_series_term(small):
    # alpha = 0.7: x^(1+alpha) p(x) / C = 0.9752 at x = 100 (a one-term 2 % test fails); the two-term
    # series gives 0.9753
    p, q = small
    p07 = dataclasses.replace(p, alphas=(0.7,))
    q07 = dataclasses.replace(q, increments={0.7: q.increments[1.2]}, tail_law={0.7: levy._tail_law(0.7)})
    rec = CHECK.assess(q07, p07).record("pdf_tail_ratio_x100_a0.7")
    assert rec.passed and rec.measured < 0.98 and abs(rec.measured - rec.expected) < rec.tolerance / 10


@pytest.mark.parametrize("change, name", [
    (lambda q: {"poisson_corrected_mass_err": 1e-6}, "poisson_corrected_mass_err"),
    (lambda q: {"poisson_corrected_semigroup_err": 1e-3}, "poisson_corrected_semigroup_err"),
    (lambda q: {"poisson_printed_mass_growth": 1.0}, "poisson_printed_mass_growth_1e4_to_1e8"),
    (lambda q: {"kernel_min": {**q.kernel_min, 3.0: 0.0}}, "kernel_min_a3"),
    (lambda q: {"kernel_min": {**q.kernel_min, 1.5: -1e-6}}, "kernel_min_a1.5"),
    (lambda q: {"outside_support": {**q.outside_support, 2.0: 1e-6}}, "outside_support_a2"),
    (lambda q: {"outside_support_rel_err": {**q.outside_support_rel_err, 3.0: 1e-3}}, "outside_support_rel_err_a3"),
    (lambda q: {"tail_law": {1.2: dataclasses.replace(q.tail_law[1.2], pdf_tail_ratio_x100=0.98)}},
     "pdf_tail_ratio_x100_a1.2"),
    (lambda q: {"increments": {**q.increments, 2.0: dataclasses.replace(q.increments[2.0], tail_exponent=2.0)}},
     "tail_exponent_a2"),
    (lambda q: {"increments": {**q.increments, 2.0: dataclasses.replace(q.increments[2.0], variance=1.1)}},
     "variance_a2"),
    (lambda q: {"increments": {**q.increments, 1.2: dataclasses.replace(q.increments[1.2], ks_pvalue=1e-4)}},
     "ks_pvalue_a1.2"),
])
def test_each_assertion_fails_on_a_wrong_quantity(small, change, name):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, **change(q)), p)
    assert not res.passed and res.record(name).passed is False


def test_nan_never_passes(small):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, c_dalpha_rel_err_origin=float("nan")), p)
    assert res.record("c_dalpha_rel_err_origin").passed is False


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    res = CHECK.assess(q, p)
    back = CheckResult.from_json(res.to_json())
    assert type(back.quantities) is type(q) and back.records == res.records
    assert set(back.quantities.increments) == {1.2, 2.0} and set(back.quantities.kernel_min) == set(q.kernel_min)
    inc = back.quantities.increments[1.2]
    assert type(inc) is levy.Increments and back.quantities.increments[1.2].variance is None
    np.testing.assert_array_equal(inc.path, q.increments[1.2].path)


def test_memory_refused_before_sampling(available_memory):
    from spectral.memory import DenseMemoryError

    available_memory(100 << 20)
    with pytest.raises(DenseMemoryError, match=r"--n-samples \(at most \d+ fits now\)"):
        levy.run(n_samples=10**8)


@pytest.mark.parametrize("kwargs, match", [
    ({"alphas": (2.5,)}, "alphas"), ({"n_samples": 10}, "n_samples"), ({"t": -1.0}, "t must"),
    ({"claim": "typo"}, "claim"), ({"n_ks": 50_000, "n_samples": 100_000}, "n_ks"),
    ({"alphas": (1.9,), "sampler_alpha_shift": 0.2}, "sampler_alpha_shift"),
    ({"high_alphas": (2.0,)}, "high_alphas"), ({"const_alphas": (2.0,)}, "const_alphas"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        levy.run(**kwargs)


@pytest.mark.parametrize("call, failed", [
    (3, "c_dalpha_rel_err_origin"),  # d = 2, alpha = 1: after d = 1, where Python's max kept the finite error
    (7, "c_1alpha_rel_err_x"),       # the 1-D x != 0 constant of the second alpha
])
def test_a_nan_constant_fails(small, inject_nan, call, failed):
    p, q = small
    poisoned = inject_nan("verify.levy.fractional_constant", call=call)
    worst0, worst1 = levy._constant((0.5, 1.0), 1.0)
    res = CHECK.assess(dataclasses.replace(q, c_dalpha_rel_err_origin=worst0, c_1alpha_rel_err_x=worst1), p)
    assert poisoned == [call]
    assert [r.name for r in res.records if r.passed is False] == [failed]
    assert "nan" in res.failures[0]


@pytest.mark.parametrize("call, failed", [
    # scipy's quad, 64 calls in _poisson's order: the corrected masses (d = 1, 2, 3; 4 pieces each), the printed
    # masses to 1e8 and 1e4 (8 per d), the printed masses to 1e8, 5 Fourier transforms, 11 convolution pieces
    (4, "poisson_corrected_mass_err"),                # d = 2: Python's max over d kept d = 1's error
    (20, "poisson_printed_mass_growth_1e4_to_1e8"),   # d = 2: min over d kept the finite growth of d = 1
    (49, "poisson_corrected_ft_err"),                 # xi = 0.5
    (55, "poisson_corrected_semigroup_err"),          # x = 0.5
])
def test_a_nan_quadrature_fails(small, inject_nan, call, failed):
    p, q = small
    poisoned = inject_nan("scipy.integrate.quad", call=call, at=0)  # (value, error estimate): the value
    res = CHECK.assess(dataclasses.replace(q, **levy._poisson()), p)
    assert poisoned == [call]
    assert [r.name for r in res.records if r.passed is False] == [failed]


def test_a_nan_printed_mass_fails_the_printed_claim(small, inject_nan):
    p, q = small
    poisoned = inject_nan("scipy.integrate.quad", call=40, at=0)  # d = 2's printed mass to 1e8 (min over d)
    printed = dataclasses.replace(p, claim="printed")
    res = CHECK.assess(dataclasses.replace(q, **levy._poisson()), printed)
    assert poisoned == [40]
    assert res.record("poisson_printed_mass_R1e8").passed is False
    assert np.isnan(res.measured["poisson_printed_mass_R1e8"])


def test_a_nan_sample_stops_the_measurement_as_a_failure(inject_nan):
    # a NaN increment: the tail fit refuses the samples; the run FAILS (exit 1), it does not pass
    poisoned = inject_nan("manifolds.stable.cms_sample", at=5)
    r = levy.run(alphas=(1.2,), n_samples=100_000, n_ks=100, high_alphas=(3.0,))
    assert poisoned == [0] and not r.passed
    assert [x.name for x in r.records] == ["measurement_completed"] and "finite" in r.failures[0]
