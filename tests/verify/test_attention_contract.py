"""verify.attention_contract: the exact mechanism holds, each assertion fails on a wrong quantity, the six built-in
wrong attentions fail naming their property, the rounding bound holds and is not loose by orders of magnitude,
and approximations are held to a claimed rate through verify.rates (the toolkit's FMA, random features; a false
rate fails).

The exact run is measured once at small settings (the default ladder to n = 4096 is the slow tier's); the
assertions are held to those quantities and to altered ones.
"""

import math

import numpy as np
import pytest

from manifolds.references.attention import exact_attention, exact_weights
from spectral.floor.validation import InputError
from verify import attention_contract as check
from verify.core.implementation import ImplementationError
from verify.testing import (assert_fails, assert_passes, assert_round_trip, failed_records, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"lengths": (1, 3, 64), "dims": (1, 16), "logit_scales": (1.0, 40.0, 300.0),
         "adversarial": ("ties", "large-negative")}
small = measurement_fixture(CHECK, **SMALL)
causal = measurement_fixture(CHECK, **SMALL, causal=True, mask=True)


def test_numpy_attention_holds(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.final_line().startswith("PASS attention_contract: numpy attention is softmax(q k^T / sqrt(d)) v")
    assert q.mode == "exact" and q.non_finite_outputs == 0 and len(q.case_ratios) == 10
    assert q.logit_scale == pytest.approx(1.0, abs=1e-12) and q.implied_logit_residual < 1e-14
    assert q.diagnosis == ""


def test_causal_and_masked_numpy_attention_holds(causal):
    p, q = causal
    res = assert_passes(CHECK, q, p)
    assert q.future_weight == 0.0 and q.masked_weight == 0.0 and q.causal_perturbation == 0.0
    assert {"future_weight", "causal_perturbation", "masked_weight"} <= {r.name for r in res.records if r.deciding}
    assert any(c.startswith("masks: ") for c in q.case_ratios)  # the band and the diagonal-only masks


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"non_finite_outputs": 1}, "non_finite_outputs"),
    ({"output_dtype": "float32"}, "output_precision"),
    ({"mutating_calls": 1, "mutated": ("v",)}, "arguments_unchanged"),
    ({"row_sum_error": 1e-9}, "row_sum_error"),
    ({"row_sum_error": float("nan")}, "row_sum_error"),
    ({"min_weight": -1e-9}, "min_weight"),
    ({"query_dependence": 0.0, "logit_scale": 0.0}, "query_dependence"),
    ({"key_dependence": 0.0, "logit_scale": 0.0}, "key_dependence"),
    ({"implied_logit_residual": 0.5}, "implied_logit_residual"),
    ({"implied_logit_residual": float("nan")}, "implied_logit_residual"),
    ({"logit_scale": 1.01}, "logit_scale"),
    ({"logit_scale": float("nan")}, "logit_scale"),
    (lambda q: {"case_ratios": {**q.case_ratios, "lengths: n=3 d=64 logit std 1": 1.5}}, "error_over_bound"),
    (lambda q: {"case_ratios": {**q.case_ratios, "dims: n=256 d=1 logit std 1": float("nan")}}, "error_over_bound"),
])


@pytest.mark.parametrize("field, value", [("future_weight", 1e-3), ("future_weight", float("nan")),
                                          ("causal_perturbation", 1.5), ("causal_perturbation", float("inf")),
                                          ("masked_weight", 1e-3)])
def test_causal_and_mask_assertions_fail_on_a_wrong_quantity(causal, field, value):
    p, q = causal
    assert_fails(CHECK, q, p, field, **{field: value})


def test_the_scale_message_names_sqrt_d_and_a_temperature(small):
    p, q = small
    res = assert_fails(CHECK, q, p, "logit_scale", logit_scale=4.0)
    assert "scale: c = 4 = sqrt(d) (d = 16)" in res.failures[0]
    res = assert_fails(CHECK, q, p, "logit_scale", logit_scale=0.5)
    assert "temperature: c = 0.5" in res.failures[0] and "a temperature of 2" in res.failures[0]


