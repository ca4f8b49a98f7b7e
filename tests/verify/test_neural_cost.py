"""verify.neural_cost (NEURAL-6, NEURAL-7): parameter arithmetic, tensor construction and memory.

The measurement runs once at small settings; the assertions are held to those quantities, to the
printed claim, and to quantities a wrong implementation would give.
"""

import dataclasses

import numpy as np
import pytest

import spectral
from spectral.validation import InputError
from verify import neural_cost as check
from verify.core.result import CheckResult

CHECK = check.CHECK
SMALL = dict(n=4, memory_n=64)


@pytest.fixture(scope="module")
def small():
    p = CHECK.params(**SMALL)
    return p, CHECK.measure(p)


def test_small_settings_pass(small):
    p, q = small
    res = CHECK.assess(q, p)
    assert res.passed, res.failures
    # C is bigger than the whole factored working set when 2 d' > 2 h (d' = 16, h = 8)
    assert q.concat_peak_over_C >= 1.0 > q.factored_peak_over_C
    assert q.toy_C.shape == (3, 3, 4) and q.toy_A.shape == (3, 3)
    assert res.record("per_pair_over_reported").measured == pytest.approx(13.98, abs=0.01)


def test_per_pair_count_from_array_shapes():
    n, d_prime, h = 7, 3, 5
    shapes = [(n, n, h, 2 * d_prime), (n, n, h), (n, n, h), (n, n)]  # W_h, b_h, W_a, b_a of eq. (8)
    assert check.per_pair_parameters(n, d_prime, h) == sum(int(np.prod(s)) for s in shapes)
    assert check.shared_parameters(d_prime, h) == sum(int(np.prod(s[2:])) for s in shapes)


def test_printed_statements_fail(small):
    p, q = small
    res = CHECK.assess(q, dataclasses.replace(p, claim="printed"))
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"printed_per_pair_over_reported", "printed_relative_gain_error"}  # NEURAL-7 holds as printed


def test_factored_form_that_builds_C_fails(monkeypatch):
    real = spectral.neural_scores
    monkeypatch.setattr(spectral, "neural_scores", lambda q, k, mlp, form="factored", **kw:
                        real(q, k, mlp, form="concat", **kw))
    p = CHECK.params(**SMALL)
    res = CHECK.assess(CHECK.measure(p), p)
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"factored_peak_growth_with_d_prime"}


@pytest.mark.parametrize("field, value, name", [
    ("per_pair_over_reported_nlp", 5.0, "per_pair_over_reported"),
    ("learned_table_minus_reported", 5000.0, "learned_table_minus_reported"),
    ("table2_rounding_error", 0.01, "table2_rounding_error"),
    ("points_d2_to_d16_error", 0.02, "points_d2_to_d16_error"),
    ("best_perplexity_reduction_percent", 4.9, "abstract_over_5_percent"),
    ("table5_points_error", 0.01, "table5_points_error"),
    ("relative_vs_points_gap", 0.1, "relative_vs_points_gap"),
    ("concat_tensor_difference", 1e-300, "concat_tensor_difference"),
    ("per_pair_broadcast_vs_loop", 1e-9, "per_pair_broadcast_vs_loop"),
    ("shared_as_per_pair_error", 1e-9, "shared_as_per_pair_error"),
    ("toolkit_vs_loop", 1e-9, "toolkit_vs_loop"),
    ("counts_quadratic", False, "counts_quadratic_in_n"),
    ("concat_peak_over_C", 0.9, "concat_peak_over_C"),
    ("factored_peak_growth", 1.5, "factored_peak_growth_with_d_prime"),
    ("concat_memory_exponent", 2.5, "concat_memory_exponent"),
    ("factored_memory_exponent", 1.0, "factored_memory_exponent"),
])
def test_each_assertion_fails_on_a_wrong_quantity(small, field, value, name):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, **{field: value}), p)
    assert {r.name for r in res.records if r.passed is False} == {name}


def test_nan_never_passes(small):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, toolkit_vs_loop=float("nan")), p)
    assert res.record("toolkit_vs_loop").passed is False


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = CheckResult.from_json(CHECK.assess(q, p).to_json())
    assert type(back.quantities) is type(q)
    assert back.quantities.cost_concat[16] == q.cost_concat[16] and isinstance(back.quantities.cost_dp, check.FormCost)
    assert back.quantities.peaks.concat == q.peaks.concat  # keys (n, d') are integer tuples again
    assert np.array_equal(back.quantities.toy_C, q.toy_C)


@pytest.mark.parametrize("kwargs, name", [({"n": 1}, "n"), ({"d_prime": (0,)}, "d_prime"), ({"hidden": 0}, "hidden"),
                                          ({"activation": "swish"}, "activation"), ({"memory_n": 16}, "memory_n")])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(InputError, match=name):
        check.run(**kwargs)


def test_a_toolkit_returning_nan_fails(monkeypatch):
    real = spectral.neural_scores
    monkeypatch.setattr(spectral, "neural_scores", lambda q, k, mlp, **kw: real(q, k, mlp, **kw) * np.nan)
    p = CHECK.params(**SMALL)
    res = CHECK.assess(CHECK.measure(p), p)
    assert res.record("toolkit_vs_loop").passed is False


def test_a_nan_score_after_finite_ones_fails(inject_nan):
    # neural_scores: concat then factored per d' (2, 16); the second d''s factored scores (call 3) come after
    # finite errors, where Python's max dropped a NaN
    poisoned = inject_nan("spectral.neural_scores", call=3, at=2)
    p = CHECK.params(**SMALL)
    res = CHECK.assess(CHECK.measure(p), p)
    assert poisoned == [3]
    assert [r.name for r in res.records if r.passed is False] == ["toolkit_vs_loop"]
    assert np.isnan(res.measured["toolkit_vs_loop"])


def test_a_nan_parameter_count_fails(small, inject_nan):
    # the vision count (third call) enters the smallest ratio after finite ones (Python's min kept 14.0)
    p, q = small
    poisoned = inject_nan("verify.neural_cost.per_pair_parameters", call=2)
    res = CHECK.assess(dataclasses.replace(q, **check._paper_arithmetic()), p)
    assert poisoned == [2]
    assert [r.name for r in res.records if r.passed is False] == ["per_pair_over_reported"]
    assert np.isnan(res.measured["per_pair_over_reported"])
