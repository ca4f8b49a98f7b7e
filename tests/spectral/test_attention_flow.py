"""Tests of spectral.attention_flow against references independent of the code under test.

References (:mod:`manifolds.references.attention_flow`): the velocity pair by pair in loops; the
equiangular ODE of GLPR Theorem 6.8 solved by ``solve_ivp`` (DOP853, rtol 1e-12) and its closed form
at ``beta = 0``; the closed Gram ODE from any start. Tolerances are stated next to each assertion.
"""

import subprocess
import sys

import numpy as np
import pytest

from manifolds.references.attention_flow import (equiangular_beta0, equiangular_flow, equiangular_tokens, gram_flow,
                                                 pair_inner_products, uniform_sphere, velocity_loop)
from spectral import (AttentionFlow, DenseMemoryError, attention_energy, attention_flow, attention_velocity,
                      cluster_tokens)
from spectral.floor.backend import to_numpy
from spectral.floor.validation import ConvergenceError, InputError

NORMALISATIONS = ("softmax", "uniform")


def _unit(rng, shape, d):
    return uniform_sphere(rng, shape, d)


class TestVelocity:
    @pytest.mark.parametrize("normalisation", NORMALISATIONS)
    @pytest.mark.parametrize("geometry", ["sphere", "euclidean"])
    def test_equals_the_pairwise_loop(self, normalisation, geometry):
        rng = np.random.default_rng(0)
        X = _unit(rng, 7, 4) if geometry == "sphere" else rng.standard_normal((7, 4))
        V, B = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
        got = attention_velocity(X, beta=1.7, normalisation=normalisation, value=V, query_key=B, geometry=geometry)
        ref = velocity_loop(X, beta=1.7, normalisation=normalisation, value=V, query_key=B,
                            sphere=geometry == "sphere")
        np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13)  # sums of 7 terms; uniform: e^score ~ 1e4

    def test_tangent_on_the_sphere_and_blocks(self):
        X = _unit(np.random.default_rng(1), (3, 9), 5)  # a batch of 3 configurations
        v = attention_velocity(X, beta=2.0)
        assert np.max(np.abs(np.sum(v * X, axis=-1))) < 1e-15  # P_perp: tangent to the sphere
        np.testing.assert_allclose(attention_velocity(X, beta=2.0, block_rows=4), v, rtol=0, atol=1e-15)
        for b in range(3):
            np.testing.assert_allclose(v[b], attention_velocity(X[b], beta=2.0), rtol=0, atol=0)

    def test_antipodal_pair_is_an_equilibrium(self):
        x = _unit(np.random.default_rng(2), 1, 3)[0]
        for norm in NORMALISATIONS:
            v = attention_velocity(np.stack([x, -x]), beta=3.0, normalisation=norm)
            assert np.max(np.abs(v)) < 8 * np.finfo(float).eps * np.exp(3.0)  # rounding of e^beta-sized terms


class TestEquiangular:
    """The simulator against the equiangular ODE (GLPR Theorem 6.8), rtol 1e-12 reference, 1e-8 relative."""

    #: every n with every beta; the default tier runs a Latin square of them (each n and each beta once, the stiffest
    #: n = 32, beta = 4 among them), the other six (0.03-0.09 s each) run in the slow tier
    @pytest.mark.parametrize("n, beta", [pytest.param(n, beta, marks=() if (n, beta) in ((3, 1.0), (8, 0.0), (32, 4.0))
                                                      else pytest.mark.slow)
                                         for n in (3, 8, 32) for beta in (0.0, 1.0, 4.0)])
    def test_matches_the_ode_to_1e_8_relative_on_0_5(self, beta, n):
        times = np.linspace(0.0, 5.0, 26)
        X0 = equiangular_tokens(n, 0.0, seed=n)
        for norm in NORMALISATIONS:
            flow = attention_flow(X0, beta=beta, times=times, normalisation=norm, rtol=1e-10, atol=1e-12)
            ips = pair_inner_products(flow.tokens)
            ref = (equiangular_beta0(times, n=n) if beta == 0.0 else
                   equiangular_flow(times, beta=beta, n=n, normalisation=norm))
            rel = np.abs(ips[1:] - ref[1:, None]) / np.abs(ref[1:, None])  # rho(0) = 0: relative from t > 0
            assert np.max(rel) < 1e-8, (norm, np.max(rel))  # measured <= 3e-10 at rtol 1e-10

    def test_asymptotic_rates(self):
        """1 - rho ~ e^(-2t) (SA) and e^(-2 e^beta t) (USA): the local rate of the reference at late times."""
        n, beta = 8, 1.0
        t = np.array([10.0, 10.5])
        sa = 1.0 - equiangular_flow(t, beta=beta, n=n)
        usa = 1.0 - equiangular_flow(t / np.e, beta=beta, n=n, normalisation="uniform")
        assert abs(-np.log(sa[1] / sa[0]) / 0.5 - 2.0) < 1e-3
        assert abs(-np.log(usa[1] / usa[0]) / (0.5 / np.e) - 2.0 * np.e) < 1e-2

    def test_gram_matrix_of_a_random_start(self):
        X0 = _unit(np.random.default_rng(3), 6, 3)
        times = np.linspace(0.0, 3.0, 7)
        for norm in NORMALISATIONS:
            flow = attention_flow(X0, beta=2.0, times=times, normalisation=norm, rtol=1e-10, atol=1e-12)
            G = np.einsum("tid,tjd->tij", flow.tokens, flow.tokens)
            ref = gram_flow(X0 @ X0.T, times, beta=2.0, normalisation=norm)
            assert np.max(np.abs(G - ref)) < 1e-8


