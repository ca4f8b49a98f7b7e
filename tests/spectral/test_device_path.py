"""The CUDA path through the CuPy stand-in (tests/spectral/conftest.py ``cupy_standin``): seeded Lanczos starts,
the fused product's launches and results, host synchronisations per product, bare CuPy's missing names.

No GPU here: the stand-in is array_api_strict on its second device dressed as bare CuPy 14 with one CUDA device,
the two generated kernels of spectral.tiles emulated with NumPy, and cupyx's ``eigsh`` modelled on CuPy 14's
(its ``v0`` must be a device vector of the matrix's dtype and is overwritten). What it counts (host
synchronisations, driver queries, launches) is what a device would do, and what these tests hold fixed.
"""

import functools

import numpy as np
import pytest

from manifolds import Circle, Sphere
from spectral import KernelOperator, block_eigsh, fna_kernel, heat_kernel, markov_spectrum
from spectral.floor.backend import eigsh, linear_operator
from spectral.floor.memory import DenseMemoryError
from spectral.tiles import launch_shape
from spectral.floor.validation import InputError

POWER = functools.partial(fna_kernel, alpha=1.2, scale=0.3, dim=1)
HEAT = functools.partial(heat_kernel, eps=0.05)


# ------------------------------------------------------------------------------------------ Lanczos start
def test_lanczos_on_the_device_starts_from_the_hosts_seeded_vector(cupy_standin, fna_on, monkeypatch):
    import scipy.sparse.linalg as sla

    st = cupy_standin
    C, _ = fna_on(Circle().sample(80, rng=3))
    host_starts = []
    original = sla.eigsh

    def spy(*args, **kwargs):
        host_starts.append(np.array(kwargs["v0"]))
        return original(*args, **kwargs)

    monkeypatch.setattr(sla, "eigsh", spy)
    host = markov_spectrum(C, 4, method="lanczos", rng=5)
    monkeypatch.setattr(sla, "eigsh", original)
    runs = [markov_spectrum(st.put(C), 4, method="lanczos", rng=seed) for seed in (5, 5, 6)]
    assert runs[0].solver == "cupyx.scipy.sparse.linalg.eigsh"
    first, again, other = st.eigsh_starts
    assert first is not None, "cupyx eigsh got no v0: it starts from an unseeded random vector"
    np.testing.assert_array_equal(first, host_starts[0].astype(first.dtype))  # the host's start, in S's dtype
    np.testing.assert_array_equal(again, first)  # the same seed, the same start
    assert not np.array_equal(other, first)  # another seed, another start
    np.testing.assert_array_equal(st.host(runs[1].eigenvalues), st.host(runs[0].eigenvalues))
    np.testing.assert_allclose(st.host(runs[0].eigenvalues), np.asarray(host.eigenvalues), rtol=1e-10)


def test_backend_eigsh_gives_cupyx_a_fresh_device_start_in_the_matrix_dtype(cupy_standin):
    st = cupy_standin
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 30))
    A = (A + A.T).astype(np.float32)
    v0 = rng.standard_normal(30)  # float64 on the host, as ARPACK's callers draw it
    keep = v0.copy()
    w, _ = eigsh(st.put(A), 3, which="LA", v0=v0, tol=1e-6)
    np.testing.assert_array_equal(st.eigsh_starts[-1], keep.astype(np.float32))  # cast once, on the host
    np.testing.assert_array_equal(v0, keep)  # the caller's vector is untouched (cupyx overwrites its v0)
    # a device start is copied too: cupyx's overwriting it leaves the caller's device vector as it was
    d0 = st.put(keep.astype(np.float32))
    eigsh(st.put(A), 3, which="LA", v0=d0, tol=1e-6)
    np.testing.assert_array_equal(st.host(d0), keep.astype(np.float32))
    np.testing.assert_allclose(np.sort(st.host(w)), np.linalg.eigvalsh(A.astype(np.float64))[-3:], rtol=1e-4)
    # a device operator (cupyx LinearOperator, as graph Laplacians build): the start goes to the current device
    Ad = st.put(A.astype(np.float64))
    op = linear_operator((30, 30), lambda v: Ad @ v, dtype=np.float64, like=Ad)
    w, _ = eigsh(op, 3, which="LA", v0=v0, tol=1e-10)
    np.testing.assert_array_equal(st.eigsh_starts[-1], keep)
    np.testing.assert_allclose(np.sort(st.host(w)), np.linalg.eigvalsh(A.astype(np.float64))[-3:], rtol=1e-8)


