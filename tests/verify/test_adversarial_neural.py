"""Adversarial score functions held to NEURAL-4 (verify.neural_rank --implementation module:function).

The contract of f(q, k, mlp): finite scores equal to eq. 4 on sampled pairs, arguments unchanged, and on
its scores the rank bounds of NEURAL-4 by activation. Each wrong function must fail for its own reason.
"""

import math

import numpy as np
import pytest

from verify import neural_rank as check
from verify.core.implementation import ImplementationError
from verify.testing import assert_passes, assert_refused, failed_records, measurement_fixture, negative_controls

CHECK = check.CHECK
SMALL = {"n": 128, "d": 16, "d_prime": (2,), "hidden": (1, 4)}


def _name(fn) -> str:
    return f"{__name__}:{fn.__name__}"


_SIGMA = {"identity": lambda z: z, "square": lambda z: z * z, "exp": np.exp, "relu": lambda z: np.maximum(z, 0.0),
          "tanh": np.tanh,
          "gelu": lambda z: 0.5 * z * (1.0 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))}


def _pre(q, k, mlp):
    return (q @ mlp.W1.T)[:, None, :] + (k @ mlp.W2.T)[None, :, :] + mlp.b_h  # (n, m, h)


# -- score functions that hold ---------------------------------------------------------------------------
def dense_eq4(q, k, mlp):
    return _SIGMA[mlp.activation](_pre(q, k, mlp)) @ mlp.w_a + mlp.b_a


# -- score functions that must fail a record ---------------------------------------------------------------
def all_nan(q, k, mlp):
    return np.full((q.shape[0], k.shape[0]), np.nan)


def nan_for_exp(q, k, mlp):
    out = dense_eq4(q, k, mlp)
    if mlp.activation == "exp":
        out[3, 4] = np.inf
    return out


def forgets_hidden_bias(q, k, mlp):
    pre = (q @ mlp.W1.T)[:, None, :] + (k @ mlp.W2.T)[None, :, :]
    return _SIGMA[mlp.activation](pre) @ mlp.w_a + mlp.b_a


def erf_gelu(q, k, mlp):
    from scipy.special import erf

    if mlp.activation != "gelu":
        return dense_eq4(q, k, mlp)
    z = _pre(q, k, mlp)
    return (0.5 * z * (1.0 + erf(z / math.sqrt(2)))) @ mlp.w_a + mlp.b_a  # exact GELU, not the tanh form


def separable(q, k, mlp):
    # sigma(W1 q) . (w_a * sigma(W2 k)): a product of query and key features, rank <= h
    sigma = _SIGMA[mlp.activation]
    return (sigma(q @ mlp.W1.T + mlp.b_h) * mlp.w_a) @ sigma(k @ mlp.W2.T).T + mlp.b_a


def mutates_weights(q, k, mlp):
    out = dense_eq4(q, k, mlp)
    mlp.W_h *= 2.0
    return out


def mutates_queries(q, k, mlp):
    out = dense_eq4(q, k, mlp)
    q[:] = 0.0
    return out


