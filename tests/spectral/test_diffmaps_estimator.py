"""spectral.DiffusionMaps: the scikit-learn estimator over spectral.diffusion_map (its result class: DiffusionMap)."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from spectral import DiffusionMap, DiffusionMaps, DisconnectedGraphWarning, diffusion_map, fna_kernel, heat_kernel
from spectral.floor.validation import InputError


def _circle(n=120, seed=0):
    theta = np.sort(np.random.default_rng(seed).uniform(0, 2 * np.pi, n))
    return np.c_[np.cos(theta), np.sin(theta)], theta


def test_passes_scikit_learns_estimator_checks():
    from sklearn.exceptions import SkipTestWarning
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkipTestWarning)  # the array-API check runs only with SCIPY_ARRAY_API=1
        # the checks' three far-apart blobs are numerically disconnected at the bandwidth "auto" picks on them:
        # the warning is the toolkit's honest report of that, not a failure of the estimator contract
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        results = check_estimator(DiffusionMaps(), on_fail=None)
    failed = [(r["check_name"], r["exception"]) for r in results if r["status"] == "failed"]
    assert not failed, failed
    assert sum(r["status"] == "passed" for r in results) >= 40


def test_fit_is_diffusion_map_of_the_kernel_scores():
    X, _ = _circle()
    est = DiffusionMaps(n_components=3, bandwidth=0.02, a=0.5, t=2.0).fit(X)
    dist = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    ref = diffusion_map(heat_kernel(dist, eps=0.02), n_components=3, a=0.5, tau=2.0)
    assert isinstance(est.diffusion_map_, DiffusionMap)  # the estimator keeps the result class
    np.testing.assert_allclose(est.embedding_, ref.coordinates, atol=1e-10)
    np.testing.assert_allclose(est.eigenvalues_, ref.eigenvalues[1:], atol=1e-12)
    assert est.bandwidth_ == 0.02 and est.dim_ is None and est.n_features_in_ == 2


def test_nystrom_transform_reproduces_training_points_and_places_new_ones():
    X, theta = _circle(200, seed=1)
    est = DiffusionMaps(n_components=2, bandwidth=0.02, a=1.0).fit(X)
    np.testing.assert_allclose(est.transform(X), est.embedding_, atol=1e-8)
    # a new point between two neighbours on the circle lands between their coordinates (the circle's first
    # diffusion coordinates are cos/sin of the angle, up to rotation: the angle of the embedding is monotone)
    mid = 0.5 * (theta[10] + theta[11])
    new = est.transform(np.c_[np.cos(mid), np.sin(mid)])
    angle = np.unwrap(np.arctan2(est.embedding_[:, 1], est.embedding_[:, 0]))
    got = np.arctan2(new[0, 1], new[0, 0])
    lo, hi = sorted((angle[10], angle[11]))
    assert lo - 1e-9 <= np.mod(got - lo, 2 * np.pi) + lo <= hi + 1e-9


def test_fna_kernel_and_auto_bandwidth():
    X, _ = _circle(150, seed=2)
    est = DiffusionMaps(n_components=2, kernel="fna", alpha=1.2).fit(X)
    assert est.dim_ == 1 and est.bandwidth_ > 0  # the circle's intrinsic dimension, estimated
    dist = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    ref = diffusion_map(fna_kernel(dist, alpha=1.2, scale=est.bandwidth_, dim=1), n_components=2)
    np.testing.assert_allclose(est.embedding_, ref.coordinates, atol=1e-10)


def test_params_clone_and_pipeline():
    est = DiffusionMaps(n_components=3, bandwidth=0.5, a=0.5)
    assert est.get_params()["a"] == 0.5 and clone(est).get_params() == est.get_params()
    est.set_params(t=0.0, kernel="fna")
    assert est.t == 0.0 and est.kernel == "fna"
    X, _ = _circle(80, seed=3)
    out = make_pipeline(StandardScaler(), DiffusionMaps(n_components=2, bandwidth=0.05)).fit_transform(X)
    assert out.shape == (80, 2) and np.all(np.isfinite(out))


@pytest.mark.parametrize("params, match", [
    ({"kernel": "cosine"}, "kernel"), ({"bandwidth": -1.0}, "bandwidth"), ({"bandwidth": "scott"}, "bandwidth"),
    ({"n_components": 80}, "n_components"), ({"a": 2.0}, "a must"), ({"kernel": "fna", "alpha": 0.0}, "alpha"),
    ({"kernel": "fna", "dim": 0}, "dim"), ({"normalization": "unit"}, "normalization"), ({"t": -1.0}, "t must"),
])
def test_bad_parameters_are_refused_naming_them(params, match):
    X, _ = _circle(80)
    with pytest.raises(InputError, match=match):
        DiffusionMaps(**{"bandwidth": 0.05, **params}).fit(X)


def test_a_point_out_of_reach_is_refused():
    X, _ = _circle(80)
    est = DiffusionMaps(n_components=2, bandwidth=1e-3).fit(X)
    with pytest.raises(InputError, match="zero kernel weight"):
        est.transform(np.array([[50.0, 50.0]]))
