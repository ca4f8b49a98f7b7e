import numpy as np
import pytest

from spectral.floor import backend
from spectral.floor.validation import InputError, UnavailableError


def test_numpy_namespace_and_host_boundary():
    a = np.arange(6.0).reshape(2, 3)
    assert backend.array_namespace(a) is np
    assert backend.array_namespace(a, None, 3.0) is np
    assert backend.to_numpy(a) is a
    assert backend.device_of(a) == "cpu"


def test_array_api_strict_roundtrip():
    xps = pytest.importorskip("array_api_strict")
    a = xps.asarray([[1.0, 2.0], [3.0, 4.0]])
    xp = backend.array_namespace(a)
    assert xp is not np
    host = backend.to_numpy(a)
    np.testing.assert_array_equal(host, [[1.0, 2.0], [3.0, 4.0]])
    back = backend.from_numpy(host * 2, like=a)
    assert type(back) is type(a)
    np.testing.assert_array_equal(backend.to_numpy(back), 2 * host)


def test_mixed_libraries_refused():
    xps = pytest.importorskip("array_api_strict")
    with pytest.raises(TypeError):
        backend.array_namespace(np.ones(2), xps.ones(2))


def test_eigh_dispatch_matches_numpy(xp):
    rng = np.random.default_rng(0)
    m = rng.standard_normal((6, 6))
    s = m + m.T
    w, v = backend.eigh(xp.asarray(s))
    w_ref = np.linalg.eigvalsh(s)
    # exact algebra: rtol 4 sqrt(eps) scaled by the matrix norm
    np.testing.assert_allclose(backend.to_numpy(w), w_ref, rtol=0, atol=4 * np.sqrt(np.finfo(float).eps) * np.abs(w_ref).max())
    v = backend.to_numpy(v)
    np.testing.assert_allclose(s @ v, v * backend.to_numpy(w), atol=1e-10 * np.abs(w_ref).max())


def test_eigsh_largest():
    rng = np.random.default_rng(1)
    m = rng.standard_normal((40, 40))
    s = m + m.T
    w, _ = backend.eigsh(s, 3, which="LA")
    np.testing.assert_allclose(np.sort(w), np.linalg.eigvalsh(s)[-3:], rtol=1e-10)
    with pytest.raises(InputError, match="which"):
        backend.eigsh(s, 3, which="SM")


def test_devices():
    assert backend.available_devices()[0] == "cpu"
    assert backend.require_device("cpu") is np
    with pytest.raises(InputError, match="device"):
        backend.require_device("tpu")
    if "gpu" not in backend.available_devices():
        with pytest.raises(UnavailableError, match="CuPy"):
            backend.require_device("gpu")


@pytest.mark.gpu
def test_cupy_namespace():  # pragma: no cover - needs a GPU
    import cupy

    a = cupy.ones((3, 3))
    assert backend.array_namespace(a) is cupy
    assert isinstance(backend.to_numpy(a), np.ndarray)


def test_linear_operator_host():
    m = np.diag(np.arange(1.0, 7.0))
    op = backend.linear_operator((6, 6), lambda v: m @ v, dtype=np.float64)
    w, _ = backend.eigsh(op, 2, which="LA")
    np.testing.assert_allclose(np.sort(w), [5.0, 6.0], rtol=1e-10)


@pytest.mark.gpu
def test_linear_operator_gpu():  # pragma: no cover - needs a GPU
    import cupy

    m = cupy.diag(cupy.arange(1.0, 7.0))
    op = backend.linear_operator((6, 6), lambda v: m @ v, dtype=cupy.float64, like=m)
    w, _ = backend.eigsh(op, 2, which="LA")
    np.testing.assert_allclose(np.sort(backend.to_numpy(w)), [5.0, 6.0], rtol=1e-8)


#: (statement, a module it must not load), run in this order in one fresh interpreter; the first loads nothing the
#: second must not load, so one interpreter shows what two would
LIGHT_IMPORTS = [
    ("import spectral.floor.backend", "spectral.eigen"),  # the floor (and the lazy package) load nothing beyond the floor
    ("import manifolds", "spectral.eigen"),  # exact truth does not load the solvers
]


@pytest.fixture(scope="module")
def spectral_loaded_after():
    """statement -> the ``spectral`` modules in ``sys.modules`` after it (the statements of LIGHT_IMPORTS in turn)."""
    import ast
    import subprocess
    import sys

    code = "import sys\n" + "".join(
        f"{statement}\nprint(sorted(m for m in sys.modules if m.startswith('spectral')))\n"
        for statement, _ in LIGHT_IMPORTS)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return {statement: ast.literal_eval(line) for (statement, _), line in zip(LIGHT_IMPORTS, out.splitlines())}


@pytest.mark.parametrize("statement, absent", LIGHT_IMPORTS)
def test_imports_stay_light(statement, absent, spectral_loaded_after):
    loaded = spectral_loaded_after[statement]
    assert absent not in loaded, loaded
    if statement == "import spectral.floor.backend":
        assert loaded == ["spectral", "spectral.floor", "spectral.floor.backend", "spectral.floor.validation"]
    else:
        assert "spectral.floor.distance" in loaded  # manifolds was imported (its points use the floor's distances)


def test_cupy_namespace_names():
    import types

    assert backend.is_cupy_namespace(types.ModuleType("cupy"))
    assert backend.is_cupy_namespace(types.ModuleType("array_api_compat.cupy"))
    assert not backend.is_cupy_namespace(np) and not backend.is_cupy_namespace(types.ModuleType("cupyx_like"))
    assert backend.namespace_name(types.ModuleType("array_api_compat.cupy")) == "cupy"
    assert backend.namespace_name(np) == "numpy"


def test_creation_on_a_device_without_device_keyword(strict_xp):
    # the stand-in refuses device= as bare CuPy does; the backend's creation helpers and from_numpy never pass it
    a = strict_xp.asarray([[1.0, 2.0]])
    with pytest.raises(TypeError, match="device"):
        strict_xp.empty((2, 2), device=a.device)
    for made in (backend.empty_on(a, (3, 2)), backend.zeros_on(a, (3, 2)), backend.from_numpy(np.ones((3, 2)), like=a)):
        assert type(made) is type(a) and made.device == a.device and tuple(made.shape) == (3, 2)
    np.testing.assert_array_equal(backend.to_numpy(backend.zeros_on(a, (2,), dtype=strict_xp.float32)), [0.0, 0.0])
    assert isinstance(backend.empty_on(np.ones(2), (4,)), np.ndarray)


def test_copy_of_and_creation_device_keep_the_namespace_and_the_bits():
    from spectral.floor.backend import copy_of, creation_device

    x = np.array([-0.0, np.inf, np.nan, 1.5])
    y = copy_of(x)
    assert y is not x and np.array_equal(np.signbit(y), np.signbit(x)) and np.isnan(y[2])
    y[3] = 0.0
    assert x[3] == 1.5  # a copy, not a view
    assert creation_device(x) == {} and creation_device(None) == {}
    xps = pytest.importorskip("array_api_strict")
    a = xps.asarray([-0.0, 1.0])
    b = copy_of(a)
    assert b is not a and bool(xps.all(b == a)) and creation_device(a) == {}  # the default device: no keyword
    other = xps.asarray([1.0], device=xps.Device("device1"))
    assert creation_device(other) == {"device": other.device}
