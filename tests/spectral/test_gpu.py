"""On a CUDA device (marked ``gpu``: skipped without CuPy and a device): every array path of spectral
computes on CuPy arrays and returns CuPy arrays, with the numbers of the NumPy path.

``benchmarks/device_check.sh`` runs these (``python -m pytest -m gpu``) with the GPU benchmark. Tolerances:
float64 paths agree with NumPy to round-off of the same algebra (4 sqrt(eps) relative, the house default of
``spectral.testing.assert_close``); fused float32 score arithmetic to 2e-6 relative (measured on the host
run of the same CUDA source: 8e-8, tests/spectral/test_tiles.py); eigenvalues of the matrix-free path to
1e-8 (the block solver's accuracy target, met with 2.2e-15 on the host).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from manifolds import Circle, Sphere
from spectral import (KernelOperator, anisotropic_normalize, circulant_spectrum, dot_product_scores, fna_kernel,
                      heat_kernel, markov_spectrum, row_normalize, sinkhorn, symmetric_conjugate)
from spectral.floor.backend import array_namespace, is_cupy_array, is_cupy_namespace, to_numpy
from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import InputError

pytestmark = pytest.mark.gpu

FNA = functools.partial(fna_kernel, alpha=1.2, scale=0.05, dim=1)
RTOL = 4 * np.sqrt(np.finfo(np.float64).eps)


@pytest.fixture
def cp():
    import cupy

    return cupy


def _close(actual, desired, rtol=RTOL):
    assert is_cupy_array(actual), type(actual)
    a, d = to_numpy(actual), np.asarray(desired)
    assert np.max(np.abs(a - d)) <= rtol * max(np.max(np.abs(d)), 1e-300), np.max(np.abs(a - d))


def test_namespace_is_array_api_conformant(cp):
    x = cp.ones((3, 2))
    xp = array_namespace(x)
    assert is_cupy_namespace(xp)
    for name in ("astype", "concat", "matrix_transpose", "isdtype", "atan2", "pow"):
        assert hasattr(xp, name), name
    assert is_cupy_array(xp.empty((2, 2), dtype=xp.float64))


@pytest.mark.parametrize("manifold", [Circle(), Sphere(2)])
def test_distances_in_row_blocks(cp, manifold):
    # 3000 x 3000: several row blocks (the crash of manifolds.points.row_blocks with cupy.empty(device=))
    x = manifold.sample(3000, rng=1)
    _close(manifold.distance(cp.asarray(x)), manifold.distance(x))
    _close(manifold.chordal_distance(cp.asarray(x)), manifold.chordal_distance(x))


def test_scores_and_normalisations(cp, rng):
    x = Circle().sample(500, rng=rng)
    c = FNA(Circle().distance(x))
    cd = FNA(Circle().distance(cp.asarray(x)))
    _close(cd, c)
    _close(heat_kernel(cp.asarray(c), eps=0.3), heat_kernel(c, eps=0.3))
    _close(row_normalize(cd), row_normalize(c))
    _close(anisotropic_normalize(cd, 0.5), anisotropic_normalize(c, 0.5))
    _close(symmetric_conjugate(cd)[0], symmetric_conjugate(c)[0])
    _close(sinkhorn(cd).matrix, sinkhorn(c).matrix, rtol=1e-8)
    t = rng.standard_normal((200, 8))
    _close(dot_product_scores(cp.asarray(t)), dot_product_scores(t))


@pytest.mark.parametrize("geometry", ["circle", "sphere", "chordal"])
@pytest.mark.parametrize("tile_dtype", ["float32", "float64"])
def test_fused_product_matches_the_host(cp, rng, geometry, tile_dtype):
    man = Circle() if geometry == "circle" else Sphere(2)
    dist = man.chordal_distance if geometry == "chordal" else man.distance
    x = man.sample(2500, rng=rng)
    kern = functools.partial(fna_kernel, alpha=1.2, scale=0.3, dim=man.dim)
    host = KernelOperator(x, kernel=kern, distance=dist, zero_diagonal=True)
    dev = KernelOperator(cp.asarray(x), kernel=kern, distance=dist, zero_diagonal=True)
    assert dev._on_device() and "(CUDA)" in repr(dev)
    X = rng.standard_normal((2500, 20))
    out = dev.matmat(cp.asarray(X), tile_dtype=tile_dtype)
    _close(out, host.matmat(X, tile_dtype=tile_dtype), rtol=RTOL if tile_dtype == "float64" else 2e-6)
    _close(dev.row_sums(), host.row_sums())
    assert dev.min_score == pytest.approx(host.min_score, rel=1e-12)
    v = rng.standard_normal(2500)
    _close(dev.matvec(cp.asarray(v)), host.matvec(v))


def test_fused_nonsymmetric(cp, rng):
    x, y = Sphere(2).sample(700, rng=rng), Sphere(2).sample(900, rng=rng)
    kw = dict(kernel=functools.partial(heat_kernel, eps=0.05), distance=Sphere(2).distance)
    host, dev = KernelOperator(x, y=y, **kw), KernelOperator(cp.asarray(x), y=cp.asarray(y), **kw)
    v, w = rng.standard_normal(900), rng.standard_normal(700)
    _close(dev.matvec(cp.asarray(v)), host.matvec(v))
    _close(dev.rmatvec(cp.asarray(w)), host.rmatvec(w))


def test_matrix_free_spectrum_on_the_device(cp):
    x = Circle().sample(4000, rng=3)
    ref = markov_spectrum(KernelOperator(x, kernel=FNA, distance=Circle().distance), 10, rng=0)
    spec = markov_spectrum(KernelOperator(cp.asarray(x), kernel=FNA, distance=Circle().distance), 10, rng=0,
                           vectors=True)
    assert is_cupy_array(spec.eigenvalues) and is_cupy_array(spec.right_vectors)
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - to_numpy(ref.eigenvalues))) <= 1e-8
    assert spec.residual <= 1e-7


def test_dense_and_lanczos_on_the_device(cp, rng):
    x = Circle().sample(800, rng=rng)
    c = FNA(Circle().distance(x))
    for method in ("dense", "lanczos"):
        ref = markov_spectrum(c, 8, method=method, rng=0)
        spec = markov_spectrum(cp.asarray(c), 8, method=method, rng=0)
        assert is_cupy_array(spec.eigenvalues)
        assert np.max(np.abs(to_numpy(spec.eigenvalues) - to_numpy(ref.eigenvalues))) <= 1e-8


def test_nonsymmetric_spectrum_keeps_A_on_the_device(cp, rng):
    t = rng.standard_normal((300, 4))
    c = dot_product_scores(t)  # row maxima subtracted: not symmetric
    ref = markov_spectrum(c, 6, method="lanczos", rng=0)
    spec = markov_spectrum(cp.asarray(c), 6, method="lanczos", rng=0)
    assert "GPU" in spec.solver
    np.testing.assert_allclose(to_numpy(spec.eigenvalues), to_numpy(ref.eigenvalues), rtol=1e-8, atol=1e-10)
    if hasattr(cp.linalg, "eigvals"):
        dense = markov_spectrum(cp.asarray(c), 6, method="dense")
        assert dense.solver == "cupy.linalg.eigvals"
        np.testing.assert_allclose(to_numpy(dense.eigenvalues), to_numpy(ref.eigenvalues), rtol=1e-8, atol=1e-10)


def test_circulant_on_the_device(cp):
    n = 4096
    x = Circle().grid(n)
    row = FNA(Circle().distance(x[:1], x))[0]
    ref = circulant_spectrum(row, 11)
    spec = circulant_spectrum(cp.asarray(row), 11)
    _close(spec.eigenvalues, to_numpy(ref.eigenvalues))


def test_host_only_routines_refuse_device_arrays(cp):
    from spectral import heat_kernel_sparse

    sc = heat_kernel_sparse(np.random.default_rng(0).standard_normal((50, 2)), eps=0.5)
    with pytest.raises(InputError, match="SciPy CSR matrix on the host"):
        sc.matvec(cp.ones(50))


def test_device_memory_checked_before_a_product(cp, monkeypatch):
    import spectral.floor.memory as memory

    op = KernelOperator(cp.asarray(Circle().sample(1000, rng=0)), kernel=FNA, distance=Circle().distance)
    monkeypatch.setattr(memory, "device_memory_bytes", lambda *a, **k: 1 << 16)
    before = cp.get_default_memory_pool().used_bytes()
    with pytest.raises(DenseMemoryError, match="device memory"):
        op.matmat(cp.ones((1000, 20)))
    assert cp.get_default_memory_pool().used_bytes() - before < 1 << 20


def test_device_results_repeat_bitwise(cp, rng):
    # the fused product (19 column chunks at n = 2500, added in chunk order) and a seeded Lanczos solve (cupyx
    # eigsh from the host's v0) give the same bits on every run
    x = Circle().sample(2500, rng=rng)
    op = KernelOperator(cp.asarray(x), kernel=FNA, distance=Circle().distance, zero_diagonal=True)
    X = cp.asarray(rng.standard_normal((2500, 20)))
    for tile_dtype in ("float32", "float64"):
        first = op.matmat(X, tile_dtype=tile_dtype)
        assert all(bool(cp.all(op.matmat(X, tile_dtype=tile_dtype) == first)) for _ in range(3))
    c = cp.asarray(FNA(Circle().distance(x[:600])))
    runs = [to_numpy(markov_spectrum(c, 6, method="lanczos", rng=4).eigenvalues) for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_the_solvers_products_do_not_synchronise(cp, rng):
    # after the first product of a width (its memory check), a trusted product queues its launches only:
    # cupyx.allow_synchronize(False) turns any host synchronisation into an error
    cupyx = pytest.importorskip("cupyx")
    if not hasattr(cupyx, "allow_synchronize"):
        pytest.skip("this CuPy has no cupyx.allow_synchronize")
    op = KernelOperator(cp.asarray(Circle().sample(3000, rng=rng)), kernel=FNA, distance=Circle().distance)
    X = cp.asarray(rng.standard_normal((3000, 16)))
    for tile_dtype in ("float32", "float64"):  # compiled and memory-checked before
        op.matmat(X, tile_dtype=tile_dtype, check_finite=False)
    cp.cuda.Device().synchronize()
    with cupyx.allow_synchronize(False):
        for tile_dtype in ("float32", "float64"):
            op.matmat(X, tile_dtype=tile_dtype, check_finite=False)
    cp.cuda.Device().synchronize()


def test_bare_cupy_without_array_api_compat(cp, rng, monkeypatch):
    # the gpu extras install array-api-compat; without it the toolkit computes on bare CuPy (no
    # linalg.vector_norm, no device= in creation functions): the sphere path and a matrix-free solve still run
    import sys

    monkeypatch.setitem(sys.modules, "array_api_compat.cupy", None)
    x = Sphere(2).sample(1500, rng=rng)
    xd = cp.asarray(x)
    assert array_namespace(xd) is cp
    _close(Sphere(2).distance(xd), Sphere(2).distance(x))
    Sphere(2).check_points(xd)  # raised AttributeError (linalg.vector_norm) on bare CuPy
    heat = functools.partial(heat_kernel, eps=0.05)
    ref = markov_spectrum(KernelOperator(x, kernel=heat, distance=Sphere(2).distance), 6, rng=0)
    spec = markov_spectrum(KernelOperator(xd, kernel=heat, distance=Sphere(2).distance), 6, rng=0)
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - to_numpy(ref.eigenvalues))) <= 1e-8
