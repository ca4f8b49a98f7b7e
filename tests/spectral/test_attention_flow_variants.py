"""The attention variants of spectral.attention_flow (Sinkhorn, sigmoid, L2, multi-head, causal) against loops.

References are written from the definitions, pair by pair (:func:`manifolds.references.gaussian_attention.velocity_loop`
and the loops below); tolerances are stated next to each assertion.
"""

import numpy as np
import pytest

from manifolds.references.gaussian_attention import GaussianAttention, velocity_loop
from spectral import attention_flow, attention_velocity
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError

RNG = np.random.default_rng(11)
D = 3
X = RNG.standard_normal((9, D))
Q, K, V = RNG.standard_normal((D, D)) * 0.6, RNG.standard_normal((D, D)) * 0.6, RNG.standard_normal((D, D))
Q2, K2 = RNG.standard_normal((2, 2, D)) * 0.6, RNG.standard_normal((2, 2, D)) * 0.6  # two heads, r = 2
V2 = RNG.standard_normal((2, D, D))

SPECS = {
    "softmax q/k": GaussianAttention(D, beta=0.9, query=Q, key=K, value=V),
    "l2": GaussianAttention(D, beta=0.7, kernel="l2", query=Q, key=K, value=V),
    "two heads": GaussianAttention(D, beta=0.8, query=Q2, key=K2, value=V2),
    "two heads, l2": GaussianAttention(D, beta=0.5, kernel="l2", query=Q2, key=K2, value=V2),
    "sinkhorn": GaussianAttention(D, beta=0.9, normalisation="sinkhorn", query_key=Q.T @ K, value=V),
    "sinkhorn l2": GaussianAttention(D, beta=0.6, normalisation="sinkhorn", kernel="l2", query=Q, key=K, value=V),
}


def _scores_loop(X, beta, Qm, Km, kernel):
    n = len(X)
    S = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            qi, kj = Qm @ X[i], Km @ X[j]
            S[i, j] = beta * (qi @ kj if kernel == "dot" else -(qi - kj) @ (qi - kj))
    return S


@pytest.mark.parametrize("name", list(SPECS))
def test_velocity_equals_the_pairwise_loop(name):
    spec = SPECS[name]
    got = attention_velocity(X, **spec.flow_kwargs())
    # softmax: sums of 9 terms (1e-14); Sinkhorn: the loop's 5000 plain sweeps and the library's tolerance 1e-11
    tol = 1e-9 if spec.normalisation == "sinkhorn" else 1e-13
    np.testing.assert_allclose(got, velocity_loop(X, spec), rtol=0, atol=tol * np.max(np.abs(got)))


def test_sinkhorn_attention_is_doubly_stochastic_and_symmetric_for_symmetric_scores():
    """value = I reads P X; P from the velocities of the unit vectors: rows and columns sum to 1, P = P^T for B = B^T."""
    n = 7
    Y = np.random.default_rng(1).standard_normal((n, n))  # n tokens in R^n: P = velocity(Y) Y^-1
    B = np.eye(n) * 0.3
    v = attention_velocity(Y, beta=1.0, normalisation="sinkhorn", query_key=B, geometry="euclidean",
                           sinkhorn_tol=1e-13)
    P = v @ np.linalg.inv(Y)
    assert np.max(np.abs(P.sum(axis=0) - 1)) < 1e-11 and np.max(np.abs(P.sum(axis=1) - 1)) < 1e-11
    assert np.max(np.abs(P - P.T)) < 1e-11  # the scaling of a symmetric kernel is symmetric (r = c up to a scalar)
    assert np.min(P) > 0


def test_sigmoid_and_causal_against_loops():
    n = len(X)
    S = _scores_loop(X, 1.3, Q, K, "dot")
    sig = 1.0 / (1.0 + np.exp(-S))
    ref = (sig / n) @ (X @ V.T)
    got = attention_velocity(X, beta=1.3, normalisation="sigmoid", query=Q, key=K, value=V, geometry="euclidean")
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13)
    # causal softmax and causal sigmoid: row i sees j <= i (sigmoid: divided by i + 1)
    mask = np.tril(np.ones((n, n), dtype=bool))
    E = np.where(mask, np.exp(S - S.max(axis=1, keepdims=True)), 0.0)
    ref = (E / E.sum(axis=1, keepdims=True)) @ (X @ V.T)
    kw = {"beta": 1.3, "query": Q, "key": K, "value": V, "geometry": "euclidean", "causal": True}
    np.testing.assert_allclose(attention_velocity(X, **kw), ref, rtol=0, atol=1e-13)
    np.testing.assert_allclose(attention_velocity(X, block_rows=4, **kw), ref, rtol=0, atol=1e-13)  # blocks keep rows
    ref = (np.where(mask, sig, 0.0) / np.arange(1, n + 1)[:, None]) @ (X @ V.T)
    np.testing.assert_allclose(attention_velocity(X, normalisation="sigmoid", **kw), ref, rtol=0, atol=1e-13)
    assert np.allclose(attention_velocity(X, **kw)[0], V @ X[0])  # the first token sees only itself


@pytest.mark.parametrize("name", ["l2", "two heads"])
def test_row_blocks_change_nothing(name):
    kw = SPECS[name].flow_kwargs()
    np.testing.assert_allclose(attention_velocity(X, block_rows=2, **kw), attention_velocity(X, **kw), rtol=0,
                               atol=1e-14)


