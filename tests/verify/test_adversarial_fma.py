"""Adversarial implementations held to the FMA contract (verify.fma_contract --implementation module:function).

Each wrong implementation must fail for its own reason: the record that names what it does wrong, or
the one-line error (exit 2) of a function that raises or returns something that is not an (n, m)
float array. The implementations live in this module and are named as ``<this module>:<function>``.
"""

import numpy as np
import pytest

from verify import fma_contract as check
from verify.core.implementation import ImplementationError
from verify.testing import assert_refused, failed_records

SMALL = {"n": 64, "d": 8, "draws": 1}


def _name(fn) -> str:
    return f"{__name__}:{fn.__name__}"


def _softmax(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _logits(q, k):
    return q @ k.T / np.sqrt(q.shape[1])


def _causal_logits(q, k):
    return np.where(np.tri(q.shape[0], dtype=bool), _logits(q, k), -np.inf)


# -- implementations that hold ---------------------------------------------------------------------
def dense(q, k, v):
    return _softmax(_logits(q, k)) @ v


def dense_causal(q, k, v):
    return _softmax(_causal_logits(q, k)) @ v


def dense_float32(q, k, v):
    return (_softmax(_logits(q, k)) @ v).astype(np.float32)


# -- implementations that must fail a record -------------------------------------------------------
def all_nan(q, k, v):
    return np.full((q.shape[0], v.shape[1]), np.nan)


def all_inf(q, k, v):
    return np.full((q.shape[0], v.shape[1]), np.inf)


def one_nan_row(q, k, v):
    out = dense(q, k, v)
    out[5] = np.nan
    return out


def one_bad_row(q, k, v):
    out = dense(q, k, v)
    out[5] *= 1.01  # one row not normalised
    return out


def negative_weight(q, k, v):
    w = _softmax(_logits(q, k))
    w[:, 0] -= 0.01
    w[:, 1] += 0.01  # rows still sum to 1
    return w @ v


def clipped_values(q, k, v):
    return _softmax(_logits(q, k)) @ np.clip(v, -2.0, 2.0)  # V = 1 and V = I pass; Gaussian v does not


def mutates_inputs(q, k, v):
    out = dense(q, k, v)
    k *= 0.5  # in place: the caller's keys change
    return out


def attends_to_next(q, k, v):
    n = q.shape[0]
    s = np.where(np.tri(n, k=1, dtype=bool), _logits(q, k), -np.inf)  # j <= i + 1: one token ahead
    return _softmax(s) @ v


def peeks_at_next_query(q, k, v):
    # normalised, weights only on j <= i, but the query of token i borrows from token i + 1
    q2 = q.copy()
    q2[:-1] += 0.5 * q[1:]
    return _softmax(_causal_logits(q2, k)) @ v


def pooled_queries_causal(q, k, v):
    # the toolkit's FMA-linear: pooled block queries mix later queries into earlier outputs
    from spectral import fma_attention

    return fma_attention(q, k, v, r=4, normalisation="joint", causal=True, downsample_queries=True)


# -- implementations that are not the contract's function: one line, exit 2 ----------------------------
def wrong_shape(q, k, v):
    return dense(q, k, v)[:-1]


def integer_output(q, k, v):
    return np.rint(dense(q, k, v)).astype(np.int64)  # V = 1 gives exact ones, V = I rounded weights


def half_precision(q, k, v):
    return dense(q, k, v).astype(np.float16)


def not_an_array(q, k, v):
    return None


def raises_value_error(q, k, v):
    raise ValueError("the head dimension must be a multiple of 64")


def hangs(q, k, v):
    import time

    time.sleep(60)


# ---------------------------------------------------------------------------------------------------
def _run(fn, **kwargs):
    return check.run(implementation=_name(fn), **{**SMALL, **kwargs})


@pytest.mark.parametrize("fn, causal", [(dense, False), (dense_causal, False), (dense_causal, True),
                                        (dense_float32, False)])
def test_correct_implementations_hold_the_contract(fn, causal):
    res = _run(fn, causal=causal)
    assert res.passed, res.failures
    assert res.final_line().startswith(f"PASS fma_contract [contract on {_name(fn)}: holds]: contract of")
    assert "paper" not in res.final_line() and res.paper_reading() == ""
    if fn is dense_float32:  # its rounding bound is n eps of float32
        assert res.quantities.output_dtype == "float32"
        assert res.record("max_row_deviation_from_1_with_v_ones").tolerance == pytest.approx(64 * 2.0**-23)


@pytest.mark.parametrize("fn", [all_nan, all_inf, one_nan_row])
def test_non_finite_outputs_never_pass(fn):
    res = _run(fn)
    assert not res.passed
    assert res.record("non_finite_outputs").passed is False and res.measured["non_finite_outputs"] > 0
    dev = res.measured["max_row_deviation_from_1_with_v_ones"]
    assert not np.isfinite(dev)  # the statistic carries the NaN / inf instead of reading 0.0
    assert res.record("max_row_deviation_from_1_with_v_ones").passed is False
    assert res.final_line().startswith(f"FAIL fma_contract [contract on {_name(fn)}: violated]")


def test_all_nan_reads_nan_not_an_empty_range():
    q = _run(all_nan).quantities
    assert np.isnan(q.max_row_deviation_from_1_with_v_ones)
    assert np.isnan(q.row_min_with_v_ones) and np.isnan(q.row_max_with_v_ones)  # not inf / -inf
    assert np.isnan(q.min_effective_weight) and np.isnan(q.linearity_error)


def test_one_bad_row_fails_the_row_sums():
    res = _run(one_bad_row)
    assert res.record("max_row_deviation_from_1_with_v_ones").passed is False
    assert res.measured["max_row_deviation_from_1_with_v_ones"] == pytest.approx(0.01)
    assert res.record("non_finite_outputs").passed and res.record("min_effective_weight").passed


def test_negative_weights_fail():
    res = _run(negative_weight)
    assert res.record("min_effective_weight").passed is False
    assert res.record("max_row_deviation_from_1_with_v_ones").passed  # rows still sum to 1


def test_clipped_values_fail_linearity_only():
    assert failed_records(_run(clipped_values)) == {"linearity_error"}


def test_mutating_the_inputs_fails_and_names_them():
    res = _run(mutates_inputs)
    assert failed_records(res) == {"arguments_unchanged"}
    assert res.quantities.mutated == ("k",) and "changed its argument(s) k" in res.failures[0]


def test_causal_probe_catches_weight_on_the_next_token():
    res = _run(attends_to_next, causal=True)
    assert res.record("future_weight").passed is False and res.record("causal_perturbation").passed is False
    assert _run(attends_to_next).passed  # without --causal it is a normalised (non-causal) attention


def test_causal_probe_catches_a_peek_at_later_queries():
    res = _run(peeks_at_next_query, causal=True)
    assert failed_records(res) == {"causal_perturbation"}
    assert res.record("future_weight").passed  # no weight on later values: only the perturbation sees it


def test_pooled_queries_of_fma_linear_are_not_causal():
    res = _run(pooled_queries_causal, causal=True)
    assert res.record("causal_perturbation").passed is False


@pytest.mark.parametrize("fn, match", [
    (wrong_shape, r"wrong_shape' returned output .* of shape \(63, \d+\), expected \(64, \d+\)"),
    (integer_output, "dtype int64, expected float64 or float32"),
    (half_precision, "dtype float16"),
    (not_an_array, "not a numeric array"),
    (raises_value_error, "raises_value_error' raised ValueError: the head dimension must be a multiple of 64"),
])
def test_functions_that_are_not_the_contracts_give_one_line_errors(fn, match):
    with pytest.raises(ImplementationError, match=match):
        _run(fn)


def test_a_hanging_function_stops_at_the_timeout():
    with pytest.raises(ImplementationError, match=r"hangs' ran past its time limit of 0.2 s"):
        _run(hangs, timeout=0.2)


def test_the_docstring_points_to_the_exact_contract():
    assert "verify.attention_contract" in check.__doc__ and "What this contract is not" in check.__doc__


def test_cli_third_party(capsys):
    assert check.main(["--implementation", _name(dense), "--n", "32", "--d", "4", "--draws", "1", "--quiet"]) == 0
    assert f"[contract on {_name(dense)}: holds]" in capsys.readouterr().out
    assert check.main(["--implementation", _name(one_nan_row), "--n", "32", "--d", "4", "--draws", "1",
                       "--quiet"]) == 1
    assert "violated" in capsys.readouterr().out
    for name, raised in (("os:getcwd", "raised TypeError"), (_name(raises_value_error), "raised ValueError")):
        assert check.main(["--implementation", name, "--n", "32", "--draws", "1"]) == 2
        captured = capsys.readouterr()
        err = captured.err.strip().splitlines()
        assert len(err) == 1 and "Traceback" not in captured.err, err
        assert name in err[0] and raised in err[0]


@pytest.mark.parametrize("kwargs, match", [
    ({"r": 8}, "r is the base cell of the built-in implementations"),
    ({"claim": "printed"}, "claim picks the normalisation"),
])
def test_options_of_the_builtins_are_refused_for_a_third_party(kwargs, match):
    assert_refused(_run, match, fn=dense, **kwargs)


def test_a_module_that_fails_to_import_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "fma_contract_broken_mod.py").write_text("raise RuntimeError('no GPU here')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImplementationError, match="importing 'fma_contract_broken_mod' raised RuntimeError"):
        check.run(implementation="fma_contract_broken_mod:f", n=32, draws=1)


def test_the_contract_verdict_survives_json():
    from verify.core.result import CheckResult

    res = _run(one_bad_row)
    back = CheckResult.from_json(res.to_json())
    assert back.implementation == _name(one_bad_row) and back.final_line() == res.final_line()
    assert f"contract of the user's implementation {_name(one_bad_row)}" in back.summary()
