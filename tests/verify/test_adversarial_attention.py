"""Implementations held to verify.attention_contract as a user's ``module:function``.

Correct attentions written in other ways than the built-in one (normalising after the value product, the
log-sum-exp form, an online softmax over key blocks as flash attention does, queries and keys scaled before their
product, a torch SDPA when torch is installed) must hold in float64, float32 and float16; the six wrong attentions
of the issue (as a user's functions) and the adversaries below must fail, each for its own reason: the record
that names what it does wrong, or the one-line error (exit 2) of a function that raises, hangs, or returns
something that is not an (n, dv) float array. The implementations live in this module and are named as
``<this module>:<function>``.
"""

import math
import time

import numpy as np
import pytest

from verify import attention_contract as check
from verify.core.implementation import ImplementationError
from verify.testing import failed_records

#: small cases: the six wrong attentions and every adversary below fail on them (the default ladder is the slow tier's)
SMALL = {"lengths": (1, 3, 64), "dims": (1, 16), "logit_scales": (1.0, 40.0, 300.0),
         "adversarial": ("ties", "large-negative")}


def _name(fn) -> str:
    return f"{__name__}:{fn.__name__}"


def _acc(x):
    """The accumulation dtype of the inputs' dtype (float32 for float16)."""
    return np.float32 if x.dtype == np.float16 else x.dtype.type


def _logits(q, k):
    acc = _acc(q)
    return (q.astype(acc) @ k.astype(acc).T) / acc(math.sqrt(q.shape[1]))


def _mask(s, causal=False, mask=None):
    if causal:
        s = np.where(np.tri(*s.shape, dtype=bool), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    return s


# -- correct implementations, each written differently ----------------------------------------------------------------
def divide_after(q, k, v, *, causal=False, mask=None):
    """exp(s - max) v / sum: the normalisation after the value product."""
    s = _mask(_logits(q, k), causal, mask)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return ((e @ v.astype(e.dtype)) / e.sum(axis=1, keepdims=True)).astype(q.dtype)


def logsumexp_form(q, k, v, *, causal=False, mask=None):
    """exp(s - logsumexp(s)) v, the weights never normalised by a division."""
    s = _mask(_logits(q, k), causal, mask)
    m = s.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(s - m).sum(axis=1, keepdims=True))
    return (np.exp(s - lse) @ v.astype(s.dtype)).astype(q.dtype)


def online_softmax(q, k, v, *, causal=False, mask=None, block=128):
    """Flash-attention style: key blocks, a running maximum and rescaled partial sums (float32 for float16)."""
    acc = _acc(q)
    n = q.shape[0]
    m = np.full((n, 1), -np.inf, dtype=acc)
    z = np.zeros((n, 1), dtype=acc)
    num = np.zeros((n, v.shape[1]), dtype=acc)
    for start in range(0, k.shape[0], block):
        s = (q.astype(acc) @ k[start:start + block].astype(acc).T) / acc(math.sqrt(q.shape[1]))
        cols = np.arange(start, min(start + block, k.shape[0]))
        if causal:
            s = np.where(cols[None, :] <= np.arange(n)[:, None], s, -np.inf)
        if mask is not None:
            s = np.where(mask[:, cols], s, -np.inf)
        new = np.maximum(m, s.max(axis=1, keepdims=True))
        with np.errstate(invalid="ignore"):
            scale = np.where(np.isfinite(new), np.exp(m - new), 0.0).astype(acc)
            e = np.where(np.isfinite(new), np.exp(s - new), 0.0).astype(acc)
        z = z * scale + e.sum(axis=1, keepdims=True)
        num = num * scale + e @ v[start:start + block].astype(acc)
        m = new
    return (num / z).astype(q.dtype)


def prescaled(q, k, v, *, causal=False, mask=None):
    """q and k each scaled by d^(-1/4) in the inputs' dtype before their product."""
    c = q.dtype.type(q.shape[1] ** -0.25)
    acc = _acc(q)
    s = _mask((q * c).astype(acc) @ (k * c).astype(acc).T, causal, mask)
    e = np.exp(s - s.max(axis=1, keepdims=True)).astype(q.dtype).astype(acc)
    return ((e / e.sum(axis=1, keepdims=True)).astype(q.dtype).astype(acc) @ v.astype(acc)).astype(q.dtype)