def one_wrong_entry(q, k, mlp):
    """The toolkit's scores with a single ReLU entry off by 1e-6 of max |A| (an off-by-one in a tiled kernel, say):
    ReLU scores are of high rank already, so only the comparison with eq. 4 can see it."""
    from spectral import neural_scores

    out = np.array(neural_scores(q, k, mlp), dtype=np.float64)
    if mlp.activation == "relu":
        out[q.shape[0] // 3, k.shape[0] // 2 + 1] += 1e-6 * np.max(np.abs(out))
    return out


def hangs(q, k, mlp):
    import time

    time.sleep(60)


# -- not the contract's function: one line, exit 2 ------------------------------------------------------
def drops_a_key(q, k, mlp):
    return dense_eq4(q, k, mlp)[:, :-1]


def float32_scores(q, k, mlp):
    return dense_eq4(q, k, mlp).astype(np.float32)


def raises(q, k, mlp):
    raise KeyError(mlp.activation)


def _run(fn, **kwargs):
    return check.run(implementation=_name(fn), **{**SMALL, **kwargs})


@pytest.mark.parametrize("name", [_name(dense_eq4), "spectral:neural_scores"])
def test_correct_score_functions_hold_the_contract(name):
    res = check.run(implementation=name, **SMALL)
    assert res.passed and res.final_line().startswith(f"PASS neural_rank [contract on {name}: holds]"), res.failures
    assert res.measured["reference_pair_error"] < 1e-14 and res.measured["non_finite_scores"] == 0


def test_the_toolkit_run_is_unchanged_by_the_option():
    res = check.run(**SMALL)
    assert res.passed and res.quantities.reference_pair_error is None
    assert "non_finite_scores" not in res.measured and res.final_line().startswith("PASS neural_rank [paper:")


@pytest.mark.parametrize("fn", [all_nan, nan_for_exp])
def test_non_finite_scores_never_pass(fn):
    res = _run(fn)
    assert "non_finite_scores" in failed_records(res) and res.measured["non_finite_scores"] > 0
    assert res.final_line().startswith(f"FAIL neural_rank [contract on {_name(fn)}: violated]")


def test_a_nan_in_one_case_leaves_the_others_ranked():
    res = _run(nan_for_exp)
    assert failed_records(res) == {"non_finite_scores"}
    assert "square_rank_deviation" in res.measured and "exp_rank_excess" not in res.measured


@pytest.mark.parametrize("fn", [forgets_hidden_bias, erf_gelu])
def test_subtly_wrong_scores_fail_eq4(fn):
    res = _run(fn)
    assert "reference_pair_error" in failed_records(res)
    assert res.measured["reference_pair_error"] > 1e-6


def test_a_separable_score_fails_the_relu_rank():
    res = _run(separable)
    assert {"relu_min_rank_h4", "reference_pair_error"} <= failed_records(res)


@pytest.mark.parametrize("fn, names", [(mutates_weights, "mlp"), (mutates_queries, "q")])
def test_changing_the_arguments_fails(fn, names):
    res = _run(fn)
    assert failed_records(res) == {"arguments_unchanged"}, res.failures
    assert res.quantities.mutated == (names,)


@pytest.mark.parametrize("fn, match", [
    (drops_a_key, r"returned scores of shape \(128, 127\), expected \(128, 128\)"),
    (float32_scores, "dtype float32, expected float64"),
    (raises, "raises' raised KeyError: 'identity'"),
])
def test_functions_that_are_not_the_contracts_give_one_line_errors(fn, match):
    with pytest.raises(ImplementationError, match=match):
        _run(fn)


def test_bad_implementation_names():
    assert_refused(check.run, "'toolkit' or 'package.module:function'", implementation="mine")
    assert_refused(check.run, "not callable", implementation="math:pi")
right = measurement_fixture(CHECK, implementation=_name(dense_eq4), **SMALL)


def test_the_right_function_passes(right):
    p, q = right
    assert_passes(CHECK, q, p)


test_each_contract_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "right", [
    ({"non_finite_scores": 1}, "non_finite_scores"),
    ({"reference_pair_error": 1e-9}, "reference_pair_error"),
    ({"reference_pair_error": float("nan")}, "reference_pair_error"),
    ({"mutated": ("k",)}, "arguments_unchanged"),
])


def test_cli(capsys):
    argv = ["--n", "64", "--d", "8", "--d-prime", "2", "--hidden", "4", "--quiet"]
    assert check.main(["--implementation", _name(dense_eq4), *argv]) == 0
    assert check.main(["--implementation", _name(forgets_hidden_bias), *argv]) == 1
    capsys.readouterr()
    assert check.main(["--implementation", _name(raises), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and _name(raises) in err[0] and "KeyError" in err[0]


def test_a_single_wrong_entry_fails_at_the_default_settings():
    res = check.run(implementation=_name(one_wrong_entry))
    assert failed_records(res) == {"reference_pair_error"}
    assert res.measured["single_wrong_entry_detection_per_case"] == 1.0  # every pair compared at n = 256
    assert res.quantities.pairs_compared == 256 * 256 * len(res.quantities.cases)
    assert "every pair of each case" in res.record("reference_pair_error").why


def test_beyond_256_the_sampled_pairs_state_their_detection_probability():
    assert check.detection_probability(256, 256) == 1.0
    p = check.detection_probability(1024, 1024)
    assert p == pytest.approx(1 - (1 - 1 / 1024**2) ** 65536) and 0.05 < p < 0.07
    assert check.detection_probability(1024, 1024, cases=36) == pytest.approx(1 - (1 - 1 / 1024**2) ** (65536 * 36))
    res = check.run(implementation=_name(dense_eq4), n=300, d=16, d_prime=(2,), hidden=(1,),
                    activations=("tanh",))
    assert res.passed and res.measured["single_wrong_entry_detection_per_case"] == pytest.approx(
        1 - (1 - 1 / 300**2) ** 65536)
    assert "a single wrong entry is among them with probability 0.517 per case" in \
        res.record("reference_pair_error").why


def test_a_hanging_score_function_stops_at_the_timeout():
    with pytest.raises(ImplementationError, match=r"hangs' ran past its time limit of 0.2 s"):
        _run(hangs, timeout=0.2)