def test_heads_add_and_a_shared_value_broadcasts():
    kw = SPECS["two heads"].flow_kwargs()
    one = [attention_velocity(X, beta=kw["beta"], query=Q2[h], key=K2[h], value=V2[h], geometry="euclidean")
           for h in range(2)]
    np.testing.assert_allclose(attention_velocity(X, **kw), one[0] + one[1], rtol=0, atol=1e-14)
    shared = attention_velocity(X, beta=0.8, query=Q2, key=K2, value=V, geometry="euclidean")
    ref = sum(attention_velocity(X, beta=0.8, query=Q2[h], key=K2[h], value=V, geometry="euclidean") for h in range(2))
    np.testing.assert_allclose(shared, ref, rtol=0, atol=1e-14)


def test_sinkhorn_attention_with_an_underflowing_column_is_scaled_in_the_log_domain():
    """A key bias of -1000 on token 2: its column of e^(score - row max) underflows to 0 in every row (this raised
    ConvergenceError before); the scores are scaled in the log domain. Reference: P is invariant under a column
    scaling, so it is the plain Sinkhorn loop's P of the scores without the bias."""
    rng = np.random.default_rng(3)
    n = 5
    Y = np.concatenate([np.ones((n, 1)), rng.standard_normal((n, n - 1))], axis=1)  # x_i0 = 1; P = v Y^-1 (V = I)
    M = 0.5 * rng.standard_normal((n, n))
    B = M.copy()
    B[0] -= 1000.0 * np.linalg.inv(Y)[:, 2]  # <x_i, B x_j> = <x_i, M x_j> - 1000 [j = 2]
    S = Y @ B @ Y.T
    assert np.all(np.exp(S - S.max(axis=1, keepdims=True))[:, 2] == 0)
    C, c = np.exp(Y @ M @ Y.T), np.ones(n)
    for _ in range(5000):
        r = 1.0 / (C @ c)
        c = 1.0 / (r @ C)
    v = attention_velocity(Y, beta=1.0, normalisation="sinkhorn", query_key=B, geometry="euclidean",
                           sinkhorn_tol=1e-12)
    # the row-sum tolerance 1e-12 and the inverse of Y (condition number 25): measured 5e-13
    np.testing.assert_allclose(v @ np.linalg.inv(Y), r[:, None] * C * c[None, :], rtol=0, atol=1e-11)


def test_sinkhorn_flow_warm_starts_and_counts_sweeps():
    X0 = np.random.default_rng(2).standard_normal((3, 12, 2))
    kw = {"beta": 1.0, "normalisation": "sinkhorn", "query_key": np.array([[0.4, 0.2], [-0.1, 0.5]]),
          "geometry": "euclidean"}
    flow = attention_flow(X0, times=[0.5], method="rk4", dt=0.1, **kw)
    assert flow.sinkhorn_sweeps > 0 and flow.evaluations == 20
    # each stage from a cold start (the same flow evaluated one step at a time with fresh fields) agrees
    y = X0
    for _ in range(5):
        y = attention_flow(y, times=[0.1], method="rk4", dt=0.1, **kw).final
    np.testing.assert_allclose(flow.final, y, rtol=0, atol=1e-9)  # Sinkhorn tolerance 1e-11 on row sums


def test_the_variants_run_in_other_namespaces():
    xps = pytest.importorskip("array_api_strict")
    for kw in (SPECS["sinkhorn"].flow_kwargs(), SPECS["two heads, l2"].flow_kwargs(),
               {**SPECS["softmax q/k"].flow_kwargs(), "causal": True, "block_rows": 4},
               {**SPECS["softmax q/k"].flow_kwargs(), "normalisation": "sigmoid", "causal": True}):
        ref = attention_flow(X, times=[0.3], method="rk4", dt=0.1, **kw).final
        got = attention_flow(xps.asarray(X), times=[0.3], method="rk4", dt=0.1, **kw).final
        assert type(got).__module__.startswith("array_api_strict")
        np.testing.assert_allclose(to_numpy(got), ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({"normalisation": "sinkhorn", "causal": True}, "causal"),
    ({"normalisation": "sinkhorn", "block_rows": 2}, "block_rows"),
    ({"query": np.eye(3)}, "key"),
    ({"query": np.eye(3), "key": np.eye(3), "query_key": np.eye(3)}, "query_key"),
    ({"kernel": "l2", "query_key": np.eye(3)}, "l2"),
    ({"kernel": "cosine"}, "kernel"),
    ({"query": np.ones((2, 3)), "key": np.ones((1, 3))}, "same dimension"),
    ({"query": np.ones((2, 2, 3)), "key": np.ones((3, 2, 3))}, "head axes"),
    ({"value": np.ones((2, 3, 3)), "query_key": np.ones((3, 3, 3))}, "head axes"),
    ({"query": np.ones((2, 4)), "key": np.ones((2, 4))}, "query"),
    ({"causal": 1}, "causal"),
    ({"sinkhorn_tol": True}, "sinkhorn_tol"),
    ({"sinkhorn_tol": 0.5}, "sinkhorn_tol"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    with pytest.raises(InputError, match=match):
        attention_flow(np.eye(3), beta=1.0, times=[1.0], geometry="euclidean", **kwargs)
