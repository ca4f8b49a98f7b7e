"""verify.neural_cost (NEURAL-6, NEURAL-7): parameter arithmetic, tensor construction and memory.

Measured once at n = 4 (the memory at n = 64); held to the printed claims, to a factored form that builds
C, to altered counts and peaks, and to NaN scores and parameter counts.
"""

import dataclasses

import numpy as np
import pytest

import spectral
from verify import neural_cost as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(n=4, memory_n=64)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
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
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"),
                 {"printed_per_pair_over_reported", "printed_relative_gain_error"}, only=True)  # NEURAL-7 holds


def test_factored_form_that_builds_C_fails(monkeypatch):
    real = spectral.neural_scores
    monkeypatch.setattr(spectral, "neural_scores", lambda q, k, mlp, form="factored", **kw:
                        real(q, k, mlp, form="concat", **kw))
    p, q = measured(CHECK, **SMALL)
    assert_fails(CHECK, q, p, "factored_peak_growth_with_d_prime", only=True)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"per_pair_over_reported_nlp": 5.0}, "per_pair_over_reported"),
    ({"learned_table_minus_reported": 5000.0}, "learned_table_minus_reported"),
    ({"table2_rounding_error": 0.01}, "table2_rounding_error"),
    ({"points_d2_to_d16_error": 0.02}, "points_d2_to_d16_error"),
    ({"best_perplexity_reduction_percent": 4.9}, "abstract_over_5_percent"),
    ({"table5_points_error": 0.01}, "table5_points_error"),
    ({"relative_vs_points_gap": 0.1}, "relative_vs_points_gap"),
    ({"concat_tensor_difference": 1e-300}, "concat_tensor_difference"),
    ({"per_pair_broadcast_vs_loop": 1e-9}, "per_pair_broadcast_vs_loop"),
    ({"shared_as_per_pair_error": 1e-9}, "shared_as_per_pair_error"),
    ({"toolkit_vs_loop": 1e-9}, "toolkit_vs_loop"),
    ({"counts_quadratic": False}, "counts_quadratic_in_n"),
    ({"concat_peak_over_C": 0.9}, "concat_peak_over_C"),
    ({"factored_peak_growth": 1.5}, "factored_peak_growth_with_d_prime"),
    ({"concat_memory_exponent": 2.5}, "concat_memory_exponent"),
    ({"factored_memory_exponent": 1.0}, "factored_memory_exponent"),
    ({"toolkit_vs_loop": float("nan")}, "toolkit_vs_loop"),  # a NaN never passes
], only=True)


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    assert_round_trip(CHECK, q, p)  # typed again: FormCost, the peaks' integer (n, d') keys, the toy tensor


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"n": 1}, "n"), ({"d_prime": (0,)}, "d_prime"), ({"hidden": 0}, "hidden"), ({"activation": "swish"}, "activation"),
    ({"memory_n": 16}, "memory_n"),
    # past the factored form's 64 MiB row-block budget its two-size memory exponent read 1.06 (memory_n = 1024): a
    # wrong FAIL, refused naming the largest memory_n; hidden = 256 passed a factored form that builds C (growth 1.0)
    ({"memory_n": 1024}, "memory_n must be at most 724 for hidden = 8"),
    ({"hidden": 256}, "hidden must be at most 3"), ({"hidden": 64}, "hidden must be at most 3"),
    ({"d_prime": (16,)}, "give two different d_prime")])


def test_the_widest_accepted_hidden_layer_passes_and_a_factored_form_building_C_fails(monkeypatch):
    kw = dict(n=4, memory_n=128, hidden=42)  # 3 (16 - 2): the widest accepted for d' 2 -> 16
    p, q = measured(CHECK, **kw)
    assert_passes(CHECK, q, p)
    real = spectral.neural_scores
    monkeypatch.setattr(spectral, "neural_scores", lambda q, k, mlp, form="factored", **kw:
                        real(q, k, mlp, form="concat", **kw))
    p, q = measured(CHECK, **kw)
    assert_fails(CHECK, q, p, "factored_peak_growth_with_d_prime")