def dense_causal(q, k, v):
    return divide_after(q, k, v, causal=True)


def online_causal(q, k, v):
    return online_softmax(q, k, v, causal=True, block=16)


def dense_masked(q, k, v, *, mask):
    return logsumexp_form(q, k, v, mask=mask)


def online_masked_causal(q, k, v, *, mask):
    return online_softmax(q, k, v, causal=True, mask=mask, block=32)


def torch_sdpa(q, k, v):
    """torch.nn.functional.scaled_dot_product_attention on the CPU, in the inputs' dtype."""
    import torch

    out = torch.nn.functional.scaled_dot_product_attention(*(torch.from_numpy(np.ascontiguousarray(a))[None]
                                                             for a in (q, k, v)))
    return out[0].numpy()


def torch_sdpa_causal(q, k, v):
    import torch

    out = torch.nn.functional.scaled_dot_product_attention(*(torch.from_numpy(np.ascontiguousarray(a))[None]
                                                             for a in (q, k, v)), is_causal=True)
    return out[0].numpy()


# -- wrong implementations that must fail a record -------------------------------------------------------------------
def all_nan(q, k, v):
    return np.full((q.shape[0], v.shape[1]), np.nan, dtype=q.dtype)


def one_inf_entry(q, k, v):
    out = divide_after(q, k, v)
    out[-1, 0] = np.inf
    return out


def float32_for_float64(q, k, v):
    return divide_after(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32))


def mutates_inputs(q, k, v):
    out = divide_after(q, k, v)
    k *= 0.5  # in place: the caller's keys change
    return out


def right_only_up_to_1024(q, k, v):
    """Attends to the first 1024 keys only (a fixed-size buffer): right for n <= 1024."""
    return divide_after(q, k[:1024], v[:1024])


def right_only_for_d64(q, k, v):
    """Scales the logits by 1/8 = 1/sqrt(64) whatever d is."""
    return divide_after(q * q.dtype.type(math.sqrt(q.shape[1]) / 8), k, v)


def scale_from_value_width(q, k, v):
    """Takes the head dim for the scale from the values' width (right whenever dv = d)."""
    return divide_after(q * q.dtype.type(math.sqrt(q.shape[1] / v.shape[1])), k, v)


def hard_argmax_for_large_logits(q, k, v):
    """Switches to a one-hot weight on the first maximum when the logits are large: wrong where the maximum is tied."""
    s = _logits(q, k)
    if float(np.max(np.abs(s))) < 30:
        return divide_after(q, k, v)
    return v[np.argmax(s, axis=1)].astype(q.dtype)