def test_the_worst_case_is_named(small):
    p, q = small
    res = assert_fails(CHECK, q, p, "error_over_bound", only=True,
                       case_ratios={**q.case_ratios, "scales: n=256 d=64 logit std 40": 3.0})
    assert "worst at scales: n=256 d=64 logit std 40" in res.failures[0]


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert back.case_ratios == q.case_ratios and back.mode == "exact"


SIX = [("unscaled", "logit_scale", "scale: c = 4 = sqrt(d)"),
       ("mean-pooling", "query_dependence", "dependence on q/k"),
       ("wrong-axis", "implied_logit_residual", "row axis: W is the softmax over the queries"),
       ("hot-temperature", "logit_scale", "(a temperature of 10)"),
       ("rolled-values", "implied_logit_residual", "key-value alignment"),
       ("no-max-subtraction", "non_finite_outputs", "no-max-subtraction: overflow/non-finite")]


@pytest.mark.parametrize("dtype", ["float64", "float16"])
@pytest.mark.parametrize("name, record, words", SIX, ids=[s[0] for s in SIX])
def test_the_six_builtin_wrong_attentions_fail_naming_the_property(name, record, words, dtype):
    res = check.run(implementation=name, dtype=dtype, **SMALL)
    assert res.record(record).passed is False
    assert words in res.failures[0], res.failures[0]
    assert res.record("error_over_bound").passed is False
    assert res.final_line().startswith("FAIL attention_contract: ")


def test_numpy_attention_holds_in_float32_and_float16():
    for dtype in ("float32", "float16"):
        res = check.run(dtype=dtype, **SMALL)
        assert res.passed, (dtype, res.failures)
        assert 0 < res.measured["error_over_bound"] < 0.2  # it rounds, well inside the bound


# -- the rounding bound -----------------------------------------------------------------------------------------------
def test_the_bound_is_the_derived_formula_on_a_uniform_row():
    # one query, identical keys: p_j = 1/n, t_j = t; the bound is 2 (1 + u64/min(u_s, u_a)) |v| (2 eps + 2 n u_a + 3 u_s)
    n, d = 8, 4
    q = np.full((1, d), 0.5)
    k = np.ones((n, d))
    v = np.ones((n, 1))
    _, bound = check.exact_and_bound(q, k, v, dtype="float32")
    us = ua = 2.0**-24
    t = 0.5 * d / math.sqrt(d)
    eps = (d * ua + 2 * us) * t + 3 * us * t + 2 * us  # |q_l k_l| summed = t sqrt(d) / sqrt(d); m - t = 0
    expected = 2 * (1 + 2.0**-53 / us) * (2 * eps + 2 * n * ua + 3 * us)
    assert bound[0, 0] == pytest.approx(expected, rel=1e-12)


def test_float16_bound_assumes_float32_sums():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 64, 8))
    b16 = check.exact_and_bound(q, k, v, dtype="float16")[1]
    b32 = check.exact_and_bound(q, k, v, dtype="float32")[1]
    assert 1e3 < float(np.median(b16 / b32)) < 2**13  # u_s of float16, u_a of float32 (2^13 = eps16 / eps32)


def test_the_reference_is_softmax_attention_by_hand():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((3, 5, 3))
    w = np.exp(q @ k.T / math.sqrt(3))
    w /= w.sum(axis=1, keepdims=True)
    assert np.allclose(exact_attention(q, k, v), w @ v, rtol=0, atol=1e-15)
    tri = np.tril(np.exp(q @ k.T / math.sqrt(3)))
    assert np.allclose(exact_weights(q, k, causal=True), tri / tri.sum(axis=1, keepdims=True), rtol=0, atol=1e-15)
    big = 1e3 * q  # logits of several thousand: exp overflows without the row maximum subtracted
    assert np.all(np.isfinite(exact_attention(big, k, v)))
    with pytest.raises(ValueError, match="query 0 may attend to no key"):
        exact_attention(q, k, v, mask=np.zeros((5, 5), dtype=bool))