class TestIntegrators:
    @pytest.mark.parametrize("method, dt, tol", [("euler", 1e-3, 2e-3), ("rk4", 0.05, 1e-6), ("dopri5", 0.1, 1e-6)])
    def test_fixed_steps_converge_to_the_reference(self, method, dt, tol):
        X0 = equiangular_tokens(4, 0.0, seed=1)
        flow = attention_flow(X0, beta=1.0, times=[1.0], method=method, dt=dt)
        ref = equiangular_flow([1.0], beta=1.0, n=4)[0]
        assert np.max(np.abs(pair_inner_products(flow.final) - ref)) < tol
        assert flow.steps == int(round(1.0 / dt)) and flow.rejected == 0
        assert np.max(np.abs(np.linalg.norm(flow.final, axis=-1) - 1.0)) < 1e-15  # projected every step

    def test_rk4_error_falls_like_h_to_the_4(self):
        X0 = equiangular_tokens(8, 0.0, seed=2)
        ref = equiangular_flow([2.0], beta=4.0, n=8)[0]
        err = [np.max(np.abs(pair_inner_products(attention_flow(X0, beta=4.0, times=[2.0], method="rk4",
                                                                dt=2.0 / m).final) - ref)) for m in (16, 32)]
        assert 3.8 < np.log2(err[0] / err[1]) < 4.2  # measured 3.97 (the verify check fits the order with its interval)

    def test_outputs_batch_and_zero_time(self):
        X0 = _unit(np.random.default_rng(4), (2, 5), 3)
        flow = attention_flow(X0, beta=1.0, times=[0.0, 0.5, 1.0])
        assert isinstance(flow, AttentionFlow) and flow.tokens.shape == (3, 2, 5, 3)
        np.testing.assert_allclose(flow.tokens[0], X0, rtol=0, atol=2e-16)  # X0 divided by its norms
        one = attention_flow(X0[1], beta=1.0, times=[0.0, 0.5, 1.0])
        np.testing.assert_allclose(flow.tokens[:, 1], one.tokens, rtol=0, atol=1e-8)  # shared steps, rtol 1e-8
        assert "AttentionFlow(shape=(2, 5, 3)" in repr(flow)

    def test_euclidean_tokens_grow_like_e_to_the_t(self):
        """V = I in R^d: z = e^(-t) x stays in the hull of the start (the clustering paper's rescaling)."""
        X0 = np.random.default_rng(5).standard_normal((6, 2))
        flow = attention_flow(X0, beta=1.0, times=[0.0, 3.0], geometry="euclidean")
        z = flow.final * np.exp(-3.0)
        assert np.max(np.abs(z)) <= np.max(np.abs(X0)) + 1e-9

    def test_unstable_fixed_step_raises(self):
        X0 = np.random.default_rng(0).standard_normal((4, 2))
        with pytest.raises(ConvergenceError, match="stability"):  # V = -5 I contracts at rate 5: Euler h = 1 grows 4x
            attention_flow(X0, beta=0.0, times=[600.0], geometry="euclidean", value=-5.0 * np.eye(2), method="euler",
                           dt=1.0)

    def test_adaptive_step_budget(self):
        with pytest.raises(ConvergenceError, match="max_steps"):
            attention_flow(equiangular_tokens(4, 0.0), beta=1.0, times=[10.0], max_steps=5)


class TestNamespaces:
    def test_array_api_strict_gives_the_numpy_result(self):
        xps = pytest.importorskip("array_api_strict")
        X0 = _unit(np.random.default_rng(6), (2, 5), 3)
        ref = attention_flow(X0, beta=2.0, times=[0.0, 1.0], value=np.eye(3) * 0.5, block_rows=2)
        got = attention_flow(xps.asarray(X0), beta=2.0, times=[0.0, 1.0], value=np.eye(3) * 0.5, block_rows=2)
        assert type(got.tokens).__module__.startswith("array_api_strict")
        np.testing.assert_allclose(to_numpy(got.tokens), ref.tokens, rtol=0, atol=1e-14)
        np.testing.assert_allclose(to_numpy(attention_energy(got.tokens, beta=2.0)),
                                   attention_energy(ref.tokens, beta=2.0), rtol=1e-14)
        assert np.array_equal(cluster_tokens(got.tokens[-1, ...], tol=0.1).counts,
                              cluster_tokens(ref.tokens[-1], tol=0.1).counts)

    def test_the_function_survives_importing_its_module(self):
        code = ("import spectral.attention_flow, importlib, spectral; "
                "m = importlib.import_module('spectral.attention_flow'); from spectral import attention_flow; "
                "assert callable(attention_flow) and attention_flow is m.attention_flow and spectral.attention_flow is "
                "m.attention_flow; from spectral.attention_flow import cluster_tokens")
        subprocess.run([sys.executable, "-c", code], check=True)


