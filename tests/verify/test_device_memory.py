"""The memory guard on --device gpu compares with the GPU's free memory, and says "device memory".

No GPU (and no CuPy) on the machines these tests run on: a stand-in ``cupy`` module is put in
``sys.modules``, with the driver's free memory, the default pool's bytes and the device number chosen
by each test. It carries only what the guard reads (``cuda.runtime.memGetInfo``, ``getDevice``,
``getDeviceCount``, ``get_default_memory_pool``); every test stops at a refusal or reads the limits,
before any array would be made on the stand-in. The real device is exercised by the ``gpu``-marked
parity tests (tests/verify/test_gpu_parity.py) and ``benchmarks/gpu.py``.
"""

import re
import sys
import types

import numpy as np
import pytest

from spectral import memory
from spectral.memory import DenseMemoryError
from spectral.validation import UnavailableError
from verify import weyl
from verify.core import memory as peak_memory
from verify.core.check import Check, current_device
from verify.core.claims import load_check
from verify.core.cli import build_parser
from verify.core.result import Recorder

MIB, GIB = 1 << 20, 1 << 30


class _Pool:
    def __init__(self, total, used):
        self._total, self._used = total, used

    def total_bytes(self):
        return self._total

    def used_bytes(self):
        return self._used


def _install_cupy(monkeypatch, *, free, pool_total=0, pool_used=0, device=0, fail=False):
    cp = types.ModuleType("cupy")
    cp.ndarray = type("ndarray", (), {})  # spectral.backend.is_cupy_array looks it up

    def mem_get_info():
        if fail:
            raise RuntimeError("cudaErrorDevicesUnavailable: CUDA-capable device(s) is/are busy or unavailable")
        return free, 80 * GIB

    cp.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(
        getDeviceCount=lambda: 1, getDevice=lambda: device, memGetInfo=mem_get_info))
    pool = _Pool(pool_total, pool_used)
    cp.get_default_memory_pool = lambda: pool
    monkeypatch.setitem(sys.modules, "cupy", cp)
    return cp


@pytest.fixture
def host(monkeypatch):
    """``host(nbytes)``: the host's memory available now is ``nbytes``, whatever the machine."""

    def set_host(nbytes):
        monkeypatch.setattr(memory, "available_memory_bytes", lambda device="cpu": (
            nbytes if device == "cpu" else memory.device_memory_bytes()))

    return set_host


# --------------------------------------------------------------------------------- spectral.memory


