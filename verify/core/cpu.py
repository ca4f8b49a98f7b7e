"""The CPU class a number is measured on, and the environment that makes this machine compute as an AVX2 one.

The same code gives different rounding on different x86-64 machines. NumPy compiles its loops (sums,
``exp``, ``sqrt``, ...) for several instruction sets and picks one at import by the CPU's features; OpenBLAS
(matrix products, LAPACK) picks its kernels by the CPU's core type. A machine with AVX-512 and one with AVX2
only therefore sum in other orders and fuse other multiply-adds: the results agree to a few ulps per
operation, and a computation that amplifies its rounding (an integrator over an unstable stretch, an
eigenvector of a near-degenerate eigenvalue) differs by much more. A calibrated tolerance must hold on both
classes; each row of a calibration table names the class it was measured on
(:attr:`verify.core.calibration.Tolerance.cpu`).

An AVX-512 machine computes as an AVX2 one when NumPy's AVX-512 dispatch groups are disabled and OpenBLAS
is told a Haswell core, both before NumPy is imported::

    OPENBLAS_CORETYPE=Haswell NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" python -m verify --all

(the names of NumPy 2.4; NumPy refuses a name that is not among its dispatch targets, so older NumPy takes
other names: :func:`avx2_environment` reads them from the NumPy installed). :func:`cpu_class` names the class
a process computes on, as NumPy and OpenBLAS see it.
"""

from __future__ import annotations

import functools
import hashlib
import platform

__all__ = ["AVX512", "AVX2", "REFERENCE", "cpu_class", "avx512_groups", "avx2_environment", "rounding_fingerprint"]

#: The two x86-64 classes CI runs on, as calibration rows name them.
AVX512 = "x86-64 AVX-512"
AVX2 = "x86-64 AVX2"
#: The class the calibration tables were measured on unless a row says otherwise (the project's machine).
REFERENCE = AVX512

#: OpenBLAS core types whose kernels use AVX-512.
_OPENBLAS_AVX512 = ("skylakex", "cooperlake", "sapphirerapids")


def _numpy_cpu():
    """NumPy's ``(features, dispatch targets)`` at runtime (empty where this NumPy does not expose them)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # pragma: no cover - NumPy < 2 (numpy.core) or a build without dispatch
        try:
            from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
        except ImportError:
            return {}, ()
    return dict(__cpu_features__), tuple(__cpu_dispatch__)


def avx512_groups() -> tuple[str, ...]:
    """NumPy's dispatch targets that use AVX-512 (``X86_V4``, ``AVX512_ICL``, ``AVX512_SPR`` in NumPy 2.4).

    Read from the running NumPy: these are the names ``NPY_DISABLE_CPU_FEATURES`` accepts (NumPy refuses to
    import, under ``-W error``, when told to disable a feature outside its dispatch targets). Empty on a NumPy
    without AVX-512 targets (another architecture).
    """
    _, dispatch = _numpy_cpu()
    return tuple(name for name in dispatch if name == "X86_V4" or name.startswith("AVX512"))


def _openblas_cores() -> tuple[str, ...]:
    """The core types of the OpenBLAS libraries loaded in this process (NumPy's and SciPy's)."""
    import numpy  # noqa: F401 - loads NumPy's OpenBLAS
    import scipy.linalg  # noqa: F401 - loads SciPy's

    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return ()
    return tuple(str(info.get("architecture") or "") for info in threadpool_info()
                 if info.get("internal_api") == "openblas")


@functools.lru_cache(maxsize=1)
def cpu_class() -> str:
    """The class this process computes on: ``"x86-64 AVX-512"``, ``"x86-64 AVX2"``, or what else it is.

    AVX-512 when NumPy dispatches to an AVX-512 group and every OpenBLAS loaded uses AVX-512 kernels; AVX2
    when neither does and the CPU has AVX2 (a real AVX2 machine, or this one under :func:`avx2_environment`).
    A mix (NumPy limited, OpenBLAS not) is named as such; another architecture by ``platform.machine()``.
    """
    features, _ = _numpy_cpu()
    machine = platform.machine().lower()
    if machine not in ("x86_64", "amd64") or not features:
        return machine or "unknown"
    numpy_avx512 = any(features.get(g, False) for g in avx512_groups())
    cores = _openblas_cores()
    blas_avx512 = [c.lower() in _OPENBLAS_AVX512 for c in cores]
    if numpy_avx512 and all(blas_avx512):
        return AVX512
    if not numpy_avx512 and not any(blas_avx512):
        return AVX2 if features.get("AVX2", False) else "x86-64 (no AVX2)"
    return (f"x86-64 mixed (NumPy {'AVX-512' if numpy_avx512 else 'without AVX-512'}, OpenBLAS "
            f"{', '.join(cores) or 'none'})")


def avx2_environment() -> dict[str, str]:
    """Environment variables that make a new Python process on this machine compute as an AVX2-only one.

    ``NPY_DISABLE_CPU_FEATURES`` lists NumPy's AVX-512 dispatch groups (:func:`avx512_groups`) and
    ``OPENBLAS_CORETYPE`` is ``Haswell`` (the AVX2 kernels). Empty where there is nothing to do or nothing
    safe to do: another architecture, or an x86-64 CPU without AVX2 (Haswell kernels would not run). On an
    AVX2 machine it changes nothing but is harmless, so a test using it still runs its checks there.
    """
    features, _ = _numpy_cpu()
    if platform.machine().lower() not in ("x86_64", "amd64") or not features.get("AVX2", False):
        return {}
    env = {"OPENBLAS_CORETYPE": "Haswell"}
    groups = avx512_groups()
    if groups:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(groups)
    return env


def rounding_fingerprint() -> str:
    """A short hash of results that depend on the kernels in use: NumPy's ``exp`` and ``log`` and an OpenBLAS
    matrix product and symmetric eigensolve of odd sizes (fixed inputs).

    Two processes with different fingerprints round differently; the AVX-512 and AVX2 kernels of NumPy 2.4
    and OpenBLAS 0.3.31 give different ones (measured), so a test can tell that :func:`avx2_environment`
    took effect and that its checks really ran on other rounding.
    """
    import numpy as np

    rng = np.random.default_rng(20261127)
    x = rng.uniform(-5.0, 5.0, 4096)
    a, b = rng.standard_normal((203, 301)), rng.standard_normal((301, 97))
    h = hashlib.sha1()
    for part in (np.exp(x), np.log(np.abs(x)), a @ b, np.linalg.eigvalsh(a @ a.T)):
        h.update(np.ascontiguousarray(part).tobytes())
    return h.hexdigest()[:12]