# --------------------------------------------------------------------------------------- fused products
@pytest.mark.parametrize("n, k", [(300, 5), (150, 37), (300, 37)])
def test_fused_products_on_the_device_match_the_host(cupy_standin, rng, n, k):
    # n = 300: two column chunks (partial sums added by the chunk-sum kernel); n = 150: one chunk, the product
    # kernel writes the result's columns in place; k = 37: two launches (widths 32 and 8)
    st = cupy_standin
    x = Circle().sample(n, rng=rng)
    op = KernelOperator(st.put(x), kernel=POWER, distance=Circle().distance, zero_diagonal=True)
    ref = KernelOperator(x, kernel=POWER, distance=Circle().distance, zero_diagonal=True, engine="numpy")
    assert op.tiles.endswith("(one CUDA kernel per block product)"), op.tiles
    X = rng.standard_normal((n, k))
    before = st.counts.snapshot()
    out = op.matmat(st.put(X))
    spent = st.counts.since(before)
    groups, chunks = -(-k // 32), launch_shape(n, n)[1]
    assert spent["launches"] == groups * (2 if chunks > 1 else 1), (spent, chunks)
    np.testing.assert_allclose(st.host(out), ref.matmat(X), rtol=1e-12, atol=1e-12 * np.abs(ref.matmat(X)).max())
    sums = op.row_sums()
    np.testing.assert_allclose(st.host(sums), ref.row_sums(), rtol=1e-12)
    assert op.min_score == pytest.approx(float(ref.to_dense()[~np.eye(n, dtype=bool)].min()), rel=1e-12)


def test_nonsymmetric_products_on_the_device(cupy_standin, rng):
    st = cupy_standin
    x, y = Sphere(2).sample(140, rng=rng), Sphere(2).sample(290, rng=rng)
    op = KernelOperator(st.put(x), y=st.put(y), kernel=HEAT, distance=Sphere(2).distance)
    ref = KernelOperator(x, y=y, kernel=HEAT, distance=Sphere(2).distance, engine="numpy")
    v, w = rng.standard_normal((290, 3)), rng.standard_normal((140, 2))
    np.testing.assert_allclose(st.host(op.matmat(st.put(v))), ref.matmat(v), rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(st.host(op.rmatvec(st.put(w))), ref.rmatvec(w), rtol=1e-11, atol=1e-13)


def test_a_wrong_kernel_fails_the_same_comparison(cupy_standin, rng):
    st = cupy_standin
    x = Circle().sample(150, rng=rng)
    wrong = functools.partial(fna_kernel, alpha=1.26, scale=0.3, dim=1)  # beta 5 % off
    op = KernelOperator(st.put(x), kernel=wrong, distance=Circle().distance)
    ref = KernelOperator(x, kernel=POWER, distance=Circle().distance, engine="numpy")
    X = rng.standard_normal((150, 2))
    assert np.max(np.abs(st.host(op.matmat(st.put(X))) - ref.matmat(X))) > 1e-3 * np.max(np.abs(ref.matmat(X)))


# ------------------------------------------------------------------------------ host synchronisations
def test_no_host_synchronisation_in_the_solvers_products(cupy_standin, rng, monkeypatch):
    # every block product the solver asks for: no synchronisation, no driver call after the first product of
    # each width (its memory check); before: one finiteness check (a sync) and one memGetInfo per product
    st = cupy_standin
    x = Circle().sample(300, rng=rng)
    op = KernelOperator(st.put(x), kernel=POWER, distance=Circle().distance, zero_diagonal=True)
    calls = []
    original = op.matmat

    def counted(X, *, tile_dtype=None, check_finite=True):  # KernelOperator.matmat's signature
        before = st.counts.snapshot()
        out = original(X, tile_dtype=tile_dtype, check_finite=check_finite)
        calls.append((int(X.shape[1]), st.counts.since(before)))
        return out

    monkeypatch.setattr(op, "matmat", counted)
    spec = markov_spectrum(op, 5, rng=0)
    assert len(calls) >= 4 and "block_eigsh" in spec.solver
    widest = 1  # row_sums checked one column
    for width, spent in calls:
        assert spent["syncs"] == 0 and spent["uploads"] == 0 and spent["attribute_reads"] == 0, spent
        assert spent["memory_queries"] == (1 if width > widest else 0), (width, widest, spent)
        widest = max(widest, width)
    assert sum(spent["memory_queries"] for _, spent in calls) == 1, calls  # the solver's block width, once
    ref = markov_spectrum(KernelOperator(x, kernel=POWER, distance=Circle().distance, zero_diagonal=True,
                                         engine="numpy"), 5, rng=0)
    np.testing.assert_allclose(st.host(spec.eigenvalues), np.asarray(ref.eigenvalues), rtol=1e-9)


def test_a_users_product_is_still_checked(cupy_standin, rng):
    # the public matmat refuses NaN (one synchronisation); check_finite=False is the solvers' trusted call
    st = cupy_standin
    x = Circle().sample(150, rng=rng)
    op = KernelOperator(st.put(x), kernel=POWER, distance=Circle().distance)
    X = rng.standard_normal((150, 2))
    X[3, 1] = np.nan
    before = st.counts.snapshot()
    with pytest.raises(InputError, match="X must contain only finite values"):
        op.matmat(st.put(X))
    assert st.counts.since(before)["syncs"] == 1
    out = st.host(op.matmat(st.put(X), check_finite=False))
    assert np.isnan(out[:, 1]).any() and np.isfinite(out[:, 0]).all()


def test_the_device_memory_is_checked_once_per_width_and_still_refuses(cupy_standin, rng):
    st = cupy_standin
    x = Circle().sample(300, rng=rng)
    op = KernelOperator(st.put(x), kernel=POWER, distance=Circle().distance)
    X = st.put(rng.standard_normal((300, 4)))
    st.free_bytes = 1000  # less than any product needs
    for _ in range(2):  # refused, and refused again: a refusal does not count as checked
        with pytest.raises(DenseMemoryError, match="device memory"):
            op.matmat(X)
    st.free_bytes = 64 << 30
    before = st.counts.snapshot()
    for _ in range(3):
        op.matmat(X, check_finite=False)
    assert st.counts.since(before)["memory_queries"] == 1
    st.free_bytes = 1000
    op.matmat(X[:, :2], check_finite=False)  # fewer columns than checked: no query
    with pytest.raises(DenseMemoryError, match="device memory"):
        op.matmat(st.put(rng.standard_normal((300, 6))))  # more columns: checked again


@pytest.mark.parametrize("namespace", ["numpy", "array_api_strict", "cupy"])
def test_a_non_finite_product_stops_the_block_solver(namespace, request):
    # on the host the product is checked; on a device the Ritz values and residuals (on the host anyway) carry it
    n = 60
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n))
    A = A @ A.T / n
    if namespace == "cupy":
        st = request.getfixturevalue("cupy_standin")
        put, like = st.put, st.put(np.zeros(1))
    elif namespace == "array_api_strict":
        xps = pytest.importorskip("array_api_strict")
        put = lambda a: xps.asarray(a, device=xps.Device("device1"))  # noqa: E731
        like = put(np.zeros(1))
    else:
        put, like = np.asarray, np.zeros(1)
    Ad = put(A)
    products = []

    def apply(X):
        products.append(1)
        out = Ad @ X
        return out * float("nan") if len(products) == 3 else out

    with pytest.raises(InputError, match=r"returned NaN or inf \(product 3\)"):
        block_eigsh(apply, n, 3, like=like, rng=0, tol=1e-14)
    res = block_eigsh(lambda X: Ad @ X, n, 3, like=like, rng=0)  # and a finite operator still solves
    np.testing.assert_allclose(np.sort(np.asarray(res.eigenvalues if namespace == "numpy" else
                                                  _host(res.eigenvalues, namespace, request))),
                               np.linalg.eigvalsh(A)[-3:], rtol=1e-8)