# -- approximate mechanisms ---------------------------------------------------------------------------------------------
def test_toolkit_fma_converges_at_rank_to_the_minus_2():
    # the bound: the local orders steepen as the rank nears the base cell (exact at rank = r), so an equality
    # stays pre-asymptotic over this ladder and O(rank^-2) is what the data establish
    res = check.run(implementation="fma", approximate=True, claimed_rate=-2.0, variable="rank", n=512,
                    ladder=(4, 8, 16), rate_kind="bound")
    assert res.passed, res.failures
    assert res.quantities.rate_status == "pass" and res.quantities.rate_order == pytest.approx(-2.0, abs=0.05)
    p = CHECK.params(implementation="fma", approximate=True, claimed_rate=-2.0, variable="rank", n=512,
                     ladder=(4, 8, 16), rate_kind="bound")
    back = assert_round_trip(CHECK, res.quantities, p).quantities
    assert back.mode == "approximate" and np.array_equal(back.errors, res.quantities.errors)
    wrong = CHECK.assess(res.quantities, CHECK.params(**{**{f: getattr(p, f) for f in ("implementation", "approximate",
                                                                                        "claimed_rate", "variable", "n",
                                                                                        "ladder", "rate_kind")},
                                                         "claimed_error": 1e-6}))
    assert failed_records(wrong) == {"error_at_largest"}


def test_a_false_rate_of_fma_fails():
    res = check.run(implementation="fma", approximate=True, claimed_rate=-3.0, variable="rank", n=512,
                    ladder=(4, 8, 16))
    assert failed_records(res) == {"claimed_rate"}
    assert res.quantities.rate_status == "fail" and "rank^-3" in res.failures[0]


def approx_by_n(q, k, v):
    """The exact attention plus v / n: relative error exactly 1/n (a deterministic rate -1 in n)."""
    return exact_attention(q, k, v) + v / q.shape[0]


def approx_by_levels(q, k, v, *, levels):
    return exact_attention(q, k, v) + v * float(levels) ** -1.5


def approx_random(q, k, v, *, rank, rng):
    """Exact plus Gaussian noise of size rank^-1/2: a random approximation (repeats with seeded streams)."""
    return exact_attention(q, k, v) + rng.standard_normal(v.shape) / math.sqrt(rank)


def approx_nan(q, k, v, *, rank):
    return np.full(v.shape, np.nan)


def approx_raises(q, k, v, *, rank):
    raise RuntimeError("rank too large")


def _approx(fn, **kwargs):
    return check.run(implementation=f"{__name__}:{fn.__name__}", approximate=True, **kwargs)


@pytest.mark.parametrize("fn, variable, rate, ladder", [(approx_by_n, "n", -1.0, (16, 32, 64, 128)),
                                                         (approx_by_levels, "levels", -1.5, (2, 4, 8, 16)),
                                                         (approx_random, "rank", -0.5, (16, 64, 256, 1024))])
def test_a_users_approximation_is_held_to_its_rate(fn, variable, rate, ladder):
    kwargs = dict(variable=variable, ladder=ladder, d=4, repeats=32)  # 8 repeats leave the random one inconclusive
    if variable != "n":
        kwargs["n"] = 32
    res = _approx(fn, claimed_rate=rate, **kwargs)
    assert res.passed, res.failures
    assert res.quantities.random is (fn is approx_random)
    assert res.final_line().startswith(f"PASS attention_contract [contract on {__name__}:{fn.__name__}: holds]")
    false = _approx(fn, claimed_rate=rate - 1.0, **kwargs)
    assert failed_records(false) == {"claimed_rate"} and false.quantities.rate_status == "fail"


def test_a_non_finite_approximation_fails():
    res = _approx(approx_nan, claimed_rate=-1.0, variable="rank", ladder=(2, 4, 8), n=16, d=4)
    assert {"non_finite_outputs", "claimed_rate"} <= failed_records(res)
    assert res.quantities.rate_status == "non-finite"


def test_a_raising_approximation_is_one_line():
    with pytest.raises(ImplementationError, match="approx_raises' raised RuntimeError: rank too large"):
        _approx(approx_raises, claimed_rate=-1.0, variable="rank", ladder=(2, 4, 8), n=16, d=4)


