"""spectral.heat_sparse: dense / sparse / streamed heat-kernel attention agree; truncation bound holds."""

import math

import numpy as np
import pytest

from spectral.heat_sparse import gaussian_tail_mass, heat_markov, truncation_bound
from spectral.floor.validation import InputError
from spectral.testing import assert_close


@pytest.fixture(scope="module")
def sphere_points():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((800, 3))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _reference(x, f, eps, a):
    """Independent dense reference by explicit differences (no shared code with the module)."""
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    w = np.exp(-d2 / (2 * eps))
    q = w.sum(1)
    wa = w / np.outer(q**a, q**a)
    rows = wa.sum(1)
    return (wa @ f) / (rows[:, None] if f.ndim == 2 else rows)


@pytest.mark.parametrize("a", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("method", ["dense", "sparse", "streamed"])
def test_matches_reference(sphere_points, method, a):
    x = sphere_points
    f = np.stack([x[:, 2], x[:, 0] * x[:, 1]], axis=1)
    op = heat_markov(x, eps=0.02, a=a, method=method, cutoff=6.0)
    got = op.apply(f)
    ref = _reference(x, f, 0.02, a)
    err = np.max(np.abs(got - ref))
    if method == "sparse":
        # rigorous bound (module docstring), times max|f| = 1
        assert err <= op.truncation_bound * np.max(np.abs(f))
        assert op.truncation_bound < 1e-3
    else:
        assert err <= 1e-13  # exact algebra: O(10) eps(float64) on O(1) values
    assert np.allclose(op.apply(np.ones(len(x))), 1.0, rtol=0, atol=1e-14)  # row-stochastic


def test_truncation_bound_fails_for_tiny_cutoff(sphere_points):
    """Negative control: at cutoff 1.5 the truncation error is large and the bound says so."""
    x = sphere_points
    f = x[:, 2]
    op = heat_markov(x, eps=0.02, method="sparse", cutoff=1.5)
    err = np.max(np.abs(op.apply(f) - _reference(x, f, 0.02, 0.0)))
    assert err > 1e-3 and op.truncation_bound >= err


def test_backend_neutral_streamed_and_dense(xp, sphere_points):
    x = xp.asarray(sphere_points[:200])
    f = xp.asarray(sphere_points[:200, 2])
    ref = _reference(sphere_points[:200], sphere_points[:200, 2], 0.05, 0.0)
    for method in ("dense", "streamed"):
        out = heat_markov(x, eps=0.05, method=method).apply(f)
        assert_close(out, xp.asarray(ref), rtol=0, atol=1e-13)


def test_generator_limit_on_circle():
    """Uniform grid on S^1: (S f - f)/eps for f = cos(2t) is -2 (1/2 f'') to O(eps)."""
    t = 2 * math.pi * np.arange(4000) / 4000
    x = np.stack([np.cos(t), np.sin(t)], axis=1)
    op = heat_markov(x, eps=1e-3, method="sparse")
    g = op.generator(np.cos(2 * t))
    assert np.max(np.abs(g / np.cos(2 * t).clip(0.5) - (-2.0)) * (np.cos(2 * t) > 0.5)) < 0.01


def test_gaussian_tail_mass():
    assert gaussian_tail_mass(6.0, 2) == pytest.approx(math.exp(-18.0), rel=1e-12)
    assert gaussian_tail_mass(6.0, 1) == pytest.approx(math.erfc(6 / math.sqrt(2)), rel=1e-12)
    assert truncation_bound([3, 4], [2.0, 4.0], 4, cutoff=2.0) == pytest.approx(math.exp(-2.0))


@pytest.mark.parametrize("kwargs, match", [
    ({"eps": 0.0}, "eps"), ({"eps": 0.1, "a": 2.0}, "a must"), ({"eps": 0.1, "method": "fft"}, "method"),
    ({"eps": 0.1, "cutoff": -1.0}, "cutoff"),
])
def test_bad_input(sphere_points, kwargs, match):
    with pytest.raises(InputError, match=match):
        heat_markov(sphere_points, **kwargs)


@pytest.mark.parametrize("cutoff", [1.5, 3.0, 6.0])
def test_shell_bound_is_valid_and_tighter(sphere_points, cutoff):
    from spectral.heat_sparse import shell_truncation_bound

    x = sphere_points
    op = heat_markov(x, eps=0.02, method="sparse", cutoff=cutoff)
    err = np.max(np.abs(op.apply(x[:, 2]) - _reference(x, x[:, 2], 0.02, 0.0)))
    tight = shell_truncation_bound(x, op.degrees, eps=0.02, cutoff=cutoff)
    assert err <= tight <= op.truncation_bound


def test_repr_is_short():
    x = np.random.default_rng(0).standard_normal((500, 2))
    text = repr(heat_markov(x, eps=0.05))
    assert len(text) < 250 and text.startswith("HeatMarkov(method='sparse', eps=0.05, a=0, cutoff=6, nnz="), text
