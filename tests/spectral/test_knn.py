"""Tests for spectral.knn: the k-nearest-neighbour kernel and its three symmetrisations.

References are brute force from the definitions in the module docstring: all pairwise distances by
``scipy.spatial.distance.cdist``, the neighbour sets by a stable sort of each row, the kernels and
their combinations built densely entry by entry. The points are random (distinct distances with
probability 1), so the neighbour sets are unique and the comparisons exact up to round-off of the
distances (1e-15 relative; tolerance 1e-12).
"""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from spectral import DenseMemoryError, SparseScores, heat_kernel_sparse, knn_distances, knn_kernel
from spectral.floor.validation import InputError


def brute_directed(x, k, eps, y=None):
    """K->: row i holds the kernel on its k + 1 nearest keys (self first when keys = queries)."""
    keys = x if y is None else y
    D = cdist(x, keys)
    order = np.argsort(D, axis=1, kind="stable")[:, : k + 1]
    if eps == "self-tuning":
        sig_q = np.take_along_axis(D, order, axis=1)[:, k]
        Dk = cdist(keys, keys)
        sig_k = np.sort(Dk, axis=1)[:, k]  # k-th nearest other key (column 0 is the key itself)
        K_full = np.exp(-(D**2) / np.outer(sig_q, sig_k))
    else:
        K_full = np.exp(-(D**2) / (2 * eps))
    K = np.zeros_like(D)
    rows = np.arange(len(x))[:, None]
    K[rows, order] = K_full[rows, order]
    return K


@pytest.fixture(scope="module")
def points():
    return np.random.default_rng(5).standard_normal((80, 3))


def test_knn_distances_match_brute_force(points):
    d, idx = knn_distances(points, k=6)
    D = cdist(points, points)
    ref = np.sort(D, axis=1)[:, :7]
    assert d.shape == idx.shape == (80, 7)
    assert np.max(np.abs(d - ref)) <= 1e-12
    assert np.array_equal(idx[:, 0], np.arange(80))  # the point itself first, at distance 0
    assert np.max(np.abs(np.take_along_axis(D, idx, axis=1) - d)) <= 1e-12


@pytest.mark.parametrize("eps", [0.7, "self-tuning"])
def test_directed_kernel_is_the_definition(points, eps):
    W = knn_kernel(points, k=6, eps=eps, symmetrize="none")
    ref = brute_directed(points, 6, eps)
    assert isinstance(W, SparseScores) and not W.symmetric
    assert np.max(np.abs(W.to_dense() - ref)) <= 1e-12
    assert np.all(np.diff(W.matrix.indptr) == 7)  # k + 1 entries a row, self included
    assert np.all(W.matrix.diagonal() == 1.0)
    # negative control: the reference is genuinely not symmetric (one-way neighbours exist)
    assert np.max(np.abs(ref - ref.T)) > 0.05


@pytest.mark.parametrize("eps", [0.7, "self-tuning"])
def test_three_symmetrisations_are_as_documented(points, eps):
    K = brute_directed(points, 6, eps)
    Kt = K.T
    refs = {"max": np.maximum(K, Kt), "mean": (K + Kt) / 2, "product": K * Kt}
    for how, ref in refs.items():
        W = knn_kernel(points, k=6, eps=eps, symmetrize=how)
        assert W.symmetric
        assert np.max(np.abs(W.to_dense() - ref)) <= 1e-12, how
    # what each means: max is the kernel on the union graph, product the squared kernel on the mutual graph
    D = cdist(points, points)
    sig = np.sort(D, axis=1)[:, 6]
    kappa = np.exp(-(D**2) / (np.outer(sig, sig) if eps == "self-tuning" else 2 * eps))  # the kernel, all pairs
    union, mutual = (K > 0) | (Kt > 0), (K > 0) & (Kt > 0)
    assert np.array_equal(refs["max"] > 0, union)
    assert np.max(np.abs(refs["max"][union] - kappa[union])) <= 1e-12
    assert np.max(np.abs(refs["product"][mutual] - kappa[mutual] ** 2)) <= 1e-12
    assert np.count_nonzero(mutual) < np.count_nonzero(union)  # the two graphs differ here
    one_way = union & ~mutual
    assert np.max(np.abs(refs["mean"][one_way] - kappa[one_way] / 2)) <= 1e-12