def _host(a, namespace, request):
    if namespace == "cupy":
        return request.getfixturevalue("cupy_standin").host(a)
    xps = pytest.importorskip("array_api_strict")
    return np.from_dlpack(a.to_device(xps.Device("CPU_DEVICE")))


# ------------------------------------------------------------------------------------------ bare CuPy
def test_the_sphere_path_runs_on_bare_cupy(cupy_standin, rng):
    # bare CuPy 14 has no linalg.vector_norm (the stand-in neither): Sphere's distance and point check, and the
    # fused sphere tiles, use sqrt(sum(x * x))
    st = cupy_standin
    sphere = Sphere(2)
    x = sphere.sample(40, rng=rng)
    xd = st.put(x)
    assert sphere.check_points(xd) is not None
    np.testing.assert_array_equal(st.host(sphere.distance(xd)), sphere.distance(x))
    op = KernelOperator(xd, kernel=HEAT, distance=sphere.distance)
    ref = KernelOperator(x, kernel=HEAT, distance=sphere.distance, engine="numpy")
    X = rng.standard_normal((40, 3))
    np.testing.assert_allclose(st.host(op.matmat(st.put(X))), ref.matmat(X), rtol=1e-12)
    with pytest.raises(InputError, match="unit sphere"):
        sphere.check_points(st.put(2.0 * x))
