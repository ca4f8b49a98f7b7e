"""verify.neural_rank (NEURAL-1, NEURAL-4): logit rank d, full-rank softmax, MLP-score rank by sigma."""

import numpy as np
import pytest

import spectral
from spectral.validation import InputError
from verify import neural_rank as check

CHEAP = dict(n=64, d=16, d_prime=(2, 8), hidden=(1, 4))


def test_default_passes_with_the_algebraic_ranks(default_result):
    res = default_result("neural_rank")
    assert res.passed, res.failures
    p = res.parameters
    assert res.measured["logit_ranks_numpy/1e-10/1e-6"] == "/".join([str(min(p["d"], p["n"]))] * 3)
    for dp in p["d_prime"]:
        for h in p["hidden"]:
            bound = min(dp, h) + 2  # square: g 1^T + 1 c^T + Q M K^T, rank M = min(d', h)
            assert res.measured[f"ranks_square_d{dp}_h{h}"] == "/".join([str(bound)] * 3)
            assert res.measured[f"ranks_identity_d{dp}_h{h}"] == "2/2/2"
            exp_ranks = [int(r) for r in res.measured[f"ranks_exp_d{dp}_h{h}"].split("/")]
            assert max(exp_ranks) <= h + 1
    assert res.record("softmax_rank_1e-10").measured == p["n"]


def test_printed_low_rank_reading_fails():
    res = check.run(claim="printed", **CHEAP, activations=("relu", "tanh"))
    assert not res.passed
    assert res.record("printed_max_rank_over_2d_prime").passed is False
    assert "not low rank" in res.final_line()


def test_printed_reading_holds_for_identity_only():
    # a linear sigma is the one case where the matrix reading is true (rank 2 <= 2 d')
    res = check.run(claim="printed", **CHEAP, activations=("identity",))
    assert res.passed, res.failures


def test_wrong_score_function_fails(monkeypatch):
    real = spectral.neural_scores

    def perturbed(q, k, mlp, **kwargs):  # a score that is not eq. (4): a small non-separable term added
        return real(q, k, mlp, **kwargs) + 1e-3 * np.tanh(q[:, :1] @ k[:, :1].T * 3.0)

    monkeypatch.setattr(spectral, "neural_scores", perturbed)
    res = check.run(**CHEAP, activations=("identity", "square"))
    assert not res.passed
    assert res.record("identity_algebra_residual").passed is False
    assert res.record("identity_rank_deviation").passed is False


def test_relu_rank_below_half_fails_and_says_so(monkeypatch):
    real = spectral.neural_scores
    monkeypatch.setattr(spectral, "neural_scores",
                        lambda q, k, mlp, **kw: real(q, k, mlp, **kw) if mlp.activation != "relu"
                        else real(q, k, spectral.ScoreMLP(mlp.d_q, mlp.d_k, mlp.hidden, rng=0, activation="identity")))
    res = check.run(**CHEAP, activations=("relu",))
    assert not res.passed and "ReLU scores with h >= 4 have rank below n/2" in res.final_line()


@pytest.mark.parametrize("kwargs, name", [
    ({"d_prime": (0,)}, "d_prime"), ({"d_prime": (17,), "d": 16}, "d_prime"), ({"hidden": (0,)}, "hidden"),
    ({"activations": ("softplus",)}, "activations"), ({"activations": ()}, "activations"), ({"n": 8}, "n"),
    ({"claim": "paper"}, "claim"), ({"d_prime": (2.5,)}, "d_prime")])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(InputError, match=name):
        check.run(**kwargs)


def test_cli_exit_codes(capsys):
    assert check.main(["--n", "64", "--d", "16", "--d-prime", "2", "--hidden", "4", "--quiet"]) == 0
    assert check.main(["--n", "64", "--d", "16", "--d-prime", "2", "--hidden", "4", "--claim", "printed",
                       "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--hidden", "0", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "hidden" in err and err.count("\n") == 1
