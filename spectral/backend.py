"""The one place that knows about array libraries other than NumPy.

Numerical code in this package takes its array namespace from its inputs
(:func:`array_namespace`) and never calls ``numpy`` on them directly, so that
CuPy arrays stay on the GPU.  CuPy is looked up in ``sys.modules`` and never
imported eagerly: on a CPU-only machine this module costs nothing.

The single host boundary is :func:`to_numpy`.  Eigensolvers, the only calls
that differ between NumPy/SciPy and CuPy/cupyx, are dispatched here
(:func:`eigh`, :func:`eigsh`).

Arrays from other array-API libraries (``array_api_strict`` in the tests) are
accepted through ``array_api_compat``; this is how backend neutrality is
tested on machines without a GPU.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

__all__ = [
    "array_namespace",
    "available_devices",
    "dtype_name",
    "eigh",
    "from_numpy",
    "require_device",
    "to_numpy",
]


def is_cupy_array(x: Any) -> bool:
    """True if ``x`` is a CuPy array (CuPy is looked up in ``sys.modules``, never imported)."""
    cp = sys.modules.get("cupy")
    return cp is not None and isinstance(x, cp.ndarray)


def array_namespace(*arrays: Any):
    """Array namespace of the inputs: ``numpy``, ``cupy`` or an array-API namespace.

    Python scalars and ``None`` are ignored.  Plain NumPy arrays (and no array
    at all) give the ``numpy`` module itself; CuPy arrays give ``cupy``; other
    array-API arrays (e.g. ``array_api_strict``) give their compatible namespace.
    Mixing libraries raises ``TypeError``.
    """
    arrays = tuple(a for a in arrays if a is not None and not isinstance(a, (int, float, complex, bool)))
    if not arrays or all(isinstance(a, (np.ndarray, np.generic)) for a in arrays):
        return np
    if all(is_cupy_array(a) for a in arrays):
        return sys.modules["cupy"]
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
    """Move a host array to the namespace (and device) of ``like``."""
    xp = array_namespace(like) if like is not None else np
    if xp is np:
        return np.asarray(x)
    kwargs = {}
    dev = device_of(like)
    if dev is not None and not is_cupy_array(like):
        kwargs["device"] = dev
    return xp.asarray(np.asarray(x), **kwargs) if not is_cupy_array(like) else xp.asarray(x)


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
    """
    if which not in ("LA", "LM"):
        from spectral.validation import check_option  # lazy: importing the backend loads nothing else

        check_option("which", which, ("LA", "LM"))
    if is_cupy_array(a) or _is_cupyx_operator(a):
        import cupyx.scipy.sparse.linalg as cpsla  # lazy: only with CuPy present

        return cpsla.eigsh(a, k=k, which=which, tol=tol, maxiter=maxiter)
    import scipy.sparse.linalg as sla

    return sla.eigsh(a, k=k, which=which, v0=v0, tol=tol, maxiter=maxiter)


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
    spectral.validation.InputError
        If ``device`` is not ``"cpu"`` or ``"gpu"``.
    spectral.validation.UnavailableError
        If ``device="gpu"`` and CuPy or a CUDA device is missing.
    """
    if device == "cpu":
        return np
    # lazy: importing the backend loads nothing else of the toolkit
    from spectral.validation import UnavailableError, check_option

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
