"""Tests for spectral.sinkformer: Sinkformer / Transformer layers on the sphere.

References: the softmax layers against :func:`spectral.attention_flow` (an independent integrator of the same
residual dynamics: explicit Euler, value ``-I / eps``, ``beta = 1 / eps``), one Sinkhorn layer written out with
the alternating :func:`spectral.sinkhorn`, and the layers' invariants (unit tokens, value 0 is the identity).
"""

import numpy as np
import pytest

from spectral import SinkformerFlow, attention_flow, sinkformer_flow, sinkhorn
from spectral.floor.backend import to_numpy
from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import InputError


def circle_tokens(n=60, seed=0):
    t = np.sort(np.random.default_rng(seed).vonmises(0.3, 1.0, n))
    return np.stack([np.cos(t), np.sin(t)], axis=1)


def test_softmax_layers_are_the_euler_steps_of_the_attention_flow():
    x = circle_tokens()
    eps = 0.05
    ours = sinkformer_flow(x, eps=eps, layers=5, normalisation="softmax")
    ref = attention_flow(x, beta=1 / eps, times=eps * np.arange(6), value=-np.eye(2) / eps, method="euler", dt=eps)
    np.testing.assert_allclose(ours.tokens, ref.tokens, rtol=0, atol=1e-12)
    assert np.all(ours.sinkhorn_iterations == 0)


def test_one_sinkhorn_layer_written_out():
    x = circle_tokens(40, seed=1)
    eps = 0.08
    flow = sinkformer_flow(x, eps=eps, layers=1, step=eps / 2, value=-1.0)
    A = sinkhorn(np.exp(x @ x.T / eps - 1 / eps), tol=1e-13, max_iter=100000, check_every=1).matrix
    avg = A @ x
    y = x - 0.5 * (avg - np.sum(avg * x, axis=1, keepdims=True) * x)
    np.testing.assert_allclose(flow.final, y / np.linalg.norm(y, axis=1, keepdims=True), rtol=0, atol=1e-11)
    assert flow.sinkhorn_iterations[0] > 0


def test_invariants_records_and_repr():
    x = circle_tokens(30)
    flow = sinkformer_flow(x, eps=0.05, layers=7, record_every=3)
    assert isinstance(flow, SinkformerFlow)
    assert list(flow.layers) == [0, 3, 6, 7] and np.allclose(flow.times, 0.05 * flow.layers)
    np.testing.assert_allclose(np.linalg.norm(to_numpy(flow.tokens), axis=2), 1.0, atol=1e-14)
    still = sinkformer_flow(x, eps=0.05, layers=3, value=0.0)
    np.testing.assert_allclose(still.final, x, atol=1e-15)
    assert repr(flow).startswith("SinkformerFlow(n=30, d=2, layers=7")


def test_diffusion_spreads_and_attraction_gathers():
    x = circle_tokens(80)
    spread = lambda X: 1 - np.linalg.norm(np.mean(X, axis=0))  # noqa: E731 - circular variance
    assert spread(sinkformer_flow(x, eps=0.05, layers=6).final) > spread(x)
    assert spread(sinkformer_flow(x, eps=0.05, layers=6, value=1.0, step=0.01).final) < spread(x)


@pytest.mark.parametrize("kwargs, match", [
    ({"X0": np.ones((5, 2))}, "unit vectors"),
    ({"X0": np.array([[1.0, 0.0], [np.nan, 0.0]])}, "finite"),
    ({"X0": np.ones((1, 2)) / np.sqrt(2)}, "n >= 2"),
    ({"eps": 0.0}, "eps"),
    ({"layers": 0}, "layers"),
    ({"step": -1.0}, "step"),
    ({"normalisation": "uniform"}, "normalisation"),
    ({"value": np.inf}, "value"),
    ({"record_every": 0}, "record_every"),
    ({"tol": 1.0}, "tol"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    args = {"X0": circle_tokens(10), "eps": 0.05, "layers": 2, **kwargs}
    with pytest.raises(InputError, match=match):
        sinkformer_flow(args.pop("X0"), **args)


def test_memory_refused_before_allocating():
    with pytest.raises(DenseMemoryError, match="attention of 10 tokens"):
        sinkformer_flow(circle_tokens(10), eps=0.05, layers=1, max_bytes=100)


def test_computes_in_the_namespace_of_its_input(strict_xp):
    x = circle_tokens(20)
    for norm in ("sinkhorn", "softmax"):
        got = sinkformer_flow(strict_xp.asarray(x), eps=0.05, layers=2, normalisation=norm)
        assert type(got.tokens) is type(strict_xp.asarray(x))
        np.testing.assert_allclose(to_numpy(got.tokens), sinkformer_flow(x, eps=0.05, layers=2,
                                                                         normalisation=norm).tokens, atol=1e-13)
