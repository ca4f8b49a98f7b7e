"""Compile CUDA sources on a machine without a GPU: NVRTC (a CPU-side compiler) found, run, and its report read.

The fused products of :mod:`spectral.tiles` are CUDA C++ generated at run time and compiled by CuPy (through
NVRTC) on first use on a device. This module compiles the same text here, for a chosen architecture, so that a
generated source that does not compile, warns, or spills registers is found without a device
(tests/spectral/test_tiles.py, ``benchmarks/cuda_resources.py``):

* :func:`find_libraries`: every ``libnvrtc`` found: the file named by ``NVRTC_LIBRARY``, the CUDA 13 wheel
  (``pip install nvidia-cuda-nvrtc``: ``nvidia/cu13/lib/libnvrtc.so.13``), the CUDA 12 wheel (``pip install
  nvidia-cuda-nvrtc-cu12``: ``nvidia/cuda_nvrtc/lib/libnvrtc.so.12``), a CUDA toolkit (``CUDA_HOME``,
  ``CUDA_PATH``, ``/usr/local/cuda``) and the loader's search path;
* :func:`compile_source`: one compilation to a cubin for ``sm_XX`` with ``ptxas -v``, its log, and the
  registers, stack frame and spill bytes of each kernel ptxas reports.

Only :mod:`ctypes` and the standard library are used; nothing is imported from CUDA's Python packages.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import glob
import importlib.util
import os
import re

__all__ = ["INSTALL_HINT", "CompileReport", "NvrtcLibrary", "compile_source", "find_libraries"]

#: What to install (or set) when no libnvrtc is found.
INSTALL_HINT = ("pip install nvidia-cuda-nvrtc (CUDA 13) or nvidia-cuda-nvrtc-cu12 (CUDA 12), or set "
                "NVRTC_LIBRARY=/path/to/libnvrtc.so")
#: Environment variable naming a libnvrtc to use (first; a set but unusable path is an error).
LIBRARY_VARIABLE = "NVRTC_LIBRARY"

_RESOURCES = re.compile(r"Function properties for (\w+)\s*\n\s*ptxas\s*\.\s*(\d+) bytes stack frame, (\d+) bytes spill "
                        r"stores, (\d+) bytes spill loads\s*\n\s*ptxas info\s*: Used (\d+) registers")


@dataclasses.dataclass(frozen=True)
class NvrtcLibrary:
    """A loadable libnvrtc: its path, where it was found, and the NVRTC version it reports."""

    path: str
    origin: str
    version: tuple[int, int]

    @property
    def name(self) -> str:
        return f"NVRTC {self.version[0]}.{self.version[1]} ({self.origin})"


@dataclasses.dataclass(frozen=True)
class KernelResources:
    """What ptxas reports for one kernel: registers per thread, stack frame and spill bytes per thread."""

    kernel: str
    registers: int
    stack_frame: int
    spill_stores: int
    spill_loads: int


@dataclasses.dataclass(frozen=True)
class CompileReport:
    """One compilation: success, the log (warnings included), and the resources of each kernel."""

    ok: bool
    log: str
    kernels: tuple[KernelResources, ...]

    @property
    def warnings(self) -> list[str]:
        """The log's lines that are warnings (not ptxas' ``info`` lines)."""
        return [line for line in self.log.splitlines() if "warning" in line.lower()]


def _version(lib) -> tuple[int, int]:
    major, minor = ctypes.c_int(), ctypes.c_int()
    if lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) != 0:
        raise OSError("nvrtcVersion failed")
    return major.value, minor.value


def _candidates():
    """``(path, origin)`` in order of preference; duplicates and missing files are dropped by the caller."""
    spec = importlib.util.find_spec("nvidia")
    roots = list(spec.submodule_search_locations) if spec is not None and spec.submodule_search_locations else []
    for sub, origin in (("cu13", "the nvidia-cuda-nvrtc wheel, CUDA 13"),
                        ("cuda_nvrtc", "the nvidia-cuda-nvrtc-cu12 wheel, CUDA 12")):
        for root in roots:
            for path in sorted(glob.glob(os.path.join(root, sub, "lib", "libnvrtc.so.*"))):
                if re.search(r"libnvrtc\.so\.\d+$", path):
                    yield path, origin
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            for path in sorted(glob.glob(os.path.join(os.environ[var], "lib64", "libnvrtc.so*"))):
                yield path, var
    for path in sorted(glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*")):
        yield path, "a CUDA toolkit"
    found = ctypes.util.find_library("nvrtc")
    if found:
        yield found, "the loader's search path"


def find_libraries() -> list[NvrtcLibrary]:
    """Every distinct loadable libnvrtc (by version), ``NVRTC_LIBRARY`` first, then the newest.

    Raises
    ------
    OSError
        ``NVRTC_LIBRARY`` is set but names nothing loadable (an explicit request is not skipped).
    """
    found: dict[tuple[int, int], NvrtcLibrary] = {}
    explicit = os.environ.get(LIBRARY_VARIABLE)
    if explicit:
        try:
            lib = NvrtcLibrary(explicit, LIBRARY_VARIABLE, _version(ctypes.CDLL(explicit)))
        except OSError as exc:
            raise OSError(f"{LIBRARY_VARIABLE}={explicit} is not a loadable libnvrtc: {exc}") from None
        found[lib.version] = lib
    for path, origin in _candidates():
        try:
            version = _version(ctypes.CDLL(path))
        except OSError:
            continue
        found.setdefault(version, NvrtcLibrary(path, origin, version))
    explicit_first = [v for v in found.values() if v.origin == LIBRARY_VARIABLE]
    rest = sorted((v for v in found.values() if v.origin != LIBRARY_VARIABLE), key=lambda v: v.version, reverse=True)
    return explicit_first + rest


def compile_source(source: str, library: NvrtcLibrary, *, arch: str = "sm_90", options=()) -> CompileReport:
    """Compile ``source`` to a cubin for ``arch`` with ``ptxas -v`` (CuPy's RawKernel compiles for the device's
    ``sm_XX`` the same way), and read the log.

    ``options``: more NVRTC options (bytes or str). The report's ``kernels`` hold ptxas' registers, stack frame
    and spill bytes of each kernel; ``ok`` is NVRTC's success.
    """
    lib = ctypes.CDLL(library.path)
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", 0, None, None) != 0:
        raise RuntimeError("nvrtcCreateProgram failed")
    try:
        opts = [f"--gpu-architecture={arch}".encode(), b"--ptxas-options=-v",
                *(o.encode() if isinstance(o, str) else o for o in options)]
        rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(max(size.value, 1))
        lib.nvrtcGetProgramLog(prog, log)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
    text = log.value.decode(errors="replace")
    kernels = tuple(KernelResources(m.group(1), int(m.group(5)), int(m.group(2)), int(m.group(3)), int(m.group(4)))
                    for m in _RESOURCES.finditer(text))
    return CompileReport(rc == 0, text, kernels)