class TestClustersAndEnergy:
    def test_clusters_by_linking_distance(self):
        X = np.array([[1.0, 0.0], [1.0, 5e-3], [1.0, 1e-2], [0.0, 1.0], [-1.0, 0.0]])
        c = cluster_tokens(X, tol=6e-3)  # a chain of two links is one cluster (single linkage)
        assert int(c.counts) == 3 and c.labels.tolist() == [0, 0, 0, 1, 2]
        batch = cluster_tokens(np.stack([X, X[[0, 0, 0, 0, 0]]]), tol=6e-3)
        assert batch.counts.tolist() == [3, 1]

    def test_energy_limit_and_monotone_along_the_flow(self):
        X = _unit(np.random.default_rng(7), 9, 3)
        assert abs(float(attention_energy(X, beta=1e-10)) - float(attention_energy(X, beta=0.0))) < 1e-10
        for norm in NORMALISATIONS:
            flow = attention_flow(X, beta=3.0, times=np.linspace(0, 4, 41), normalisation=norm)
            E = np.asarray(attention_energy(flow.tokens, beta=3.0))
            assert np.min(np.diff(E)) > -1e-12 * np.max(np.abs(E))  # gradient ascent (GLPR sections 3.3-3.4)


class TestInputs:
    @pytest.mark.parametrize("kwargs, match", [
        ({"beta": float("nan")}, "beta"), ({"beta": True}, "beta"), ({"times": [1.0, 0.5]}, "times"),
        ({"times": [-1.0]}, "times"), ({"times": []}, "times"), ({"normalisation": "l2"}, "normalisation"),
        ({"method": "rk45"}, "method"), ({"method": "rk4"}, "dt"), ({"dt": 0.0}, "dt"), ({"rtol": 0.0}, "rtol"),
        ({"value": np.eye(2)}, "value"), ({"query_key": np.ones(3)}, "query_key"), ({"block_rows": 0}, "block_rows"),
        ({"geometry": "torus"}, "geometry"), ({"max_steps": 0}, "max_steps")])
    def test_bad_input_names_the_parameter(self, kwargs, match):
        args = {"beta": 1.0, "times": [1.0], **kwargs}
        with pytest.raises(InputError, match=match):
            attention_flow(np.eye(3), **args)

    @pytest.mark.parametrize("call, name", [
        (lambda v: attention_flow(np.eye(3), beta=1.0, times=[1.0], dt=v), "dt"),
        (lambda v: attention_flow(np.eye(3), beta=1.0, times=[1.0], rtol=v), "rtol"),
        (lambda v: attention_flow(np.eye(3), beta=1.0, times=[1.0], atol=v), "atol"),
        (lambda v: attention_flow(np.eye(3), beta=1.0, times=[1.0], max_steps=v), "max_steps"),
        (lambda v: attention_flow(np.eye(3), beta=1.0, times=[1.0], block_rows=v), "block_rows"),
        (lambda v: attention_flow(np.eye(3), beta=1.0, times=[1.0], max_bytes=v), "max_bytes"),
        (lambda v: attention_velocity(np.eye(3), beta=v), "beta"),
        (lambda v: attention_energy(np.eye(3), beta=v), "beta"),
        (lambda v: cluster_tokens(np.eye(3), tol=v), "tol"),
        (lambda v: cluster_tokens(np.eye(3), max_bytes=v), "max_bytes"),
    ])
    def test_numeric_options_refuse_a_bool(self, call, name):
        with pytest.raises(InputError, match=name):
            call(True)

    def test_tokens_must_be_unit_vectors_on_the_sphere(self):
        with pytest.raises(InputError, match="unit vectors"):
            attention_flow(2.0 * np.eye(3), beta=1.0, times=[1.0])
        with pytest.raises(InputError, match="X0"):
            attention_flow(np.ones(3), beta=1.0, times=[1.0])
        with pytest.raises(InputError, match="finite"):
            attention_flow(np.full((2, 2), np.nan), beta=1.0, times=[1.0])
        with pytest.raises(InputError, match="^X0 must be a real array .* got dtype bool"):  # True is not 1.0
            attention_flow(np.eye(3, dtype=bool), beta=1.0, times=[1.0])

    def test_uniform_overflow_is_refused(self):
        with pytest.raises(InputError, match="overflow"):
            attention_flow(np.eye(3), beta=800.0, times=[1.0], normalisation="uniform")

    def test_memory_is_refused_before_allocating(self):
        X = np.zeros((2000, 3))
        X[:, 0] = 1.0
        with pytest.raises(DenseMemoryError, match="block_rows"):
            attention_flow(X, beta=1.0, times=[1.0], max_bytes=2**20)
        with pytest.raises(DenseMemoryError, match="distances"):
            cluster_tokens(X, max_bytes=2**20)
