"""The memory guard on --device gpu compares with the GPU's free memory, and says "device memory".

No GPU (and no CuPy) on the machines these tests run on: a stand-in ``cupy`` module is put in
``sys.modules``, with the driver's free memory, the default pool's bytes and the device number chosen
by each test. It carries only what the guard reads (``cuda.runtime.memGetInfo``, ``getDevice``,
``getDeviceCount``, ``get_default_memory_pool``); every test stops at a refusal or reads the limits,
before any array would be made on the stand-in. The real device is exercised by the ``gpu``-marked
parity tests (tests/verify/test_gpu_parity.py) and ``benchmarks/gpu.py``.
"""

import dataclasses
import re
import sys
import types

import numpy as np
import pytest

from spectral.floor import memory
from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import InputError, UnavailableError
from verify import weyl
from verify.core import memory as peak_memory
from verify.core.check import Check, Context
from verify.core.claims import load_check
from verify.core.cli import build_check_parser
from verify.core.memory import PathNeed
from verify.core.params import Int
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
    cp.ndarray = type("ndarray", (), {})  # spectral.floor.backend.is_cupy_array looks it up

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


# --------------------------------------------------------------------------------- spectral.floor.memory


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


@_PROBE.parameters
class _ProbeParams:
    need: int = Int(1, "Bytes the request needs, for any value of --need", low=1)


@dataclasses.dataclass(frozen=True)
class _ProbeQuantities:
    #: the device the measurement was given
    device: str


@_PROBE.memory
def _probe_needs(p):
    return {"dense": PathNeed(lambda v: p.need, 1, "--need", 1, "the probe")}


@_PROBE.measurement
def _probe_measure(p, ctx: Context) -> _ProbeQuantities:
    return _ProbeQuantities(device=ctx.device)


@_PROBE.assertions
def _probe_assess(q, p, rec: Recorder) -> str:
    rec.info("device seen", q.device)
    return "probe"


def test_the_check_gives_its_device_to_the_guard_and_the_measurement(monkeypatch, host):
    _install_cupy(monkeypatch, free=GIB)
    host(GIB)
    assert _PROBE.run(device="gpu").record("device seen").measured == "gpu"
    assert _PROBE.run().record("device seen").measured == "cpu"
    # the guard compares with the memory of the run's device, before the measurement
    with pytest.raises(DenseMemoryError, match=r"over the device memory available now on gpu \(CUDA device 0\)"):
        _PROBE.run(need=2 * GIB, device="gpu")
    with pytest.raises(DenseMemoryError, match=r"over the memory available now: 1 GiB"):
        _PROBE.run(need=2 * GIB)
    assert peak_memory.available_memory_bytes("cpu") == GIB


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


#: the checks declared for the GPU that guard their size options before allocating (weyl has its own guard,
#: tested below; the bounded ones need none)
GUARDED_GPU_CHECKS = ["heat_rate", "fractional_limit", "density_normalisation", "metric_attention", "clusters",
                      "drift_diffusion", "nearest_point", "fna_rate", "sa_equiangular", "sa_clustering", "sa_hemisphere",
                      "sa_metastability", "sa_high_dimension", "gl_eps_knn", "gl_gaussian",
                      "sk_convergence", "sk_generator", "sk_heat", "sk_rates", "ga_moments", "ga_conditions",
                      "ms_growth", "ms_phase"]
#: the checks declared for the GPU whose sizes are bounded, with no guard: sphere_softmax, conformal, and the PDE
#: checks whose largest arrays are a few (T, T) and (T, vocab) float64 matrices, T and vocab <= 1024 (8 MiB each);
#: ms_escape moves at most 12 clusters and 8 x 64 cap tokens
BOUNDED_GPU_CHECKS = ["sphere_softmax", "conformal", "pde_conservation", "pde_modes", "pde_smoothing", "pde_causal",
                      "ms_escape"]
#: the size options of the bounded PDE checks and their largest values
PDE_SIZE_BOUNDS = {"pde_conservation": {"sizes": 1024}, "pde_modes": {"size": 1024}, "pde_smoothing": {"size": 512},
                   "pde_causal": {"size": 1024, "vocab": 1024}}


