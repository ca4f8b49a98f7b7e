"""verify.fma_contract (FMA-8): joint FMA passes; per-level FMA, summed coarse values and a third-party
function that forgets the group sizes fail; a correct third-party function passes.

The implementation is part of the measurement (and, for "fma", so is the claim): each variant is measured
once at a small n; the assertions are held to those quantities and to altered ones.
"""

import numpy as np
import pytest

from spectral.floor.validation import InputError
from verify import fma_contract as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"n": 256, "draws": 1}
small = measurement_fixture(CHECK, **SMALL)
causal = measurement_fixture(CHECK, **SMALL, causal=True)


def _measured(**kwargs):
    p, q = measured(CHECK, **{**SMALL, **kwargs})
    return CHECK.assess(q, p)


def test_joint_fma_passes(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.measured["per_level_row_sum_max"] == pytest.approx(4.0)  # 1 + 3 far levels at n = 256, r = 16
    assert q.label == "toolkit FMA (joint)" and q.row_sums_v_ones.shape == (256,)


def test_printed_per_level_fails_with_rows_equal_to_the_depth():
    res = _measured(claim="printed")
    assert not res.passed
    assert res.measured["row_min_with_v_ones"] == pytest.approx(4.0) == res.measured["row_max_with_v_ones"]
    assert "FMA-8" in res.failures[0] and "log|G|" in res.failures[0]


def test_summed_coarse_values_fail():
    p, q = measured(CHECK, **SMALL, implementation="summed-coarse")
    res = assert_fails(CHECK, q, p, "max_row_deviation_from_1_with_v_ones")
    assert res.measured["row_min_with_v_ones"] > 1.5  # (Z_near + sum e^s |G|) / (Z_near + sum e^s)
    assert "per_level_row_sum_law_error" not in res.measured


def _third_party(tmp_path, monkeypatch, body, module):
    (tmp_path / f"{module}.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{module}:attention"


def test_third_party_dense_softmax_passes(tmp_path, monkeypatch):
    name = _third_party(tmp_path, monkeypatch, (
        "import numpy as np\n"
        "def attention(q, k, v):\n"
        "    s = q @ k.T / np.sqrt(q.shape[1])\n"
        "    e = np.exp(s - s.max(axis=1, keepdims=True))\n"
        "    return e / e.sum(axis=1, keepdims=True) @ v\n"), "fma_contract_dense_attn")
    res = check.run(implementation=name, n=128, draws=1)
    assert res.passed, res.failures
    assert "per_level_row_sum_law_error" not in res.measured and res.quantities.label == name


def test_third_party_without_group_sizes_fails(tmp_path, monkeypatch):
    # two-level attention: exact near half, the far half as ONE mean key counted once but its values summed
    name = _third_party(tmp_path, monkeypatch, (
        "import numpy as np\n"
        "def attention(q, k, v):\n"
        "    n, d = q.shape; h = n // 2\n"
        "    sn = q @ k[:h].T / np.sqrt(d); sf = q @ k[h:].mean(axis=0) / np.sqrt(d)\n"
        "    m = np.maximum(sn.max(axis=1), sf)\n"
        "    en, ef = np.exp(sn - m[:, None]), np.exp(sf - m)\n"
        "    return (en @ v[:h] + ef[:, None] * v[h:].sum(axis=0)) / (en.sum(axis=1) + ef)[:, None]\n"),
        "fma_contract_summed_attn")
    res = check.run(implementation=name, n=64, draws=1)
    assert not res.passed and res.measured["row_max_with_v_ones"] > 2


def test_wrong_output_shape_is_bad_input(tmp_path, monkeypatch):
    name = _third_party(tmp_path, monkeypatch, "def attention(q, k, v):\n    return v[:-1]\n", "fma_contract_bad_shape")
    with pytest.raises(InputError, match=r"returned output .* of shape \(31, 32\), expected \(32, 32\)"):
        check.run(implementation=name, n=32, draws=1)


def test_summed_coarse_reference_by_hand():
    rng = np.random.default_rng(0)
    n, r = 32, 4
    q, k = rng.standard_normal((2, n, 3))
    out = check.summed_coarse_attention(q, k, np.ones((n, 1)), r=r)
    assert np.all(out[:, 0] > 1.0) and np.all(out[:, 0] < 2 * r * 2)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"max_row_deviation_from_1_with_v_ones": 1e-9}, "max_row_deviation_from_1_with_v_ones"),
    ({"max_row_deviation_from_1_with_v_ones": float("nan")}, "max_row_deviation_from_1_with_v_ones"),
    ({"min_effective_weight": -1e-9}, "min_effective_weight"),
    ({"min_effective_weight": float("nan")}, "min_effective_weight"),
    ({"per_level_row_sum_law_error": 1e-9}, "per_level_row_sum_law_error"),
    ({"per_level_row_sum_law_error": float("nan")}, "per_level_row_sum_law_error"),
    ({"non_finite_outputs": 1}, "non_finite_outputs"),
    ({"linearity_error": 1e-9}, "linearity_error"),
    ({"linearity_error": float("nan")}, "linearity_error"),
    ({"mutating_calls": 1}, "arguments_unchanged"),
])


@pytest.mark.parametrize("field, value", [("future_weight", 1e-9), ("future_weight", float("nan")),
                                          ("causal_perturbation", 1e-9), ("causal_perturbation", float("inf"))])
def test_causal_assertions_fail_on_a_wrong_quantity(causal, field, value):
    p, q = causal
    assert CHECK.assess(q, p).passed
    assert_fails(CHECK, q, p, field, **{field: value})


def test_causal_toolkit_fma_passes_with_exact_zeros_ahead(causal):
    p, q = causal
    assert_passes(CHECK, q, p)
    assert q.future_weight == 0.0 and q.causal_perturbation == 0.0  # masked, and its shift ignores later tokens
    assert q.label == "toolkit FMA (joint, causal)"


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert back.label == q.label and np.array_equal(back.row_sums_v_ones, q.row_sums_v_ones)


test_bad_input = refusals(check.run, [
    ({"implementation": "nope"}, "implementation"), ({"implementation": "nosuchmodule_xyz:f"}, "implementation"),
    ({"implementation": "numpy:pi"}, "implementation"), ({"n": 8}, "n"), ({"r": 0}, "r"), ({"r": 2000}, "r"),
    ({"d": 0}, "d"), ({"scale": 0.0}, "scale"), ({"draws": 0}, "draws"), ({"claim": "paper"}, "claim"),
    ({"implementation": "summed-coarse", "causal": True}, "causal"),
    ({"implementation": "summed-coarse", "claim": "printed"}, "claim"),
])


def test_cli(capsys):
    assert check.main(["--n", "64", "--draws", "1", "--quiet"]) == 0
    assert check.main(["--n", "64", "--draws", "1", "--implementation", "summed-coarse", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--implementation", "bad"]) == 2
    assert "implementation" in capsys.readouterr().err