def test_device_memory_is_the_driver_free_plus_the_pool_unused(monkeypatch, host):
    # 3 GiB free for the driver; the pool holds 2 GiB of which 0.5 GiB in use: 1.5 GiB more is free to CuPy
    cp = _install_cupy(monkeypatch, free=3 * GIB, pool_total=2 * GIB, pool_used=GIB // 2)
    assert memory.device_memory_bytes() == 3 * GIB + 3 * GIB // 2
    assert memory.device_memory_bytes(cp) == 3 * GIB + 3 * GIB // 2
    assert memory.available_memory_bytes(device="gpu") == 3 * GIB + 3 * GIB // 2
    # a host namespace is the host's memory, not the device's (fixed here: two reads of the machine's free
    # memory a moment apart differ)
    host(5 * GIB)
    assert memory.device_memory_bytes(np) == 5 * GIB


def test_without_cupy_the_gpu_memory_is_unavailable_and_the_host_is_unaffected(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
    with pytest.raises(UnavailableError, match="device='gpu' needs CuPy and a CUDA device"):
        memory.available_memory_bytes(device="gpu")
    with pytest.raises(UnavailableError, match="device='gpu' needs CuPy"):
        memory.check_memory(1, what="x", device="gpu")
    assert memory.available_memory_bytes() > 0
    with pytest.raises(memory.InputError, match="device must be one of"):
        memory.available_memory_bytes(device="tpu")


def test_a_driver_error_is_unavailable_not_a_crash(monkeypatch):
    _install_cupy(monkeypatch, free=GIB, fail=True)
    with pytest.raises(UnavailableError, match="could not read the free memory of the CUDA device: cudaError"):
        memory.device_memory_bytes()


def test_dense_guard_on_the_gpu_compares_with_the_device(monkeypatch, host):
    # 8192^2 float64 = 512 MiB: fits the host's 8 GiB, not the device's 256 MiB (CUDA device 1)
    _install_cupy(monkeypatch, free=256 * MIB, device=1)
    host(8 * GIB)
    assert memory.check_dense_memory(8192) == 512 * MIB
    with pytest.raises(DenseMemoryError, match=r"needs an estimated 0\.5 GiB, over the device memory available "
                                               r"now on gpu \(CUDA device 1\): 0\.25 GiB; use a smaller n$"):
        memory.check_dense_memory(8192, device="gpu", alternative="use a smaller n")
    with pytest.raises(DenseMemoryError, match=r"over the device memory available now on gpu \(CUDA device 1\): "
                                               r"256 MiB$"):
        memory.check_memory(512 * MIB, what="the request", device="gpu")
    # the other way round: a big device does not lift the host's limit on the host
    _install_cupy(monkeypatch, free=64 * GIB)
    host(256 * MIB)
    assert memory.check_memory(512 * MIB, what="the request", device="gpu") == 512 * MIB
    with pytest.raises(DenseMemoryError, match=r"over the memory available now: 256 MiB$"):
        memory.check_memory(512 * MIB, what="the request")


# ------------------------------------------------------------------------------------ verify layer

_PROBE = Check("device_memory_probe", claims=(), devices=("cpu", "gpu"))


@_PROBE.define
def _probe(*, need=1, device="cpu"):
    """Reads the running device and guards ``need`` bytes.

    Parameters
    ----------
    need : int
        Bytes the request needs, for any value of --need.
    device : {"cpu", "gpu"}
        Device of the arrays.
    """
    rec = Recorder()
    rec.info("device seen", current_device())
    rec.info("guarded", peak_memory.require_memory(lambda v: need, 1, option="--need", low=1, what="the probe"))
    return rec.finish("probe")


def test_the_running_check_names_its_device_to_the_guard(monkeypatch, host):
    _install_cupy(monkeypatch, free=GIB)
    host(GIB)
    assert _probe(device="gpu").record("device seen").measured == "gpu"
    assert _probe().record("device seen").measured == "cpu"
    assert current_device() == "cpu"  # reset after the run
    # reset also when the body raises: a refusal on the gpu leaves the next guard on the host
    with pytest.raises(DenseMemoryError, match="device memory"):
        _probe(need=2 * GIB, device="gpu")
    assert current_device() == "cpu"
    assert peak_memory.available_memory_bytes() == GIB


def test_require_memory_on_the_gpu_checks_the_device_and_the_host_part(monkeypatch, host):
    def estimate(v):
        return 1000 * v

    _install_cupy(monkeypatch, free=500_000)
    host(GIB)
    # on the host 10^6 fits; on the device 500 is the largest value that fits
    assert peak_memory.require_memory(estimate, 10**6, option="--n", low=10, what="w", device="cpu") == 10**9
    with pytest.raises(DenseMemoryError, match=r"^w needs an estimated 954 MiB, over the device memory available now "
                                               r"on gpu \(CUDA device 0\): 488 KiB; lower --n \(at most 500 fits now\)$"):
        peak_memory.require_memory(estimate, 10**6, option="--n", low=10, what="w", device="gpu")
    # device large, host small: the host part is refused (the whole estimate bounds it unless `host` is given)
    _install_cupy(monkeypatch, free=64 * GIB)
    host(300_000)
    with pytest.raises(DenseMemoryError, match=r"^the host-side part \(bounded by the whole estimate\) of w on the gpu "
                                               r"needs an estimated 954 MiB, over the memory available now: 293 KiB; "
                                               r"lower --n \(at most 300 fits now\)$"):
        peak_memory.require_memory(estimate, 10**6, option="--n", low=10, what="w", device="gpu")
    # a check that states its host part (here 10 bytes per unit) is held to that on the host
    assert peak_memory.require_memory(estimate, 10**4, option="--n", low=10, what="w", device="gpu",
                                      host=lambda v: 10 * v) == 10**7
    with pytest.raises(DenseMemoryError, match=r"^the host-side part of w on the gpu needs .* lower --n \(at most "
                                               r"30000 fits now\)$"):
        peak_memory.require_memory(estimate, 10**5, option="--n", low=10, what="w", device="gpu",
                                   host=lambda v: 10 * v)


#: the checks declared for the GPU that guard their size options before allocating (sphere_softmax and
#: conformal have bounded sizes and no guard; weyl has its own, tested below)
GUARDED_GPU_CHECKS = ["heat_rate", "fractional_limit", "density_normalisation", "metric_attention", "clusters",
                      "drift_diffusion", "nearest_point", "fna_rate", "gl_eps_knn", "gl_gaussian"]


def test_every_gpu_check_is_accounted_for():
    from verify.core.claims import available_checks

    declared = {name for name in available_checks() if "gpu" in load_check(name).CHECK.devices}
    assert declared == set(GUARDED_GPU_CHECKS) | {"sphere_softmax", "conformal", "weyl"}


@pytest.mark.parametrize("name", GUARDED_GPU_CHECKS)
def test_gpu_checks_refuse_by_the_device_memory(monkeypatch, host, name):
    # 1 MiB free on the device, 64 GiB on the host: at their defaults every guarded check is refused on the gpu
    # (each estimate has a fixed 8-32 MiB) by the device's memory, before any array exists, and runs on the host
    _install_cupy(monkeypatch, free=MIB, device=0)
    host(64 * GIB)
    monkeypatch.setattr("verify.core.check.device_namespace", _no_arrays)
    with pytest.raises(DenseMemoryError) as info:
        load_check(name).run(device="gpu")
    message = str(info.value)
    assert "over the device memory available now on gpu (CUDA device 0): 1 MiB" in message, message
    parser = build_parser(load_check(name).run, prog=f"python -m verify.{name}")
    options = {opt for action in parser._actions for opt in action.option_strings}
    named = set(re.findall(r"--[a-z][a-z0-9-]*", message))
    assert named and named <= options, named - options


def _no_arrays(device):
    raise AssertionError(f"arrays were about to be made on {device} before the memory guard spoke")


# ------------------------------------------------------------------------------------------- weyl


def test_weyl_chooses_and_refuses_by_the_device_memory(monkeypatch, host):
    p = dict(n=1500, modes=48, points="grid", manifold="sphere", paper_setting=False, method="auto")
    free, stored = weyl._path_bytes(p, "matrix-free"), weyl._path_bytes(p, "lanczos")
    _install_cupy(monkeypatch, free=(free + stored) // 2)
    host(64 * GIB)
    # the host has room for the stored kernel, the device does not: auto goes matrix-free on the gpu only
    assert weyl._choose_method(p, device="cpu") == "lanczos"
    assert weyl._choose_method(p, device="gpu") == "matrix-free"
    monkeypatch.setattr("verify.core.check.device_namespace", _no_arrays)
    with pytest.raises(DenseMemoryError, match=r"^the stored-kernel Lanczos path .* needs an estimated .* MiB, over "
                                               r"the device memory available now on gpu \(CUDA device 0\): .* MiB; "
                                               r"use --method matrix-free"):
        weyl.run(manifold="sphere", n=1500, method="lanczos", device="gpu")
    # the circulant path too (48 bytes per point on the device)
    with pytest.raises(DenseMemoryError, match=r"^the circulant path .* over the device memory available now on gpu"):
        weyl.run(n=10**6, device="gpu")


def test_weyl_on_the_gpu_keeps_the_host_check_of_its_points(monkeypatch, host):
    _install_cupy(monkeypatch, free=64 * GIB)
    host(8 * MIB)  # 10^6 points need ~80 MB on the host while they are made
    monkeypatch.setattr("verify.core.check.device_namespace", _no_arrays)
    with pytest.raises(DenseMemoryError, match=r"^making the n = 1000000 equispaced points on S\^1 on the host before "
                                               r"they move to the gpu .* over the memory available now: 8 MiB; "
                                               r"use a smaller --n$"):
        weyl.run(n=10**6, device="gpu")


def test_spectral_guards_compare_a_cupy_input_with_the_device(monkeypatch, host):
    # the library's own guards (markov_spectrum, diffusion maps, operators, ...) pass
    # device=memory_device(input): a CuPy input is compared with the device, a NumPy one with the host
    cp = _install_cupy(monkeypatch, free=64 * MIB)
    host(64 * GIB)
    on_gpu = cp.ndarray()
    assert memory.memory_device(on_gpu) == "gpu" and memory.memory_device(np.zeros(2)) == "cpu"
    with pytest.raises(DenseMemoryError, match=r"over the device memory available now on gpu \(CUDA device 0\)"):
        memory.check_dense_memory(4096, copies=1, what="x", device=memory.memory_device(on_gpu))
    assert memory.check_dense_memory(4096, copies=1, what="x", device=memory.memory_device(np.zeros(2))) == 8 * 4096**2