def test_product_of_fixed_gaussian_is_the_gaussian_at_half_eps(points):
    # documented: the entrywise product squares the kernel; with 2 eps it is the heat kernel at eps
    W = knn_kernel(points, k=6, eps=1.4, symmetrize="product").to_dense()
    D = cdist(points, points)
    mask = W > 0
    assert np.max(np.abs(W[mask] - np.exp(-(D[mask] ** 2) / (2 * 0.7)))) <= 1e-12


def test_rows_against_keys_and_the_training_rows(points):
    x, y = points[:60], points[60:]
    for eps in (0.7, "self-tuning"):
        R = knn_kernel(y, k=5, eps=eps, y=x)
        assert R.shape == (20, 60) and not R.symmetric
        assert np.max(np.abs(R.to_dense() - brute_directed(y, 5, eps, y=x))) <= 1e-12
        # a training point as a query gets its own directed training row (self included, same sigma)
        same = knn_kernel(x, k=5, eps=eps, y=x).to_dense()
        assert np.max(np.abs(same - knn_kernel(x, k=5, eps=eps, symmetrize="none").to_dense())) <= 1e-15


def test_union_graph_with_enough_neighbours_contains_the_cutoff_kernel(points):
    # fixed eps, "max": every pair within the cutoff is in the union graph once k + 1 >= the largest
    # count within the cutoff; there the scores equal heat_kernel_sparse's
    eps, cutoff = 0.1, 3.0
    H = heat_kernel_sparse(points, eps=eps, cutoff=cutoff).to_dense()
    kmax = int(np.max(np.count_nonzero(H, axis=1)))
    W = knn_kernel(points, k=kmax - 1, eps=eps).to_dense()
    inside = H > 0
    assert np.max(np.abs(W[inside] - H[inside])) <= 1e-15
    assert np.all(W[~inside] <= np.exp(-(cutoff**2) / 2))  # the extra pairs lie beyond the cutoff


def test_backend_arrays_are_accepted(xp, points):
    ref = knn_kernel(points, k=4, eps=0.5).to_dense()
    got = knn_kernel(xp.asarray(points), k=4, eps=0.5).to_dense()  # host sparse result
    assert np.max(np.abs(got - ref)) == 0.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"k": 0, "eps": 1.0}, r"k must be an integer in \[1, 79\]"),
        ({"k": 80, "eps": 1.0}, r"k must be an integer in \[1, 79\]"),
        ({"k": 3, "eps": 0.0}, "eps must be"),
        ({"k": 3, "eps": "auto"}, "eps must be a number > 0 or 'self-tuning'"),
        ({"k": 3, "eps": 1.0, "symmetrize": "min"}, "symmetrize must be one of"),
        ({"k": 3, "eps": 1.0, "symmetrize": "max", "y": np.zeros((5, 3))}, "symmetrize applies"),
        ({"k": 3, "eps": 1.0, "y": np.zeros((5, 2))}, r"y must have shape \(m, 3\)"),
    ],
)
def test_bad_input(points, kwargs, match):
    with pytest.raises(InputError, match=match):
        knn_kernel(points, **kwargs)


def test_bad_points_and_duplicates():
    with pytest.raises(InputError, match="finite"):
        knn_kernel(np.array([[0.0], [np.nan], [1.0]]), k=1, eps=1.0)
    with pytest.raises(InputError, match="2-d"):
        knn_kernel(np.zeros(5), k=1, eps=1.0)
    dup = np.repeat(np.arange(4.0), 3).reshape(-1, 1)  # every point three times
    with pytest.raises(InputError, match="self-tuning"):
        knn_kernel(dup, k=2, eps="self-tuning")
    knn_kernel(dup, k=3, eps="self-tuning")  # the 3rd nearest other copy is another value: fine


def test_memory_guard_refuses_before_the_search():
    x = np.zeros((1000, 2))
    with pytest.raises(DenseMemoryError, match="kNN kernel of 1000 points"):
        knn_kernel(x, k=50, eps=1.0, max_bytes=1e6)