def attends_to_next(q, k, v):
    """Causal but for one token ahead: j <= i + 1."""
    s = np.where(np.tri(q.shape[0], k=1, dtype=bool), _logits(q, k), -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return ((e / e.sum(axis=1, keepdims=True)) @ v).astype(q.dtype)


def peeks_at_next_query(q, k, v):
    """Weights only on j <= i, but the query of token i borrows from the query of token i + 1."""
    q2 = q.copy()
    q2[:-1] += q.dtype.type(0.5) * q[1:]
    return divide_after(q2, k, v, causal=True)


def ignores_mask(q, k, v, *, mask):
    return divide_after(q, k, v)


def ignores_queries(q, k, v):
    """Every query replaced by the mean key: the same weights for every row, whatever q is."""
    return divide_after(np.broadcast_to(k.mean(axis=0), q.shape).astype(q.dtype), k, v)


# -- implementations that are not the contract's function: one line, exit 2 -------------------------------------------
def wrong_shape(q, k, v):
    return divide_after(q, k, v)[:-1]


def integer_output(q, k, v):
    return np.rint(divide_after(q, k, v)).astype(np.int64)


def raises_value_error(q, k, v):
    raise ValueError("the head dimension must be a multiple of 64")


def hangs(q, k, v):
    time.sleep(60)


# ---------------------------------------------------------------------------------------------------------------------
def _run(fn, **kwargs):
    return check.run(implementation=fn if isinstance(fn, str) else _name(fn), **{**SMALL, **kwargs})


@pytest.mark.parametrize("fn, dtype", [(divide_after, "float64"), (logsumexp_form, "float32"),
                                       (online_softmax, "float16"), (prescaled, "float16")])
def test_correct_implementations_hold(fn, dtype):
    res = _run(fn, dtype=dtype)
    assert res.passed, res.failures
    assert res.final_line().startswith(f"PASS attention_contract [contract on {_name(fn)}: holds]: contract of")
    assert res.measured["error_over_bound"] < 0.5  # measured well inside the bound


@pytest.mark.parametrize("fn, options", [(dense_causal, {"causal": True}), (online_causal, {"causal": True}),
                                         (dense_masked, {"mask": True}),
                                         (online_masked_causal, {"mask": True, "causal": True})])
def test_causal_and_masked_implementations_hold(fn, options):
    res = _run(fn, lengths=(3, 64), dims=(16,), dtype="float32", **options)
    assert res.passed, res.failures
    assert res.record("causal_perturbation" if options.get("causal") else "masked_weight").passed


@pytest.mark.parametrize("fn, causal", [(torch_sdpa, False), (torch_sdpa_causal, True)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_torch_sdpa_holds(fn, causal, dtype):
    pytest.importorskip("torch")
    res = _run(fn, dtype=dtype, causal=causal)
    assert res.passed, res.failures


#: the six wrong attentions of issue 32, written as a user's functions (the check's own controls, imported by name),
#: with the record each must fail and the words its message starts with
SIX = [("unscaled_attention", "float32", "logit_scale", "scale: c = 4 = sqrt(d)"),
       ("mean_pooling_attention", "float32", "query_dependence", "dependence on q/k"),
       ("wrong_axis_attention", "float32", "implied_logit_residual", "row axis"),
       ("hot_temperature_attention", "float32", "logit_scale", "temperature: c = 0.1"),
       ("rolled_values_attention", "float32", "implied_logit_residual", "key-value alignment: the value of token j + 1"),
       ("no_max_subtraction_attention", "float32", "non_finite_outputs", "overflow/non-finite")]


@pytest.mark.parametrize("function, dtype, record, words", SIX, ids=[s[0] for s in SIX])
def test_the_six_wrong_attentions_fail_naming_the_property(function, dtype, record, words):
    name = f"verify.attention_contract:{function}"
    res = _run(name, dtype=dtype)
    assert not res.passed and res.record(record).passed is False
    assert res.failures[0].startswith(f"{name}: {words}"), res.failures[0]
    assert res.record("error_over_bound").passed is False  # and the output is not the exact one
    assert res.final_line().startswith(f"FAIL attention_contract [contract on {name}: violated]")


@pytest.mark.parametrize("fn", [all_nan, one_inf_entry])
def test_non_finite_outputs_never_pass(fn):
    res = _run(fn)
    assert res.record("non_finite_outputs").passed is False and res.measured["non_finite_outputs"] > 0
    assert not math.isfinite(res.measured["error_over_bound"])


def test_a_narrower_dtype_fails_the_precision():
    res = _run(float32_for_float64)
    assert res.record("output_precision").passed is False
    assert "precision: it returned float32 for float64 inputs" in res.failures[0]
    assert res.record("error_over_bound").passed is False  # float32 rounding is far above float64's bound


def test_mutating_the_inputs_fails_and_names_them():
    res = _run(mutates_inputs)
    assert failed_records(res) == {"arguments_unchanged"}
    assert res.quantities.mutated == ("k",)


def test_an_implementation_right_only_up_to_1024_tokens_fails_above():
    assert max(check.DEFAULT_LENGTHS) >= 4096 and any(n > 1024 for n in check.DEFAULT_LENGTHS)
    assert _run(right_only_up_to_1024, lengths=(3, 1024)).passed
    res = _run(right_only_up_to_1024, lengths=(3, 1025), dims=(16,), logit_scales=(1.0,), adversarial=("ties",))
    assert failed_records(res) == {"error_over_bound"}
    assert "worst at lengths: n=1025" in res.failures[0]


def test_an_implementation_right_only_for_d64_fails_on_other_dims():
    res = _run(right_only_for_d64, dims=(1, 16, 64))
    ratios = res.quantities.case_ratios
    assert all(r <= 1 for c, r in ratios.items() if " d=64 " in c)  # right at d = 64 ...
    assert ratios["dims: n=256 d=1 logit std 1"] > 1 and ratios["dims: n=256 d=16 logit std 1"] > 1  # ... not else
    assert not res.passed and "logit_scale" in failed_records(res)  # the weights probe has d = 16


def test_a_scale_taken_from_the_values_fails_on_the_value_width_case():
    assert _run(scale_from_value_width).passed
    res = _run(scale_from_value_width, adversarial=("ties", "value-width"))
    assert failed_records(res) == {"error_over_bound"} and "value-width" in res.failures[0]


def test_hard_argmax_fails_on_ties():
    res = _run(hard_argmax_for_large_logits, adversarial=("ties", "repeated-keys"))
    assert failed_records(res) == {"error_over_bound"}
    assert "repeated-keys" in res.failures[0] or "ties" in res.failures[0] or "logit std" in res.failures[0]


def test_causal_probe_catches_a_weight_on_the_next_token():
    res = _run(attends_to_next, causal=True)
    assert res.record("future_weight").passed is False and res.record("causal_perturbation").passed is False
    assert "causality" in res.failures[0]


def test_causal_probe_catches_a_peek_at_later_queries():
    res = _run(peeks_at_next_query, causal=True)
    assert res.record("causal_perturbation").passed is False
    assert res.record("future_weight").passed  # no weight on later tokens: only the perturbation sees it


def test_an_ignored_mask_fails():
    res = _run(ignores_mask, mask=True, lengths=(64,))
    assert res.record("masked_weight").passed is False


def test_ignoring_the_queries_is_named():
    res = _run(ignores_queries)
    assert res.record("query_dependence").passed is False and res.record("key_dependence").passed
    assert "it ignores q" in res.failures[0]


@pytest.mark.parametrize("fn, match", [
    (wrong_shape, r"wrong_shape' returned output for .* of shape \(\d+, \d+\), expected"),
    (integer_output, "dtype int64, expected float64 or float32 or float16"),
    (raises_value_error, "raises_value_error' raised ValueError: the head dimension must be a multiple of 64"),
])
def test_functions_that_are_not_the_contracts_give_one_line_errors(fn, match):
    with pytest.raises(ImplementationError, match=match):
        _run(fn)


def test_a_hanging_function_stops_at_the_timeout():
    start = time.perf_counter()
    with pytest.raises(ImplementationError, match=r"hangs' ran past its time limit of 0.3 s"):
        _run(hangs, timeout=0.3)
    assert time.perf_counter() - start < 5


def test_cli_third_party(capsys):
    from verify.attention_contract import main

    small = ["--lengths", "3,64", "--dims", "16", "--logit-scales", "1,40", "--adversarial", "ties", "--quiet"]
    assert main(["--implementation", _name(divide_after), *small]) == 0
    assert f"[contract on {_name(divide_after)}: holds]" in capsys.readouterr().out
    assert main(["--implementation", "verify.attention_contract:unscaled_attention", *small]) == 1
    assert "scale: c = 4 = sqrt(d)" in capsys.readouterr().out
    for name, said in ((_name(raises_value_error), "raised ValueError"), (_name(hangs), "ran past its time limit")):
        assert main(["--implementation", name, "--timeout", "0.3", *small]) == 2
        captured = capsys.readouterr()
        err = captured.err.strip().splitlines()
        assert len(err) == 1 and "Traceback" not in captured.err, err
        assert name in err[0] and said in err[0]