def test_every_gpu_check_is_accounted_for():
    from verify.core.claims import available_checks

    declared = {name for name in available_checks() if "gpu" in load_check(name).CHECK.devices}
    assert declared == set(GUARDED_GPU_CHECKS) | set(BOUNDED_GPU_CHECKS) | {"weyl"}


@pytest.mark.parametrize("name", sorted(PDE_SIZE_BOUNDS))
def test_unguarded_pde_checks_are_bounded(name):
    # no memory guard is needed only while a (T, T) matrix stays at most 1024^2 float64 (8 MiB)
    check = load_check(name).CHECK
    specs = check.specs()
    assert {option: specs[option].high for option in PDE_SIZE_BOUNDS[name]} == PDE_SIZE_BOUNDS[name]
    option = next(iter(PDE_SIZE_BOUNDS[name]))
    with pytest.raises(InputError, match=option):
        check.params(**{option: 2048 if option == "size" else (2048,)})


@pytest.mark.parametrize("name", GUARDED_GPU_CHECKS)
def test_gpu_checks_refuse_by_the_device_memory(monkeypatch, host, name):
    # 1 MiB free on the device, 64 GiB on the host: at their defaults every guarded check is refused on the gpu
    # (each estimate has a fixed 8-32 MiB) by the device's memory, before any array exists, and runs on the host.
    # A declared check is refused by CHECK.choose, before its measurement starts: a measurement is an error here
    _install_cupy(monkeypatch, free=MIB, device=0)
    host(64 * GIB)
    monkeypatch.setattr(load_check(name).CHECK, "_measure", _no_arrays)
    with pytest.raises(DenseMemoryError) as info:
        load_check(name).run(device="gpu")
    message = str(info.value)
    assert "over the device memory available now on gpu (CUDA device 0): 1 MiB" in message, message
    parser = build_check_parser(load_check(name).CHECK, prog=f"python -m verify.{name}")
    options = {opt for action in parser._actions for opt in action.option_strings}
    named = set(re.findall(r"--[a-z][a-z0-9-]*", message))
    assert named and named <= options, named - options


def _no_arrays(p, ctx):
    raise AssertionError(f"the measurement started on {p.device} before the memory guard spoke")


# ------------------------------------------------------------------------------------------- weyl


def test_weyl_chooses_and_refuses_by_the_device_memory(monkeypatch, host):
    p = weyl.CHECK.params(manifold="sphere", n=1500)
    need = weyl.needs(p)
    free, stored = need["matrix-free"].bytes(), need["lanczos"].bytes()
    _install_cupy(monkeypatch, free=(free + stored) // 2)
    host(64 * GIB)
    # the host has room for the stored kernel, the device does not: auto goes matrix-free on the gpu only
    assert weyl.CHECK.choose(p).method == "lanczos"
    assert weyl.CHECK.choose(dataclasses.replace(p, device="gpu")).method == "matrix-free"
    # refused by CHECK.choose, before the measurement (and its arrays) starts
    with pytest.raises(DenseMemoryError, match=r"^the stored-kernel Lanczos path .* needs an estimated .* MiB, over "
                                               r"the device memory available now on gpu \(CUDA device 0\): .* MiB; "
                                               r"lower --n \(at most \d+ fits now\), or use --method matrix-free"):
        weyl.run(manifold="sphere", n=1500, method="lanczos", device="gpu")
    # the circulant path too (48 bytes per point on the device)
    with pytest.raises(DenseMemoryError, match=r"^the circulant path .* over the device memory available now on gpu"):
        weyl.run(n=10**6, device="gpu")


def test_weyl_on_the_gpu_keeps_the_host_check_of_its_points(monkeypatch, host):
    _install_cupy(monkeypatch, free=64 * GIB)
    host(8 * MIB)  # 10^6 points need ~80 MB on the host while they are made
    with pytest.raises(DenseMemoryError, match=r"^the host-side part of the circulant path on n = 1000000 equispaced "
                                               r"points on S\^1 .* on the gpu needs an estimated 76.3 MiB, over the "
                                               r"memory available now: 8 MiB; lower --n \(at most \d+ fits now\)"):
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
