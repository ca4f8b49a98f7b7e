"""The one place that knows about array libraries other than NumPy.

Numerical code in this package takes its array namespace from its inputs
(:func:`array_namespace`) and never calls ``numpy`` on them directly, so that
CuPy arrays stay on the GPU.  CuPy is looked up in ``sys.modules`` and never
imported eagerly: on a CPU-only machine this module costs nothing.

The single host boundary is :func:`to_numpy`.  Eigensolvers, the only calls
that differ between NumPy/SciPy and CuPy/cupyx, are dispatched here
(:func:`eigh`, :func:`eigsh`).

What the GPU path requires: CuPy >= 14 (the floor of the ``gpu``, ``gpu-cuda12`` and ``gpu-cuda13``
extras, which also install ``array-api-compat``). CuPy arrays are computed on through
``array_api_compat.cupy`` where it is installed, else through the bare ``cupy`` module, and the toolkit
works on both: bare CuPy 14 lacks array-API keywords (``device=`` in every creation function:
``cupy.empty(shape, device=...)`` is a ``TypeError``; ``copy=`` in ``asarray``) and names
(``linalg.vector_norm`` and ``linalg.matrix_norm``, ``vecdot``, ``__array_namespace_info__``; older CuPy
also ``astype``, ``concat``, ``pow``, ``atan2``, ``isdtype``, ``matrix_transpose``), so the toolkit never
passes those keywords to a creation function and never calls those names (row norms are
``sqrt(sum(x * x))``, NumPy's own operations for ``vector_norm``). The tests' CuPy stand-in
(``cupy_standin`` in tests/spectral/conftest.py) is bare CuPy 14 in this respect: it refuses the same
keywords and names, so a regression fails on a machine without a GPU. :func:`is_cupy_namespace`
recognises both namespaces.

Arrays from other array-API libraries (``array_api_strict`` in the tests) are
accepted through ``array_api_compat``; this is how backend neutrality is
tested on machines without a GPU.

Reproducibility on a CUDA device: every random start is drawn on the host from the caller's seed and copied
to the device (Lanczos: :func:`eigsh`'s ``v0``; the block solver's start block), never by ``cupy.random``;
the fused products add in a fixed order that does not depend on the device (:mod:`spectral.tiles`); cuBLAS
and cuSOLVER give the same bits on GPUs of one architecture and number of multiprocessors. So results are
bitwise reproducible per device model (one stream, one CUDA and CuPy version), and agree with the host and
across device models to round-off.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from spectral.floor.validation import UnavailableError, check_option

__all__ = [
    "array_namespace",
    "available_devices",
    "copy_of",
    "creation_device",
    "dtype_name",
    "eigh",
    "empty_on",
    "from_numpy",
    "is_cupy_array",
    "is_cupy_namespace",
    "namespace_name",
    "require_device",
    "to_numpy",
    "zeros_on",
]


def is_cupy_array(x: Any) -> bool:
    """True if ``x`` is a CuPy array (CuPy is looked up in ``sys.modules``, never imported)."""
    cp = sys.modules.get("cupy")
    return cp is not None and isinstance(x, cp.ndarray)


def cupy_namespace():
    """The namespace to compute on CuPy arrays with: ``array_api_compat.cupy``, else bare ``cupy``.

    Only called once CuPy is imported (a CuPy array exists); never imports CuPy itself.
    """
    try:
        import array_api_compat.cupy as compat_cupy  # imports cupy, which is already loaded here
    except ImportError:  # the gpu extra brings array-api-compat; bare CuPy otherwise
        return sys.modules["cupy"]
    return compat_cupy


def is_cupy_namespace(xp) -> bool:
    """True for ``cupy`` and for ``array_api_compat.cupy`` (the namespace :func:`array_namespace` gives CuPy arrays)."""
    name = getattr(xp, "__name__", "")
    return name == "cupy" or name.startswith("cupy.") or name == "array_api_compat.cupy"


def namespace_name(xp) -> str:
    """Short name of a namespace for messages and solver names: ``numpy``, ``cupy``, ``array_api_strict``, ..."""
    if is_cupy_namespace(xp):
        return "cupy"
    return getattr(xp, "__name__", type(xp).__name__)


def array_namespace(*arrays: Any):
    """Array namespace of the inputs: ``numpy``, the CuPy namespace or an array-API namespace.

    Python scalars and ``None`` are ignored.  Plain NumPy arrays (and no array
    at all) give the ``numpy`` module itself; CuPy arrays give ``array_api_compat.cupy``
    (bare ``cupy`` without array-api-compat; :func:`cupy_namespace`); other
    array-API arrays (e.g. ``array_api_strict``) give their compatible namespace.
    Mixing libraries raises ``TypeError``.
    """
    arrays = tuple(a for a in arrays if a is not None and not isinstance(a, (int, float, complex, bool)))
    if not arrays or all(isinstance(a, (np.ndarray, np.generic)) for a in arrays):
        return np
    if all(is_cupy_array(a) for a in arrays):
        return cupy_namespace()
    try:
        import array_api_compat
    except ImportError as exc:  # pragma: no cover - only without the test extra
        raise TypeError(
            f"unsupported array type {type(arrays[0]).__name__}; install array-api-compat "
            "for array-API libraries other than numpy and cupy"
        ) from exc
    return array_api_compat.array_namespace(*arrays)


def is_numpy_namespace(xp) -> bool:
    """True for the plain ``numpy`` module (the fast path where SciPy can be used directly)."""
    return xp is np


def to_numpy(x: Any) -> np.ndarray:
    """Copy ``x`` to the host as a NumPy array (the single host boundary)."""
    if isinstance(x, np.ndarray):
        return x
    if is_cupy_array(x):
        return x.get()
    if np.isscalar(x):
        return np.asarray(x)
    try:
        return np.asarray(x)
    except (TypeError, ValueError, RuntimeError):
        # array_api_strict refuses __array__; go through DLPack / a list.
        try:
            return np.from_dlpack(x)
        except (TypeError, AttributeError, RuntimeError, BufferError):
            import array_api_compat

            xp = array_api_compat.array_namespace(x)
            return np.asarray(xp.reshape(x, (-1,)).tolist(), dtype=float).reshape(tuple(x.shape))


def from_numpy(x: np.ndarray, like: Any = None):
    """Move a host array to the namespace (and device) of ``like``.

    CuPy: ``cupy.asarray`` under ``with like.device`` (bare CuPy's creation functions take no ``device=``;
    they allocate on the current device, which the context sets to ``like``'s).
    """
    xp = array_namespace(like) if like is not None else np
    if xp is np:
        return np.asarray(x)
    if is_cupy_array(like):
        cp = sys.modules["cupy"]
        with like.device:
            return cp.asarray(np.asarray(x))
    dev = getattr(like, "device", None)
    if dev is None or dev == _default_device(xp):  # no device= where the default device is like's
        return xp.asarray(np.asarray(x))
    return xp.asarray(np.asarray(x), device=dev)


def _default_device(xp):
    """The namespace's default device (array API ``__array_namespace_info__().default_device()``), or None."""
    try:
        return xp.__array_namespace_info__().default_device()
    except (AttributeError, TypeError, NotImplementedError):
        return None


def _creation_on(fn_name: str, like, shape, dtype):
    """``xp.<fn_name>(shape, dtype=dtype)`` on the device of ``like``, without ``device=`` where it can.

    NumPy: plain. CuPy: under ``with like.device`` (bare CuPy's creation functions refuse ``device=``;
    they allocate on the current device). Other namespaces: ``device=`` only when ``like`` is not on the
    namespace's default device (so a single-device namespace never sees the keyword).
    """
    if isinstance(like, np.ndarray):
        return getattr(np, fn_name)(shape, dtype=dtype)
    if is_cupy_array(like):
        cp = sys.modules["cupy"]
        with like.device:
            return getattr(cp, fn_name)(shape, dtype=dtype)
    xp = array_namespace(like)
    dev = getattr(like, "device", None)
    if dev is None or dev == _default_device(xp):
        return getattr(xp, fn_name)(shape, dtype=dtype)
    return getattr(xp, fn_name)(shape, dtype=dtype, device=dev)


def creation_device(like) -> dict:
    """``{"device": ...}`` for a creation function making arrays beside ``like``, or ``{}`` where none is needed.

    NumPy and CuPy (creation on the current device; bare CuPy takes no ``device=``) get ``{}``; another
    namespace gets the keyword only when ``like`` is not on its default device, so a single-device
    namespace never sees it (the rule of :func:`empty_on` and :func:`zeros_on`).
    """
    if like is None or isinstance(like, np.ndarray) or is_cupy_array(like):
        return {}
    dev = getattr(like, "device", None)
    if dev is None or dev == _default_device(array_namespace(like)):
        return {}
    return {"device": dev}


def copy_of(x):
    """A copy of the array ``x`` in its own namespace and on its device.

    NumPy and CuPy: ``x.copy()``. Other namespaces: ``asarray(x, copy=True)``, or, where ``copy=`` is
    refused (bare CuPy's spelling, which the strict test stand-in imitates), a product with ones (a new
    array bit for bit: ``-0.0``, ``inf`` and NaN kept).
    """
    if isinstance(x, np.ndarray) or is_cupy_array(x):
        return x.copy()
    xp = array_namespace(x)
    try:
        return xp.asarray(x, copy=True)
    except TypeError:
        if x.dtype == xp.bool:
            return x & xp.ones_like(x)
        return x * xp.ones_like(x)


def empty_on(like, shape, dtype=None):
    """An uninitialised array of ``shape`` in the namespace and on the device of ``like`` (dtype default: like's)."""
    return _creation_on("empty", like, tuple(shape), like.dtype if dtype is None else dtype)


def zeros_on(like, shape, dtype=None):
    """Zeros of ``shape`` in the namespace and on the device of ``like`` (dtype default: like's)."""
    return _creation_on("zeros", like, tuple(shape), like.dtype if dtype is None else dtype)


def device_of(x: Any) -> str | Any:
    """Device of an array: ``"cpu"`` for NumPy, the CuPy device, or the array's ``.device``."""
    if isinstance(x, (np.ndarray, np.generic)):
        return "cpu"
    if is_cupy_array(x):
        return x.device
    return getattr(x, "device", "cpu")


def eigh(a: Any):
    """Dense symmetric eigendecomposition, eigenvalues ascending (``numpy``/``cupy.linalg.eigh``).

    Other array-API namespaces go through their own ``linalg.eigh``.
    """
    if is_cupy_array(a):
        cp = sys.modules["cupy"]
        return cp.linalg.eigh(a)
    if isinstance(a, np.ndarray):
        return np.linalg.eigh(a)
    xp = array_namespace(a)
    res = xp.linalg.eigh(a)
    return res.eigenvalues, res.eigenvectors


def eigsh(a: Any, k: int, *, which: str = "LA", v0=None, tol: float = 0.0, maxiter=None):
    """Largest ``k`` eigenpairs of a symmetric matrix or linear operator (Lanczos).

    NumPy / SciPy operators use ``scipy.sparse.linalg.eigsh``; CuPy arrays use
    ``cupyx.scipy.sparse.linalg.eigsh``, which has no shift-invert and orders
    its output differently, so callers always re-sort the result.

    ``v0`` (the start vector, host or device) goes to both solvers: on CuPy it is copied to the device in
    the matrix's dtype (:func:`_device_start_vector`), so a seeded start gives the same Lanczos run on
    every call, from the values ARPACK would start from. Without ``v0`` cupyx starts from
    ``cupy.random.random``, whose state nothing here seeds: results then change from run to run.
    """
    if which not in ("LA", "LM"):
        check_option("which", which, ("LA", "LM"))
    if is_cupy_array(a) or _is_cupyx_operator(a):
        import cupyx.scipy.sparse.linalg as cpsla  # lazy: only with CuPy present

        start = None if v0 is None else _device_start_vector(v0, a)
        return cpsla.eigsh(a, k=k, which=which, v0=start, tol=tol, maxiter=maxiter)
    import scipy.sparse.linalg as sla

    return sla.eigsh(a, k=k, which=which, v0=v0, tol=tol, maxiter=maxiter)


def _device_start_vector(v0, a):
    """``v0`` as ``cupyx.scipy.sparse.linalg.eigsh`` needs it: a new contiguous CuPy vector of ``a``'s dtype.

    cupyx (CuPy 14) uses its ``v0`` as the Lanczos workspace: it is overwritten, and read by dtype-specific
    cuBLAS calls (``ddot``/``sdot`` on its pointer), so it must be a fresh array of exactly the matrix's
    dtype. A host vector is cast on the host (the values ARPACK starts from for that dtype), then copied
    on the device of ``a`` (the current device for an operator).
    """
    cp = sys.modules["cupy"]
    dtype = np.dtype(dtype_name(a.dtype))
    if is_cupy_array(v0):
        xp = array_namespace(v0)
        return xp.astype(xp.reshape(v0, (-1,)), getattr(xp, dtype.name), copy=True)
    host = np.ascontiguousarray(np.asarray(v0, dtype=np.float64).reshape(-1), dtype=dtype)
    if is_cupy_array(a):
        return from_numpy(host, like=a)
    return cp.asarray(host)


def _is_cupyx_operator(a: Any) -> bool:
    return type(a).__module__.startswith("cupyx.")


def linear_operator(shape: tuple[int, int], matvec, *, dtype, like: Any = None, matmat=None):
    """A matrix-free linear operator on the device of ``like``.

    ``scipy.sparse.linalg.LinearOperator`` for host arrays; ``cupyx.scipy.sparse.linalg.LinearOperator``
    when ``like`` is a CuPy array, so that Lanczos iterations (:func:`eigsh`) stay on the GPU and
    ``matvec`` receives and returns CuPy vectors.
    """
    if is_cupy_array(like):
        import cupyx.scipy.sparse.linalg as cpsla  # lazy: only with CuPy present

        return cpsla.LinearOperator(shape, matvec=matvec, matmat=matmat, dtype=dtype)
    import scipy.sparse.linalg as sla

    return sla.LinearOperator(shape, matvec=matvec, matmat=matmat, dtype=dtype)


def available_devices() -> list[str]:
    """Devices usable here: always ``"cpu"``, plus ``"gpu"`` when CuPy sees a CUDA device."""
    devices = ["cpu"]
    try:
        import cupy  # noqa: F401  (explicit request: only here is CuPy imported on purpose)

        if cupy.cuda.runtime.getDeviceCount() > 0:
            devices.append("gpu")
    except Exception:  # ImportError, CUDA driver errors: no GPU
        pass
    return devices


def require_device(device: str):
    """Return the array module for ``device`` (``"cpu"`` or ``"gpu"``) or raise.

    Raises
    ------
    spectral.floor.validation.InputError
        If ``device`` is not ``"cpu"`` or ``"gpu"``.
    spectral.floor.validation.UnavailableError
        If ``device="gpu"`` and CuPy or a CUDA device is missing.
    """
    if device == "cpu":
        return np

    check_option("device", device, ("cpu", "gpu"))
    if "gpu" not in available_devices():
        raise UnavailableError(
            "device='gpu' needs CuPy and a CUDA device; none found "
            "(install the 'gpu' extra on a machine with a GPU, or use device='cpu')"
        )
    import cupy

    return cupy


def dtype_name(dtype) -> str:
    """Name of a NumPy, CuPy or array-API dtype (``"float64"``, ``"float32"``, ...).

    Examples
    --------
    >>> import numpy as np
    >>> dtype_name(np.float32)
    'float32'
    """
    try:
        return np.dtype(dtype).name
    except TypeError:
        # array-API dtypes (e.g. array_api_strict.float32) print as their qualified name
        return str(dtype).rsplit(".", 1)[-1]