@pytest.mark.slow
def test_random_features_converge_at_rank_to_the_minus_half():
    res = check.run(implementation="random-features", approximate=True, claimed_rate=-0.5, variable="rank")
    assert res.passed, res.failures
    false = check.run(implementation="random-features", approximate=True, claimed_rate=-1.0, variable="rank")
    assert failed_records(false) == {"claimed_rate"}


test_bad_input = refusals(check.run, [
    ({"implementation": "nope"}, "implementation"), ({"implementation": "nosuchmodule_xyz:f"}, "implementation"),
    ({"implementation": "numpy:pi"}, "implementation"), ({"dtype": "float8"}, "dtype"),
    ({"lengths": (0,)}, "lengths"), ({"dims": (0,)}, "dims"), ({"logit_scales": (0.0,)}, "logit_scales"),
    ({"adversarial": ("nope",)}, "adversarial"), ({"timeout": 0.0}, "timeout"),
    ({"implementation": "fma"}, "approximation: run it with --approximate"),
    ({"claimed_rate": -1.0}, "claimed_rate applies to --approximate only"),
    ({"approximate": True, "implementation": "fma", "variable": "rank"}, "claimed_rate must be given"),
    ({"approximate": True, "implementation": "fma", "claimed_rate": -2.0}, "variable must be given"),
    ({"approximate": True, "implementation": "fma", "claimed_rate": -2.0, "variable": "n"}, "--in rank"),
    ({"approximate": True, "implementation": "numpy", "claimed_rate": -2.0, "variable": "rank"}, "is exact"),
    ({"approximate": True, "implementation": "fma", "claimed_rate": -2.0, "variable": "rank", "ladder": (8, 4, 16)},
     "ladder must increase"),
    ({"approximate": True, "implementation": "fma", "claimed_rate": -2.0, "variable": "rank", "ladder": (4, 8, 256)},
     "base cell"),
    ({"approximate": True, "implementation": "fma", "claimed_rate": -2.0, "variable": "rank", "lengths": (4,)},
     "lengths belongs to the exact contract"),
    ({"approximate": True, "implementation": "fma", "claimed_rate": -2.0, "variable": "rank", "mask": True}, "mask"),
    ({"approximate": True, "implementation": "fma", "claimed_rate": -2.0, "variable": "rank", "dtype": "float16"},
     "dtype float16 does not apply to 'fma'"),
    ({"approximate": True, "implementation": "random-features", "claimed_rate": -0.5, "variable": "rank",
      "causal": True}, "causal"),
    ({"approximate": True, "implementation": f"{__name__}:approx_by_n", "claimed_rate": -1.0, "variable": "n"},
     "ladder must be given"),
    ({"approximate": True, "implementation": f"{__name__}:approx_by_n", "claimed_rate": -1.0, "variable": "n",
      "ladder": (8, 16, 32), "n": 64}, "n is the length of --in rank"),
])


def test_cli(capsys):
    small = ["--lengths", "3,64", "--dims", "16", "--logit-scales", "1,40", "--adversarial", "ties", "--quiet"]
    assert check.main(small) == 0
    assert check.main(["--implementation", "wrong-axis", *small]) == 1
    assert "row axis" in capsys.readouterr().out
    approx = ["--implementation", "fma", "--approximate", "--claimed-rate", "-2", "--rate-kind", "bound", "--n", "512",
              "--ladder", "4,8,16", "--quiet"]
    assert check.main([*approx, "--in", "rank"]) == 0
    assert check.main([*approx, "--in=rank"]) == 0
    capsys.readouterr()
    assert check.main(["--implementation", "bad"]) == 2
    assert "implementation" in capsys.readouterr().err


@pytest.mark.slow
def test_default_ladder_reaches_4096_and_holds():
    res = check.run()
    assert res.passed, res.failures
    assert "lengths: n=4096 d=64 logit std 1" in res.quantities.case_ratios
    assert res.measured["error_over_bound"] <= check.MEASURED["float64"]
